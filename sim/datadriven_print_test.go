package sim_test

// The scenario harness's print and assert commands and the formats they
// share with run's output (datadriven_test.go has the harness).

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/cockroachdb/datadriven"
)

func (h *harness) doPrint(d *datadriven.TestData) (string, error) {
	if err := h.start(d); err != nil {
		return "", err
	}
	what := map[string]bool{}
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "jobs", "cluster", "tenants", "faults":
			what[a.Key] = true
		default:
			return "", fieldError(d.Pos, a.Key, "unknown; want jobs, cluster, tenants or faults")
		}
	}
	if len(what) == 0 {
		what["jobs"] = true
	}
	s := h.eng.Snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "at %s\n", fmtT(s.Now))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if what["jobs"] {
		fmt.Fprintln(tw, "job\ttenant\tstate\tattempts\tstart\tend\twait\trun\tplacement\tnote")
		for i := range s.Jobs {
			j := &s.Jobs[i]
			note := j.Reason
			if j.HardwareFailures > 0 {
				note = strings.TrimPrefix(note+fmt.Sprintf("; %d lost to hardware", j.HardwareFailures), "; ")
			}
			if j.Backoff {
				note = strings.TrimPrefix(note+"; in back-off", "; ")
			}
			pl := "-"
			if len(j.Placement) > 0 {
				pl = fmtPlacement(j.Placement, s.Nodes)
				if j.MIGProfile != "" {
					pl += " " + j.MIGProfile
				}
			}
			if note == "" {
				note = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.Tenant, stateName(j), j.Attempts,
				fmtT(j.Start), fmtT(j.End), fmtT(j.Wait), fmtT(j.Run), pl, note)
		}
		tw.Flush()
	}
	if what["cluster"] {
		fmt.Fprintln(tw, "node\tmodel\tfree gpus\tfree milli per gpu\tfree cpu\tfree mem\tstatus")
		for _, n := range s.Nodes {
			free := 0
			milli := make([]string, len(n.GPUs))
			var status []string
			if n.Failed {
				status = append(status, "failed")
			}
			if n.DownUntil >= 0 {
				status = append(status, "down until "+fmtT(n.DownUntil))
			}
			for g, gs := range n.GPUs {
				milli[g] = strconv.Itoa(int(gs.FreeMilli))
				if gs.FreeMilli == hwmodel.MilliPerGPU && len(gs.MIG) == 0 {
					free++
				}
				if len(gs.MIG) > 0 {
					milli[g] = "mig"
				}
				if gs.Failed {
					status = append(status, fmt.Sprintf("gpu%d failed", g))
				}
				if gs.DownUntil >= 0 {
					status = append(status, fmt.Sprintf("gpu%d down until %s", g, fmtT(gs.DownUntil)))
				}
			}
			if len(status) == 0 {
				status = []string{"ok"}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", n.Name, hwmodel.Model(n.Model).Name, free, len(n.GPUs),
				strings.Join(milli, " "), fmtCores(n.FreeCPUMilli), fmtMiB(n.FreeMemoryMiB), strings.Join(status, ", "))
		}
		tw.Flush()
		for _, n := range s.Nodes {
			for g, gs := range n.GPUs {
				if len(gs.MIG) > 0 {
					fmt.Fprintf(&b, "%s:gpu%d mig %s\n", n.Name, g, fmtInstances(gs, n.Model))
				}
			}
		}
	}
	if what["tenants"] {
		fmt.Fprintln(tw, "tenant\tweight\tgpu milli\tcpu\tmem")
		for _, t := range s.Tenants {
			fmt.Fprintf(tw, "%s\t%g\t%d\t%s\t%s\n", t.Name, t.Weight, t.AllocatedMilliGPU, fmtCores(t.AllocatedCPUMilli), fmtMiB(t.AllocatedMemMiB))
		}
		tw.Flush()
	}
	if what["faults"] {
		fmt.Fprintln(tw, "fault\tat\tdetected\trepaired\tjobs hit")
		for _, f := range s.Faults {
			where := s.Nodes[f.Node].Name
			if f.GPU >= 0 {
				where += fmt.Sprintf(":gpu%d", f.GPU)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", where, fmtT(f.At), fmtT(f.Detected), fmtT(f.Repaired), f.JobsHit)
		}
		tw.Flush()
	}
	return b.String(), nil
}

// doAssert checks conditions on the engine's state now and returns the
// failed ones, which fail the test (a rewrite cannot turn them into
// expected output).
func (h *harness) doAssert(d *datadriven.TestData) (string, []string, error) {
	if err := h.start(d); err != nil {
		return "", nil, err
	}
	ls, err := lines(d)
	if err != nil {
		return "", nil, err
	}
	if len(ls) == 0 {
		return "", nil, fmt.Errorf("%s: assert has no conditions", d.Pos)
	}
	s := h.eng.Snapshot()
	checked := 0
	var failures []string
	for _, l := range ls {
		if len(l.args) == 0 || (l.name != "engine" && len(l.args[0].Vals) != 0) {
			return "", nil, fmt.Errorf("%s: want job NAME KEY=VALUE..., node NAME KEY=VALUE..., tenant NAME KEY=VALUE... or engine KEY=VALUE...", l.pos)
		}
		var got map[string]string
		args := l.args
		switch l.name {
		case "job":
			k := slices.IndexFunc(s.Jobs, func(j sim.JobStatus) bool { return j.Name == args[0].Key })
			if k < 0 {
				return "", nil, fmt.Errorf("%s: no job %q", l.pos, args[0].Key)
			}
			got = jobFacts(&s.Jobs[k], s.Nodes)
			args = args[1:]
		case "node":
			k := slices.IndexFunc(s.Nodes, func(n sim.NodeStatus) bool { return n.Name == args[0].Key })
			if k < 0 {
				return "", nil, fmt.Errorf("%s: no node %q", l.pos, args[0].Key)
			}
			got = nodeFacts(&s.Nodes[k])
			args = args[1:]
		case "tenant":
			k := slices.IndexFunc(s.Tenants, func(t policies.Tenant) bool { return t.Name == args[0].Key })
			if k < 0 {
				return "", nil, fmt.Errorf("%s: no tenant %q", l.pos, args[0].Key)
			}
			got = map[string]string{"milli": strconv.FormatInt(s.Tenants[k].AllocatedMilliGPU, 10)}
			args = args[1:]
		case "engine":
			got = map[string]string{
				"now": fmtT(s.Now), "queued": strconv.Itoa(s.Queued), "running": strconv.Itoa(s.Running),
				"terminal": strconv.Itoa(s.Terminal), "allocated": strconv.FormatInt(s.AllocatedMilli, 10),
				"down": strconv.FormatInt(s.DownMilli, 10), "done": strconv.FormatBool(s.Done),
				"rejections": strconv.FormatInt(s.Rejections, 10), "reconfigurations": strconv.FormatInt(s.MIGReconfigurations, 10),
			}
		default:
			return "", nil, fmt.Errorf("%s: unknown subject %q (want job, node, tenant or engine)", l.pos, l.name)
		}
		if len(args) == 0 {
			return "", nil, fmt.Errorf("%s: nothing to check", l.pos)
		}
		for _, a := range args {
			g, known := got[a.Key]
			if !known {
				keys := make([]string, 0, len(got))
				for k := range got {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				return "", nil, fieldError(l.pos, a.Key, "unknown for %s (known: %s)", l.name, strings.Join(keys, ", "))
			}
			want := strings.Join(a.Vals, ", ")
			if isTimeKey(a.Key) {
				w, err := parseT(want)
				if err != nil {
					return "", nil, fieldError(l.pos, a.Key, "%v", err)
				}
				want = fmtT(w)
			}
			if g != want {
				failures = append(failures, fmt.Sprintf("%s: assert failed at %s: %s: %s is %q, want %q", l.pos, fmtT(s.Now), subject(l), a.Key, g, want))
			}
			checked++
		}
	}
	if len(failures) > 0 {
		return "", failures, nil
	}
	return fmt.Sprintf("ok (%d checks)\n", checked), nil, nil
}

// subject names what an assert line checks: "job a", "engine".
func subject(l parsedLine) string {
	if l.name == "engine" {
		return l.name
	}
	return l.name + " " + l.args[0].Key
}

func isTimeKey(k string) bool {
	switch k {
	case "start", "end", "wait", "run", "lost", "preempt-lost", "checkpoint-time", "now", "down-until":
		return true
	}
	return false
}

// parseT reads a time as fmtT writes it: "-" is -1.
func parseT(s string) (hwmodel.Time, error) {
	if s == "-" {
		return -1, nil
	}
	t, err := hwmodel.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 90s or -, got %q", s)
	}
	return t, nil
}

func jobFacts(j *sim.JobStatus, nodes []sim.NodeStatus) map[string]string {
	pl := "-"
	if len(j.Placement) > 0 {
		pl = fmtPlacement(j.Placement, nodes)
	}
	why := map[sim.FailReason]string{
		sim.FailNone: "none", sim.FailRetriesExhausted: "retries", sim.FailDeadline: "deadline",
		sim.FailDependency: "dependency", sim.FailUnsatisfiable: "unsatisfiable",
	}[j.FailReason]
	return map[string]string{
		"state": stateName(j), "attempts": strconv.Itoa(int(j.Attempts)),
		"start": fmtT(j.Start), "end": fmtT(j.End), "wait": fmtT(j.Wait), "run": fmtT(j.Run),
		"lost": fmtT(j.LostTime), "checkpoint-time": fmtT(j.CheckpointTime), "placement": pl, "why": why, "reason": j.Reason,
		"hw-failures": strconv.Itoa(j.HardwareFailures), "profile": j.MIGProfile,
		"preemptions": strconv.Itoa(j.Preemptions), "preempt-lost": fmtT(j.PreemptLost),
	}
}

func nodeFacts(n *sim.NodeStatus) map[string]string {
	free := 0
	for _, g := range n.GPUs {
		if g.FreeMilli == hwmodel.MilliPerGPU && len(g.MIG) == 0 {
			free++
		}
	}
	return map[string]string{
		"failed": strconv.FormatBool(n.Failed), "down-until": fmtT(n.DownUntil),
		"free-gpus": strconv.Itoa(free), "free-cpu": fmtCores(n.FreeCPUMilli), "free-mem": fmtMiB(n.FreeMemoryMiB),
	}
}

// fmtT writes a time in seconds, "-" for -1 (not yet).
func fmtT(t hwmodel.Time) string {
	if t < 0 {
		return "-"
	}
	return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) + "s"
}

func fmtCores(milli int64) string { return strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64) }

func fmtMiB(mib int64) string {
	if mib%(1<<10) == 0 {
		return strconv.FormatInt(mib>>10, 10) + "GiB"
	}
	return strconv.FormatInt(mib, 10) + "MiB"
}

// fmtMask writes a bitmask's bits as ranges: 0-3,6.
func fmtMask(m uint64) string {
	var parts []string
	for m != 0 {
		lo := bits.TrailingZeros64(m)
		hi := lo
		for hi+1 < 64 && m&(1<<(hi+1)) != 0 {
			hi++
		}
		if lo == hi {
			parts = append(parts, strconv.Itoa(lo))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", lo, hi))
		}
		m &^= (1<<(hi+1) - 1) &^ (1<<lo - 1)
	}
	return strings.Join(parts, ",")
}

// fmtPlacement writes a placement as node:gpuRANGES, with @M for a
// fractional share, /migK for MIG instance K and "cpu" for a share
// without GPUs; shares joined by "+".
func fmtPlacement(p hwmodel.Placement, nodes []sim.NodeStatus) string {
	parts := make([]string, len(p))
	for k, s := range p {
		name := nodes[s.Node].Name
		switch {
		case s.GPUs == 0:
			parts[k] = name + ":cpu"
		case s.Instance > 0:
			parts[k] = fmt.Sprintf("%s:gpu%s/mig%d", name, fmtMask(s.GPUs), s.Instance-1)
		case s.Milli < hwmodel.MilliPerGPU:
			parts[k] = fmt.Sprintf("%s:gpu%s@%dm", name, fmtMask(s.GPUs), s.Milli)
		default:
			parts[k] = fmt.Sprintf("%s:gpu%s", name, fmtMask(s.GPUs))
		}
	}
	return strings.Join(parts, "+")
}

func fmtLayout(l hwmodel.MIGLayout, m hwmodel.ModelID) string {
	if len(l) == 0 {
		return "whole"
	}
	return "[" + l.String(m) + "]"
}

// fmtInstances writes a MIG GPU's instances, * marking busy ones and !
// blocked ones.
func fmtInstances(g sim.GPUStatus, m hwmodel.ModelID) string {
	profs := hwmodel.MIGProfiles(m)
	parts := make([]string, len(g.MIG))
	for k, in := range g.MIG {
		parts[k] = fmt.Sprintf("%d:%s", k, profs[in.Profile].Name)
		if g.MIGBusy&(1<<k) != 0 {
			parts[k] += "*"
		}
		if g.MIGBlocked&(1<<k) != 0 {
			parts[k] += "!"
		}
	}
	return strings.Join(parts, " ")
}

// TestScenarioAssertFails checks that assert catches a wrong expectation
// and says which job, which field, what it is and what was wanted, and
// that the harness answers commands with the engine's state.
func TestScenarioAssertFails(t *testing.T) {
	h := &harness{file: "inline"}
	step := func(line, input string) (string, []string, error) {
		t.Helper()
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			t.Fatal(err)
		}
		d := &datadriven.TestData{Pos: "inline:1", Cmd: cmd, CmdArgs: args, Input: input}
		if cmd == "assert" {
			return h.doAssert(d)
		}
		out, err := h.do(t, d)
		return out, nil, err
	}
	for _, c := range []struct{ line, input string }{
		{"cluster", "n0 gpus=1 model=H100 cpu=8 mem=64GiB"},
		{"policy fcfs", ""},
		{"submit", "a at=0s dur=10s\nb at=0s dur=10s"},
		{"run until=5s", ""},
	} {
		if _, _, err := step(c.line, c.input); err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
	}
	tests := []struct {
		input string
		want  []string // the failures, in order; none: it passes
	}{
		{"job a state=running start=0s\njob b state=ready wait=5s", nil},
		{"job a state=succeeded", []string{`inline:2: assert failed at 5s: job a: state is "running", want "succeeded"`}},
		{"job b start=0s attempts=1", []string{
			`inline:2: assert failed at 5s: job b: start is "-", want "0s"`,
			`inline:2: assert failed at 5s: job b: attempts is "0", want "1"`}},
		{"engine now=6s running=1", []string{`inline:2: assert failed at 5s: engine: now is "5s", want "6s"`}},
		{"node n0 free-gpus=1", []string{`inline:2: assert failed at 5s: node n0: free-gpus is "0", want "1"`}},
	}
	for _, tc := range tests {
		out, failures, err := step("assert", tc.input)
		if err != nil {
			t.Fatalf("assert %q: %v", tc.input, err)
		}
		if !slices.Equal(failures, tc.want) {
			t.Errorf("assert %q: failures\n%q\nwant\n%q", tc.input, failures, tc.want)
		}
		if (out == "") != (len(tc.want) > 0) {
			t.Errorf("assert %q: output %q with %d failures", tc.input, out, len(failures))
		}
	}
}
