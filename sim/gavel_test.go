package sim

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// gavelRun runs a heterogeneous case under spec: 4 A100 and 4 H100 GPUs,
// class a runs 4× faster on the H100 than on the A100 (its reference),
// class b no faster; 40 jobs of 1 or 2 GPUs arrive every 10 minutes,
// their durations cycling from 1 h to 6 h. It returns the run and each
// job's slowdown: its JCT over its duration on its fastest model.
func gavelRun(t *testing.T, spec string) (*Result, []float64) {
	t.Helper()
	table := speedTable(t, "*,A100-80GB,1\n*,H100-80GB,2\na,A100-80GB,1\na,H100-80GB,4\nb,A100-80GB,1\nb,H100-80GB,1\n")
	var jobs []workloads.Job
	best := map[uint16]float64{1: 4, 2: 1}
	for i := range 40 {
		j := oneJob(fmt.Sprint("j", i), hwmodel.Time(i)*10*hwmodel.Minute, hwmodel.Time(1+i%6)*hwmodel.Hour, 1+i%3/2)
		j.Class = uint16(1 + i%2)
		jobs = append(jobs, j)
	}
	w := jobsWorkload(t, jobs...)
	w.Classes = []string{"a", "b"}
	res, _ := runFaults(t, Config{
		Cluster: modelsCluster(t, 4, "A100-80GB", "H100-80GB"), Workload: w,
		Speeds: table, SpeedReference: modelOf(t, "A100-80GB"),
		Policy: policies.MustParseSpec(spec).MustNew(),
	})
	slow := make([]float64, len(jobs))
	for i, o := range res.Jobs {
		if o.State != Succeeded {
			t.Fatalf("%s: job %d ended %v", spec, i, o.State)
		}
		slow[i] = float64(o.End-o.Submit) / (float64(jobs[i].Duration) / best[jobs[i].Class])
	}
	return res, slow
}

func worst(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// TestGavelHeterogeneousFairness: on gavelRun's case, both of gavel's
// objectives keep the worst job's slowdown under half of fcfs's and
// las's (measured: fcfs 52.3, las 35.6, gavel 6.0, gavel+objective=ftf
// 7.1), and its mean lower too. A gavel blind to speeds, one whose
// priorities favour the jobs that received the most, or one that leaves
// GPUs idle between rounds would not: fcfs and las put class-a jobs on
// A100s a quarter of their H100 pace while class-b jobs hold H100s that
// do nothing for them.
func TestGavelHeterogeneousFairness(t *testing.T) {
	stats := func(spec string) (worstSlow, mean float64) {
		_, slow := gavelRun(t, spec)
		for _, s := range slow {
			mean += s / float64(len(slow))
		}
		return worst(slow), mean
	}
	fw, fm := stats("fcfs")
	lw, lm := stats("las")
	for _, spec := range []string{"gavel", "gavel+objective=ftf"} {
		w, m := stats(spec)
		if w > min(fw, lw)/2 || m > min(fm, lm) {
			t.Errorf("%s: worst slowdown %.2f, mean %.2f; want the worst under half of fcfs's %.2f and las's %.2f, the mean under %.2f and %.2f",
				spec, w, m, fw, lw, fm, lm)
		}
	}
}

// TestGavelDeterministic: the same inputs give the same run, attempt for
// attempt.
func TestGavelDeterministic(t *testing.T) {
	for _, spec := range []string{"gavel", "gavel+objective=ftf+round=2m"} {
		a, _ := gavelRun(t, spec)
		b, _ := gavelRun(t, spec)
		for i := range a.Jobs {
			x, y := fmt.Sprint(a.Jobs[i].Log()), fmt.Sprint(b.Jobs[i].Log())
			if x != y || a.Jobs[i].End != b.Jobs[i].End {
				t.Fatalf("%s: job %d ran %s, then %s", spec, i, x, y)
			}
		}
	}
}

// TestGavelRounds works gavel's mechanism by hand: one GPU, a 10-minute
// round, A and B of 30 minutes each queued at 0. Max-min gives each
// X = ½. Priorities are X over the fraction of time received:
//
//   - 0: neither has run (+∞ both): A, the lower ID.
//   - 10: A has had 10 of 10 (½/1), B nothing (+∞): B; A is preempted.
//   - 20: both have had 10 of 20 (½/½ = 1): the tie goes to the job
//     already running there, B.
//   - 30: A 10 of 30 (1.5), B 20 of 30 (0.75): A.
//   - 40: both 20 of 40 (1): A keeps the GPU and ends at 50, having run
//     0..10 and 30..50 (it keeps its progress: gavel suspends).
//   - B, 20 done, runs its last 10 from 50 to 60.
//
// A gavel that ranked by X alone, ignored what jobs received or broke
// ties against the running job would run other spans.
func TestGavelRounds(t *testing.T) {
	const m = hwmodel.Minute
	w := jobsWorkload(t, oneJob("A", 0, 30*m, 1), oneJob("B", 0, 30*m, 1))
	res, _ := runFaults(t, Config{Cluster: nodesCluster(t, 1, 1), Workload: w,
		Policy: policies.MustParseSpec("gavel+round=10m").MustNew()})
	want := map[string][]attemptSpan{"A": {{0, 10 * m}, {30 * m, 50 * m}}, "B": {{10 * m, 30 * m}, {50 * m, 60 * m}}}
	for i, o := range res.Jobs {
		name := w.Jobs[i].Name
		var got []attemptSpan
		for _, a := range o.Log() {
			got = append(got, attemptSpan{a.Start, a.End})
		}
		if fmt.Sprint(got) != fmt.Sprint(want[name]) {
			t.Errorf("%s: attempts %v, want %v", name, got, want[name])
		}
	}
}
