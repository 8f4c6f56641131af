package scheduler

import (
	"context"
	"io"
	"sync"
)

// bindWorkers is how many jobs of one round are bound at once. Each
// Binding waits mostly on the API server's write to etcd, so a few in
// flight overlap those waits; the client's QPS limit still bounds the
// rate.
const bindWorkers = 8

// bindOutcome is what binding a job's pods asks of the books.
type bindOutcome uint8

const (
	bindDone bindOutcome = iota
	// bindUnstart: no pod of the job was bound; take the start back.
	bindUnstart
	// bindRebuild: a gang member's Binding failed and others may be
	// bound; rebuild the books from the API server.
	bindRebuild
)

// bindAll binds the round's accepted starts, bindWorkers jobs at a time.
// A worker makes only API calls and changes only its own job's members,
// so each job keeps its protocol (a gang's commit before its Bindings, a
// failed Binding read back); the books hear the outcomes afterwards, in
// the round's order, on this goroutine, as a serial loop would.
func (s *Scheduler) bindAll(ctx context.Context, jobs []*job) {
	outcomes := make([]bindOutcome, len(jobs))
	parallel(bindWorkers, len(jobs), func(i int) { outcomes[i] = s.bindJob(ctx, jobs[i]) })
	for i, j := range jobs {
		s.settle(j, outcomes[i])
	}
}

// parallel calls f(0), ..., f(n-1) from up to workers goroutines and
// returns when all are done. A panic in f (a test's crash hook) stops
// the handing out of calls and is raised again here, where a serial
// loop would have raised it.
func parallel(workers, n int, f func(i int)) {
	next := make(chan int)
	stop := make(chan struct{})
	var (
		wg        sync.WaitGroup
		panicOnce sync.Once
		panicked  any
	)
	for range min(workers, n) {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					panicOnce.Do(func() { panicked = p; close(stop) })
				}
			}()
			for i := range next {
				f(i)
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-stop:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// settle tells the books what binding j came to.
func (s *Scheduler) settle(j *job, o bindOutcome) {
	switch o {
	case bindUnstart:
		s.unstart(j)
	case bindRebuild:
		s.needsBuild = true
	}
}

// lockedWriter serializes writes to the scheduler's log, which bind
// workers share.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
