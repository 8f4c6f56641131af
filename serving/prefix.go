package serving

import (
	"math/rand/v2"

	"github.com/brigadesim/brigade/config"
)

// PrefixShare is a class's shared prompt prefix: each request belongs to
// one of Groups prefix groups, drawn uniformly, and its first
// min(Tokens, input) prompt tokens are the group's (a system prompt, a
// few-shot preamble). Under the iteration-level model, a replica's KV
// cache keeps the full blocks of a group's prefix for the group's later
// requests (package iteration's prefix caching), so those requests
// compute only the rest of their prompt. The token-rate model ignores
// prefixes: its prefill time is the whole prompt's.
type PrefixShare struct {
	Groups, Tokens int
}

type prefixFile struct {
	Groups int `json:"groups" config:"required"`
	Tokens int `json:"tokens" config:"required"`
}

// maxClassGroups bounds a class's prefix groups.
const maxClassGroups = 1 << 20

func (p PrefixShare) check(e *config.Errors, trace bool) {
	if p == (PrefixShare{}) {
		return
	}
	if trace {
		e.Add("", "a request trace gives each request's prefix (its prefix_group and prefix_length columns); want no prefix section")
		return
	}
	if p.Groups < 1 || p.Groups > maxClassGroups {
		e.Add("groups", "want 1 to %d prefix groups, got %d", maxClassGroups, p.Groups)
	}
	if p.Tokens < 1 || p.Tokens > maxTraceTokens {
		e.Add("tokens", "want 1 to %d shared prompt tokens, got %d", maxTraceTokens, p.Tokens)
	}
}

// arrivePrefix gives request q of class ci its prefix group: the trace's,
// or one drawn from the class's stream when the class has a prefix
// section (classes without one draw nothing, so their streams are as
// before). Group ids are per service; a class's groups follow those of
// the classes before it, so no two classes share a group.
func (m *model) arrivePrefix(s *service, ci int, q *request, rng *rand.Rand) {
	q.group, q.prefix, q.hit = -1, 0, 0
	if s.trace != nil {
		if t := &s.traceNext; t.Group >= 0 {
			q.group, q.prefix = t.Group, t.PrefixLength
		}
		return
	}
	p := s.spec.Classes[ci].Prefix
	if p.Groups == 0 {
		return
	}
	base := 0
	for _, c := range s.spec.Classes[:ci] {
		base += c.Prefix.Groups
	}
	q.group = int32(base + rng.IntN(p.Groups))
	q.prefix = int32(min(p.Tokens, int(q.in)))
}

// prefixRatio is hit tokens over prompt tokens (0 without any).
func prefixRatio(hit, input int64) float64 {
	if input == 0 {
		return 0
	}
	return float64(hit) / float64(input)
}
