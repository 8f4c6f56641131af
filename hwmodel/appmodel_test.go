package hwmodel_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/brigadesim/brigade/hwmodel"
)

// appsDir is the Pollux artifact's application model as package pollux
// embeds it.
const appsDir = "../pollux/data/apps"

func loadTestApps(t *testing.T) *hwmodel.AppModel {
	t.Helper()
	m, err := hwmodel.LoadApps(os.DirFS(appsDir), ".")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPlacementID(t *testing.T) {
	for _, c := range []struct {
		counts []int
		want   string
	}{
		{[]int{4, 2}, "24"},
		{[]int{2, 0, 4}, "24"},
		{[]int{2, 1, 1}, "112"},
		{[]int{1, 2, 1, 2}, "1212"},
		{[]int{2, 2, 1, 1}, "1122"},
		{[]int{4}, "4"},
	} {
		if got := hwmodel.PlacementID(c.counts); got != c.want {
			t.Errorf("PlacementID(%v) = %s, want %s", c.counts, got, c.want)
		}
	}
}

// TestAppConfig checks the batch configurations MODEL.md lists for the
// workloads' jobs.
func TestAppConfig(t *testing.T) {
	m := loadTestApps(t)
	for _, c := range []struct {
		app           string
		gpus, batch   int
		atomic, accum int
		effective     int
	}{
		{"bert", 6, 384, 10, 5, 360},
		{"bert", 16, 384, 12, 1, 384},
		{"cifar10", 6, 2048, 342, 0, 2052},
		{"imagenet", 24, 3200, 134, 0, 3216},
		{"ncf", 1, 32768, 16384, 1, 32768},
		{"yolov3", 4, 64, 8, 1, 64},
		{"deepspeech2", 12, 640, 53, 0, 636},
	} {
		a, ok := m.App(c.app)
		if !ok {
			t.Fatalf("no app %s", c.app)
		}
		got, err := a.Config(c.gpus, c.batch)
		if err != nil {
			t.Fatal(err)
		}
		want := hwmodel.AppConfig{Atomic: c.atomic, Accum: c.accum, Batch: c.effective}
		if got != want {
			t.Errorf("%s %d GPUs batch %d: %+v, want %+v", c.app, c.gpus, c.batch, got, want)
		}
	}
}

// isolated runs a job alone from a scheduling instant: 30 s of restart,
// then training cut by the 60 s grid, as the artifact's isolated runs.
func isolated(r *hwmodel.AppRun) float64 {
	s := hwmodel.AppState{}
	t := 30.0
	for {
		secs := 60 - math.Mod(t, 60)
		used, done := r.Advance(&s, secs)
		t += used
		if done {
			return t
		}
	}
}

// TestAppIsolated checks the isolated run times of the reference's
// isolated.csv (the artifact's own computation), to the second.
func TestAppIsolated(t *testing.T) {
	m := loadTestApps(t)
	data, err := os.ReadFile("testdata/pollux_isolated.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")[1:]
	for _, line := range lines {
		f := strings.Split(line, ",")
		a, _ := m.App(f[0])
		gpus, batch := atoi(t, f[1]), atoi(t, f[2])
		c, err := a.Config(gpus, batch)
		if err != nil {
			t.Fatal(err)
		}
		counts := digitsOf(f[3])
		r, err := a.Run(counts, c)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if got, want := isolated(&r), float64(atoi(t, f[11])); got != want {
			t.Errorf("%s %s %d GPUs: isolated run %g s, want %g s", f[0], f[3], gpus, got, want)
		}
		if got, want := r.IterTime(), parseF(t, f[9]); math.Abs(got-want) > 1e-6 {
			t.Errorf("%s %s: iteration %g s, want %g s", f[0], f[3], got, want)
		}
	}
}

func TestAdvanceRoundsEpochEnds(t *testing.T) {
	// One application of two epochs, one validated batch, progress 10 per
	// epoch, gain 1: an iteration of 4 s makes 2.5 units of progress a
	// second... rate 0.25 a second: each epoch takes 40 s exactly, and a
	// 30 s chunk leaves 10 s to the first epoch's end.
	fsys := fstest.MapFS{
		"apps.csv":           {Data: []byte("app,max_epochs,max_local_bsz\nx,2,\n")},
		"x/placements.csv":   {Data: []byte("placement,local_bsz,step_time,sync_time\n1,1,4,0\n1,2,8,0\n")},
		"x/validation-1.csv": {Data: []byte("progress,grad_sqr,grad_var\n10,1,0\n20,1,0\n")},
	}
	m, err := hwmodel.LoadApps(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.App("x")
	c, err := a.Config(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Run([]int{1}, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		chunks []float64
		used   []float64
		done   bool
	}{
		{[]float64{30, 30, 30}, []float64{30, 30, 20}, true},
		{[]float64{math.Inf(1)}, []float64{80}, true},
		{[]float64{40, 39.5}, []float64{40, 39.5}, false},
	} {
		s := hwmodel.AppState{}
		done := false
		for k, ch := range tc.chunks {
			var used float64
			used, done = r.Advance(&s, ch)
			if used != tc.used[k] {
				t.Errorf("chunks %v: chunk %d used %g, want %g", tc.chunks, k, used, tc.used[k])
			}
		}
		if done != tc.done {
			t.Errorf("chunks %v: done %v, want %v", tc.chunks, done, tc.done)
		}
	}
}

func TestLoadAppsErrors(t *testing.T) {
	base := func() fstest.MapFS {
		return fstest.MapFS{
			"apps.csv":           {Data: []byte("app,max_epochs,max_local_bsz\nx,1,\n")},
			"x/placements.csv":   {Data: []byte("placement,local_bsz,step_time,sync_time\n1,1,4,0\n1,2,8,0\n")},
			"x/validation-1.csv": {Data: []byte("progress,grad_sqr,grad_var\n10,1,0\n")},
		}
	}
	for _, c := range []struct {
		file, data, want string
	}{
		{"apps.csv", "app,max_epochs,max_local_bsz\nx,zero,\n", "apps.csv:2: max_epochs: want an integer"},
		{"apps.csv", "app,epochs\nx,1\n", "apps.csv:1: header: no column \"max_epochs\""},
		{"x/placements.csv", "placement,local_bsz,step_time,sync_time\n21,1,4,0\n", "x/placements.csv:2: placement: \"21\" is not its smallest rotation"},
		{"x/placements.csv", "placement,local_bsz,step_time,sync_time\n1,1,x,0\n", "x/placements.csv:2: step_time: want a number"},
		{"x/validation-1.csv", "progress,grad_sqr,grad_var\n", "fewer than the 1"},
		{"linear.csv", "app,num_nodes,num_replicas,local_bsz,step_time,sync_time\ny,5,8,1,1,1\n", "linear.csv:2: app: \"y\" is not in apps.csv"},
	} {
		fsys := base()
		fsys[c.file] = &fstest.MapFile{Data: []byte(c.data)}
		_, err := hwmodel.LoadApps(fsys, ".")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want %q", c.file, c.data, err, c.want)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v := 0
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			t.Fatalf("not a number: %q", s)
		}
		v = v*10 + int(ch-'0')
	}
	return v
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func digitsOf(s string) []int {
	out := make([]int, len(s))
	for i, ch := range s {
		out[i] = int(ch - '0')
	}
	return out
}

// TestAppRunRefusesZeroPace: a placement measured at 0 s an iteration, or
// gradient statistics that make no gain, would make a job never end or
// end at once; Run refuses them.
func TestAppRunRefusesZeroPace(t *testing.T) {
	for _, c := range []struct {
		placements, validation, want string
	}{
		{"placement,local_bsz,step_time,sync_time\n1,1,0,0\n1,2,0,0\n", "progress,grad_sqr,grad_var\n10,1,0\n", "an iteration takes 0 s"},
		{"placement,local_bsz,step_time,sync_time\n1,1,4,0\n1,2,8,0\n", "progress,grad_sqr,grad_var\n10,0,0\n", "the gain of epoch 0 is NaN"},
	} {
		m, err := hwmodel.LoadApps(fstest.MapFS{
			"apps.csv":           {Data: []byte("app,max_epochs,max_local_bsz\nx,1,\n")},
			"x/placements.csv":   {Data: []byte(c.placements)},
			"x/validation-1.csv": {Data: []byte(c.validation)},
		}, ".")
		if err != nil {
			t.Fatal(err)
		}
		a, _ := m.App("x")
		cfg, err := a.Config(1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run([]int{1}, cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run: %v, want an error with %q", err, c.want)
		}
	}
}
