package hwmodel

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func faultCluster(t testing.TB, nodes, gpus int) *Cluster {
	t.Helper()
	ns := make([]Node, nodes)
	for i := range ns {
		ns[i] = Node{Name: "node-" + strconv.Itoa(i), Model: 0, GPUs: gpus, CPUMilli: 1000, MemoryMiB: 1000}
	}
	c, err := NewCluster(ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// meanTTF returns the mean time between a unit's repair and its next
// failure over all units of the schedule.
func meanTTF(fs []Fault) (float64, int) {
	type unit struct{ n, g int }
	last := map[unit]Time{}
	var sum float64
	n := 0
	for _, f := range fs {
		u := unit{f.Node, f.GPU}
		sum += float64(f.At - last[u])
		n++
		last[u] = f.End()
	}
	return sum / float64(n), n
}

func TestScheduleRecoversMTBF(t *testing.T) {
	c := faultCluster(t, 10, 8)
	for _, tc := range []struct {
		name  string
		model FailureModel
	}{
		{"exponential", FailureModel{NodeMTBF: 10 * Day, NodeRepair: RepairModel{Kind: "fixed", Mean: 2 * Hour}}},
		{"weibull 0.7", FailureModel{NodeMTBF: 10 * Day, Distribution: "weibull", WeibullShape: 0.7, NodeRepair: RepairModel{Kind: "exponential", Mean: 2 * Hour}}},
		{"weibull 2", FailureModel{NodeMTBF: 10 * Day, Distribution: "weibull", WeibullShape: 2, NodeRepair: RepairModel{Kind: "lognormal", Mean: 2 * Hour, Sigma: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := tc.model.Schedule(c, 20000*Day, 42)
			mean, n := meanTTF(fs)
			if n < 10000 {
				t.Fatalf("only %d failures", n)
			}
			got := mean / float64(10*Day)
			if math.Abs(got-1) > 0.03 {
				t.Errorf("mean time to failure = %.4f × MTBF over %d failures, want 1 ± 3%%", got, n)
			}
			var rep float64
			for _, f := range fs {
				if f.GPU != -1 {
					t.Fatalf("GPU fault %v from a node-only model", f)
				}
				rep += float64(f.Repair)
			}
			rep /= float64(len(fs))
			if math.Abs(rep/float64(2*Hour)-1) > 0.05 {
				t.Errorf("mean repair = %.4f × 2h, want 1 ± 5%%", rep/float64(2*Hour))
			}
		})
	}
}

func TestScheduleDeterministicAndSorted(t *testing.T) {
	c := faultCluster(t, 6, 8)
	m := FailureModel{NodeMTBF: 5 * Day, GPUMTBF: 20 * Day, NodeRepair: RepairModel{Mean: Hour}, GPURepair: RepairModel{Kind: "exponential", Mean: 4 * Hour}}
	a := m.Schedule(c, 100*Day, 7)
	b := m.Schedule(c, 100*Day, 7)
	if !reflect.DeepEqual(a, b) || len(a) == 0 {
		t.Fatalf("same seed gave different schedules (%d, %d faults)", len(a), len(b))
	}
	if !slices.IsSortedFunc(a, compareFaults) {
		t.Error("schedule is not sorted by (At, Node, GPU)")
	}
	for _, f := range a {
		if err := f.Validate(c); err != nil {
			t.Errorf("%v: %v", f, err)
		}
		if f.At >= 100*Day {
			t.Errorf("%v starts after the horizon", f)
		}
	}
	if d := m.Schedule(c, 100*Day, 8); reflect.DeepEqual(a, d) {
		t.Error("another seed gave the same schedule")
	}
	// Node failures do not move when GPU failures are turned off.
	nodeOnly := m
	nodeOnly.GPUMTBF = 0
	var nodes []Fault
	for _, f := range a {
		if f.GPU == -1 {
			nodes = append(nodes, f)
		}
	}
	if got := nodeOnly.Schedule(c, 100*Day, 7); !reflect.DeepEqual(got, nodes) {
		t.Error("turning GPU failures off moved the node failures")
	}
	if got := (FailureModel{}).Schedule(c, 100*Day, 7); len(got) != 0 {
		t.Errorf("disabled model gave %d faults", len(got))
	}
}

func TestFailureModelValidate(t *testing.T) {
	for _, m := range []FailureModel{
		{NodeMTBF: -1},
		{NodeMTBF: Day, Distribution: "gamma", NodeRepair: RepairModel{Mean: Hour}},
		{NodeMTBF: Day, Distribution: "weibull", NodeRepair: RepairModel{Mean: Hour}},
		{NodeMTBF: Day},
		{GPUMTBF: Day, GPURepair: RepairModel{Kind: "lognormal", Mean: Hour}},
		{GPUMTBF: Day, GPURepair: RepairModel{Kind: "weird", Mean: Hour}},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
}

func TestParseFault(t *testing.T) {
	c := faultCluster(t, 3, 8)
	good := map[string]Fault{
		"node-2@3h+30m":      {At: 3 * Hour, Node: 2, GPU: -1, Repair: 30 * Minute},
		"node-1/gpu3@90+1d":  {At: 90 * Second, Node: 1, GPU: 3, Repair: Day},
		"node-0/gpu7@0s+1ms": {At: 0, Node: 0, GPU: 7, Repair: Millisecond},
	}
	for s, want := range good {
		got, err := ParseFault(s, c)
		if err != nil || got != want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if back, err := ParseFault(got.Format(c), c); err != nil || back != got {
			t.Errorf("Format round trip of %q: %q gives %+v, %v", s, got.Format(c), back, err)
		}
	}
	bad := map[string]string{
		"node-2":            "want NODE@TIME",
		"node-2@3h":         "TIME+REPAIR",
		"node-9@3h+30m":     "no node named",
		"node-2/gpu8@3h+1m": "GPUs 0..7",
		"node-2/gpux@3h+1m": "/gpuN",
		"node-2@-1h+1m":     "must be >= 0",
		"node-2@1h+0s":      "must be > 0",
		"node-2@1q+1m":      "time:",
		"node-2@1h+zz":      "repair:",
	}
	for s, want := range bad {
		_, err := ParseFault(s, c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFault(%q) error = %v, want one containing %q", s, err, want)
		}
	}
}

func TestReadFaultTrace(t *testing.T) {
	c := faultCluster(t, 3, 8)
	dir := t.TempDir()
	p := filepath.Join(dir, "f.csv")
	os.WriteFile(p, []byte("time_s,node,gpu,duration_s\n# comment\n7200,node-1,,600\n60,node-0,5,30.5\n"), 0o644)
	got, err := ReadFaultTrace(p, c)
	want := []Fault{{At: 60 * Second, Node: 0, GPU: 5, Repair: 30500 * Millisecond}, {At: 2 * Hour, Node: 1, GPU: -1, Repair: 10 * Minute}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	for body, wantErr := range map[string]string{
		"":                           "empty",
		"time,node,gpu,duration_s\n": ":1: header",
		"time_s,node,gpu,duration_s\nx,node-1,,1\n":               ":2: time_s",
		"time_s,node,gpu,duration_s\n1,node-1,,1\n-1,node-1,,1\n": ":3: time_s",
		"time_s,node,gpu,duration_s\n1,node-7,,1\n":               ":2: node",
		"time_s,node,gpu,duration_s\n1,node-1,8,1\n":              ":2: gpu",
		"time_s,node,gpu,duration_s\n1,node-1,,0\n":               ":2: duration_s",
		"time_s,node,gpu,duration_s\n1,node-1,,1,5\n":             ":2:",
	} {
		os.WriteFile(p, []byte(body), 0o644)
		_, err := ReadFaultTrace(p, c)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one naming the file and %q", body, err, wantErr)
		}
	}
}

func FuzzReadFaults(f *testing.F) {
	c := faultCluster(f, 3, 8)
	f.Add("time_s,node,gpu,duration_s\n7200,node-1,,600\n60,node-0,5,30.5\n")
	f.Add("time_s,node,gpu,duration_s\n1e300,node-1,,1\n")
	f.Add("time_s,node,gpu,duration_s\n\"1\",node-2,\"\",NaN\n")
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ReadFaults(strings.NewReader(s), "fuzz.csv", c)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if !slices.IsSortedFunc(fs, compareFaults) {
			t.Fatal("not sorted")
		}
		for _, f := range fs {
			if err := f.Validate(c); err != nil {
				t.Fatalf("%v: %v", f, err)
			}
		}
	})
}
