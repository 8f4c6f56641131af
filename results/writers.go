package results

import (
	"encoding/csv"
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
	"cpu_milli", "memory_mib", "deps",
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
		cw := csv.NewWriter(w)
		if err := cw.Write(JobsCSVHeader); err != nil {
			return err
		}
		row := make([]string, len(JobsCSVHeader))
		for _, r := range runs {
			for i := range r.Jobs {
				j := &r.Jobs[i]
				slow := ""
				if j.Attempts > 0 {
					slow = strconv.FormatFloat(BoundedSlowdown(*j, r.SlowdownBound), 'f', 6, 64)
				}
				row = append(row[:0],
					r.Policy,
					strconv.FormatInt(int64(j.ID), 10),
					j.Name,
					j.DAG,
					j.Tenant,
					strconv.Itoa(j.Priority),
					FormatSeconds(j.Submit),
					readyCell(j.Ready),
					FormatSeconds(j.Start),
					FormatSeconds(j.End),
					FormatSeconds(j.Wait),
					FormatSeconds(j.Run),
					FormatSeconds(j.End-j.Submit),
					slow,
					strconv.Itoa(j.GPUs),
					strconv.FormatInt(int64(j.GPUMilli), 10),
					j.Nodes,
					strconv.Itoa(j.Attempts),
					string(j.State),
					j.MIGProfile,
					strconv.Itoa(j.HardwareFailures),
					FormatSeconds(j.Lost),
					FormatSeconds(j.Checkpoint),
					j.Reason,
					j.ReasonDetail,
					strconv.FormatInt(j.CPUMilli, 10),
					strconv.FormatInt(j.MemoryMiB, 10),
					JoinDeps(j.Deps),
				)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// readyCell is the ready_s cell: empty when the job never became ready.
func readyCell(t hwmodel.Time) string {
	if t < 0 {
		return ""
	}
	return FormatSeconds(t)
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
		cw := csv.NewWriter(w)
		if err := cw.Write(TimeseriesCSVHeader); err != nil {
			return err
		}
		row := make([]string, len(TimeseriesCSVHeader))
		for _, r := range runs {
			if r.Timeline == nil {
				continue
			}
			for _, b := range r.Timeline.Buckets() {
				row = append(row[:0],
					FormatSeconds(b.Start),
					r.Policy,
					strconv.FormatFloat(b.QueueLength, 'f', 6, 64),
					strconv.FormatFloat(b.RunningJobs, 'f', 6, 64),
					strconv.FormatFloat(b.GPUUtilisation, 'f', 6, 64),
					strconv.FormatFloat(b.GPUFragmentation, 'f', 6, 64),
					strconv.FormatFloat(b.MIGSliceUtilisation, 'f', 6, 64),
					strconv.FormatFloat(b.MIGFragmentation, 'f', 6, 64),
					strconv.FormatFloat(b.DownGPUs, 'f', 6, 64),
				)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
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
		cw := csv.NewWriter(w)
		if err := cw.Write(TenantsCSVHeader); err != nil {
			return err
		}
		row := make([]string, len(TenantsCSVHeader))
		for _, r := range runs {
			if r.Timeline == nil {
				continue
			}
			for _, ts := range r.Timeline.TenantShares() {
				row = append(row[:0],
					FormatSeconds(ts.Start),
					r.Policy,
					ts.Tenant,
					strconv.FormatFloat(ts.AllocatedGPUs, 'f', 6, 64),
					strconv.FormatFloat(ts.GPUShare, 'f', 6, 64),
					strconv.FormatFloat(ts.FairShare, 'f', 6, 64),
				)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// FormatSeconds prints t as seconds with exactly six decimals, computed from
// the integer microseconds, e.g. 1500000 → "1.500000", -1 → "-0.000001".
func FormatSeconds(t hwmodel.Time) string {
	var buf [32]byte
	b := buf[:0]
	u := uint64(t)
	if t < 0 {
		b = append(b, '-')
		u = -u // two's complement: also right for math.MinInt64
	}
	b = strconv.AppendUint(b, u/1_000_000, 10)
	frac := u % 1_000_000
	b = append(b, '.')
	for d := uint64(100_000); d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return string(b)
}
