package plan

import (
	"fmt"
	"reflect"
	"testing"
)

// TestMixSplit: a mix of n nodes always has n nodes, each model gets its
// share rounded down or up (largest remainders), and a size that is a
// multiple of the shares' sum splits exactly. Bugs it catches: rounding
// each share on its own (the counts sum to n ± 1), the nodes left over
// all going to one model (1:1:1 of 2 nodes as 2+0+0), and a leftover
// given to the wrong model.
func TestMixSplit(t *testing.T) {
	shareSets := [][]int{{1}, {1, 1}, {1, 3}, {3, 1}, {1, 2}, {2, 1}, {5, 3}, {1, 7}, {1, 1, 1}, {2, 1, 1}, {2, 3, 5}, {1, 1, 1, 1, 1, 1, 1}}
	for _, shares := range shareSets {
		m := Mix{Models: make([]string, len(shares)), Shares: shares}
		for i := range m.Models {
			m.Models[i] = fmt.Sprintf("M%d", i)
		}
		total := 0
		for _, s := range shares {
			total += s
		}
		for n := 0; n <= 50; n++ {
			got := m.Split(n)
			if len(got) != len(shares) {
				t.Fatalf("%v of %d: %v, want %d counts", shares, n, got, len(shares))
			}
			sum := 0
			for i, c := range got {
				sum += c
				floor := n * shares[i] / total
				if c != floor && c != floor+1 {
					t.Errorf("%v of %d: %v gives model %d %d nodes, want %d or %d (%d × %d/%d)", shares, n, got, i, c, floor, floor+1, n, shares[i], total)
				}
				if n%total == 0 && c != floor {
					t.Errorf("%v of %d: %v, want exactly %d for model %d", shares, n, got, floor, i)
				}
			}
			if sum != n {
				t.Errorf("%v of %d: %v sums to %d", shares, n, got, sum)
			}
		}
	}
	for _, tc := range []struct {
		shares []int
		n      int
		want   []int
	}{
		{[]int{1, 3}, 4, []int{1, 3}},
		{[]int{1, 3}, 100, []int{25, 75}},
		{[]int{1, 3}, 5, []int{1, 4}}, // remainders 1 and 3: the second
		{[]int{1, 3}, 7, []int{2, 5}}, // remainders 3 and 1: the first
		{[]int{1, 1}, 5, []int{3, 2}}, // a tie: the earlier model
		{[]int{1, 2}, 4, []int{1, 3}}, // remainders 1 and 2
		{[]int{2, 1, 1}, 5, []int{3, 1, 1}},
		{[]int{1, 1, 1}, 2, []int{1, 1, 0}},
		{[]int{2, 3, 5}, 3, []int{1, 1, 1}}, // floors 0, 0, 1; remainders 6, 9, 5 of 10
		{[]int{1, 7}, 1, []int{0, 1}},
	} {
		m := Mix{Models: make([]string, len(tc.shares)), Shares: tc.shares}
		if got := m.Split(tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v of %d = %v, want %v", tc.shares, tc.n, got, tc.want)
		}
	}
}

// TestMixes: every pair of models, in the order given, at shares
// k:(steps−k) in lowest terms, none twice. Bugs it catches: shares not
// reduced (6 steps giving 2:4 beside 1:2 sizes the same fleet twice), a
// pair taken in both orders, and k running to steps (a 4:0 "mix").
func TestMixes(t *testing.T) {
	labels := func(ms []Mix) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Label())
		}
		return out
	}
	tests := []struct {
		models []string
		steps  int
		want   []string
	}{
		{[]string{"A", "B"}, 4, []string{"A+B 1:3", "A+B 1:1", "A+B 3:1"}},
		{[]string{"H100-80GB", "A100-80GB", "L4"}, 4, []string{
			"H100-80GB+A100-80GB 1:3", "H100-80GB+A100-80GB 1:1", "H100-80GB+A100-80GB 3:1",
			"H100-80GB+L4 1:3", "H100-80GB+L4 1:1", "H100-80GB+L4 3:1",
			"A100-80GB+L4 1:3", "A100-80GB+L4 1:1", "A100-80GB+L4 3:1",
		}},
		{[]string{"A", "B"}, 6, []string{"A+B 1:5", "A+B 1:2", "A+B 1:1", "A+B 2:1", "A+B 5:1"}},
		{[]string{"A", "B"}, 2, []string{"A+B 1:1"}},
		{[]string{"A", "B"}, 12, []string{"A+B 1:11", "A+B 1:5", "A+B 1:3", "A+B 1:2", "A+B 5:7", "A+B 1:1", "A+B 7:5", "A+B 2:1", "A+B 3:1", "A+B 5:1", "A+B 11:1"}},
		{[]string{"A", "B"}, 1, nil},
		{[]string{"A", "B"}, 0, nil},
		{[]string{"A"}, 4, nil},
		{nil, 4, nil},
	}
	for _, tc := range tests {
		got := Mixes(tc.models, tc.steps)
		if l := labels(got); !reflect.DeepEqual(l, tc.want) {
			t.Errorf("Mixes(%v, %d) = %q, want %q", tc.models, tc.steps, l, tc.want)
		}
	}
	// For every step count the planner takes: no label twice, every mix
	// two models with shares > 0 in lowest terms.
	models := []string{"A", "B", "C", "D"}
	for steps := 2; steps <= 16; steps++ {
		seen := map[string]bool{}
		for _, m := range Mixes(models, steps) {
			if seen[m.Label()] {
				t.Errorf("steps %d: %s twice", steps, m.Label())
			}
			seen[m.Label()] = true
			if len(m.Models) != 2 || len(m.Shares) != 2 || m.Models[0] == m.Models[1] || m.Shares[0] <= 0 || m.Shares[1] <= 0 || gcd(m.Shares[0], m.Shares[1]) != 1 {
				t.Errorf("steps %d: %+v", steps, m)
			}
		}
	}
}

// TestMixLabel: the label and description formats the planner's points
// and report carry.
func TestMixLabel(t *testing.T) {
	m := Mix{Models: []string{"H100-80GB", "A100-80GB"}, Shares: []int{1, 3}}
	if got, want := m.Label(), "H100-80GB+A100-80GB 1:3"; got != want {
		t.Errorf("Label = %q, want %q", got, want)
	}
	if got, want := m.Describe(100), "25 × H100-80GB + 75 × A100-80GB nodes"; got != want {
		t.Errorf("Describe(100) = %q, want %q", got, want)
	}
	if got, want := m.Describe(5), "1 × H100-80GB + 4 × A100-80GB nodes"; got != want {
		t.Errorf("Describe(5) = %q, want %q", got, want)
	}
	three := Mix{Models: []string{"B200-180GB", "H200-141GB", "L40S"}, Shares: []int{2, 1, 1}}
	if got, want := three.Label(), "B200-180GB+H200-141GB+L40S 2:1:1"; got != want {
		t.Errorf("Label = %q, want %q", got, want)
	}
	if got, want := three.Describe(8), "4 × B200-180GB + 2 × H200-141GB + 2 × L40S nodes"; got != want {
		t.Errorf("Describe(8) = %q, want %q", got, want)
	}
}
