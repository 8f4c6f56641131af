package sim

import (
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

func speedTable(t testing.TB, rows string) *hwmodel.SpeedTable {
	t.Helper()
	tab, err := hwmodel.ReadSpeedTable(strings.NewReader("class,gpu_model,speed\n"+rows), "speeds.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func modelOf(t testing.TB, name string) hwmodel.ModelID {
	t.Helper()
	m, ok := hwmodel.LookupModel(name)
	if !ok {
		t.Fatalf("no model %s", name)
	}
	return m.ID
}

// modelsCluster has one node of gpus GPUs per model named.
func modelsCluster(t testing.TB, gpus int, models ...string) *hwmodel.Cluster {
	t.Helper()
	var ns []hwmodel.Node
	for i, m := range models {
		ns = append(ns, hwmodel.Node{Name: "n" + string(rune('0'+i)), Model: modelOf(t, m), GPUs: gpus, CPUMilli: 1 << 40, MemoryMiB: 1 << 40})
	}
	c, err := hwmodel.NewCluster(ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A job's run time is its measured duration scaled by its class's speed on
// the model it lands on, relative to the model it was measured on.
func TestSpeedScalesRunTime(t *testing.T) {
	table := speedTable(t, "*,A100-80GB,1\n*,H100-80GB,2\n*,V100-32GB,0.5\nbert,A100-80GB,1\nbert,H100-80GB,2.945\n")
	tests := []struct {
		name       string
		class      string
		on         string // the model the job is pinned to
		measuredOn string // "" = the run's reference, A100-80GB
		want       hwmodel.Time
	}{
		{"generic on H100", "", "H100-80GB", "", 50 * sec},
		{"generic on the reference", "", "A100-80GB", "", 100 * sec},
		{"generic on a slower model", "", "V100-32GB", "", 200 * sec},
		{"own rows", "bert", "H100-80GB", "", hwmodel.ScaleDuration(100*sec, 2.945)},
		{"a class the table lacks runs at the generic speeds", "resnet", "H100-80GB", "", 50 * sec},
		{"own rows lack V100: generic ratio", "bert", "V100-32GB", "", 200 * sec},
		{"measured on H100, run on A100", "", "A100-80GB", "H100-80GB", 200 * sec},
		{"measured on the model it runs on", "bert", "H100-80GB", "H100-80GB", 100 * sec},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := oneJob("j", 0, 100*sec, 1)
			j.Req.Models = hwmodel.Of(modelOf(t, tc.on))
			var classes []string
			if tc.class != "" {
				j.Class, classes = 1, []string{tc.class}
			}
			if tc.measuredOn != "" {
				j.MeasuredOn = uint8(modelOf(t, tc.measuredOn)) + 1
			}
			w := jobsWorkload(t, j)
			w.Classes = classes
			res, _ := runFaults(t, Config{
				Cluster: modelsCluster(t, 1, "A100-80GB", "H100-80GB", "V100-32GB"), Workload: w,
				Speeds: table, SpeedReference: modelOf(t, "A100-80GB"),
			})
			if o := res.Jobs[0]; o.End != tc.want || o.Run != tc.want {
				t.Errorf("end %v run %v, want %v", o.End, o.Run, tc.want)
			}
		})
	}
}

// Checkpoints and faults under a rate, worked by hand. A 100 s job
// (measured on A100) runs on H100s at twice that pace and checkpoints
// every 30 s of progress at 1 s each: its k-th checkpoint ends 16k s into
// the attempt. Its node fails at 40 s, after two checkpoints (32 s), and
// the failure is detected at 65 s (heartbeats every 5 s, dead after 30 s,
// last one at 35 s): lost 65 − 32 = 33 s, saved 60 s of progress. The
// retry on the other node has 40 s of progress (20 s) and one checkpoint
// (at 90 s of progress) to do: it ends at 65 + 21 = 86 s.
func TestSpeedKeepsCheckpointsAndFaultsExact(t *testing.T) {
	j := oneJob("train", 0, 100*sec, 1)
	j.Checkpoint = workloads.Checkpoint{Every: 30 * sec, Cost: sec}
	res, _ := runFaults(t, Config{
		Cluster: modelsCluster(t, 1, "H100-80GB", "H100-80GB"), Workload: jobsWorkload(t, j),
		Speeds:         speedTable(t, "*,A100-80GB,1\n*,H100-80GB,2\n"),
		SpeedReference: modelOf(t, "A100-80GB"),
		Faults:         []hwmodel.Fault{{At: 40 * sec, Node: 0, GPU: -1, Repair: hwmodel.Hour}},
		Heartbeat:      Heartbeat{Interval: 5 * sec, Timeout: 30 * sec},
		Retry:          RetryPolicy{Kind: RetryFixed, Max: 3},
	})
	o := res.Jobs[0]
	if o.State != Succeeded || o.Attempts != 2 || o.HardwareFailures != 1 {
		t.Fatalf("outcome %+v", o)
	}
	if o.LostTime != 33*sec || o.CheckpointTime != 3*sec || o.End != 86*sec || o.Run != 86*sec {
		t.Errorf("lost %v checkpoints %v end %v run %v; want 33s 3s 86s 86s; faults %+v; log %+v", o.LostTime, o.CheckpointTime, o.End, o.Run, res.Faults, o.Log())
	}
	// Run is the progress's wall time at the rate it ran at, plus the
	// lost and checkpoint time.
	if want := 50*sec + o.LostTime + o.CheckpointTime; o.Run != want {
		t.Errorf("run %v, want %v", o.Run, want)
	}
}

// A checkpoint count from wall time inverts checkpointEnd exactly, at
// rates whose periods are not whole microseconds.
func TestCheckpointsByInvertsCheckpointEnd(t *testing.T) {
	e := &Engine{runs: make([]jobRun, 1)}
	r := &e.runs[0]
	r.ck = Checkpoint{Every: 7 * sec, Cost: 3}
	r.ckpts = 50
	for _, rate := range []float64{1, 0.3, 1.7, 2.945, 3} {
		r.rate = rate
		for u := hwmodel.Time(0); u < 400*sec; u += 12_345 {
			k := e.checkpointsBy(0, u)
			if k > 0 && e.checkpointEnd(0, k) > u || k < int64(r.ckpts) && e.checkpointEnd(0, k+1) <= u {
				t.Fatalf("rate %v, u %v: %d checkpoints; ends %v and %v", rate, u, k, e.checkpointEnd(0, k), e.checkpointEnd(0, k+1))
			}
		}
	}
}

// A speed table that lacks a model the cluster has is refused at New.
func TestSpeedTableMustCoverTheCluster(t *testing.T) {
	_, err := New(Config{
		Cluster: modelsCluster(t, 1, "A100-80GB", "H100-80GB"), Workload: jobsWorkload(t, oneJob("j", 0, sec, 1)),
		Policy: &headFirst{}, Speeds: speedTable(t, "*,A100-80GB,1\n"), SpeedReference: modelOf(t, "A100-80GB"),
	})
	if err == nil || !strings.Contains(err.Error(), "speeds.csv") || !strings.Contains(err.Error(), "H100-80GB") {
		t.Fatalf("error %v, want one naming speeds.csv and H100-80GB", err)
	}
}

// An attempt keeps only the checkpoints it completed before its hardware
// failed, not those it would have completed between the fault and its
// detection. A 100 s job checkpoints every 30 s at 1 s (ends at 31 s,
// 62 s, 93 s); its node fails at 70 s and is declared dead at 95 s (last
// heartbeat 65 s, timeout 30 s). It keeps two checkpoints (60 s of
// progress) and loses 95 − 62 = 33 s; the retry runs 40 s with one
// checkpoint: 95 + 41 = 136 s. The same holds for a GPU fault, which the
// node's next heartbeat (at 70 s) reports: lost 70 − 62 = 8 s.
func TestFaultKeepsOnlyCheckpointsBeforeIt(t *testing.T) {
	for _, tc := range []struct {
		name            string
		gpu             int
		lost, end, ckpt hwmodel.Time
	}{
		{"node", -1, 33 * sec, 136 * sec, 3 * sec},
		{"gpu", 0, 8 * sec, 111 * sec, 3 * sec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := oneJob("train", 0, 100*sec, 1)
			j.Checkpoint = workloads.Checkpoint{Every: 30 * sec, Cost: sec}
			res, _ := runFaults(t, Config{
				Cluster: nodesCluster(t, 2, 1), Workload: jobsWorkload(t, j),
				Faults:    []hwmodel.Fault{{At: 70 * sec, Node: 0, GPU: tc.gpu, Repair: hwmodel.Hour}},
				Heartbeat: Heartbeat{Interval: 5 * sec, Timeout: 30 * sec},
				Retry:     RetryPolicy{Kind: RetryFixed, Max: 3},
			})
			o := res.Jobs[0]
			if o.State != Succeeded || o.Attempts != 2 {
				t.Fatalf("outcome %+v", o)
			}
			if o.LostTime != tc.lost || o.End != tc.end || o.CheckpointTime != tc.ckpt {
				t.Errorf("lost %v end %v checkpoints %v; want %v %v %v", o.LostTime, o.End, o.CheckpointTime, tc.lost, tc.end, tc.ckpt)
			}
		})
	}
}

// A gang runs at its class's spread factor: across the nodes of one rack,
// or across racks; its checkpoints and rates follow (the attempt's rate is
// the product, fixed when it starts).
func TestSpreadSlowsGangs(t *testing.T) {
	table := speedTable(t, "*,H100-80GB,1\nlm,across-nodes,0.5\nlm,across-racks,0.25\n")
	h100 := modelOf(t, "H100-80GB")
	for _, tc := range []struct {
		name  string
		racks [2]string
		class string
		gpus  int
		want  hwmodel.Time
	}{
		{"one node", [2]string{"r0", "r1"}, "lm", 1, 100 * sec},
		{"two nodes, one rack", [2]string{"r0", "r0"}, "lm", 2, 200 * sec},
		{"two nodes without racks", [2]string{"", ""}, "lm", 2, 200 * sec},
		{"two racks", [2]string{"r0", "r1"}, "lm", 2, 400 * sec},
		{"a class without spread rows", [2]string{"r0", "r1"}, "bert", 2, 100 * sec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := hwmodel.NewCluster([]hwmodel.Node{
				{Name: "a", Rack: tc.racks[0], Model: h100, GPUs: 1, CPUMilli: 1 << 40, MemoryMiB: 1 << 40},
				{Name: "b", Rack: tc.racks[1], Model: h100, GPUs: 1, CPUMilli: 1 << 40, MemoryMiB: 1 << 40},
			})
			if err != nil {
				t.Fatal(err)
			}
			j := oneJob("gang", 0, 100*sec, tc.gpus)
			j.Class = 1
			w := jobsWorkload(t, j)
			w.Classes = []string{tc.class}
			res, _ := runFaults(t, Config{Cluster: c, Workload: w, Speeds: table, SpeedReference: h100, Policy: policies.MustParseSpec("fcfs").MustNew()})
			if o := res.Jobs[0]; o.End != tc.want {
				t.Errorf("end %v, want %v (placement %v)", o.End, tc.want, o.Placement)
			}
		})
	}
}

// Two jobs sharing one GPU run at the speed table's measured co-location
// factors for their classes when it has both rows, and in proportion to
// their demands otherwise. Each job is 100 s alone and demands the whole
// GPU. With factors 0.8 (resnet18 beside lm) and 0.5 (lm beside resnet18),
// resnet18 ends at 125 s, when lm has done 62.5 s, and lm then runs alone:
// 125 + 37.5 = 162.5 s. Shared in proportion, both take 200 s.
func TestColocationFactors(t *testing.T) {
	v100 := modelOf(t, "V100-16GB")
	for _, tc := range []struct {
		name    string
		rows    string
		lm, res hwmodel.Time
	}{
		{"measured pair", "lm+resnet18,V100-16GB,0.5\nresnet18+lm,V100-16GB,0.8\n", 162_500_000, 125 * sec},
		{"one row only: proportional", "resnet18+lm,V100-16GB,0.8\n", 200 * sec, 200 * sec},
		{"another model's rows: proportional", "lm+resnet18,H100,0.5\nresnet18+lm,H100,0.8\n*,H100,2\n", 200 * sec, 200 * sec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jobs []workloads.Job
			for k, class := range []uint16{1, 2} {
				j := oneJob([]string{"lm", "res"}[k], 0, 100*sec, 1)
				j.Req.GPUMilli, j.DemandMilli, j.Class = 500, 1000, class
				jobs = append(jobs, j)
			}
			w := jobsWorkload(t, jobs...)
			w.Classes = []string{"lm", "resnet18"}
			res, _ := runFaults(t, Config{
				Cluster: modelsCluster(t, 1, "V100-16GB"), Workload: w, ProcessorSharing: true,
				Speeds: speedTable(t, "*,V100-16GB,1\n"+tc.rows), SpeedReference: v100, Policy: policies.MustParseSpec("fcfs").MustNew(),
			})
			if lm, r := res.Jobs[0].End, res.Jobs[1].End; lm != tc.lm || r != tc.res {
				t.Errorf("lm ends %v, resnet18 %v; want %v, %v", lm, r, tc.lm, tc.res)
			}
		})
	}
}
