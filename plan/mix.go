package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Mix is a fleet of two or more GPU models in fixed proportions of nodes:
// Shares[i] of every sum(Shares) nodes are of Models[i]. The planner
// sizes a mix as it sizes one model, by its total node count.
type Mix struct {
	Models []string // canonical names
	Shares []int    // > 0 each
}

// Label names the mix, e.g. "H100-80GB+A100-80GB 1:3": the name the
// planner's points and evidence carry.
func (m Mix) Label() string {
	shares := make([]string, len(m.Shares))
	for i, s := range m.Shares {
		shares[i] = strconv.Itoa(s)
	}
	return strings.Join(m.Models, "+") + " " + strings.Join(shares, ":")
}

// Split is how many of nodes each model gets: nodes × share / total,
// rounded down, and the nodes left over to the largest remainders (the
// earlier model on a tie), so the counts sum to nodes.
func (m Mix) Split(nodes int) []int {
	total := 0
	for _, s := range m.Shares {
		total += s
	}
	out := make([]int, len(m.Shares))
	rem := make([]int, len(m.Shares))
	left := nodes
	for i, s := range m.Shares {
		out[i] = nodes * s / total
		rem[i] = nodes * s % total
		left -= out[i]
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
	}
	return out
}

// Describe says what nodes of the mix are, e.g. "25 × H100-80GB + 75 ×
// A100-80GB nodes".
func (m Mix) Describe(nodes int) string {
	var parts []string
	for i, n := range m.Split(nodes) {
		parts = append(parts, fmt.Sprintf("%d × %s", n, m.Models[i]))
	}
	return strings.Join(parts, " + ") + " nodes"
}

// Mixes are the two-model mixes of models with node shares k:(steps−k)
// for k = 1..steps−1, each pair in the order given, shares in lowest
// terms, none twice: steps 4 gives 1:3, 1:1 and 3:1 of every pair.
func Mixes(models []string, steps int) []Mix {
	var out []Mix
	seen := map[string]bool{}
	for i := range models {
		for j := i + 1; j < len(models); j++ {
			for k := 1; k < steps; k++ {
				g := gcd(k, steps-k)
				m := Mix{Models: []string{models[i], models[j]}, Shares: []int{k / g, (steps - k) / g}}
				if !seen[m.Label()] {
					seen[m.Label()] = true
					out = append(out, m)
				}
			}
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
