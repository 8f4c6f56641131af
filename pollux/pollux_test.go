package pollux

import (
	"fmt"
	"testing"
)

// TestPublishedJCTs runs all 32 of the artifact's Tiresias runs and
// requires every one of the 6,400 jobs to have exactly the published JCT.
func TestPublishedJCTs(t *testing.T) {
	apps, err := Apps()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, load := range Loads {
		pub, err := Published(load)
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
			ours, err := JCTs(w, apps, Policy)
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
	if compared != 6400 {
		t.Errorf("compared %d jobs, want 6400", compared)
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
	if _, err := Compare("nosuch", []string{"0.5"}); err == nil {
		t.Error("an unknown policy accepted")
	}
}

// BenchmarkAll32 runs the artifact's 32 Tiresias runs (6,400 jobs): its
// CPU time per op is docs/pollux.md's speed.
func BenchmarkAll32(b *testing.B) {
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
				if _, err := JCTs(w, apps, Policy); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
