package hwmodel

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 GPUs"}, {1, "1 GPU"}, {-1, "-1 GPU"}, {2, "2 GPUs"}} {
		if got := Plural(c.n, "GPU", "GPUs"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
