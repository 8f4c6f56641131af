package workloads

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// tracePath finds a shipped trace: under $BRIGADE_TRACES, else the shared
// folder next to the checkout. Tests that need one skip without it.
func tracePath(t *testing.T, rel string) string {
	t.Helper()
	for _, dir := range []string{os.Getenv("BRIGADE_TRACES"), "../../shared/traces", "../shared/traces"} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("trace %s not found (set BRIGADE_TRACES)", rel)
	return ""
}

func TestRealPhilly(t *testing.T) {
	w := mustRead(t, tracePath(t, "philly-pollux/philly.csv"), "philly")
	if len(w.Jobs) != 82247 {
		t.Fatalf("%d jobs, want 82,247", len(w.Jobs))
	}
	if w.Jobs[0].Submit != 0 {
		t.Errorf("earliest submit %v, want 0", w.Jobs[0].Submit)
	}
	// 2017-09-04 10:30:41 to 2017-12-22 08:02:11 UTC.
	if got, want := w.Jobs[len(w.Jobs)-1].Submit, hwmodel.Time(9408690)*hwmodel.Second; got != want {
		t.Errorf("last submit %g s, want %g s", got.Seconds(), want.Seconds())
	}
	byGPUs := map[int]int{}
	for _, j := range w.Jobs {
		byGPUs[j.Req.GPUs]++
	}
	want := map[int]int{1: 76627, 2: 1818, 4: 1870, 8: 1643, 12: 7, 16: 199, 24: 7, 32: 67, 64: 6, 128: 3}
	for g, n := range want {
		if byGPUs[g] != n {
			t.Errorf("%d jobs with %d GPUs, want %d", byGPUs[g], g, n)
		}
	}
	if len(w.Tenants) != 15 {
		t.Errorf("%d tenants, want Philly's 15 virtual clusters", len(w.Tenants))
	}
}

func TestRealOpenB(t *testing.T) {
	w := mustRead(t, tracePath(t, "alibaba-gpu-v2023/openb_pod_list_default.csv"), "openb")
	// 8,152 pods less the 897 Pending ones that never ran.
	if len(w.Jobs) != 7255 {
		t.Fatalf("%d jobs, want 7,255", len(w.Jobs))
	}
	var failed, cpuOnly, shared int
	var milli int64
	var sum hwmodel.Time
	prio := map[int]int{}
	for _, j := range w.Jobs {
		failed += j.FailedAttempts
		if j.Req.GPUs == 0 {
			cpuOnly++
		}
		if j.Req.Fractional() {
			shared++
		}
		milli += j.Req.TotalMilli()
		sum += j.Duration
		prio[j.Priority]++
	}
	checks := []struct {
		what      string
		got, want int64
	}{
		{"failed pods", int64(failed), 1870},
		{"CPU-only pods", int64(cpuOnly), 1052},
		{"GPU-sharing pods", int64(shared), 2573},
		{"total milli-GPUs", milli, 5484930},
		{"total duration (s)", int64(sum / hwmodel.Second), 210028342},
		{"LS pods", int64(prio[2]), 4193},
		{"Burstable pods", int64(prio[1]), 98},
		{"BE and Guaranteed pods", int64(prio[0]), 2957 + 7},
		{"last submit (s)", int64(w.Jobs[len(w.Jobs)-1].Submit / hwmodel.Second), 12901761},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
}

// TestRealOpenBVariants reads the other pod lists: those with timestamps
// must read (the gpuspec lists name Alibaba's G2 and G3, which the
// catalogue has); the five-column multigpu lists must fail at the header,
// saying they have no times.
func TestRealOpenBVariants(t *testing.T) {
	dir := filepath.Dir(tracePath(t, "alibaba-gpu-v2023/openb_pod_list_default.csv"))
	files, _ := filepath.Glob(filepath.Join(dir, "openb_pod_list_*.csv"))
	for _, f := range files {
		w, err := ReadFile(f, "openb")
		name := filepath.Base(f)
		var pe *ParseError
		switch {
		case strings.Contains(name, "multigpu"):
			if !errors.As(err, &pe) || pe.Line != 1 || pe.Field != "creation_time" || !strings.Contains(pe.Msg, "no times") {
				t.Errorf("%s: got %v, want a no-times error on line 1", name, err)
			}
		case err == nil:
			if err := w.Validate(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		default:
			t.Errorf("%s: %v", name, err)
		}
	}
}
