package config

import "strings"

// Suggest returns the known name an unknown key most likely misspells, or
// "": the name it equals ignoring case and "-" for "_"; else the one it
// shares the longest prefix with (three bytes at least; the nearer by
// EditDistance, then the first, on a tie); else the nearest within one
// edit (three bytes or more) or two (six bytes or more).
func Suggest(key string, known []string) string {
	k := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	best, bestPrefix, bestDist := "", 2, 0
	for _, name := range known {
		if k == name {
			return name
		}
		n := 0
		for n < len(k) && n < len(name) && k[n] == name[n] {
			n++
		}
		dist := EditDistance(k, name)
		if n > bestPrefix || (n == bestPrefix && best != "" && dist < bestDist) {
			best, bestPrefix, bestDist = name, n, dist
		}
	}
	if best != "" {
		return best
	}
	// A slip of one edit in a short key, of two in a long one.
	reach := 0
	switch {
	case len(k) >= 6:
		reach = 2
	case len(k) >= 3:
		reach = 1
	}
	bestDist = reach + 1
	for _, name := range known {
		if d := EditDistance(k, name); d < bestDist {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return best
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, capped at 64
// (longer strings count as 64 apart): the one distance behind every
// did-you-mean hint, of the config files and of the policy grammar.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
