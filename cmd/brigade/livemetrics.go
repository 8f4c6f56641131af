package main

import (
	"context"
	"fmt"
	"io"

	"github.com/brigadesim/brigade/live"
)

// liveMetrics is brigade live's --metrics endpoint: bound before the
// driver opens (so a busy port or a refused address is an error at
// start-up), served while the driver runs.
type liveMetrics struct {
	m            *live.Metrics
	srv          *live.MetricsServer
	closeSampler func()
	cancel       context.CancelFunc
	done         chan error
}

// openLiveMetrics returns nil (no metrics) when addr is "". With real GPUs
// the per-GPU series come from NVML; with --gpus-fake there are none.
func openLiveMetrics(addr string, public, fake bool, gpus []live.GPU, stderr io.Writer) (*liveMetrics, error) {
	if addr == "" {
		return nil, nil
	}
	lm := &liveMetrics{}
	var sampler live.GPUSampler
	if !fake {
		s, closeFn, err := live.OpenLocalSampler(gpus)
		if err != nil {
			fmt.Fprintf(stderr, "live: metrics without per-GPU series: %v\n", err)
		} else {
			sampler, lm.closeSampler = s, closeFn
		}
	}
	lm.m = live.NewMetrics(sampler)
	srv, err := lm.m.Listen(addr, public)
	if err != nil {
		lm.close()
		return nil, err
	}
	lm.srv = srv
	fmt.Fprintf(stderr, "live: metrics at http://%s/metrics\n", srv.Addr())
	return lm, nil
}

func (lm *liveMetrics) metrics() *live.Metrics {
	if lm == nil {
		return nil
	}
	return lm.m
}

// serve answers scrapes until ctx ends or close is called.
func (lm *liveMetrics) serve(ctx context.Context) {
	if lm == nil {
		return
	}
	ctx, lm.cancel = context.WithCancel(ctx)
	lm.done = make(chan error, 1)
	go func() { lm.done <- lm.srv.Serve(ctx) }()
}

// close stops serving (letting a scrape in flight finish) and releases
// NVML.
func (lm *liveMetrics) close() {
	if lm == nil {
		return
	}
	switch {
	case lm.cancel != nil:
		lm.cancel()
		<-lm.done
		lm.cancel, lm.srv = nil, nil
	case lm.srv != nil:
		lm.srv.Close()
	}
	if lm.closeSampler != nil {
		lm.closeSampler()
		lm.closeSampler = nil
	}
}
