package kueue

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/brigadesim/brigade/config"
)

// resourceNames are the resources a ClusterQueue may cover.
var resourceNames = []string{"nvidia.com/gpu", "cpu", "memory"}

// Quantity is a Kubernetes resource quantity: a number (8, 0.5, 1e3) or
// a string with a suffix, decimal (m, k, M, G, T, P, E) or binary (Ki,
// Mi, Gi, Ti, Pi, Ei), as in "500m" or "256Gi". It is kept exact.
type Quantity struct {
	r    big.Rat
	text string
}

// suffixes are the quantity suffixes and their factors.
var suffixes = []struct {
	s      string
	num    int64
	den    int64
	binary int // power of 1024, for the binary ones
}{
	{"Ki", 1, 1, 1}, {"Mi", 1, 1, 2}, {"Gi", 1, 1, 3}, {"Ti", 1, 1, 4}, {"Pi", 1, 1, 5}, {"Ei", 1, 1, 6},
	{"m", 1, 1000, 0}, {"k", 1e3, 1, 0}, {"M", 1e6, 1, 0}, {"G", 1e9, 1, 0}, {"T", 1e12, 1, 0}, {"P", 1e15, 1, 0}, {"E", 1e18, 1, 0},
}

// UnmarshalConfig reads a number or a quantity string.
func (q *Quantity) UnmarshalConfig(v config.Value) {
	if !v.IsScalar() {
		v.Fail("want a quantity such as 8, 500m or 256Gi, got %s", v.Describe())
		return
	}
	text, ok := v.String()
	if !ok {
		if _, isBool := v.Bool(); isBool {
			v.Fail("want a quantity such as 8, 500m or 256Gi, got %s", v.Describe())
			return
		}
		text = strings.TrimPrefix(v.Describe(), "number ")
	}
	if err := q.parse(text); err != nil {
		v.Fail("%v", err)
	}
}

// ParseQuantity reads a quantity string.
func ParseQuantity(text string) (Quantity, error) {
	var q Quantity
	return q, q.parse(text)
}

func (q *Quantity) parse(text string) error {
	bad := fmt.Errorf("want a quantity such as 8, 500m or 256Gi, got %q", text)
	t := strings.TrimSpace(text)
	if t == "" || len(t) > 64 {
		return bad
	}
	num, factor := t, new(big.Rat).SetInt64(1)
	for _, s := range suffixes {
		if strings.HasSuffix(t, s.s) && len(t) > len(s.s) {
			num = t[:len(t)-len(s.s)]
			if s.binary > 0 {
				factor.SetInt(new(big.Int).Lsh(big.NewInt(1), uint(10*s.binary)))
			} else {
				factor.SetFrac64(s.num, s.den)
			}
			break
		}
	}
	// Digits, one point, an optional exponent: what big.Rat takes, less
	// fractions ("1/2") and exponents that would make huge numbers.
	if strings.ContainsAny(num, "/_xXpP") || strings.Count(num, ".") > 1 {
		return bad
	}
	if k := strings.IndexAny(num, "eE"); k >= 0 {
		var exp int
		if _, err := fmt.Sscanf(num[k+1:], "%d", &exp); err != nil || exp > 30 || exp < -30 {
			return bad
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return bad
	}
	q.r.Mul(r, factor)
	q.text = t
	return nil
}

// String is the quantity as written.
func (q *Quantity) String() string { return q.text }

// Sign is -1, 0 or +1.
func (q *Quantity) Sign() int { return q.r.Sign() }

// Cmp compares two quantities.
func (q *Quantity) Cmp(o *Quantity) int { return q.r.Cmp(&o.r) }

// Float is the quantity as a float64 (a fair-sharing weight).
func (q *Quantity) Float() float64 {
	f, _ := q.r.Float64()
	return f
}

// In returns the quantity in Brigade's unit for resource: milli-GPU for
// nvidia.com/gpu (which must be whole GPUs), milli-CPU for cpu (whole
// millicores), MiB for memory (rounded down); an error if it is
// negative, not whole in that unit, or too large.
func (q *Quantity) In(resource string) (int64, error) {
	if q.r.Sign() < 0 {
		return 0, fmt.Errorf("want a quantity >= 0, got %s", q.text)
	}
	v := new(big.Rat)
	switch resource {
	case "nvidia.com/gpu":
		if !q.r.IsInt() {
			return 0, fmt.Errorf("want whole GPUs, got %s", q.text)
		}
		v.Mul(&q.r, big.NewRat(1000, 1))
	case "cpu":
		v.Mul(&q.r, big.NewRat(1000, 1))
		if !v.IsInt() {
			return 0, fmt.Errorf("want whole millicores, got %s", q.text)
		}
	case "memory":
		v.Quo(&q.r, big.NewRat(1<<20, 1))
	default:
		return 0, fmt.Errorf("unsupported resource %q", resource)
	}
	i := new(big.Int).Quo(v.Num(), v.Denom())
	if !i.IsInt64() || i.Int64() >= math.MaxInt64/4 {
		return 0, fmt.Errorf("%s is too large", q.text)
	}
	return i.Int64(), nil
}
