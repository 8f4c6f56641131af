package serving

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/brigadesim/brigade/config"
)

// StagePool is one CPU stage in front of a service's gateway, such as a
// tokenizer or the KV/prefix lookup's service latency: Workers servers
// that take the requests first come, first served, each request for a
// time drawn from ServiceTime (seconds). Classes name the stages their
// requests pass through (Class.Stages); the pools are the service's,
// shared by its replica pools, as a real front end is.
type StagePool struct {
	Name        string
	Workers     int
	ServiceTime Dist
}

// StageLatency is one stage's books for a class, in seconds over the
// requests that left the stage: Wait in its queue (entering the stage to
// a worker taking it), Total in the stage (the wait plus the service).
type StageLatency struct {
	Name        string
	Wait, Total Latency
}

// stageStream is the second PCG word of the stage pools' sources, offset
// per service and pool: the service times are drawn from streams of
// their own, so adding stages leaves every request's arrival and tokens
// as they were.
const stageStream = 0x7374616765310000 // "stage1"

// maxStageWorkers bounds a pool's servers (a mistyped count).
const maxStageWorkers = 1_000_000

// pipeline is the stage pools of one declared service.
type pipeline struct {
	pools []stagePool
	names map[string]int
}

// stagePool is a FIFO multi-server queue: a request that finds every
// worker busy waits in the ring; a worker that frees takes the oldest.
// Each request costs one heap event per stage and O(1) queue work.
type stagePool struct {
	name          string
	workers, busy int
	dist          Dist
	rng           *rand.Rand
	queue         lane // slot<<32 | gen
}

type stageBook struct{ wait, total latencyBook }

func newPipeline(pools []StagePool, seed uint64, svc int) *pipeline {
	p := &pipeline{names: map[string]int{}}
	for k, sp := range pools {
		p.pools = append(p.pools, stagePool{name: sp.Name, workers: sp.Workers, dist: sp.ServiceTime,
			rng: rand.New(rand.NewPCG(seed, stageStream+uint64(svc)<<16+uint64(k)))})
		p.names[sp.Name] = k
	}
	return p
}

// classStages resolves a class's stage names (checked by Spec.Check) to
// pool indices, with a book per stage.
func (p *pipeline) classStages(names []string) ([]int, []stageBook) {
	if p == nil || len(names) == 0 {
		return nil, nil
	}
	idx := make([]int, len(names))
	books := make([]stageBook, len(names))
	for k, n := range names {
		idx[k] = p.names[n]
		books[k] = stageBook{newLatencyBook(), newLatencyBook()}
	}
	return idx, books
}

// enterStage puts request i into its class's stage q.stage: to a free
// worker, or the back of the stage's queue.
func (m *model) enterStage(s *service, i int32) {
	q := &m.reqs[i]
	p := &s.pipe.pools[s.classes[q.class].stages[q.stage]]
	q.stageIn = m.now
	q.state = reqStage
	if p.busy < p.workers {
		m.startStage(s, p, i)
		return
	}
	p.queue.push(int64(i)<<32 | int64(q.gen))
}

// startStage gives request i (of service s) a worker of p.
func (m *model) startStage(s *service, p *stagePool, i int32) {
	q := &m.reqs[i]
	p.busy++
	s.classes[q.class].sbooks[q.stage].wait.add(int64(m.now - q.stageIn))
	m.heap.push(event{at: m.now + seconds(p.dist.draw(p.rng)), kind: evStageDone, a: i, gen: q.gen})
}

// stageDone ends request i's current stage: its worker takes the oldest
// waiting request, and i goes on to its next stage or the gateway.
func (m *model) stageDone(i int32) {
	q := &m.reqs[i]
	s := m.svcs[q.svc]
	cb := &s.classes[q.class]
	p := &s.pipe.pools[cb.stages[q.stage]]
	cb.sbooks[q.stage].total.add(int64(m.now - q.stageIn))
	p.busy--
	if p.queue.size > 0 {
		j := int32(p.queue.peek() >> 32)
		p.queue.drop()
		// The pools are shared: the next may be another pool's request.
		m.startStage(m.svcs[m.reqs[j].svc], p, j)
	}
	q.stage++
	if int(q.stage) < len(cb.stages) {
		m.enterStage(s, i)
		return
	}
	m.admit(s, i)
}

// stageLatencies is a class's per-stage results.
func (cb *classBook) stageLatencies(p *pipeline) []StageLatency {
	if len(cb.stages) == 0 {
		return nil
	}
	out := make([]StageLatency, len(cb.stages))
	for k, pi := range cb.stages {
		out[k] = StageLatency{Name: p.pools[pi].name, Wait: cb.sbooks[k].wait.latency(), Total: cb.sbooks[k].total.latency()}
	}
	return out
}

// allStages merges the classes' books per stage pool, in the pools'
// order, for the service's "all" row.
func (s *service) allStages() []StageLatency {
	if s.pipe == nil {
		return nil
	}
	var out []StageLatency
	for pi, p := range s.pipe.pools {
		b := stageBook{newLatencyBook(), newLatencyBook()}
		used := false
		for ci := range s.classes {
			cb := &s.classes[ci]
			for k, x := range cb.stages {
				if x == pi {
					merge(&b.wait, &cb.sbooks[k].wait)
					merge(&b.total, &cb.sbooks[k].total)
					used = true
				}
			}
		}
		if used {
			out = append(out, StageLatency{Name: p.name, Wait: b.wait.latency(), Total: b.total.latency()})
		}
	}
	return out
}

// checkStages reports what is wrong with a service's stage pools and its
// classes' stage lists.
func (v *Service) checkStages(e *config.Errors) {
	if len(v.StagePools) > maxClasses {
		e.Add("stage_pools", "lists %d stage pools; at most %d are allowed", len(v.StagePools), maxClasses)
	}
	names := map[string]int{}
	for k := range v.StagePools {
		sp := &v.StagePools[k]
		pe := e.Index("stage_pools", k)
		switch {
		case sp.Name == "":
			pe.Add("name", "want a name")
		case !validName(sp.Name):
			pe.Add("name", "want letters, digits and . _ - + only (it names rows), got %q", sp.Name)
		}
		if j, dup := names[sp.Name]; dup && sp.Name != "" {
			pe.Add("name", "%q is already the name of stage_pools[%d]", sp.Name, j)
		} else {
			names[sp.Name] = k
		}
		switch {
		case sp.Workers < 1:
			pe.Add("workers", "want ≥ 1, got %d", sp.Workers)
		case sp.Workers > maxStageWorkers:
			pe.Add("workers", "want at most %d, got %d", maxStageWorkers, sp.Workers)
		}
		sp.ServiceTime.check(pe.In("service_time"))
	}
	for ci := range v.Classes {
		c := &v.Classes[ci]
		seen := map[string]bool{}
		for k, n := range c.Stages {
			_, ok := names[n]
			switch {
			case !ok:
				e.Index("classes", ci).Index("stages", k).Add("", "unknown stage %q (the service's stage_pools: %s)", n, stageNames(v.StagePools))
			case seen[n]:
				e.Index("classes", ci).Index("stages", k).Add("", "%q is listed twice; a request passes each stage once", n)
			}
			seen[n] = true
		}
	}
}

func stageNames(pools []StagePool) string {
	if len(pools) == 0 {
		return "none"
	}
	s := make([]string, len(pools))
	for k, p := range pools {
		s[k] = p.Name
	}
	return joinNames(s)
}

// jsonStage is a StageLatency in serving_summary.json.
type jsonStage struct {
	Name  string      `json:"name"`
	Wait  jsonLatency `json:"wait_s"`
	Total jsonLatency `json:"total_s"`
}

func toJSONStages(st []StageLatency) []jsonStage {
	var out []jsonStage
	for _, x := range st {
		out = append(out, jsonStage{Name: x.Name, Wait: toJSONLatency(x.Wait), Total: toJSONLatency(x.Total)})
	}
	return out
}

// writeStageLines adds, under the table, a line per class that passes
// stages: each stage's p99 wait and p99 time in it, then the gateway
// queue's p99 wait (nothing when no class has stages).
func writeStageLines(w *bytes.Buffer, rs *RunSet) {
	head := false
	for _, v := range rs.Variants {
		for _, s := range v.Result.Services {
			for _, c := range s.Classes {
				if len(c.Stages) == 0 {
					continue
				}
				if !head {
					fmt.Fprintln(w, "\nstages (p99 wait/p99 time in each, then the gateway queue's p99 wait):")
					head = true
				}
				fmt.Fprintf(w, "%s %s %s:", v.Name, s.Name, c.Name)
				for _, st := range c.Stages {
					fmt.Fprintf(w, " %s %s/%s,", st.Name, fmtStage(st.Wait.P99), fmtStage(st.Total.P99))
				}
				fmt.Fprintf(w, " gateway %s\n", fmtLatency(c.QueueWait.P99, c.Completed))
			}
		}
	}
}

// fmtStage prints a stage's latency as the table does, with a tenth of a
// millisecond below 10 ms (stages are often that quick); under 50 µs is
// 0ms (a wait of none is recorded as 1 µs).
func fmtStage(s float64) string {
	if s < 0.00005 {
		return "0ms"
	}
	if s < 0.01 {
		return strconv.FormatFloat(s*1000, 'f', 1, 64) + "ms"
	}
	return fmtLatency(s, 1)
}
