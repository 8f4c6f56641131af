package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

// Every way the engine fails a job gives its FailReason, the words of its
// Reason, and the ends of its attempts. runner's TestFailReasonWords maps
// the FailReasons to the words of the results files.
func TestFailReasons(t *testing.T) {
	type want struct {
		why    FailReason
		reason string // exact, or a prefix when it ends in ": "
		ended  []AttemptEnd
	}
	// dag: train fails once with no retry; eval (submitted with it) and
	// report (submitted after train failed) depend on it, solo does not.
	dag := func(t *testing.T) *workloads.Workload {
		train := oneJob("train", 0, 10*sec, 1)
		train.FailedAttempts = 1
		eval := oneJob("eval", 0, 5*sec, 1)
		report := oneJob("report", 20*sec, 5*sec, 1)
		solo := oneJob("solo", 0, 5*sec, 1)
		w, err := workloads.Build([]workloads.Job{train, eval, report, solo},
			[][]string{nil, {"train"}, {"eval"}, nil}, nil, "test")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// deadlineJob: 30 min, estimate 30 min, every attempt fails; see
	// TestDeadlineAwareRetry for the arithmetic.
	deadlineJob := func(deadline hwmodel.Time) workloads.Job {
		j := oneJob("j", 0, 30*hwmodel.Minute, 1)
		j.FailedAttempts, j.Deadline = 10, deadline
		return j
	}
	tests := []struct {
		name string
		cfg  func(t *testing.T) Config
		want map[string]want
	}{
		{
			name: "trace failures exhaust the job's retries",
			cfg: func(t *testing.T) Config {
				j := oneJob("j", 0, 10*sec, 1)
				j.FailedAttempts, j.MaxRetries = 3, 1
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, j)}
			},
			want: map[string]want{"j": {FailRetriesExhausted, "attempt 2 failed, no retries left", []AttemptEnd{AttemptFailed, AttemptFailed}}},
		},
		{
			name: "hardware failure with no retry left",
			cfg: func(t *testing.T) Config {
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, oneJob("j", 0, 1000*sec, 8)),
					Faults: []hwmodel.Fault{{At: 100 * sec, Node: 0, GPU: -1, Repair: hwmodel.Hour}},
					Retry:  RetryPolicy{Kind: RetryNone}}
			},
			want: map[string]want{"j": {FailRetriesExhausted, "attempt 1 lost to a hardware failure, no retries left", []AttemptEnd{AttemptHardware}}},
		},
		{
			name: "a hardware failure uses up the fixed retries after a trace failure",
			cfg: func(t *testing.T) Config {
				j := oneJob("j", 0, 1000*sec, 8)
				j.FailedAttempts = 1
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, j),
					Faults: []hwmodel.Fault{{At: 1500 * sec, Node: 0, GPU: -1, Repair: hwmodel.Hour}},
					Retry:  RetryPolicy{Kind: RetryFixed, Max: 1}}
			},
			want: map[string]want{"j": {FailRetriesExhausted, "attempt 2 lost to a hardware failure, no retries left", []AttemptEnd{AttemptFailed, AttemptHardware}}},
		},
		{
			name: "the deadline-aware rule gives up",
			cfg: func(t *testing.T) Config {
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, deadlineJob(50*hwmodel.Minute)),
					Retry: RetryPolicy{Kind: RetryDeadline, Max: 5}}
			},
			want: map[string]want{"j": {FailDeadline, ReasonDeadline, []AttemptEnd{AttemptFailed}}},
		},
		{
			name: "the attempts the deadline-aware rule granted run out",
			cfg: func(t *testing.T) Config {
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, deadlineJob(90*hwmodel.Minute)),
					Retry: RetryPolicy{Kind: RetryDeadline, Max: 5}}
			},
			want: map[string]want{"j": {FailRetriesExhausted, "attempt 3 failed, no retries left", []AttemptEnd{AttemptFailed, AttemptFailed, AttemptFailed}}},
		},
		{
			name: "a failed parent fails its DAG children, also those submitted later",
			cfg: func(t *testing.T) Config {
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: dag(t)}
			},
			want: map[string]want{
				"train":  {FailRetriesExhausted, "attempt 1 failed, no retries left", []AttemptEnd{AttemptFailed}},
				"eval":   {FailDependency, "dependency train failed", nil},
				"report": {FailDependency, "dependency eval failed", nil},
				"solo":   {FailNone, "", []AttemptEnd{AttemptSucceeded}},
			},
		},
		{
			name: "a job that no node can hold",
			cfg: func(t *testing.T) Config {
				return Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, oneJob("big", 0, 10*sec, 16), oneJob("ok", 0, 10*sec, 8))}
			},
			want: map[string]want{
				"big": {FailUnsatisfiable, ReasonUnsatisfiable, nil},
				"ok":  {FailNone, "", []AttemptEnd{AttemptSucceeded}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg(t)
			res, _ := runFaults(t, cfg)
			if len(res.Jobs) != len(tc.want) {
				t.Fatalf("%d jobs, want %d", len(res.Jobs), len(tc.want))
			}
			for i, o := range res.Jobs {
				name := cfg.Workload.Jobs[i].Name
				w, ok := tc.want[name]
				if !ok {
					t.Fatalf("unexpected job %s", name)
				}
				if o.FailReason != w.why {
					t.Errorf("job %s: fail reason %v, want %v", name, o.FailReason, w.why)
				}
				if wantState := map[bool]JobState{true: Succeeded, false: Failed}[w.why == FailNone]; o.State != wantState {
					t.Errorf("job %s ended %s, want %s", name, o.State, wantState)
				}
				if got := o.Reason; got != w.reason && !(strings.HasSuffix(w.reason, ": ") && strings.HasPrefix(got, w.reason)) {
					t.Errorf("job %s: reason %q, want %q", name, got, w.reason)
				}
				var ended []AttemptEnd
				for _, a := range o.Log() {
					ended = append(ended, a.Ended)
				}
				if !slices.Equal(ended, w.ended) {
					t.Errorf("job %s: attempts ended %v, want %v", name, ended, w.ended)
				}
			}
		})
	}
}

func TestFailReasonString(t *testing.T) {
	for r, want := range map[FailReason]string{
		FailNone: "FailNone", FailRetriesExhausted: "FailRetriesExhausted", FailDeadline: "FailDeadline",
		FailDependency: "FailDependency", FailUnsatisfiable: "FailUnsatisfiable", FailReason(99): "FailReason(99)",
	} {
		if got := r.String(); got != want {
			t.Errorf("FailReason(%d).String() = %q, want %q", uint8(r), got, want)
		}
	}
}
