package serving

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// failoverSpec is the hand-worked scenario: a trace of one request every
// second at k + 0.25 s (k = 0..1199, 20 minutes), each taking exactly
// 0.5 s on the primary (so none is ever in flight at a whole second plus
// 0.9) and backupTime on the backup. The primary has two replicas behind
// a circuit with floor 2 (one failed replica opens it) and recover_after
// 2m; its replica 1 fails at 300.9 s and is replaced after 3 min plus a
// 1-min load. The backup, a standby with no traffic of its own, has one
// replica.
func failoverSpec(t *testing.T, mode FailoverMode, backupTime float64, incidents ...Incident) *Spec {
	t.Helper()
	var b strings.Builder
	b.WriteString("time_s,class,input_tokens,output_tokens\n")
	for k := 0; k < 1200; k++ {
		fmt.Fprintf(&b, "%d.25,chat,1,1\n", k)
	}
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := func(name string, replicas int, st float64) Service {
		return Service{Name: name, GPUsPerReplica: 1, Routing: RoundRobin,
			Replica:  ReplicaModel{ServiceTime: &Dist{Kind: DistConstant, Mean: st}, MaxConcurrent: 4, LoadTime: mnt},
			Replicas: ReplicaBounds{Initial: replicas, Min: replicas, Max: replicas},
			Classes:  []Class{{Name: "chat", Weight: 1, Timeout: mnt}}}
	}
	primary := svc("primary", 2, 0.5)
	primary.Arrivals = Arrivals{Trace: trace}
	primary.Failover = &Failover{Backup: "backup", MinHealthy: 2, RecoverAfter: 2 * mnt, Mode: mode}
	primary.Incidents = append([]Incident{{At: 5*mnt + 900*hwmodel.Millisecond, Replica: 1, Kind: "fail", RestartAfter: 3 * mnt}}, incidents...)
	backup := svc("backup", 1, backupTime)
	return &Spec{Horizon: 20 * mnt, Services: []Service{primary, backup}}
}

// The circuit opens the instant replica 1 fails (300.9 s: one healthy
// replica, below the floor of 2); the failed replica restarts at 480.9 s
// and is ready at 540.9 s; the circuit closes recover_after (2 min) later,
// at 660.9 s. The arrivals in between, at 301.25 .. 660.25 s, are 360
// requests, all served by the backup in 2 s (degraded), booked in the
// primary's class: 1200 completed, 360 degraded, E2E mean (840 × 0.5 +
// 360 × 2) / 1200 = 0.95 s, max 2 s. Nothing was in flight on the failed
// replica, so there is no error.
func TestFailoverOpensAndCloses(t *testing.T) {
	res := run(t, failoverSpec(t, ModeDegrade, 2), testCluster(t, 1, 8), nil)
	p, b := res.Services[0], res.Services[1]
	f := p.Failover
	if f == nil {
		t.Fatal("no failover books")
	}
	open, closed := 5*mnt+900*hwmodel.Millisecond, 11*mnt+900*hwmodel.Millisecond
	if f.Openings != 1 || len(f.Events) != 1 || f.Events[0] != (CircuitEvent{Open: open, Close: closed}) || f.TimeOpen != 6*mnt {
		t.Fatalf("circuit %+v, want one opening %v..%v (6 min)", f, open, closed)
	}
	c := p.Classes[0]
	if c.Requests != 1200 || c.Completed != 1200 || c.Errors != 0 || c.Timeouts != 0 || c.Degraded != 360 || c.FailedOver != 0 {
		t.Fatalf("primary class %+v: want 1200 requests completed, 360 degraded", c)
	}
	if p.All.Degraded != 360 || b.Received != 360 || b.All.Requests != 0 {
		t.Fatalf("all degraded %d, backup received %d and has %d requests of its own: want 360, 360, 0", p.All.Degraded, b.Received, b.All.Requests)
	}
	if b.Replicas[0].Completed != 360 {
		t.Errorf("backup replica completed %d, want 360", b.Replicas[0].Completed)
	}
	if got := p.Replicas[0].Completed + p.Replicas[1].Completed; got != 840 {
		t.Errorf("primary replicas completed %d, want 840", got)
	}
	if c.E2E.Max != 2 || fmt.Sprintf("%.6f", c.E2E.Mean) != "0.950000" {
		t.Errorf("E2E %+v, want mean 0.95 s, max 2 s", c.E2E)
	}
}

// Flapping: replica 1 is ready again at 540.9 s but fails again at
// 600.9 s, within recover_after; the circuit stays open (one opening), and
// closes 2 min after the second recovery (780.9 s restart, 840.9 s ready):
// at 960.9 s, 660 s open, 660 requests (301.25 .. 960.25 s) failed over.
func TestFailoverFlappingKeepsCircuitOpen(t *testing.T) {
	spec := failoverSpec(t, ModeFailover, 0.5, Incident{At: 10*mnt + 900*hwmodel.Millisecond, Replica: 1, Kind: "fail", RestartAfter: 3 * mnt})
	res := run(t, spec, testCluster(t, 1, 8), nil)
	p := res.Services[0]
	f := p.Failover
	open, closed := 5*mnt+900*hwmodel.Millisecond, 16*mnt+900*hwmodel.Millisecond
	if f.Openings != 1 || len(f.Events) != 1 || f.Events[0] != (CircuitEvent{Open: open, Close: closed}) || f.TimeOpen != 11*mnt {
		t.Fatalf("circuit %+v, want one opening %v..%v", f, open, closed)
	}
	if c := p.Classes[0]; c.FailedOver != 660 || c.Degraded != 0 || c.Completed != 1200 || res.Services[1].Received != 660 {
		t.Fatalf("class %+v, backup received %d: want 660 failed over, all 1200 completed", c, res.Services[1].Received)
	}
	// Without the circuit (and without ejection) round robin sends every
	// other request to the failed replica while it is down: 90 in each
	// 180-s failure, 180 errors.
	spec.Services[0].Failover = nil
	res = run(t, spec, testCluster(t, 1, 8), nil)
	if p := res.Services[0]; p.Failover != nil || p.All.FailedOver != 0 || res.Services[1].Received != 0 || p.All.Completed != 1020 || p.All.Errors != 180 {
		t.Fatalf("without failover: %+v, received %d", p.All, res.Services[1].Received)
	}
}

// A second outage after the circuit closed opens it again: replica 0
// fails at 800.9 s, is ready again at 1040.9 s, and the circuit closes at
// 1160.9 s, within the run: two openings, 12 min open.
func TestFailoverReopens(t *testing.T) {
	spec := failoverSpec(t, ModeFailover, 0.5, Incident{At: 13*mnt + 20*hwmodel.Second + 900*hwmodel.Millisecond, Replica: 0, Kind: "fail", RestartAfter: 3 * mnt})
	res := run(t, spec, testCluster(t, 1, 8), nil)
	f := res.Services[0].Failover
	want := []CircuitEvent{{Open: 300_900_000, Close: 660_900_000}, {Open: 800_900_000, Close: 1_160_900_000}}
	if f.Openings != 2 || fmt.Sprint(f.Events) != fmt.Sprint(want) || f.TimeOpen != 12*mnt {
		t.Fatalf("circuit %+v, want %v", f, want)
	}
	// 360 + 360 (801.25 .. 1160.25 s) requests failed over.
	if c := res.Services[0].Classes[0]; c.FailedOver != 720 || c.Completed != 1200 {
		t.Fatalf("class %+v", c)
	}
}

// Requests waiting at the gateway when the circuit opens go to the
// backup with their arrival time: six requests at 1 s on two replicas of
// one slot (10 s each) leave four queued; replica 1 fails at 2 s (its
// request fails), the circuit opens and the four queued requests are
// served by the backup in 3 s, finishing at 5 s (E2E 4 s); replica 0's
// request ends at 11 s (E2E 10 s).
func TestFailoverHandsOverTheQueue(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte("time_s,class,input_tokens,output_tokens\n"+strings.Repeat("1,chat,1,1\n", 6)), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := failoverSpec(t, ModeFailover, 3)
	p := &spec.Services[0]
	p.Arrivals.Trace = trace
	p.Replica.ServiceTime.Mean = 10
	p.Replica.MaxConcurrent = 1
	p.Failover.MinHealthy = 2
	p.Incidents = []Incident{{At: 2 * sec, Replica: 1, Kind: "fail", RestartAfter: mnt}}
	res := run(t, spec, testCluster(t, 1, 8), nil)
	c := res.Services[0].Classes[0]
	if c.Requests != 6 || c.Completed != 5 || c.Errors != 1 || c.FailedOver != 4 || res.Services[1].Received != 4 {
		t.Fatalf("class %+v, received %d: want 5 completed, 1 error, 4 failed over", c, res.Services[1].Received)
	}
	if c.E2E.Max != 10 || c.E2E.Mean != (4*4+10)/5.0 || c.QueueWait.Max != 1 {
		t.Fatalf("E2E %+v, queue wait %+v: want 4 s for the four handed over (queued 1 s), 10 s for the one left", c.E2E, c.QueueWait)
	}
}

// Bad failover sections are errors naming the file, line and field.
func TestParseExperimentFailoverErrors(t *testing.T) {
	two := minimal + `  - name: small
    replica: {prefill_tokens_per_s: 1000, decode_tokens_per_s: 10, max_concurrent: 8}
    replicas: {initial: 1}
    arrivals: {rate: 0}
    classes:
      - name: c
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constant, mean: 20}
`
	patch := func(in, old, new string) string {
		if !strings.Contains(in, old) {
			panic(old)
		}
		return strings.Replace(in, old, new, 1)
	}
	fo := func(section string) string {
		return patch(two, "    replicas: {initial: 1}\n", "    replicas: {initial: 1}\n    failover: "+section+"\n")
	}
	cases := []struct{ name, in, want string }{
		{"unknown backup", fo("{backup: big}"), `x.yaml:7: services[0].failover.backup: no service is named "big" (services: svc, small)`},
		{"itself", fo("{backup: svc}"), `x.yaml:7: services[0].failover.backup: a service cannot be its own backup`},
		{"floor", fo("{backup: small, min_healthy: 0}"), `x.yaml:7: services[0].failover.min_healthy: want 1 to replicas.initial (1) healthy replicas, got 0`},
		{"floor above initial", patch(fo("{backup: small, min_healthy: 3}"), "replicas: {initial: 1}", "replicas: {initial: 2, max: 4}"),
			`services[0].failover.min_healthy: want 1 to replicas.initial (2) healthy replicas, got 3`},
		{"floor above min", patch(fo("{backup: small, min_healthy: 2}"), "replicas: {initial: 1}", "replicas: {initial: 2, min: 1, max: 4}\n    autoscale: {target: 4}"),
			`services[0].failover.min_healthy: want 1 to replicas.min (1) healthy replicas, got 2`},
		{"mode", fo("{backup: small, mode: panic}"), `x.yaml:7: services[0].failover.mode: unknown mode "panic" (known: failover, degrade)`},
		{"missing backup", fo("{min_healthy: 1}"), `x.yaml:7: services[0].failover.backup: required field is missing`},
		{"recover_after", fo("{backup: small, recover_after: soon}"), `x.yaml:7: services[0].failover.recover_after: want a duration`},
		{"class", patch(fo("{backup: small}"), "      - name: c\n        input_tokens: {dist: constant, mean: 100}\n        output_tokens: {dist: constant, mean: 20}\n",
			"      - name: d\n        input_tokens: {dist: constant, mean: 100}\n        output_tokens: {dist: constant, mean: 20}\n"),
			`services[0].failover.backup: service small has no class "c"; the backup serves each class under its own name`},
		{"request model", patch(fo("{backup: small}"), "    replica: {prefill_tokens_per_s: 1000, decode_tokens_per_s: 10, max_concurrent: 8}",
			"    replica: {service_time: {dist: constant, mean: 1}, max_concurrent: 8}"),
			`services[0].failover.backup: service svc and small describe requests differently`},
		{"cycle", patch(fo("{backup: small}"), "    arrivals: {rate: 0}\n", "    arrivals: {rate: 0}\n    failover: {backup: svc}\n"),
			`x.yaml:7: services[0].failover.backup: the failover chain svc -> small -> svc comes back`},
		{"variant", minimal + "variants: [{name: a, failover: on}]\n", `x.yaml:12: variants[0].failover: no service declares a failover section`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(c.in), "x.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error\n  %v\nwant it to contain\n  %s\nfor\n%s", err, c.want, c.in)
			}
		})
	}
	// The cycle is reported once.
	in := patch(fo("{backup: small}"), "    arrivals: {rate: 0}\n", "    arrivals: {rate: 0}\n    failover: {backup: svc}\n")
	if _, err := ParseExperiment([]byte(in), "x.yaml"); strings.Count(err.Error(), "comes back") != 1 {
		t.Fatalf("cycle reported %d times: %v", strings.Count(err.Error(), "comes back"), err)
	}
	// A valid section, its defaults filled.
	e, err := ParseExperiment([]byte(fo("{backup: small}")), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f := e.Spec.Services[0].Failover; f == nil || *f != (Failover{Backup: "small", MinHealthy: 1, RecoverAfter: DefaultRecoverAfter, Mode: ModeFailover}) {
		t.Fatalf("failover %+v", f)
	}
}

// Chains: the backup has a backup of its own. Its only replica fails at
// 400.9 s (replaced long after the run), so its circuit opens then, and
// the primary's requests from 401.25 s on follow the chain to the last
// service: 100 served by the backup (301.25 .. 400.25 s), 260 by the last
// one (401.25 .. 660.25 s), all booked in the primary's class, counted
// once as failed over.
func TestFailoverChain(t *testing.T) {
	spec := failoverSpec(t, ModeFailover, 0.5)
	b := &spec.Services[1]
	b.Failover = &Failover{Backup: "last", MinHealthy: 1, RecoverAfter: mnt}
	b.Incidents = []Incident{{At: 6*mnt + 40*sec + 900*hwmodel.Millisecond, Replica: 0, Kind: "fail", RestartAfter: 30 * mnt}}
	last := spec.Services[1]
	last.Name, last.Failover, last.Incidents = "last", nil, nil
	spec.Services = append(spec.Services, last)
	res := run(t, spec, testCluster(t, 1, 8), nil)
	p, bk, l := res.Services[0], res.Services[1], res.Services[2]
	if p.All.FailedOver != 360 || p.All.Completed != 1200 || bk.Received != 100 || l.Received != 260 {
		t.Fatalf("failed over %d, completed %d, received by the backup %d and the last %d: want 360, 1200, 100, 260",
			p.All.FailedOver, p.All.Completed, bk.Received, l.Received)
	}
	if f := bk.Failover; f.Openings != 1 || f.Events[0] != (CircuitEvent{Open: 400_900_000, Close: -1}) || f.TimeOpen != 20*mnt-400_900_000 {
		t.Fatalf("backup's circuit %+v: want open from 400.9 s to the horizon", f)
	}
	if bk.All.Requests != 0 || bk.All.FailedOver != 0 {
		t.Fatalf("backup books %+v: it had no traffic of its own, so nothing of its own was failed over", bk.All)
	}
	// The same inputs give the same result.
	if again := run(t, spec, testCluster(t, 1, 8), nil); !reflect.DeepEqual(again.Services, res.Services) {
		t.Fatal("two runs differ")
	}
}
