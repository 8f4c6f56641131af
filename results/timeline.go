package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// State is the cluster's instantaneous state as the engine sees it. The
// Timeline treats it as piecewise constant: a State observed at time t holds
// until the next Observe (or Close).
type State struct {
	Queued   int // jobs ready and waiting for capacity
	Running  int // jobs holding a placement
	InSystem int // jobs submitted and not yet terminal, including jobs waiting on DAG dependencies
	// AllocatedMilli is the GPU capacity held by running jobs, in milli-GPU.
	AllocatedMilli int64
	// FragmentedMilli is the idle GPU capacity that the run's target
	// workload could not use (policies.ClusterFragmentation), in milli-GPU;
	// 0 when the caller does not track fragmentation.
	FragmentedMilli int64
	// MIG compute slices (all zero on a cluster without MIG GPUs):
	// MIGSlices is the slices of the GPUs that are MIG-enabled now, and
	// MIGBusySlices those of instances that run a job. MIGFreeSlices and
	// MIGFragSlices are measured only while at least one MIG request is
	// queued (both 0 otherwise): the slices of free instances that can be
	// used now (not being reconfigured), and the part of them in instances
	// that no queued MIG request fits.
	MIGSlices     int64
	MIGBusySlices int64
	MIGFreeSlices int64
	MIGFragSlices int64
	// DownMilli is the GPU capacity out of service (failed nodes and GPUs,
	// until repaired), in milli-GPU; 0 in a run without faults.
	DownMilli int64
}

// hasMIG reports whether any MIG field is non-zero.
func (s State) hasMIG() bool {
	return s.MIGSlices != 0 || s.MIGBusySlices != 0 || s.MIGFreeSlices != 0 || s.MIGFragSlices != 0
}

// MaxBuckets bounds the number of time-series buckets a Timeline keeps. When a
// run outgrows it, adjacent buckets are merged pairwise and the bucket width
// doubles, so a Timeline's memory is fixed at construction whatever the run's
// length, and the series keeps between MaxBuckets/2 and MaxBuckets buckets.
const MaxBuckets = 2000

// DefaultBucket is the bucket width NewTimeline uses when given a width <= 0.
const DefaultBucket = hwmodel.Minute

// Integrals are the exact time integrals of a Timeline's State over
// [Start, End], converted to seconds: QueuedJobSeconds is ∫Queued dt in
// job-seconds, and so on. AllocatedMilliGPUSeconds is in milli-GPU-seconds.
type Integrals struct {
	QueuedJobSeconds          float64
	RunningJobSeconds         float64
	InSystemJobSeconds        float64
	AllocatedMilliGPUSeconds  float64
	FragmentedMilliGPUSeconds float64
	// ∫ of the MIG slice counts, in slice-seconds.
	MIGSliceSeconds     float64
	MIGBusySliceSeconds float64
	MIGFreeSliceSeconds float64
	MIGFragSliceSeconds float64
	// DownMilliGPUSeconds is ∫DownMilli dt, in milli-GPU-seconds.
	DownMilliGPUSeconds float64
}

// Bucket is one point of the time series: time-weighted means of the State
// over the part of [Start, Start+Width) that the Timeline covers.
type Bucket struct {
	Start hwmodel.Time // multiple of Width
	Width hwmodel.Time // nominal width (the Timeline's width at the time of the call)
	// Covered is the part of the bucket inside the Timeline's [Start, End]
	// window; the means below divide by it, so the first and last buckets of
	// a run are not diluted by time the run did not cover.
	Covered        hwmodel.Time
	QueueLength    float64 // mean Queued
	RunningJobs    float64 // mean Running
	GPUUtilisation float64 // mean AllocatedMilli / capacity; 0 when capacity is 0
	// GPUFragmentation is ∫FragmentedMilli / ∫(capacity − AllocatedMilli)
	// over the bucket: the share of idle GPU capacity that was fragmented;
	// 0 when nothing was idle.
	GPUFragmentation float64
	// MIGSliceUtilisation is ∫MIGBusySlices / ∫MIGSlices over the bucket;
	// MIGFragmentation is ∫MIGFragSlices / ∫MIGFreeSlices. Each is 0 when
	// its denominator is.
	MIGSliceUtilisation float64
	MIGFragmentation    float64
	// DownGPUs is the mean number of GPUs out of service (∫DownMilli /
	// 1000 over the bucket).
	DownGPUs float64
}

// bucketAcc holds one bucket's integrals in count × µs.
type bucketAcc struct {
	queued, running, alloc, frag   acc
	mig, migBusy, migFree, migFrag acc
	down                           acc
}

func (b *bucketAcc) add(o bucketAcc) {
	b.queued.add(o.queued)
	b.running.add(o.running)
	b.alloc.add(o.alloc)
	b.frag.add(o.frag)
	b.mig.add(o.mig)
	b.migBusy.add(o.migBusy)
	b.migFree.add(o.migFree)
	b.migFrag.add(o.migFrag)
	b.down.add(o.down)
}

// Timeline integrates the cluster's piecewise-constant State over simulated
// time. It keeps exact integrals (128-bit count × microsecond sums) of every
// State field over [first Observe, Close], the per-field maxima, and
// fixed-width buckets from time 0 for the time series.
//
// Observe is on the engine's hot path: it does not allocate (the bucket
// storage is allocated once, by NewTimeline), and costs O(1) plus one step per
// bucket boundary the elapsed segment crosses while the state is non-zero.
//
// Misuse panics rather than returning an error, because each case is a
// broken engine invariant that would otherwise silently corrupt every metric:
// a time before 0 or before the previous Observe, a negative State field, or
// an Observe after Close. A Timeline is not safe for concurrent use.
type Timeline struct {
	width      hwmodel.Time
	capacity   int64
	maxBuckets int

	started, closed bool
	start, last     hwmodel.Time // first Observe; start of the current segment
	cur             State        // state holding since last
	max             State

	// inSystem is ∫InSystem dt; the other integrals are the sums of the
	// buckets' (Integrals), which every segment adds to exactly.
	inSystem acc

	buckets []bucketAcc // index i covers [i×width, (i+1)×width); cap = maxBuckets

	// Per-tenant GPU allocation (TrackTenants, ObserveTenants): tenCur
	// holds since tenLast, and is integrated only when it changes (or at
	// Close). tenBuckets[i×len(tenCur)+k] is tenant k's ∫milli dt in bucket
	// i, in milli-GPU × µs, allocated up front (maxBuckets × tenants).
	tenNames   []string
	tenFair    []float64
	tenCur     []int64
	tenLast    hwmodel.Time
	tenBuckets []acc
}

// NewTimeline returns an empty Timeline with the given initial bucket width
// (DefaultBucket if bucket <= 0) and GPU capacity in milli-GPU, which is the
// denominator of the per-bucket utilisation.
func NewTimeline(bucket hwmodel.Time, capacityMilli int64) *Timeline {
	return newTimeline(bucket, capacityMilli, MaxBuckets)
}

func newTimeline(bucket hwmodel.Time, capacityMilli int64, maxBuckets int) *Timeline {
	if bucket <= 0 {
		bucket = DefaultBucket
	}
	if maxBuckets < 2 {
		maxBuckets = 2
	}
	return &Timeline{
		width:      bucket,
		capacity:   capacityMilli,
		maxBuckets: maxBuckets,
		buckets:    make([]bucketAcc, 0, maxBuckets),
	}
}

// Observe records that the cluster is in state s from now until the next
// Observe or Close. Several Observes at the same instant are allowed; only
// the last one holds for any length of time (and only states that hold for a
// positive length of time count towards the maxima). now must be >= 0 and
// never decrease; the engine guarantees this, and Observe panics otherwise.
func (t *Timeline) Observe(now hwmodel.Time, s State) {
	if t.closed {
		panic("results: Timeline.Observe after Close")
	}
	if s.Queued < 0 || s.Running < 0 || s.InSystem < 0 || s.AllocatedMilli < 0 || s.FragmentedMilli < 0 ||
		s.MIGSlices < 0 || s.MIGBusySlices < 0 || s.MIGFreeSlices < 0 || s.MIGFragSlices < 0 || s.DownMilli < 0 {
		panic(fmt.Sprintf("results: Timeline.Observe: negative state %+v at %d µs", s, now))
	}
	if !t.started {
		if now < 0 {
			panic(fmt.Sprintf("results: Timeline.Observe: negative time %d µs", now))
		}
		t.started = true
		t.start, t.last, t.cur = now, now, s
		t.tenLast = now
		return
	}
	t.advance(now)
	t.cur = s
}

// Close ends the timeline at end: the last observed state holds until end.
// After Close the Timeline is read-only. Closing twice at the same end is a
// no-op; end before the last Observe, or a second Close at another time,
// panics. Closing a Timeline that was never observed gives an empty window
// [end, end].
func (t *Timeline) Close(end hwmodel.Time) {
	if t.closed {
		if end != t.last {
			panic(fmt.Sprintf("results: Timeline closed at %d µs, then again at %d µs", t.last, end))
		}
		return
	}
	if !t.started {
		if end < 0 {
			panic(fmt.Sprintf("results: Timeline.Close: negative time %d µs", end))
		}
		t.started = true
		t.start, t.last = end, end
	} else {
		t.advance(end)
	}
	t.flushTenants(t.last)
	t.closed = true
}

// TrackTenants makes the Timeline keep each tenant's allocated GPUs over
// time, fed by ObserveTenants: names are the tenants in the order of
// ObserveTenants' slice, and fair their fair shares of the cluster's GPUs
// (FairShares), reported beside the measured shares. It allocates the
// per-tenant bucket storage (MaxBuckets × tenants) and must be called
// before the first Observe; it panics otherwise, or if the lengths differ.
func (t *Timeline) TrackTenants(names []string, fair []float64) {
	if t.started {
		panic("results: Timeline.TrackTenants after Observe")
	}
	if len(names) != len(fair) {
		panic(fmt.Sprintf("results: Timeline.TrackTenants: %d names, %d fair shares", len(names), len(fair)))
	}
	n := len(names)
	t.tenNames = append([]string(nil), names...)
	t.tenFair = append([]float64(nil), fair...)
	t.tenCur = make([]int64, n)
	t.tenBuckets = make([]acc, t.maxBuckets*n)
}

// ObserveTenants is Observe plus each tenant's allocated GPU capacity, in
// milli-GPU, indexed like TrackTenants' names (tenantMilli is only read,
// never kept). Like Observe it does not allocate; the per-tenant values are
// integrated only when they change, so an event that moves no tenant's
// allocation costs O(tenants) for the comparison. It panics on a length
// other than TrackTenants' or a negative value.
func (t *Timeline) ObserveTenants(now hwmodel.Time, s State, tenantMilli []int64) {
	if len(tenantMilli) != len(t.tenCur) {
		panic(fmt.Sprintf("results: Timeline.ObserveTenants: %d tenants, TrackTenants gave %d", len(tenantMilli), len(t.tenCur)))
	}
	for _, m := range tenantMilli {
		if m < 0 {
			panic(fmt.Sprintf("results: Timeline.ObserveTenants: negative tenant allocation %v at %d µs", tenantMilli, now))
		}
	}
	first := !t.started
	t.Observe(now, s)
	if first {
		t.tenLast = now
		copy(t.tenCur, tenantMilli)
		return
	}
	if slices.Equal(t.tenCur, tenantMilli) {
		return
	}
	t.flushTenants(now)
	copy(t.tenCur, tenantMilli)
}

// flushTenants integrates tenCur over [tenLast, now) into the per-tenant
// buckets (their sums are the totals). advance has already made room for the bucket holding
// now−1 (merging if needed), and a merge keeps pairs aligned, so the pending
// segment lands in the right buckets whatever the width was when it began.
func (t *Timeline) flushTenants(now hwmodel.Time) {
	n := len(t.tenCur)
	if n == 0 || now <= t.tenLast {
		t.tenLast = max(t.tenLast, now)
		return
	}
	zero := true
	for _, m := range t.tenCur {
		zero = zero && m == 0
	}
	if !zero {
		for a := t.tenLast; a < now; {
			i := a / t.width
			e := min(now, (i+1)*t.width)
			d := int64(e - a)
			row := t.tenBuckets[int(i)*n : int(i+1)*n]
			for k, m := range t.tenCur {
				if m != 0 {
					row[k].addMul(m, d)
				}
			}
			a = e
		}
	}
	t.tenLast = now
}

// advance integrates the current state over [t.last, now) and moves t.last.
func (t *Timeline) advance(now hwmodel.Time) {
	if now < t.last {
		panic(fmt.Sprintf("results: Timeline time went backwards: %d µs after %d µs", now, t.last))
	}
	dt := int64(now - t.last)
	if dt == 0 {
		return
	}
	s := t.cur
	t.inSystem.addMul(int64(s.InSystem), dt)
	t.max.Queued = max(t.max.Queued, s.Queued)
	t.max.Running = max(t.max.Running, s.Running)
	t.max.InSystem = max(t.max.InSystem, s.InSystem)
	t.max.AllocatedMilli = max(t.max.AllocatedMilli, s.AllocatedMilli)
	t.max.FragmentedMilli = max(t.max.FragmentedMilli, s.FragmentedMilli)
	t.max.MIGSlices = max(t.max.MIGSlices, s.MIGSlices)
	t.max.MIGBusySlices = max(t.max.MIGBusySlices, s.MIGBusySlices)
	t.max.MIGFreeSlices = max(t.max.MIGFreeSlices, s.MIGFreeSlices)
	t.max.MIGFragSlices = max(t.max.MIGFragSlices, s.MIGFragSlices)
	t.max.DownMilli = max(t.max.DownMilli, s.DownMilli)

	// Make room for the bucket holding the segment's last instant.
	for int((now-1)/t.width) >= t.maxBuckets {
		t.merge()
	}
	need := int((now-1)/t.width) + 1
	if need > len(t.buckets) {
		t.buckets = t.buckets[:need] // within capacity; merge zeroes what it frees
	}
	if s.Queued == 0 && s.Running == 0 && s.AllocatedMilli == 0 && s.FragmentedMilli == 0 && s.DownMilli == 0 && !s.hasMIG() {
		t.last = now
		return
	}
	for a := t.last; a < now; {
		i := a / t.width
		e := min(now, (i+1)*t.width)
		d := int64(e - a)
		b := &t.buckets[i]
		b.queued.addMul(int64(s.Queued), d)
		b.running.addMul(int64(s.Running), d)
		b.alloc.addMul(s.AllocatedMilli, d)
		b.frag.addMul(s.FragmentedMilli, d)
		b.down.addMul(s.DownMilli, d)
		if s.hasMIG() {
			b.mig.addMul(s.MIGSlices, d)
			b.migBusy.addMul(s.MIGBusySlices, d)
			b.migFree.addMul(s.MIGFreeSlices, d)
			b.migFrag.addMul(s.MIGFragSlices, d)
		}
		a = e
	}
	t.last = now
}

// merge halves the bucket count by summing adjacent pairs and doubles the
// width. Buckets start at time 0, so pairs stay aligned.
func (t *Timeline) merge() {
	n := len(t.buckets)
	h := (n + 1) / 2
	for i := 0; i < h; i++ {
		b := t.buckets[2*i]
		if 2*i+1 < n {
			b.add(t.buckets[2*i+1])
		}
		t.buckets[i] = b
	}
	clear(t.buckets[h:n])
	t.buckets = t.buckets[:h]
	if k := len(t.tenCur); k > 0 {
		tb := t.tenBuckets
		for i := 0; i < h; i++ {
			for j := 0; j < k; j++ {
				b := tb[2*i*k+j]
				if 2*i+1 < n {
					b.add(tb[(2*i+1)*k+j])
				}
				tb[i*k+j] = b
			}
		}
		clear(tb[h*k : n*k])
	}
	t.width *= 2
}

// Start is the time of the first Observe (or of Close, if never observed).
func (t *Timeline) Start() hwmodel.Time { return t.start }

// End is the Close time once closed, else the time of the last Observe.
func (t *Timeline) End() hwmodel.Time { return t.last }

// Closed reports whether Close has been called.
func (t *Timeline) Closed() bool { return t.closed }

// CapacityMilli is the GPU capacity given to NewTimeline.
func (t *Timeline) CapacityMilli() int64 { return t.capacity }

// BucketWidth is the current bucket width: the initial width times 2^k after
// k merges.
func (t *Timeline) BucketWidth() hwmodel.Time { return t.width }

// Max returns the per-field maxima over states that held for a positive
// length of time. The fields need not have peaked at the same moment.
func (t *Timeline) Max() State { return t.max }

// Integrals returns the exact integrals over [Start, End], in seconds.
func (t *Timeline) Integrals() Integrals {
	var tot bucketAcc
	for _, b := range t.buckets {
		tot.add(b)
	}
	return Integrals{
		QueuedJobSeconds:          tot.queued.float() / float64(hwmodel.Second),
		RunningJobSeconds:         tot.running.float() / float64(hwmodel.Second),
		InSystemJobSeconds:        t.inSystem.float() / float64(hwmodel.Second),
		AllocatedMilliGPUSeconds:  tot.alloc.float() / float64(hwmodel.Second),
		FragmentedMilliGPUSeconds: tot.frag.float() / float64(hwmodel.Second),
		MIGSliceSeconds:           tot.mig.float() / float64(hwmodel.Second),
		MIGBusySliceSeconds:       tot.migBusy.float() / float64(hwmodel.Second),
		MIGFreeSliceSeconds:       tot.migFree.float() / float64(hwmodel.Second),
		MIGFragSliceSeconds:       tot.migFrag.float() / float64(hwmodel.Second),
		DownMilliGPUSeconds:       tot.down.float() / float64(hwmodel.Second),
	}
}

// Buckets returns the time series: one Bucket for each bucket that overlaps
// [Start, End) by a positive length, in time order. It allocates the result
// and is meant for reporting, not for the hot path. An empty window gives no
// buckets.
func (t *Timeline) Buckets() []Bucket {
	if t.last <= t.start {
		return nil
	}
	first := int(t.start / t.width)
	last := int((t.last - 1) / t.width)
	out := make([]Bucket, 0, last-first+1)
	for i := first; i <= last; i++ {
		bs := hwmodel.Time(i) * t.width
		cov := min(bs+t.width, t.last) - max(bs, t.start)
		b := Bucket{Start: bs, Width: t.width, Covered: cov}
		if i < len(t.buckets) {
			c := float64(cov)
			a := &t.buckets[i]
			b.QueueLength = a.queued.float() / c
			b.RunningJobs = a.running.float() / c
			if t.capacity > 0 {
				b.GPUUtilisation = a.alloc.float() / (c * float64(t.capacity))
				if idle := c*float64(t.capacity) - a.alloc.float(); idle > 0 {
					b.GPUFragmentation = a.frag.float() / idle
				}
			}
			if m := a.mig.float(); m > 0 {
				b.MIGSliceUtilisation = a.migBusy.float() / m
			}
			if f := a.migFree.float(); f > 0 {
				b.MIGFragmentation = a.migFrag.float() / f
			}
			b.DownGPUs = a.down.float() / c / hwmodel.MilliPerGPU
		}
		out = append(out, b)
	}
	return out
}

// TenantShare is one tenant's GPU allocation over one bucket (see
// Timeline.TenantShares).
type TenantShare struct {
	Start   hwmodel.Time // as Bucket.Start
	Width   hwmodel.Time // as Bucket.Width
	Covered hwmodel.Time // as Bucket.Covered
	Tenant  string
	// AllocatedGPUs is the tenant's time-averaged allocation: ∫milli dt over
	// the bucket / Covered / 1000.
	AllocatedGPUs float64
	// GPUShare is AllocatedGPUs over the cluster's GPUs (0 when the
	// capacity is 0); FairShare is the tenant's fair share given to
	// TrackTenants.
	GPUShare  float64
	FairShare float64
}

// TenantShares returns the per-tenant series: for each bucket of Buckets,
// in time order, one TenantShare per tracked tenant in TrackTenants' order.
// It is complete once the Timeline is closed (before Close it leaves out
// the allocations held since the tenants' last change). Nil when no tenants
// are tracked or the window is empty. Allocates; for reporting.
func (t *Timeline) TenantShares() []TenantShare {
	n := len(t.tenCur)
	if n == 0 || t.last <= t.start {
		return nil
	}
	first := int(t.start / t.width)
	last := int((t.last - 1) / t.width)
	out := make([]TenantShare, 0, (last-first+1)*n)
	for i := first; i <= last; i++ {
		bs := hwmodel.Time(i) * t.width
		cov := min(bs+t.width, t.last) - max(bs, t.start)
		for k, name := range t.tenNames {
			ts := TenantShare{Start: bs, Width: t.width, Covered: cov, Tenant: name, FairShare: t.tenFair[k]}
			if i < len(t.buckets) {
				v := t.tenBuckets[i*n+k].float()
				ts.AllocatedGPUs = v / float64(cov) / hwmodel.MilliPerGPU
				if t.capacity > 0 {
					ts.GPUShare = v / (float64(cov) * float64(t.capacity))
				}
			}
			out = append(out, ts)
		}
	}
	return out
}

// TenantMilliGPUSeconds returns each tracked tenant's ∫milli dt over the
// flushed part of the window (all of it once closed), in milli-GPU-seconds,
// in TrackTenants' order; their sum is Integrals().AllocatedMilliGPUSeconds
// when the engine's books agree.
func (t *Timeline) TenantMilliGPUSeconds() []float64 {
	n := len(t.tenCur)
	tot := make([]acc, n)
	for i := range t.buckets {
		for k, b := range t.tenBuckets[i*n : (i+1)*n] {
			tot[k].add(b)
		}
	}
	out := make([]float64, n)
	for k := range tot {
		out[k] = tot[k].float() / float64(hwmodel.Second)
	}
	return out
}

// FairShares gives each tenant's fair share of the cluster's GPUs: its
// weight over the sum of the weights of the tenants that have jobs
// (hasJobs), and 0 for a tenant without jobs, as Summary's
// TenantSummary.FairShare (a negative or non-finite weight reads 0). All
// zeros if no tenant with jobs has a positive weight.
func FairShares(weights []float64, hasJobs []bool) []float64 {
	ok := func(k int) bool { return hasJobs[k] && weights[k] > 0 && !math.IsInf(weights[k], 1) }
	var sum float64
	for k, w := range weights {
		if ok(k) {
			sum += w
		}
	}
	out := make([]float64, len(weights))
	if sum <= 0 {
		return out
	}
	for k, w := range weights {
		if ok(k) {
			out[k] = w / sum
		}
	}
	return out
}
