package workloads

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// job is a small builder for Build's input.
func job(name, tenant string, submit, dur float64, src string) Job {
	return Job{Name: name, Tenant: tenant, Submit: hwmodel.FromSeconds(submit), Duration: hwmodel.FromSeconds(dur),
		Req: whole(1), Source: src}
}

func TestBuildSortsAndRemaps(t *testing.T) {
	jobs := []Job{
		job("c", "t2", 20, 1, "f:2"),
		job("a", "t1", 0, 1, "f:3"),
		job("b", "t2", 20, 1, "f:4"), // same submit as c: stays after it
		job("d", "t3", 5, 1, "f:5"),
	}
	deps := [][]string{{"a", "d"}, nil, {"c"}, {"a"}}
	before := append([]Job(nil), jobs...)
	w, err := Build(jobs, deps, []Tenant{{"idle", 4}, {"t2", 3}}, "f")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(jobs, before) {
		t.Error("Build modified its input")
	}
	var names []string
	for _, j := range w.Jobs {
		names = append(names, j.Name)
	}
	if want := []string{"a", "d", "c", "b"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	wantDeps := [][]int{nil, {0}, {0, 1}, {2}}
	for i, j := range w.Jobs {
		if !reflect.DeepEqual(j.Deps, wantDeps[i]) {
			t.Errorf("job %s deps %v, want %v", j.Name, j.Deps, wantDeps[i])
		}
	}
	wantT := []Tenant{{"t1", 1}, {"t3", 1}, {"t2", 3}, {"idle", 4}}
	if !reflect.DeepEqual(w.Tenants, wantT) {
		t.Errorf("tenants %v, want %v", w.Tenants, wantT)
	}
	if err := w.Validate(); err != nil {
		t.Error(err)
	}
	// Appending to one job's deps must not clobber another's.
	w.Jobs[1].Deps = append(w.Jobs[1].Deps, 3)
	if !reflect.DeepEqual(w.Jobs[2].Deps, []int{0, 1}) {
		t.Errorf("deps share capacity: %v", w.Jobs[2].Deps)
	}
}

func TestBuildErrors(t *testing.T) {
	ok := func(name string, submit float64, src string) Job { return job(name, "t", submit, 10, src) }
	cases := []struct {
		name    string
		jobs    []Job
		deps    [][]string
		tenants []Tenant
		want    ParseError // Msg: a substring
	}{
		{"zero duration", []Job{ok("a", 0, "x.csv:2"), {Name: "b", Tenant: "t", Req: whole(1), Source: "x.csv:3"}}, nil, nil,
			ParseError{"x.csv", 3, "duration_s", `job "b": want a duration > 0`}},
		{"negative estimate", []Job{{Name: "a", Tenant: "t", Duration: 1, Estimate: -1, Req: whole(1)}}, nil, nil,
			ParseError{"gen", 0, "estimate_s", "want an estimate >= 0"}},
		{"negative submit", []Job{{Name: "a", Tenant: "t", Submit: -1, Duration: 1, Req: whole(1), Source: "x.csv:9"}}, nil, nil,
			ParseError{"x.csv", 9, "submit_s", "want a submit time in [0,"}},
		{"bad request", []Job{{Name: "a", Tenant: "t", Duration: 1, Req: hwmodel.Request{GPUs: 2, GPUMilli: 500}}}, nil, nil,
			ParseError{"gen", 0, "gpus", "whole GPUs"}},
		{"negative retries", []Job{{Name: "a", Tenant: "t", Duration: 1, Req: whole(1), MaxRetries: -1}}, nil, nil,
			ParseError{"gen", 0, "retries", "want retries in 0.."}},
		{"negative failures", []Job{{Name: "a", Tenant: "t", Duration: 1, Req: whole(1), FailedAttempts: -2}}, nil, nil,
			ParseError{"gen", 0, "failed_attempts", "found -2"}},
		{"empty name", []Job{{Tenant: "t", Duration: 1, Req: whole(1), Source: "y:4"}}, nil, nil,
			ParseError{"y", 4, "name", "want a job name"}},
		{"empty tenant", []Job{{Name: "a", Duration: 1, Req: whole(1), Source: "y:4"}}, nil, nil,
			ParseError{"y", 4, "tenant", "want a tenant name"}},
		{"duplicate without source", []Job{ok("a", 0, ""), ok("a", 1, "")}, nil, nil,
			ParseError{"gen", 0, "name", `already used by the job at gen, job "a"`}},
		{"deps length", []Job{ok("a", 0, "")}, [][]string{nil, nil}, nil,
			ParseError{"gen", 0, "", "want one dependency list per job (1), found 2"}},
		{"unknown dep", []Job{ok("a", 0, "w:2")}, [][]string{{"b"}}, nil,
			ParseError{"w", 2, "deps", `depends on "b", but no job has that name`}},
		{"repeated dep", []Job{ok("a", 0, "w:2"), ok("b", 0, "w:3")}, [][]string{nil, {"a", "a"}}, nil,
			ParseError{"w", 3, "deps", `lists dependency "a" twice`}},
		{"dep submitted later", []Job{ok("a", 10, "w:2"), ok("b", 20, "w:3")}, [][]string{{"b"}, nil}, nil,
			ParseError{"w", 2, "deps", "submitted later, at 20 s"}},
		{"two-cycle", []Job{ok("a", 0, "w:2"), ok("b", 0, "w:3")}, [][]string{{"b"}, {"a"}}, nil,
			ParseError{"w", 2, "deps", `dependency cycle: "a" (w:2) -> "b" (w:3) -> "a"`}},
		{"cycle behind a chain", []Job{ok("a", 0, "w:2"), ok("b", 0, "w:3"), ok("c", 0, "w:4"), ok("d", 0, "w:5")},
			[][]string{{"b"}, {"c"}, {"d"}, {"b"}}, nil,
			ParseError{"w", 3, "deps", `"b" (w:3) -> "c" (w:4) -> "d" (w:5) -> "b"`}},
		{"bad weight", []Job{ok("a", 0, "")}, nil, []Tenant{{"t", 0}}, ParseError{"gen", 0, "weight", "finite weight > 0"}},
		{"duplicate tenant", []Job{ok("a", 0, "")}, nil, []Tenant{{"t", 1}, {"t", 2}}, ParseError{"gen", 0, "tenant", "twice"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(c.jobs, c.deps, c.tenants, "gen")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a ParseError", err)
			}
			if pe.File != c.want.File || pe.Line != c.want.Line || pe.Field != c.want.Field || !strings.Contains(pe.Msg, c.want.Msg) {
				t.Errorf("got %s:%d %q %q\nwant %s:%d %q containing %q", pe.File, pe.Line, pe.Field, pe.Msg, c.want.File, c.want.Line, c.want.Field, c.want.Msg)
			}
		})
	}
}

func TestValidateCatchesBrokenWorkloads(t *testing.T) {
	good := func() *Workload {
		w, err := Build([]Job{job("a", "x", 0, 1, ""), job("b", "y", 1, 1, ""), job("c", "x", 2, 1, "")},
			[][]string{nil, {"a"}, {"b"}}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	breakers := map[string]func(w *Workload){
		"unsorted":         func(w *Workload) { w.Jobs[0].Submit = 5 * hwmodel.Second },
		"dep out of range": func(w *Workload) { w.Jobs[1].Deps = []int{7} },
		"negative dep":     func(w *Workload) { w.Jobs[1].Deps = []int{-1} },
		"self dep":         func(w *Workload) { w.Jobs[1].Deps = []int{1} },
		"forward cycle": func(w *Workload) {
			w.Jobs[0].Deps = []int{2}
			w.Jobs[0].Submit = 2 * hwmodel.Second
			w.Jobs[1].Submit = 2 * hwmodel.Second
		},
		"dup name":       func(w *Workload) { w.Jobs[2].Name = "a" },
		"missing tenant": func(w *Workload) { w.Tenants = w.Tenants[:1] },
		"tenant order":   func(w *Workload) { w.Tenants[0], w.Tenants[1] = w.Tenants[1], w.Tenants[0] },
		"tenant twice":   func(w *Workload) { w.Tenants = append(w.Tenants, w.Tenants[0]) },
		"zero weight":    func(w *Workload) { w.Tenants[1].Weight = 0 },
		"bad request":    func(w *Workload) { w.Jobs[2].Req.GPUMilli = 0 },
	}
	for name, br := range breakers {
		w := good()
		br(w)
		if err := w.Validate(); err == nil {
			t.Errorf("%s: Validate passed", name)
		}
	}
}

func TestFillEstimates(t *testing.T) {
	jobs := []Job{
		job("a1", "A", 0, 10, ""), job("a2", "A", 0, 20, ""), job("a3", "A", 0, 30, ""), job("a4", "A", 0, 40, ""),
		job("b1", "B", 0, 100, ""),  // alone in (B, 1 GPU): median of the other 1-GPU jobs
		job("a8", "A", 0, 1000, ""), // alone with 8 GPUs: median of all the others
		job("kept", "A", 0, 5, ""),
	}
	jobs[5].Req = whole(8)
	jobs[6].Estimate = 77 * hwmodel.Second
	w, err := Build(jobs, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	w.FillEstimates()
	// (A,1) holds 5 10 20 30 40; leaving one out:
	//   a1 -> 5 20 30 40 -> 25; a2 -> 5 10 30 40 -> 20; a3 -> 5 10 20 40 -> 15;
	//   a4 -> 5 10 20 30 -> 15.
	// b1: 1-GPU jobs without it: 5 10 20 30 40 -> 20.
	// a8: all others: 5 10 20 30 40 100 -> 25.
	want := map[string]float64{"a1": 25, "a2": 20, "a3": 15, "a4": 15, "b1": 20, "a8": 25, "kept": 77}
	for _, j := range w.Jobs {
		if got := j.Estimate.Seconds(); got != want[j.Name] {
			t.Errorf("%s: estimate %g, want %g", j.Name, got, want[j.Name])
		}
	}
	one, _ := Build([]Job{job("solo", "A", 0, 42, "")}, nil, nil, "")
	one.FillEstimates()
	if one.Jobs[0].Estimate != 42*hwmodel.Second {
		t.Errorf("single job: estimate %v, want its own duration", one.Jobs[0].Estimate)
	}
	empty := &Workload{}
	empty.FillEstimates()
}

func TestSplitSource(t *testing.T) {
	for _, c := range []struct {
		src, file, wantFile string
		wantLine            int
	}{
		{"a.csv:12", "x", "a.csv", 12},
		{`C:\traces\a.csv:7`, "x", `C:\traces\a.csv`, 7},
		{"generated", "x", "generated", 0},
		{"a.csv:0", "x", "a.csv:0", 0},
		{"", "x", "x", 0},
	} {
		f, l := splitSource(c.src, c.file)
		if f != c.wantFile || l != c.wantLine {
			t.Errorf("splitSource(%q) = %q, %d; want %q, %d", c.src, f, l, c.wantFile, c.wantLine)
		}
	}
}
