package hwmodel_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestAppIterations checks Iterations against the artifact's
// get_iteration (values computed by its applications.py): a validated
// batch size reads its column, another interpolates between the two
// around it.
func TestAppIterations(t *testing.T) {
	m := loadTestApps(t)
	for _, c := range []struct {
		app          string
		batch, epoch int
		want         float64
	}{
		{"cifar10", 128, 0, 390},
		{"cifar10", 4096, 99, 2011},
		{"cifar10", 1000, 5, 690.875},
		{"bert", 384, 1, 480},
		{"bert", 100, 0, 930.3333333333334},
	} {
		a, _ := m.App(c.app)
		got, err := a.Iterations(c.batch, c.epoch)
		if err != nil || got != c.want {
			t.Errorf("%s batch %d epoch %d: %v, %v; want %v", c.app, c.batch, c.epoch, got, err, c.want)
		}
	}
	a, _ := m.App("cifar10")
	for _, bad := range [][2]int{{64, 0}, {8192, 0}, {128, 100}, {128, -1}} {
		if _, err := a.Iterations(bad[0], bad[1]); err == nil {
			t.Errorf("Iterations(%d, %d) accepted", bad[0], bad[1])
		}
	}
}

// TestAppPredictConfig: Optimus' prediction accumulates on one GPU even at
// the smallest batch size, where a job's own configuration does not; on
// more GPUs the two agree.
func TestAppPredictConfig(t *testing.T) {
	m := loadTestApps(t)
	for _, c := range []struct {
		app         string
		gpus, batch int
		run, pred   hwmodel.AppConfig
	}{
		{"cifar10", 1, 128, hwmodel.AppConfig{Atomic: 128, Accum: 0, Batch: 128}, hwmodel.AppConfig{Atomic: 64, Accum: 1, Batch: 128}},
		{"cifar10", 6, 2048, hwmodel.AppConfig{Atomic: 342, Accum: 0, Batch: 2052}, hwmodel.AppConfig{Atomic: 342, Accum: 0, Batch: 2052}},
		{"ncf", 1, 32768, hwmodel.AppConfig{Atomic: 16384, Accum: 1, Batch: 32768}, hwmodel.AppConfig{Atomic: 16384, Accum: 1, Batch: 32768}},
	} {
		a, _ := m.App(c.app)
		run, err := a.Config(c.gpus, c.batch)
		if err != nil || run != c.run {
			t.Errorf("%s Config(%d, %d) = %+v, %v; want %+v", c.app, c.gpus, c.batch, run, err, c.run)
		}
		pred, err := a.PredictConfig(c.gpus, c.batch)
		if err != nil || pred != c.pred {
			t.Errorf("%s PredictConfig(%d, %d) = %+v, %v; want %+v", c.app, c.gpus, c.batch, pred, err, c.pred)
		}
		counts := []int{c.gpus}
		if c.gpus > 4 {
			counts = []int{4, c.gpus - 4}
		}
		it, err := a.IterTime(counts, run)
		r, err2 := a.Run(counts, run)
		if err != nil || err2 != nil || it != r.IterTime() {
			t.Errorf("%s on %v: IterTime %v (%v), Run's %v (%v)", c.app, counts, it, err, r.IterTime(), err2)
		}
	}
}

// TestLoadAppsIterationColumn: the iteration column is optional, but all
// or none of a file's rows must have it.
func TestLoadAppsIterationColumn(t *testing.T) {
	fsys := fstest.MapFS{
		"apps.csv":           {Data: []byte("app,max_epochs,max_local_bsz\nx,2,\n")},
		"x/placements.csv":   {Data: []byte("placement,local_bsz,step_time,sync_time\n1,1,4,0\n1,2,8,0\n")},
		"x/validation-1.csv": {Data: []byte("progress,iteration,grad_sqr,grad_var\n10,10,1,0\n20,,1,0\n")},
	}
	_, err := hwmodel.LoadApps(fsys, ".")
	if err == nil || !strings.Contains(err.Error(), "x/validation-1.csv: the iteration column is set on 1 of 2 rows") {
		t.Errorf("a half-set iteration column: %v", err)
	}
	fsys["x/validation-1.csv"] = &fstest.MapFile{Data: []byte("progress,iteration,grad_sqr,grad_var\n10,ten,1,0\n20,20,1,0\n")}
	_, err = hwmodel.LoadApps(fsys, ".")
	if err == nil || !strings.Contains(err.Error(), "x/validation-1.csv:2: iteration:") {
		t.Errorf("a bad iteration count: %v", err)
	}
	fsys["x/validation-1.csv"] = &fstest.MapFile{Data: []byte("progress,grad_sqr,grad_var\n10,1,0\n20,1,0\n")}
	m, err := hwmodel.LoadApps(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.App("x")
	if _, err := a.Iterations(1, 0); err == nil {
		t.Error("Iterations without the column accepted")
	}
}
