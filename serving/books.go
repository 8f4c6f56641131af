package serving

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// roll closes every bucket that ends at or before t.
func (m *model) roll(t hwmodel.Time) {
	width := m.spec.bucket()
	for m.nextRoll <= t && m.nextRoll <= m.horizon {
		for _, s := range m.svcs {
			b := s.bucket
			b.Start = m.nextRoll - width
			b.TTFTP99 = s.bucketLat[0].quantile(0.99) / 1e6
			b.E2EP50 = s.bucketLat[1].quantile(0.50) / 1e6
			b.E2EP99 = s.bucketLat[1].quantile(0.99) / 1e6
			b.ReplicasReady = s.ready
			b.QueueLen = s.queued
			for _, r := range s.replicas {
				if r.placement != nil && r.state != repGone {
					b.ReplicasHeld++
					b.GPUs += r.placement.GPUCount()
				}
			}
			s.res.Series = append(s.res.Series, b)
			s.bucket = Bucket{}
			s.bucketLat[0].reset()
			s.bucketLat[1].reset()
		}
		m.nextRoll += width
	}
}

// result turns the books into a ServiceResult per service.
func (m *model) result() []ServiceResult {
	out := make([]ServiceResult, len(m.svcs))
	m.signalsAtHorizon()
	for si, s := range m.svcs {
		slotUS := s.intReady * float64(s.spec.Replica.MaxConcurrent)
		allSig := newClassSignals()
		res := s.res
		all := ClassResult{Name: "all"}
		allBooks := [3]latencyBook{newLatencyBook(), newLatencyBook(), newLatencyBook()}
		var attained, hit, input int64
		for ci := range s.classes {
			cb := &s.classes[ci]
			c := cb.res
			c.TTFT, c.E2E, c.QueueWait = cb.ttft.latency(), cb.e2e.latency(), cb.queue.latency()
			c.Unfinished = c.Requests - c.Completed - c.Errors - c.Timeouts
			c.Stages = cb.stageLatencies(s.pipe)
			finishClass(&c, cb.attained, m.horizon)
			finishSignals(&c, &cb.sig, slotUS, m.horizon)
			mergeSignals(&allSig, &cb.sig)
			c.PrefixHitRatio = prefixRatio(cb.prefixHit, cb.input)
			hit, input = hit+cb.prefixHit, input+cb.input
			res.Classes = append(res.Classes, c)
			all.Requests += c.Requests
			all.Completed += c.Completed
			all.Errors += c.Errors
			all.Timeouts += c.Timeouts
			all.Unfinished += c.Unfinished
			all.FailedOver += c.FailedOver
			all.Degraded += c.Degraded
			attained += cb.attained
			for k, b := range [3]*latencyBook{&cb.ttft, &cb.e2e, &cb.queue} {
				merge(&allBooks[k], b)
			}
		}
		all.TTFT, all.E2E, all.QueueWait = allBooks[0].latency(), allBooks[1].latency(), allBooks[2].latency()
		finishClass(&all, attained, m.horizon)
		finishSignals(&all, &allSig, slotUS, m.horizon)
		all.PrefixHitRatio = prefixRatio(hit, input)
		all.Stages = s.allStages()
		res.All = all
		res.Failover = m.failoverResult(s)
		for _, r := range s.replicas {
			b := r.book
			b.BusyIntegral = r.busy / 1e6
			if b.Placed >= 0 {
				end := b.Released
				if end < 0 {
					end = m.horizon
				}
				res.GPUHours += float64(end-b.Placed) / 3.6e9 * float64(s.spec.GPUsPerReplica)
			}
			res.Replicas = append(res.Replicas, b)
		}
		if m.horizon > 0 {
			res.MeanReplicas = s.intReady / float64(m.horizon)
		}
		if s.intReady > 0 {
			res.Saturation = s.intInflight / (s.intReady * float64(s.spec.Replica.MaxConcurrent))
		}
		if im := s.spec.Replica.Iteration; im != nil {
			eb := s.engine // the engines lost to failures
			for _, r := range s.replicas {
				if r.it != nil {
					eb.add(r.it)
				}
			}
			eb.KVBlocks = im.params.KVBlocks
			if eb.busyUS > 0 {
				eb.KVUtilMean = eb.blockUS / eb.busyUS / float64(eb.KVBlocks)
			}
			eb.KVUtilPeak = float64(eb.peak) / float64(eb.KVBlocks)
			eb.PrefixHitRatio = prefixRatio(eb.PrefixHits, eb.PrefixQueries)
			res.Engine = &eb
			res.All.KVCacheUsage = eb.KVUtilMean
		}
		out[si] = res
	}
	return out
}

func merge(dst, src *latencyBook) {
	for i, k := range src.h.counts {
		dst.h.counts[i] += k
	}
	dst.h.n += src.h.n
	dst.sum += src.sum
	dst.max = max(dst.max, src.max)
}

func finishClass(c *ClassResult, attained int64, horizon hwmodel.Time) {
	ended := c.Completed + c.Errors + c.Timeouts
	if ended > 0 {
		c.SLOAttained = float64(attained) / float64(ended)
		c.ErrorRate = float64(c.Errors+c.Timeouts) / float64(ended)
	}
	if horizon > 0 {
		c.Throughput = float64(c.Completed) / horizon.Seconds()
	}
}
