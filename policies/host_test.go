package policies

import (
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// scripted reserves the placements res, in order, and returns out.
type scripted struct {
	res []hwmodel.Placement
	out []Decision
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Schedule(v View) []Decision {
	for _, p := range s.res {
		if err := v.Reserve(p); err != nil {
			panic(err)
		}
	}
	return s.out
}

// TestHostScheduleReservations checks that however a call's decisions
// match its reservations (in order, out of order, refused before Start,
// preempting, reserved without a decision), Host.Schedule leaves the books
// and answers of dropping every reservation before applying anything.
func TestHostScheduleReservations(t *testing.T) {
	// One node of 4 GPUs; job k asks for whole(2) except where noted.
	gpus := func(mask uint64) hwmodel.Placement {
		return hwmodel.Placement{{Node: 0, GPUs: mask, Milli: hwmodel.MilliPerGPU, CPUMilli: 2000, MemoryMiB: 2048}}
	}
	low, high := gpus(0b0011), gpus(0b1100)
	start := func(id JobID, p hwmodel.Placement) Decision { return Decision{Kind: Start, Job: id, Placement: p} }
	tests := []struct {
		name    string
		running []hwmodel.Placement // running[k] is job 10+k's, started before the call
		res     []hwmodel.Placement
		out     []Decision
		refuse  []JobID // apply refuses these before calling Start
		started []JobID
		refused []JobID
		milli   int64 // allocated afterwards
	}{
		{name: "in order", res: []hwmodel.Placement{low, high}, out: []Decision{start(0, low), start(1, high)},
			started: []JobID{0, 1}, milli: 4000},
		{name: "out of order", res: []hwmodel.Placement{low, high}, out: []Decision{start(1, high), start(0, low)},
			started: []JobID{1, 0}, milli: 4000},
		{name: "refused first frees its GPUs for a start it did not reserve",
			res: []hwmodel.Placement{low}, out: []Decision{start(0, low), start(1, gpus(0b0111))},
			refuse: []JobID{0}, started: []JobID{1}, refused: []JobID{0}, milli: 3000},
		{name: "refused in the middle", res: []hwmodel.Placement{low, high},
			out: []Decision{start(0, low), start(1, high), start(2, gpus(0b1110))}, refuse: []JobID{1},
			started: []JobID{0}, refused: []JobID{1, 2}, milli: 2000},
		{name: "reserved without a decision", res: []hwmodel.Placement{low, high}, out: []Decision{start(0, low)},
			started: []JobID{0}, milli: 2000},
		{name: "a preemption first", running: []hwmodel.Placement{high}, res: []hwmodel.Placement{low},
			out: []Decision{{Kind: Preempt, Job: 10}, start(0, low), start(1, high)}, started: []JobID{0, 1}, milli: 4000},
		{name: "a start that does not fit after an adopted one", res: []hwmodel.Placement{low},
			out: []Decision{start(0, low), start(1, gpus(0b0110))}, started: []JobID{0}, refused: []JobID{1}, milli: 2000},
		{name: "the same placement twice", res: []hwmodel.Placement{low}, out: []Decision{start(0, low), start(1, low)},
			started: []JobID{0}, refused: []JobID{1}, milli: 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, node(model(t, "A100"), 4, 64000, 64<<10))
			var h Host
			jobs := make([]Job, 12)
			for i := range jobs {
				jobs[i] = Job{ID: JobID(i), Estimate: hwmodel.Hour, Req: whole(2)}
			}
			if err := h.Init(c, []Tenant{{Name: "t", Weight: 1}}, jobs); err != nil {
				t.Fatal(err)
			}
			for k, p := range tc.running {
				if err := h.Start(JobID(10+k), p); err != nil {
					t.Fatal(err)
				}
			}
			var started, refused []JobID
			h.Schedule(&scripted{res: tc.res, out: tc.out}, func(d Decision) string {
				switch {
				case d.Kind == Preempt:
					h.Stop(d.Job, tc.running[d.Job-10])
					return ""
				case slices.Contains(tc.refuse, d.Job):
					return "refused"
				}
				if err := h.Start(d.Job, d.Placement); err != nil {
					return err.Error()
				}
				started = append(started, d.Job)
				return ""
			})
			for _, r := range h.Events().Rejected {
				refused = append(refused, r.Decision.Job)
			}
			if !slices.Equal(started, tc.started) || !slices.Equal(refused, tc.refused) {
				t.Errorf("started %v, refused %v; want %v, %v", started, refused, tc.started, tc.refused)
			}
			if got := c.AllocatedMilli(); got != tc.milli {
				t.Errorf("allocated %d milli, want %d", got, tc.milli)
			}
			if got := h.Tenants()[0].AllocatedMilliGPU; got != tc.milli {
				t.Errorf("tenant books %d milli, want %d", got, tc.milli)
			}
			if err := c.CheckInvariants(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestHostCheckElasticPlacement: an elastic job may take any number of
// whole GPUs of a model it accepts, with any CPU and memory; the plain
// check still wants its request exactly.
func TestHostCheckElasticPlacement(t *testing.T) {
	c := newCluster(t, node(model(t, "A100"), 4, 64000, 64<<10))
	var h Host
	if err := h.Init(c, []Tenant{{Name: "t", Weight: 1}}, []Job{{ID: 0, Estimate: hwmodel.Hour, Req: whole(2)}}); err != nil {
		t.Fatal(err)
	}
	on := func(mask uint64) hwmodel.Placement {
		return hwmodel.Placement{{Node: 0, GPUs: mask, Milli: hwmodel.MilliPerGPU}}
	}
	for _, c := range []struct {
		name           string
		p              hwmodel.Placement
		plain, elastic bool // accepted
	}{
		{"three GPUs", on(0b0111), false, true},
		{"one GPU", on(0b0001), false, true},
		{"no GPU", hwmodel.Placement{{Node: 0, CPUMilli: 1000}}, false, false},
		{"no node", hwmodel.Placement{{Node: 3, GPUs: 1, Milli: hwmodel.MilliPerGPU}}, false, false},
		{"half a GPU", hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 500}}, false, false},
	} {
		if got := h.CheckPlacement(0, c.p) == ""; got != c.plain {
			t.Errorf("%s: CheckPlacement accepts: %v, want %v", c.name, got, c.plain)
		}
		if got := h.CheckElasticPlacement(0, c.p) == ""; got != c.elastic {
			t.Errorf("%s: CheckElasticPlacement accepts: %v, want %v", c.name, got, c.elastic)
		}
	}
}
