package scheduler

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// RunOptions say how a running scheduler meets its cluster.
type RunOptions struct {
	// Tick is the longest time between rounds (0: 1s); a batch of
	// informer events makes a round sooner, after Batch (0: 20ms) of quiet.
	Tick, Batch time.Duration
	// LeaderElect: only the holder of the Lease schedules.
	LeaderElect bool
	// LeaseNamespace and LeaseName name the coordination.k8s.io Lease;
	// Identity is this replica's name in it.
	LeaseNamespace, LeaseName, Identity string
	// LeaseDuration is how long a Lease not renewed keeps others out (0:
	// DefaultLeaseDuration); the holder gives up when it has not renewed
	// for RenewDeadline (0: DefaultRenewDeadline); every replica tries
	// again every RetryPeriod (0: DefaultRetryPeriod). A killed leader is
	// replaced within about LeaseDuration.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// The lease timings of kube-scheduler's own defaults.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Run watches the cluster through shared informers and schedules until
// ctx ends: a round after each batch of events and at every tick. With
// LeaderElect, it schedules only while it holds the Lease, and returns
// when it loses it (a fresh process rebuilds its books from the API
// server, which is the one truth).
func Run(ctx context.Context, cfg Config, client kubernetes.Interface, dyn dynamic.Interface, opt RunOptions) error {
	if opt.Tick <= 0 {
		opt.Tick = time.Second
	}
	if opt.Batch <= 0 {
		opt.Batch = 20 * time.Millisecond
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&opt.LeaseDuration, DefaultLeaseDuration}, {&opt.RenewDeadline, DefaultRenewDeadline}, {&opt.RetryPeriod, DefaultRetryPeriod}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	run := func(ctx context.Context) error {
		kick := make(chan struct{}, 1)
		factories, src := newInformerSource(client, cfgName(cfg), cfg.NodeSelector, func() {
			select {
			case kick <- struct{}{}:
			default:
			}
		})
		s, err := New(cfg, client, dyn, src)
		if err != nil {
			return err
		}
		for _, f := range factories {
			f.Start(ctx.Done())
		}
		for _, f := range factories {
			for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
				if !ok {
					return fmt.Errorf("the %v informer did not sync", typ)
				}
			}
		}
		tick := time.NewTicker(opt.Tick)
		defer tick.Stop()
		for {
			if err := s.Round(ctx); err != nil {
				s.logf("round: %v", err)
			}
			// A policy that asked to be called at a moment (a service
			// threshold, a quantum's end, a round) gets its round then,
			// not at the next tick. (A moment already past means the
			// round failed before the call: the tick retries.)
			var wake <-chan time.Time
			if t, ok := s.NextWake(); ok {
				if d := time.Until(t); d > 0 {
					wake = time.After(d)
				}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			case <-wake:
			case <-kick:
				// Let a burst of events land before the round, but no
				// later than the moment the policy asked for.
				t := time.NewTimer(opt.Batch)
				select {
				case <-ctx.Done():
					t.Stop()
					return nil
				case <-t.C:
				case <-wake:
					t.Stop()
				}
			}
		}
	}
	if !opt.LeaderElect {
		return run(ctx)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: opt.LeaseNamespace, Name: opt.LeaseName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: opt.Identity},
	}
	var runErr error
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: opt.LeaseDuration, RenewDeadline: opt.RenewDeadline, RetryPeriod: opt.RetryPeriod,
		ReleaseOnCancel: true, Name: opt.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { runErr = run(ctx); cancel() },
			OnStoppedLeading: func() { cancel() },
		},
	})
	if err != nil {
		return err
	}
	le.Run(lctx)
	return runErr
}

func cfgName(cfg Config) string {
	if cfg.Name == "" {
		return DefaultName
	}
	return cfg.Name
}
