package main

import (
	"fmt"
	"io"
	"time"

	"github.com/brigadesim/brigade/live"
)

// liveHealthHook, when set (tests), supplies the health source of a
// brigade live run with --gpus-fake, which otherwise has none.
var liveHealthHook func(gpus []live.GPU) live.HealthSource

// openLiveHealth returns the health source of a brigade live run: none when
// interval is 0; NVML's (each query bounded by the interval) when the GPUs
// came from NVML; the test hook's with --gpus-fake.
func openLiveHealth(interval time.Duration, fake bool, gpus []live.GPU, stderr io.Writer) (live.HealthSource, error) {
	switch {
	case interval <= 0:
		return nil, nil
	case fake:
		if liveHealthHook != nil {
			return liveHealthHook(gpus), nil
		}
		return nil, nil
	}
	h, err := live.NewLocalHealth(gpus, interval, func(s string) { fmt.Fprintln(stderr, s) })
	if err != nil {
		return nil, fmt.Errorf("GPU health checks: %w (--heartbeat-interval 0 runs without them)", err)
	}
	return h, nil
}
