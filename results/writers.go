package results

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// WriteSummaryJSON writes runs to path, atomically, as an indented JSON
// array with one object per run in the order given. Keys come from Summary's
// struct fields, so their order is fixed; HTML characters are not escaped.
// A nil or empty runs writes [].
func WriteSummaryJSON(path string, runs []Summary) error {
	if runs == nil {
		runs = []Summary{}
	}
	return AtomicWriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(runs)
	})
}

// PolicyJobs is one policy's job records, for WriteJobsCSV.
type PolicyJobs struct {
	Policy string
	Jobs   []JobRecord
	// SlowdownBound is τ for the bounded_slowdown column; 0 means
	// DefaultSlowdownBound. Pass the RunInput's value so that the CSV and the
	// Summary agree.
	SlowdownBound hwmodel.Time
}

// JobsCSVHeader is the header row WriteJobsCSV writes.
var JobsCSVHeader = []string{
	"policy", "id", "name", "dag", "tenant", "priority",
	"submit_s", "ready_s", "start_s", "end_s", "wait_s", "run_s", "jct_s",
	"bounded_slowdown", "gpus", "gpu_milli", "nodes", "attempts", "state", "mig_profile",
	"hardware_failures", "lost_s", "checkpoint_s", "reason", "reason_detail",
	"cpu_milli", "memory_mib", "deps", "preemptions", "preempt_lost_s",
}

// DepsSeparator joins the names of a job's dependencies in the deps column
// of jobs.csv and jobs.parquet (as in a Brigade CSV trace's deps).
const DepsSeparator = ";"

// JoinDeps is the deps column of a job: its dependencies' names joined by
// DepsSeparator, "" for none.
func JoinDeps(deps []string) string { return strings.Join(deps, DepsSeparator) }

// SplitDeps is the inverse of JoinDeps: nil for "", and each name trimmed
// of surrounding spaces.
func SplitDeps(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	out := strings.Split(s, DepsSeparator)
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// WriteJobsCSV writes every run's job records to path, atomically: one header
// row (JobsCSVHeader), then one row per job, runs in the order given and jobs
// in the order of each run's slice. Times are seconds with exactly six
// decimals, formatted from the integer microseconds (no float rounding);
// ready_s is empty for a job that never became ready (Ready < 0,
// NotReady); jct_s is End − Submit; bounded_slowdown has six decimals and is
// empty for a job that never ran (Attempts == 0); reason and reason_detail
// are empty for a job that succeeded; deps is JoinDeps(Deps).
func WriteJobsCSV(path string, runs []PolicyJobs) error {
	return AtomicWriteFile(path, func(w io.Writer) error {
		c := newCSVRows(w)
		c.header(JobsCSVHeader)
		for _, r := range runs {
			jobsCSVRows(c, r)
		}
		return c.close()
	})
}

// jobsCSVRows writes r's rows of jobs.csv (WriteJobsCSV) into c.
func jobsCSVRows(c *csvRows, r PolicyJobs) {
	for i := range r.Jobs {
		j := &r.Jobs[i]
		c.str(r.Policy)
		c.int(int64(j.ID))
		c.str(j.Name)
		c.str(j.DAG)
		c.str(j.Tenant)
		c.int(int64(j.Priority))
		c.seconds(j.Submit)
		if j.Ready < 0 {
			c.empty()
		} else {
			c.seconds(j.Ready)
		}
		c.seconds(j.Start)
		c.seconds(j.End)
		c.seconds(j.Wait)
		c.seconds(j.Run)
		c.seconds(j.End - j.Submit)
		if j.Attempts > 0 {
			c.float6(BoundedSlowdown(*j, r.SlowdownBound))
		} else {
			c.empty()
		}
		c.int(int64(j.GPUs))
		c.int(int64(j.GPUMilli))
		c.str(j.Nodes)
		c.int(int64(j.Attempts))
		c.str(string(j.State))
		c.str(j.MIGProfile)
		c.int(int64(j.HardwareFailures))
		c.seconds(j.Lost)
		c.seconds(j.Checkpoint)
		c.str(j.Reason)
		c.str(j.ReasonDetail)
		c.int(j.CPUMilli)
		c.int(j.MemoryMiB)
		c.str(JoinDeps(j.Deps))
		c.int(int64(j.Preemptions))
		c.seconds(j.PreemptLost)
		c.end()
	}
}

// PolicyTimeline is one policy's Timeline, for WriteTimeseriesCSV.
type PolicyTimeline struct {
	Policy   string
	Timeline *Timeline
}

// TimeseriesCSVHeader is the header row WriteTimeseriesCSV writes.
var TimeseriesCSVHeader = []string{"bucket_start_s", "policy", "queue_length", "running_jobs", "gpu_utilisation", "gpu_frag_ratio",
	"mig_slice_utilisation", "mig_fragmentation", "down_gpus"}

// WriteTimeseriesCSV writes every run's buckets (Timeline.Buckets) to path,
// atomically: one header row, then runs in the order given, each run's
// buckets in time order. bucket_start_s has six decimals from integer
// microseconds; the means have six decimals. Runs may have different bucket
// widths (see MaxBuckets); a nil Timeline contributes no rows.
func WriteTimeseriesCSV(path string, runs []PolicyTimeline) error {
	return AtomicWriteFile(path, func(w io.Writer) error {
		c := newCSVRows(w)
		c.header(TimeseriesCSVHeader)
		for _, r := range runs {
			if r.Timeline == nil {
				continue
			}
			for _, b := range r.Timeline.Buckets() {
				c.seconds(b.Start)
				c.str(r.Policy)
				c.float6(b.QueueLength)
				c.float6(b.RunningJobs)
				c.float6(b.GPUUtilisation)
				c.float6(b.GPUFragmentation)
				c.float6(b.MIGSliceUtilisation)
				c.float6(b.MIGFragmentation)
				c.float6(b.DownGPUs)
				c.end()
			}
		}
		return c.close()
	})
}

// TenantsCSVHeader is the header row WriteTenantsCSV writes.
var TenantsCSVHeader = []string{"bucket_start_s", "policy", "tenant", "allocated_gpus", "gpu_share", "fair_share"}

// WriteTenantsCSV writes every run's per-tenant series
// (Timeline.TenantShares) to path, atomically, in the rows and order of
// tenants.parquet: bucket_start_s has six decimals from integer
// microseconds, the values have six decimals.
func WriteTenantsCSV(path string, runs []PolicyTimeline) error {
	return AtomicWriteFile(path, func(w io.Writer) error {
		c := newCSVRows(w)
		c.header(TenantsCSVHeader)
		for _, r := range runs {
			if r.Timeline == nil {
				continue
			}
			for _, ts := range r.Timeline.TenantShares() {
				c.seconds(ts.Start)
				c.str(r.Policy)
				c.str(ts.Tenant)
				c.float6(ts.AllocatedGPUs)
				c.float6(ts.GPUShare)
				c.float6(ts.FairShare)
				c.end()
			}
		}
		return c.close()
	})
}

// FormatSeconds prints t as seconds with exactly six decimals, computed from
// the integer microseconds, e.g. 1500000 → "1.500000", -1 → "-0.000001".
func FormatSeconds(t hwmodel.Time) string {
	var buf [32]byte
	return string(appendSeconds(buf[:0], t))
}

// appendSeconds appends FormatSeconds(t) to b.
func appendSeconds(b []byte, t hwmodel.Time) []byte {
	u := uint64(t)
	if t < 0 {
		b = append(b, '-')
		u = -u // two's complement: also right for math.MinInt64
	}
	b = strconv.AppendUint(b, u/1_000_000, 10)
	frac := u % 1_000_000
	var d [7]byte
	d[0] = '.'
	for i := 6; i > 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, d[:]...)
}
