package policies

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// migNode is a node of gpus GPUs of a model with the given layouts (a
// named layout or a profile list per GPU; "" for a whole GPU).
func migNode(tb testing.TB, m hwmodel.ModelID, layouts ...string) hwmodel.Node {
	tb.Helper()
	n := node(m, len(layouts), 64000, 1<<20)
	n.MIG = make([]hwmodel.MIGLayout, len(layouts))
	for g, s := range layouts {
		if s == "" {
			continue
		}
		l, err := hwmodel.NamedMIGLayout(m, s)
		if err != nil {
			if l, err = hwmodel.ParseMIGLayout(m, s); err != nil {
				tb.Fatal(err)
			}
		}
		n.MIG[g] = l
	}
	return n
}

func migReq(r hwmodel.MIGRequest) hwmodel.Request {
	return hwmodel.Request{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1024, MIG: r}
}

func TestMIGMatchAgreesWithHwmodel(t *testing.T) {
	reqs := []hwmodel.MIGRequest{
		{}, {Profile: "3g.71gb"}, {Profile: "3G.71GB"}, {Profile: "1g.10gb"}, {Profile: "1g.18gb+me"},
		{MinSlices: 1}, {MinSlices: 3}, {MinSlices: 7}, {MinMemoryMiB: 33280}, {MinMemoryMiB: 33281},
		{MinSlices: 2, MinMemoryMiB: 20000}, {Profile: "4g.71gb", MinSlices: 5},
	}
	for _, m := range hwmodel.Models() {
		profs := migProfilesOf(m.ID)
		for k := range profs {
			for _, r := range reqs {
				if got, want := migMatch(&r, &profs[k]), r.Matches(m.ID, k); got != want {
					t.Errorf("%s %s %v: migMatch %v, Matches %v", m.Name, profs[k].Name, r, got, want)
				}
			}
		}
	}
}

// Every placer serves a MIG request the same way: the smallest matching
// free instance, then the lowest node, GPU and instance.
func TestMIGPlacementEveryPlacer(t *testing.T) {
	h200, a100 := model(t, "H200"), model(t, "A100-80GB")
	newC := func() *hwmodel.Cluster {
		c := newCluster(t,
			migNode(t, h200, "halves", "balanced", ""), // n0: 3g@0 3g@4 | 3g@4 2g@0 1g@2 1g@3 | whole
			migNode(t, a100, "4g-3g"),                  // n1: 4g.40gb@0 3g.40gb@4
		)
		busy(t, c, 0, 1<<2, 500, 0) // the whole GPU is shared: invisible to MIG anyway
		return c
	}
	h200Only := hwmodel.Of(h200)
	cases := []struct {
		name string
		r    hwmodel.Request
		want string // node/gpu/instance, or "" for none
	}{
		{"any 1 slice: a 1g, lowest instance", migReq(hwmodel.MIGRequest{MinSlices: 1}), "0/1/2"},
		{"3 slices: A100's 3g.40gb has less memory than H200's 3g.71gb", migReq(hwmodel.MIGRequest{MinSlices: 3}), "1/0/1"},
		{"3g.71gb: equal sizes, lowest GPU", migReq(hwmodel.MIGRequest{Profile: "3g.71gb"}), "0/0/0"},
		{"3 slices and 60 GiB: 3g.71gb beats A100's 3g.40gb on memory", migReq(hwmodel.MIGRequest{MinSlices: 3, MinMemoryMiB: 60 * 1024}), "0/0/0"},
		{"3 slices, 30 GiB: A100's 3g.40gb (40192 MiB) is smaller", migReq(hwmodel.MIGRequest{MinSlices: 3, MinMemoryMiB: 30 * 1024}), "1/0/1"},
		{"4 slices: only the A100 has a 4g", migReq(hwmodel.MIGRequest{MinSlices: 4}), "1/0/0"},
		{"4 slices on H200 only: none", hwmodel.Request{GPUs: 1, Models: h200Only, MIG: hwmodel.MIGRequest{MinSlices: 4}}, ""},
		{"by name", migReq(hwmodel.MIGRequest{Profile: "2g.35gb"}), "0/1/1"},
		{"too much CPU", hwmodel.Request{GPUs: 1, CPUMilli: 65000, MIG: hwmodel.MIGRequest{MinSlices: 1}}, ""},
	}
	names := PlacementNames()
	for _, name := range names {
		cfg := PlacerConfig{Target: TargetFromRequests([]hwmodel.Request{whole(1)})}
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				p, err := NewPlacerWith(name, cfg)
				if err != nil {
					t.Fatal(err)
				}
				c := newC()
				got := ""
				if pl, ok := p.Place(nil, c.View(), tc.r); ok {
					if len(pl) != 1 || pl[0].Instance == 0 {
						t.Fatalf("placement %+v is not one MIG share", pl)
					}
					s := pl[0]
					got = fmt.Sprintf("%d/%d/%d", s.Node, bitIndex(s.GPUs), s.Instance-1)
					if err := c.Allocate(pl); err != nil {
						t.Fatalf("placement %+v does not fit: %v", pl, err)
					}
					if s.CPUMilli != tc.r.CPUMilli || s.MemoryMiB != tc.r.MemoryMiB {
						t.Errorf("share gives %d milli-CPU and %d MiB", s.CPUMilli, s.MemoryMiB)
					}
				}
				if got != tc.want {
					t.Errorf("placed on %q, want %q", got, tc.want)
				}
			})
		}
	}
	// Busy and blocked instances are skipped.
	c := newC()
	ff := new(FirstFit)
	r := migReq(hwmodel.MIGRequest{MinSlices: 1})
	pl, _ := ff.Place(nil, c.View(), r)
	if err := c.Allocate(pl); err != nil {
		t.Fatal(err)
	}
	if pl2, _ := ff.Place(nil, c.View(), r); pl2[0].Instance-1 != 3 {
		t.Errorf("second 1-slice job on instance %d, want 3 (the other 1g)", pl2[0].Instance-1)
	}
	// GPU 1 keeps the busy 1g@2 and gets a new (blocked) 2g@4; its free
	// 1g@3 is dropped.
	if _, err := c.Reconfigure(0, 1, hwmodel.MIGLayout{{Profile: 0, Start: 2}, {Profile: 3, Start: 4}}); err != nil {
		t.Fatal(err)
	}
	// Left: H200 3g.71gb instances and the A100's 4g.40gb and 3g.40gb:
	// the A100's 3g is the smallest.
	if pl3, _ := ff.Place(nil, c.View(), r); fmt.Sprintf("%d/%d", pl3[0].Node, pl3[0].Instance-1) != "1/1" {
		t.Errorf("with GPU 1's new instance blocked, placed on %+v, want n1 GPU 0 instance 1", pl3)
	}
}

func bitIndex(m uint64) int {
	for i := 0; i < 64; i++ {
		if m&(1<<uint(i)) != 0 {
			return i
		}
	}
	return -1
}

// decide runs one scheduling point without applying its decisions: it
// returns them and undoes the reservations.
func decide(f *fakeView, p Policy) []Decision {
	return append([]Decision(nil), f.Schedule(p, func(Decision) string { return "" })...)
}

func describeDecisions(c *hwmodel.Cluster, ds []Decision) string {
	var parts []string
	for _, d := range ds {
		switch d.Kind {
		case Start:
			s := d.Placement[0]
			parts = append(parts, fmt.Sprintf("start j%d on %d/%d/%d", d.Job, s.Node, bitIndex(s.GPUs), s.Instance-1))
		case Reconfigure:
			parts = append(parts, fmt.Sprintf("reconfigure %d/%d to %s", d.Node, d.GPU, d.Layout.String(c.NodeModel(d.Node))))
		}
	}
	return strings.Join(parts, "; ")
}

// The reconfiguration heuristic, hand-worked on H200s.
func TestMIGReconfigurationPlans(t *testing.T) {
	h200 := model(t, "H200")
	cases := []struct {
		name    string
		layouts []string
		busy    [][3]int // node, gpu, instance held by a running job
		jobs    []hwmodel.MIGRequest
		opt     Options
		want    string
	}{
		{"balanced, 3g busy: keep it, add 3g in the free half", []string{"balanced"}, [][3]int{{0, 0, 0}},
			[]hwmodel.MIGRequest{{MinSlices: 3}}, Options{MIGReconfigure: true},
			"reconfigure 0/0 to 3g.71gb@4,3g.71gb@0"},
		{"static: nothing", []string{"balanced"}, [][3]int{{0, 0, 0}},
			[]hwmodel.MIGRequest{{MinSlices: 3}}, Options{}, ""},
		{"all-1g idle, 2g: a 2g, then the largest that fit", []string{"all-1g"}, nil,
			[]hwmodel.MIGRequest{{Profile: "2g.35gb"}}, Options{MIGReconfigure: true},
			"reconfigure 0/0 to 2g.35gb@0,3g.71gb@4,2g.35gb@2"},
		{"all-1g idle, 4 slices: 4g, then 3g", []string{"all-1g"}, nil,
			[]hwmodel.MIGRequest{{MinSlices: 4}}, Options{MIGReconfigure: true},
			"reconfigure 0/0 to 4g.71gb@0,3g.71gb@4"},
		{"a busy 1g in the way of a 4g: nothing", []string{"all-1g"}, [][3]int{{0, 0, 3}},
			[]hwmodel.MIGRequest{{MinSlices: 4}}, Options{MIGReconfigure: true}, ""},
		{"best fit: the GPU with fewer free slices", []string{"balanced", "balanced"}, [][3]int{{0, 1, 0}},
			[]hwmodel.MIGRequest{{Profile: "1g.35gb"}}, Options{MIGReconfigure: true},
			"reconfigure 0/1 to 3g.71gb@4,1g.35gb@0,2g.35gb@2"},
		{"whole GPU: only with conversion", []string{""}, nil,
			[]hwmodel.MIGRequest{{MinSlices: 3}}, Options{MIGReconfigure: true}, ""},
		{"whole GPU converted", []string{""}, nil,
			[]hwmodel.MIGRequest{{MinSlices: 3}}, Options{MIGReconfigure: true, MIGConvertWhole: true},
			"reconfigure 0/0 to 3g.71gb@0,3g.71gb@4"},
		{"a MIG GPU before a conversion", []string{"", "all-1g"}, nil,
			[]hwmodel.MIGRequest{{MinSlices: 3}}, Options{MIGReconfigure: true, MIGConvertWhole: true},
			"reconfigure 0/1 to 3g.71gb@0,3g.71gb@4"},
		// Backfill: the second 3g job gets GPU 1; the 1-slice job claims
		// the spare 3g that GPU 1's new layout will have.
		{"claims and one reconfiguration per GPU", []string{"balanced", "all-1g"}, [][3]int{{0, 0, 0}},
			[]hwmodel.MIGRequest{{MinSlices: 3}, {MinSlices: 3}, {MinSlices: 1}}, Options{MIGReconfigure: true, Backfill: true},
			"reconfigure 0/0 to 3g.71gb@4,3g.71gb@0; reconfigure 0/1 to 3g.71gb@0,3g.71gb@4"},
		// Right-sizing: a 1-slice job whose smallest free match is a 3g
		// waits for a GPU repartitioned with a 1g (GPU 1 is full); the 3g@4
		// of halves survives. Statically it takes the 3g at once.
		{"right-sizing", []string{"halves", "all-1g"}, [][3]int{{0, 1, 0}, {0, 1, 1}, {0, 1, 2}, {0, 1, 3}, {0, 1, 4}, {0, 1, 5}, {0, 1, 6}},
			[]hwmodel.MIGRequest{{MinSlices: 1}}, Options{MIGReconfigure: true},
			"reconfigure 0/0 to 1g.18gb@0,3g.71gb@4,2g.35gb@2,1g.18gb@1"},
		{"no right-sizing when static", []string{"halves", "all-1g"}, [][3]int{{0, 1, 0}, {0, 1, 1}, {0, 1, 2}, {0, 1, 3}, {0, 1, 4}, {0, 1, 5}, {0, 1, 6}},
			[]hwmodel.MIGRequest{{MinSlices: 1}}, Options{},
			"start j0 on 0/0/0"},
		// Strict: only the head reconfigures.
		{"strict: the head only", []string{"balanced", "all-1g"}, [][3]int{{0, 0, 0}},
			[]hwmodel.MIGRequest{{MinSlices: 3}, {MinSlices: 7}}, Options{MIGReconfigure: true},
			"reconfigure 0/0 to 3g.71gb@4,3g.71gb@0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, migNode(t, h200, tc.layouts...))
			for _, b := range tc.busy {
				if err := c.Allocate(hwmodel.Placement{c.MIGShare(b[0], b[1], b[2], 0, 0)}); err != nil {
					t.Fatal(err)
				}
			}
			f := newFakeView(t, c)
			for _, r := range tc.jobs {
				f.add(Job{Req: migReq(r)})
			}
			ds := decide(f, mustNew(t, "fcfs", tc.opt))
			if got := describeDecisions(c, ds); got != tc.want {
				t.Errorf("decisions %q\nwant      %q", got, tc.want)
			}
			for _, d := range ds {
				if d.Kind == Reconfigure {
					if _, err := c.Reconfigure(d.Node, d.GPU, d.Layout); err != nil {
						t.Errorf("the cluster refuses %s: %v", describeDecisions(c, []Decision{d}), err)
					}
				}
			}
		})
	}
}

// A GPU being reconfigured is not chosen again until it is unblocked, and
// a job that can claim one of its new instances waits for it.
func TestMIGInFlightGPUsAreSkipped(t *testing.T) {
	h200 := model(t, "H200")
	c := newCluster(t, migNode(t, h200, "balanced", "balanced"))
	if err := c.Allocate(hwmodel.Placement{c.MIGShare(0, 0, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	f := newFakeView(t, c)
	p := mustNew(t, "fcfs", Options{MIGReconfigure: true})
	f.add(Job{Req: migReq(hwmodel.MIGRequest{MinSlices: 3})}) // takes GPU 1's 3g
	f.add(Job{Req: migReq(hwmodel.MIGRequest{MinSlices: 3})}) // GPU 0 is repartitioned
	ds := decide(f, p)
	if got := describeDecisions(c, ds); got != "start j0 on 0/1/0; reconfigure 0/0 to 3g.71gb@4,3g.71gb@0" {
		t.Fatalf("first call: %q", got)
	}
	// Apply both, as a driver would; j1 stays queued.
	if err := c.Allocate(ds[0].Placement); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reconfigure(0, 0, ds[1].Layout); err != nil {
		t.Fatal(err)
	}
	f.events.Started = append(f.events.Started, 0)
	f.events.Reconfigured = append(f.events.Reconfigured, GPURef{0, 0})
	f.queued--
	// A third 3g job arrives: j1, at the head, claims GPU 0's new 3g and
	// waits for it; the strict queue stops there.
	f.add(Job{Req: migReq(hwmodel.MIGRequest{MinSlices: 3})})
	ds = decide(f, p)
	if got := describeDecisions(c, ds); got != "" {
		t.Errorf("strict second call: %q, want nothing (the head waits for its claimed instance)", got)
	}
	// Unblocked: j1 takes the new 3g.
	c.UnblockMIG(0, 0)
	f.events.Unblocked = append(f.events.Unblocked, GPURef{0, 0})
	ds = decide(f, p)
	if got := describeDecisions(c, ds); !strings.HasPrefix(got, "start j1 on 0/0/1") {
		t.Errorf("after unblock: %q, want j1 on GPU 0 instance 1", got)
	}
}
