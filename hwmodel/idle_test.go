package hwmodel

import "testing"

func TestHasNodeWithIdleGPUs(t *testing.T) {
	a100, _ := LookupModel("A100-80GB")
	t4, _ := LookupModel("T4")
	h100, _ := LookupModel("H100")
	c, err := NewCluster([]Node{
		{Name: "a0", Model: a100.ID, GPUs: 8, CPUMilli: 1000, MemoryMiB: 1000},
		{Name: "a1", Model: a100.ID, GPUs: 8, CPUMilli: 1000, MemoryMiB: 1000},
		{Name: "t0", Model: t4.ID, GPUs: 4, CPUMilli: 1000, MemoryMiB: 1000},
	})
	if err != nil {
		t.Fatal(err)
	}
	// a0 keeps 5 idle, a1 keeps 2 idle, t0 stays fully idle.
	for _, p := range []Placement{
		{{Node: 0, GPUs: 0b111, Milli: 1000}},
		{{Node: 1, GPUs: 0b111111, Milli: 1000}},
	} {
		if err := c.Allocate(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		models ModelSet
		n      int
		want   bool
	}{
		{AnyModel, 5, true},
		{AnyModel, 6, false},
		{Of(a100.ID), 5, true},
		{Of(t4.ID), 4, true},
		{Of(t4.ID), 5, false},
		{Of(h100.ID), 1, false},
		{Of(a100.ID, t4.ID), 0, true},
	}
	for _, tc := range tests {
		if got := c.HasNodeWithIdleGPUs(tc.models, tc.n); got != tc.want {
			t.Errorf("HasNodeWithIdleGPUs(%s, %d) = %v, want %v", tc.models, tc.n, got, tc.want)
		}
	}
	c.Release(Placement{{Node: 0, GPUs: 0b111, Milli: 1000}})
	if !c.HasNodeWithIdleGPUs(AnyModel, 8) {
		t.Error("after releasing a0 no node reports 8 idle GPUs")
	}
	if err := c.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
