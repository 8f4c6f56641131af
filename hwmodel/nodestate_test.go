package hwmodel

import "testing"

func TestNodeGenerationFreeMilliAndShareKinds(t *testing.T) {
	c, err := NewCluster([]Node{
		{Name: "a", Model: 0, GPUs: 4, CPUMilli: 8000, MemoryMiB: 8192},
		{Name: "b", Model: 0, GPUs: 2, CPUMilli: 8000, MemoryMiB: 8192},
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string, gen0, gen1 uint64, free0 int64, kinds0 int, counts0 [5]int) {
		t.Helper()
		if g := c.Generation(0); g != gen0 {
			t.Errorf("%s: generation(a) = %d, want %d", step, g, gen0)
		}
		if g := c.Generation(1); g != gen1 {
			t.Errorf("%s: generation(b) = %d, want %d", step, g, gen1)
		}
		if f := c.NodeFreeMilli(0); f != free0 {
			t.Errorf("%s: free milli(a) = %d, want %d", step, f, free0)
		}
		if k := c.ShareKinds(0); k != kinds0 {
			t.Errorf("%s: kinds(a) = %d, want %d", step, k, kinds0)
		}
		for k, want := range counts0 {
			if got := c.SharesOfKind(0, k); got != want {
				t.Errorf("%s: shares of kind %d on a = %d, want %d", step, k, got, want)
			}
		}
		if err := c.CheckInvariants(); err != nil {
			t.Errorf("%s: %v", step, err)
		}
	}
	check("idle", 0, 0, 4000, 0, [5]int{})
	share := Placement{{Node: 0, GPUs: 0b1, Milli: 300, CPUMilli: 100}}
	two := Placement{{Node: 0, GPUs: 0b1100, Milli: 1000}}
	cpu := Placement{{Node: 0, CPUMilli: 1000}}
	for _, p := range []Placement{share, share, two, cpu} {
		if err := c.Allocate(p); err != nil {
			t.Fatal(err)
		}
	}
	check("allocated", 4, 0, 4000-600-2000, 2, [5]int{0: 2, 2: 1})
	if err := c.Allocate(Placement{{Node: 0, GPUs: 0b1, Milli: 500}}); err == nil {
		t.Fatal("over capacity accepted")
	}
	check("refused", 4, 0, 1400, 2, [5]int{0: 2, 2: 1})
	c.Release(two)
	check("released two", 5, 0, 3400, 1, [5]int{0: 2})
	c.Release(share)
	c.Release(share)
	c.Release(cpu)
	check("released all", 8, 0, 4000, 0, [5]int{})
	if c.SharesOfKind(1, 3) != 0 || c.SharesOfKind(1, -1) != 0 {
		t.Error("kind beyond the node's GPUs must count 0")
	}
}
