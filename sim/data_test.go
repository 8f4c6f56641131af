package sim

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// dataCluster is two 1-GPU nodes a and b; dataset d (10 GB) has a replica
// on b, storage reads at 1 GB/s, and each node caches 20 GB.
func dataCluster(t *testing.T) *hwmodel.Cluster {
	t.Helper()
	spec, err := hwmodel.ParseClusterSpec([]byte(`name: data
storage: {read_gb_per_s: 1}
datasets:
  - {name: d, size_gb: 10, replicas: [b]}
nodes:
  - {name: a, gpu_model: H100, gpus: 1, cache_gb: 20}
  - {name: b, gpu_model: H100, gpus: 1, cache_gb: 20}
`), "data.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Worked by hand, first fit, each job 100 s reading d: job 1 lands on a,
// reads all 10 GB (10 s) and ends at 110 s; job 2, submitted with it,
// lands on b, which holds a replica, and ends at 100 s; job 3 at 200 s
// lands on a, whose cache has d since 10 s: no read, ends at 300 s; the
// gang (2 GPUs, at 400 s) over a and b is local on both: ends at 500 s.
func TestDataReadAndCache(t *testing.T) {
	mk := func(name string, submit hwmodel.Time, gpus int) workloads.Job {
		j := oneJob(name, submit, 100*sec, gpus)
		j.Dataset = 1
		return j
	}
	w := jobsWorkload(t, mk("j1", 0, 1), mk("j2", 0, 1), mk("j3", 200*sec, 1), mk("gang", 400*sec, 2))
	w.Datasets = []string{"d"}
	res, _ := runFaults(t, Config{Cluster: dataCluster(t), Workload: w, Policy: policies.MustParseSpec("fcfs").MustNew()})
	want := []hwmodel.Time{110 * sec, 100 * sec, 300 * sec, 500 * sec}
	for i, o := range res.Jobs {
		if o.End != want[i] {
			t.Errorf("%s ends at %v, want %v (placement %v)", w.Jobs[i].Name, o.End, want[i], o.Placement)
		}
	}
	d := res.Data
	if d.Attempts != 4 || d.Local != 3 || d.RemoteMB != 10_000 || d.ReadTime != 10*sec {
		t.Errorf("data stats %+v; want 4 attempts, 3 local, 10000 MB, 10 s", d)
	}
}

// A gang half on a node holding its data reads half of it; an attempt
// that fails while reading loses the read with the rest, and its retry
// reads again only what its nodes still lack.
func TestDataGangAndFailure(t *testing.T) {
	j := oneJob("gang", 0, 100*sec, 2)
	j.Dataset = 1
	w := jobsWorkload(t, j)
	w.Datasets = []string{"d"}
	res, _ := runFaults(t, Config{Cluster: dataCluster(t), Workload: w, Policy: policies.MustParseSpec("fcfs").MustNew()})
	if o := res.Jobs[0]; o.End != 105*sec || res.Data.RemoteMB != 5_000 {
		t.Errorf("gang ends at %v having read %v MB; want 105 s and 5000 MB", o.End, res.Data.RemoteMB)
	}

	// One job on a, whose node fails at 4 s, during its 10 s read, and is
	// declared dead at 30 s (a's heartbeats come at 0, 5, 10 s, ...; the
	// last before 4 s is at 0 s, and the timeout is 30 s). The retry on b
	// (a replica) reads nothing: 30 + 100 = 130 s, and the 30 s of the
	// first attempt, its read included, are lost.
	k := oneJob("k", 0, 100*sec, 1)
	k.Dataset = 1
	w2 := jobsWorkload(t, k)
	w2.Datasets = []string{"d"}
	res2, _ := runFaults(t, Config{Cluster: dataCluster(t), Workload: w2, Policy: policies.MustParseSpec("fcfs").MustNew(),
		Faults:    []hwmodel.Fault{{At: 4 * sec, Node: 0, GPU: -1, Repair: hwmodel.Hour}},
		Heartbeat: Heartbeat{Interval: 5 * sec, Timeout: 30 * sec},
		Retry:     RetryPolicy{Kind: RetryFixed, Max: 2},
	})
	o := res2.Jobs[0]
	if o.State != Succeeded || o.End != 130*sec || o.LostTime != 30*sec {
		t.Errorf("outcome: %s end %v lost %v; want succeeded at 130 s, 30 s lost", o.State, o.End, o.LostTime)
	}
}

// A workload naming a dataset the cluster lacks is refused, naming the
// job and where it was read.
func TestDataUnknownDataset(t *testing.T) {
	j := oneJob("j", 0, sec, 1)
	j.Dataset, j.Source = 1, "jobs.csv:7"
	w := jobsWorkload(t, j)
	w.Datasets = []string{"nope"}
	_, err := New(Config{Cluster: dataCluster(t), Workload: w, Policy: policies.MustParseSpec("fcfs").MustNew()})
	if err == nil || err.Error() != `jobs.csv:7: job "j" reads dataset "nope", which the cluster does not declare (datasets: docs/cluster.md)` {
		t.Fatalf("error %v", err)
	}
}
