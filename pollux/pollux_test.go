package pollux

import (
	"fmt"
	"testing"
)

// TestPublishedJCTs runs every published baseline run (Tiresias and
// Optimus, 32 runs and 6,400 jobs each) and requires every job to have
// exactly the published JCT.
func TestPublishedJCTs(t *testing.T) {
	apps, err := Apps()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		baseline string
		jobs     int
	}{
		{"tiresias", 6400},
		{"optimus", 6400},
	} {
		t.Run(c.baseline, func(t *testing.T) {
			b, ok := LookupBaseline(c.baseline)
			if !ok {
				t.Fatalf("no baseline %q", c.baseline)
			}
			compared := 0
			for _, load := range b.Loads {
				pub, err := PublishedOf(b.Name, load)
				if err != nil {
					t.Fatal(err)
				}
				if len(pub) != Workloads {
					t.Fatalf("load %s: %d published workloads, want %d", load, len(pub), Workloads)
				}
				for n := 1; n <= Workloads; n++ {
					w, err := Workload(load, n)
					if err != nil {
						t.Fatal(err)
					}
					ours, err := JCTs(w, apps, b.Spec)
					if err != nil {
						t.Fatalf("load %s workload %d: %v", load, n, err)
					}
					want := pub[fmt.Sprintf("workload-%d", n)]
					if len(want) != len(w.Jobs) {
						t.Errorf("load %s workload %d: %d published jobs, %d in the workload", load, n, len(want), len(w.Jobs))
					}
					for _, j := range w.Jobs {
						p, ok := want[j.Name]
						if !ok {
							t.Errorf("load %s workload %d: job %s has no published JCT", load, n, j.Name)
							continue
						}
						compared++
						if got := ours[j.Name]; got != p {
							t.Errorf("load %s workload %d: job %s: JCT %g s, published %g s", load, n, j.Name, got, p)
						}
					}
				}
			}
			if compared != c.jobs {
				t.Errorf("compared %d jobs, want %d", compared, c.jobs)
			}
		})
	}
}

// TestCompareDeterministic: two comparisons give the same table.
func TestCompareDeterministic(t *testing.T) {
	a, err := Compare(Policy, []string{"0.5"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compare(Policy, []string{"0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("two runs differ:\n%v\n%v", a, b)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Workload("3.0", 1); err == nil {
		t.Error("load 3.0 accepted")
	}
	if _, err := Workload("1.0", 9); err == nil {
		t.Error("workload 9 accepted")
	}
	if _, err := Published("0.7"); err == nil {
		t.Error("published load 0.7 accepted")
	}
	if _, err := PublishedOf("optimus", "3.0"); err == nil {
		t.Error("published optimus load 3.0 accepted")
	}
	if _, err := PublishedOf("pollux", "1.0"); err == nil {
		t.Error("published pollux accepted (no exact target)")
	}
	if _, err := Compare("nosuch", []string{"0.5"}); err == nil {
		t.Error("an unknown policy accepted")
	}
}

// BenchmarkOptimus runs the artifact's 32 Optimus runs (6,400 jobs): its
// CPU time per op is docs/pollux.md's speed.
func BenchmarkOptimus(b *testing.B) { benchRuns(b, OptimusPolicy) }

// BenchmarkAll32 runs the artifact's 32 Tiresias runs (6,400 jobs): its
// CPU time per op is docs/pollux.md's speed.
func BenchmarkAll32(b *testing.B) { benchRuns(b, Policy) }

// benchRuns runs every workload at every load under policy, per op.
func benchRuns(b *testing.B, policy string) {
	apps, err := Apps()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, load := range Loads {
			for n := 1; n <= Workloads; n++ {
				w, err := Workload(load, n)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := JCTs(w, apps, policy); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
