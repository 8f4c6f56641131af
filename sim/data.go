package sim

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
)

// Data locality (the cluster's datasets, hwmodel's data books). A job that
// reads a dataset reads, at each attempt's start, the part of it that its
// placement does not hold locally, at the storage tier's bandwidth, before
// it makes progress: the read is part of the attempt's start-up (run time
// when it succeeds, lost time when it does not). Its nodes then cache the
// dataset, usable by later attempts from the end of that read.

// DataStats is what a run's jobs read.
type DataStats struct {
	// Attempts counts the attempts of jobs that read a dataset; Local
	// those whose placement held all of it (locality 1).
	Attempts, Local int64
	// RemoteMB is what they read from the storage tier, in MB (10^6
	// bytes); ReadTime the wall time they spent reading it.
	RemoteMB float64
	ReadTime hwmodel.Time
}

// HitRatio is the share of attempts whose data was all local (0 without
// any).
func (d DataStats) HitRatio() float64 {
	if d.Attempts == 0 {
		return 0
	}
	return float64(d.Local) / float64(d.Attempts)
}

// dataBooks is the engine's side of data locality.
type dataBooks struct {
	on   bool
	read []hwmodel.Time // per job: the current attempt's read time
}

// initData resolves the workload's dataset names against the cluster's.
func (e *Engine) initData() error {
	w := e.w
	if len(w.Datasets) == 0 {
		return nil
	}
	index := make([]int32, len(w.Datasets))
	for k, name := range w.Datasets {
		d, ok := e.cluster.DatasetIndex(name)
		if !ok {
			for i := range w.Jobs {
				if int(w.Jobs[i].Dataset) == k+1 {
					return fmt.Errorf("%s: job %q reads dataset %q, which the cluster does not declare (datasets: docs/cluster.md)", orUnknown(w.Jobs[i].Source), w.Jobs[i].Name, name)
				}
			}
			index[k] = -1
			continue
		}
		index[k] = int32(d)
	}
	for i := range w.Jobs {
		if k := w.Jobs[i].Dataset; k > 0 && index[k-1] >= 0 {
			e.jobs[i].Dataset = uint16(index[k-1] + 1)
		}
	}
	e.data.on = true
	e.data.read = make([]hwmodel.Time, len(w.Jobs))
	e.host.SetData(true)
	return nil
}

func orUnknown(source string) string {
	if source == "" {
		return "workload"
	}
	return source
}

// readFor is how long job i's attempt starting now on p reads its data,
// with the books of it: the locality of p (nodes weighted by GPUs), the
// remote part read at the storage tier's bandwidth, the nodes' caches
// filled from the end of the read (after start-up, which comes first).
func (e *Engine) readFor(i int, p hwmodel.Placement, startup hwmodel.Time) hwmodel.Time {
	d := int(e.jobs[i].Dataset) - 1
	if !e.data.on || d < 0 {
		return 0
	}
	c := e.cluster
	var local, total int
	for _, s := range p {
		w := max(s.GPUCount(), 1)
		total += w
		if c.DataLocal(s.Node, d, e.now) {
			local += w
		}
	}
	st := &e.res.Data
	st.Attempts++
	if local == total {
		st.Local++
		return 0
	}
	mb := float64(c.DatasetMB(d)) * float64(total-local) / float64(total)
	read := hwmodel.FromSeconds(mb / c.ReadMBPerS())
	st.RemoteMB += mb
	st.ReadTime += read
	for _, s := range p {
		c.CacheData(s.Node, d, e.now+startup+read)
	}
	return read
}
