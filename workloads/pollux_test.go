package workloads

import (
	"path/filepath"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestReadPollux(t *testing.T) {
	path := filepath.Join("testdata", "pollux", "good.csv")
	w := mustRead(t, path, AutoFormat)
	if len(w.Jobs) != 5 {
		t.Fatalf("%d jobs, want 5", len(w.Jobs))
	}
	for _, c := range []struct {
		k      int
		name   string
		submit hwmodel.Time
		app    string
		gpus   int
		batch  int
	}{
		{0, "cifar10-0", 107 * hwmodel.Second, "cifar10", 6, 2048},
		{2, "ncf-2", 135 * hwmodel.Second, "ncf", 1, 32768},
	} {
		j := w.Jobs[c.k]
		if j.Name != c.name || j.Submit != c.submit || j.App != c.app || j.Req.GPUs != c.gpus || j.BatchSize != c.batch || j.Duration != 0 {
			t.Errorf("job %d: %+v, want %s at %v training %s on %d GPUs, batch %d, no duration", c.k, j, c.name, c.submit, c.app, c.gpus, c.batch)
		}
		if j.Source != path+":"+[]string{"2", "", "4"}[c.k] {
			t.Errorf("job %d: source %q", c.k, j.Source)
		}
	}
}

func TestReadPolluxErrors(t *testing.T) {
	runBadCases(t, "pollux", []badCase{
		{"bad_replicas.csv", 2, "num_replicas", []string{"want an integer", `"zero"`}},
		{"bad_time.csv", 3, "time", []string{"want seconds in", "-5"}},
		{"bad_app.csv", 2, "application", []string{"want an application name"}},
		{"bad_batch.csv", 2, "batch_size", []string{"want an integer in 1..", "found 0"}},
		{"bad_column.csv", 1, "extra", []string{"unknown column"}},
		{"dup_name.csv", 3, "name", []string{"already used"}},
	})
}
