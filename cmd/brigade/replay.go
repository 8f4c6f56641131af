package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
	"github.com/parquet-go/parquet-go"
)

// readResultJobs reads the jobs of a results folder (written by brigade sim
// or brigade live): jobs.parquet when present, otherwise jobs.csv. Its
// errors name what is missing.
func readResultJobs(dir string) ([]results.JobRow, error) {
	rows, _, err := readResultJobsAt(dir)
	return rows, err
}

// rowSource says where the rows of readResultJobsAt come from, for errors:
// the file, and per row its line in jobs.csv (nil for jobs.parquet, whose
// rows are numbered from 1).
type rowSource struct {
	path  string
	lines []int
}

// errorf is a *workloads.ParseError locating row i's field.
func (s rowSource) errorf(i int, field, format string, args ...any) error {
	e := &workloads.ParseError{File: s.path, Field: field, Msg: fmt.Sprintf(format, args...)}
	if s.lines != nil {
		e.Line = s.lines[i]
	} else {
		e.Msg = fmt.Sprintf("row %d: %s", i+1, e.Msg)
	}
	return e
}

// readResultJobsAt is readResultJobs, and where each row was read.
func readResultJobsAt(dir string) ([]results.JobRow, rowSource, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, rowSource{}, fmt.Errorf("%s: not a results folder: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, rowSource{}, fmt.Errorf("%s: not a results folder: it is a file, not a directory (give the folder that holds jobs.parquet or jobs.csv)", dir)
	}
	pq := filepath.Join(dir, "jobs.parquet")
	if _, err := os.Stat(pq); err == nil {
		rows, err := parquet.ReadFile[results.JobRow](pq)
		if err != nil {
			return nil, rowSource{}, fmt.Errorf("%s: %w", pq, err)
		}
		return rows, rowSource{path: pq}, nil
	}
	path := filepath.Join(dir, "jobs.csv")
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, rowSource{}, fmt.Errorf("%s: not a results folder: it has neither jobs.parquet nor jobs.csv (brigade sim --out and brigade live write them)", dir)
	}
	if err != nil {
		return nil, rowSource{}, err
	}
	defer fh.Close()
	rows, lines, err := readJobsCSVAt(fh, path)
	return rows, rowSource{path: path, lines: lines}, err
}

// csvReadError locates an error of a results CSV file: a record over
// csvlimit's bounds at path:line, like the errors of its cells; any other
// error as the csv package words it, after the path.
func csvReadError(path string, err error) error {
	var le *csvlimit.LimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %s", path, le.Line, le.Msg)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// readJobsCSV reads a jobs.csv written by results.WriteJobsCSV. Columns
// added after schema version 2 may be missing: reason and reason_detail
// read as empty, cpu_milli and memory_mib as 0, deps as none.
func readJobsCSV(r io.Reader, path string) ([]results.JobRow, error) {
	rows, _, err := readJobsCSVAt(r, path)
	return rows, err
}

// readJobsCSVAt is readJobsCSV, and the line each row starts on.
func readJobsCSVAt(r io.Reader, path string) ([]results.JobRow, []int, error) {
	cr := csvlimit.NewReader(r, 0)
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("%s: empty file: want the jobs.csv header %s", path, strings.Join(results.JobsCSVHeader, ","))
	}
	if err != nil {
		return nil, nil, csvReadError(path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	need := []string{"policy", "id", "name", "tenant", "priority", "submit_s", "start_s", "end_s", "run_s", "jct_s", "gpus", "gpu_milli", "attempts", "state"}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return nil, nil, fmt.Errorf("%s: not a jobs.csv of a results folder: column %q is missing", path, n)
		}
	}
	var out []results.JobRow
	var lines []int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, lines, nil
		}
		if err != nil {
			return nil, nil, csvReadError(path, err)
		}
		line, _ := cr.FieldPos(0)
		var bad error
		get := func(n string) string {
			if i, ok := col[n]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		num := func(n string) float64 {
			v, err := strconv.ParseFloat(get(n), 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("%s:%d: column %s: want a number, found %q", path, line, n, get(n))
			}
			return v
		}
		optNum := func(n string) float64 {
			if get(n) == "" {
				return 0
			}
			return num(n)
		}
		optPtr := func(n string) *float64 { // empty: never ready
			if get(n) == "" {
				return nil
			}
			v := num(n)
			return &v
		}
		optInt := func(n string) int64 {
			if get(n) == "" {
				return 0
			}
			v, err := strconv.ParseInt(get(n), 10, 64)
			if (err != nil || v < 0) && bad == nil {
				bad = fmt.Errorf("%s:%d: column %s: want an integer >= 0, found %q", path, line, n, get(n))
			}
			return v
		}
		row := results.JobRow{
			Policy: get("policy"), ID: int32(num("id")), Name: get("name"), DAG: get("dag"),
			Tenant: get("tenant"), Priority: int32(num("priority")),
			SubmitS: num("submit_s"), ReadyS: optPtr("ready_s"), StartS: num("start_s"), EndS: num("end_s"),
			WaitS: optNum("wait_s"), RunS: num("run_s"), JCTS: num("jct_s"),
			GPUs: int32(num("gpus")), GPUMilli: int32(num("gpu_milli")), Nodes: get("nodes"),
			Attempts: int32(num("attempts")), State: get("state"), MIGProfile: get("mig_profile"),
			HardwareFailures: int32(optNum("hardware_failures")), LostS: optNum("lost_s"), CheckpointS: optNum("checkpoint_s"),
			Reason: get("reason"), ReasonDetail: get("reason_detail"),
			CPUMilli: optInt("cpu_milli"), MemoryMiB: optInt("memory_mib"), Deps: get("deps"),
		}
		if bad != nil {
			return nil, nil, bad
		}
		out = append(out, row)
		lines = append(lines, line)
	}
}

// readAttempts returns, per policy and job id, the job's attempts in
// order, from the folder's attempts.parquet; nil when the folder has none.
func readAttempts(dir string) (map[string]map[int32][]results.AttemptRow, error) {
	path := filepath.Join(dir, "attempts.parquet")
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	rows, err := parquet.ReadFile[results.AttemptRow](path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]map[int32][]results.AttemptRow{}
	for _, a := range rows {
		if out[a.Policy] == nil {
			out[a.Policy] = map[int32][]results.AttemptRow{}
		}
		out[a.Policy][a.ID] = append(out[a.Policy][a.ID], a)
	}
	for _, byID := range out {
		for _, log := range byID {
			sort.SliceStable(log, func(a, b int) bool { return log[a].Attempt < log[b].Attempt })
		}
	}
	return out, nil
}

// micros converts seconds as the results files hold them to integer
// microseconds (they were written from integer microseconds).
func micros(s float64) int64 { return int64(math.Round(s * 1e6)) }

// replayRun is how a job of a results folder runs in the replay: every
// attempt runs for duration (µs), the first failedAttempts of them fail,
// and the job may be retried retries times (docs/replay.md).
type replayRun struct {
	duration                int64
	failedAttempts, retries int
}

// replayAttempts derives a ran job's replayRun from its row and, when the
// folder has attempts.parquet, its attempts (log; nil without the file):
//
//   - the failed attempts are those that ended failed or hardware_failure
//     (preempted ones are the replayed policy's to decide again); without
//     attempts.parquet, every attempt but a succeeded job's last;
//   - a succeeded job runs for its succeeded attempt's run_s, plus what
//     its preempted attempts ran and did not lose (preempt_lost_s; without
//     attempts.parquet, run_s − lost_s when it had several attempts) and
//     is allowed as many retries as it failed attempts;
//   - a failed job fails as many attempts as it did, with one retry fewer,
//     each running for the mean run_s of its failed attempts (without
//     attempts.parquet, run_s / attempts), so that it fails again and
//     holds its GPUs as long in total;
//   - a job the run stopped before it ended (neither succeeded nor failed)
//     runs once more than its failed attempts, for run_s − lost_s.
func replayAttempts(r results.JobRow, log []results.AttemptRow) replayRun {
	var out replayRun
	var failedRun, lastSucceeded, preemptedRun int64
	succeeded := false
	if log != nil {
		for _, a := range log {
			switch a.Ended {
			case results.AttemptFailed, results.AttemptHardwareFailure:
				out.failedAttempts++
				failedRun += micros(a.RunS)
			case results.AttemptPreempted:
				preemptedRun += micros(a.RunS)
			case results.AttemptSucceeded:
				succeeded, lastSucceeded = true, micros(a.RunS)
			}
		}
	} else {
		out.failedAttempts = int(r.Attempts)
		if r.State != string(results.Failed) {
			out.failedAttempts--
		}
		failedRun = micros(r.RunS)
	}
	fallback := micros(r.RunS)
	if r.Attempts > 1 {
		fallback = micros(r.RunS - r.LostS)
	}
	switch {
	case r.State == string(results.Succeeded):
		out.duration, out.retries = fallback, out.failedAttempts
		if succeeded {
			// What its preempted attempts ran and kept (a policy that
			// suspends jobs, a checkpoint) is work the last one did not
			// do again.
			out.duration = lastSucceeded + max(preemptedRun-micros(r.PreemptLostS), 0)
		}
	case r.State == string(results.Failed):
		if out.failedAttempts == 0 { // e.g. its only attempt was preempted, then it missed its deadline
			out.failedAttempts, failedRun = 1, micros(r.RunS)
		}
		out.duration = (failedRun + int64(out.failedAttempts)/2) / int64(out.failedAttempts)
		out.retries = out.failedAttempts - 1
	default:
		out.duration, out.retries = fallback, out.failedAttempts
	}
	out.duration = max(out.duration, 1)
	return out
}

// readEstimates reads the runtime estimates a live run's folder records in
// estimates.csv (name, estimate_s: what the live policy saw), by job name;
// nil when the folder has none.
func readEstimates(dir string) (map[string]string, error) {
	path := filepath.Join(dir, "estimates.csv")
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := csvlimit.NewReader(fh, 0)
	header, err := r.Read()
	if err != nil && err != io.EOF {
		return nil, csvReadError(path, err)
	}
	if len(header) < 2 || header[0] != "name" || header[1] != "estimate_s" {
		return nil, fmt.Errorf("%s: want the header name,estimate_s", path)
	}
	out := map[string]string{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, csvReadError(path, err)
		}
		// A quoted name may span lines: the record's own line, not a count
		// of records, is where a reader finds it.
		line, _ := r.FieldPos(0)
		if len(rec) < 2 {
			return nil, fmt.Errorf("%s:%d: want name,estimate_s", path, line)
		}
		if _, err := strconv.ParseFloat(rec[1], 64); err != nil {
			return nil, fmt.Errorf("%s:%d: estimate_s: want a number, found %q", path, line, rec[1])
		}
		out[rec[0]] = rec[1]
	}
}

// policiesOf lists the policies of rows in order of first appearance.
func policiesOf(rows []results.JobRow) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Policy] {
			seen[r.Policy] = true
			out = append(out, r.Policy)
		}
	}
	return out
}

// replayTrace turns a results folder into a Brigade CSV trace (see
// docs/replay.md for the rules), and returns it, the folder's policies, the cluster run.json records ("" when none) and the number of
// jobs left out because they never ran. The durations are those measured
// under source, or under the folder's first policy when source is not one
// of its policies. A job's deps must name jobs of the folder that ran; the
// error otherwise names the file, the line (jobs.csv) or row
// (jobs.parquet), and the field.
func replayTrace(dir, source string) (trace []byte, pols []string, cluster string, skipped int, err error) {
	rows, src, err := readResultJobsAt(dir)
	if err != nil {
		return nil, nil, "", 0, err
	}
	if len(rows) == 0 {
		return nil, nil, "", 0, fmt.Errorf("%s: the results folder holds no jobs", dir)
	}
	atts, err := readAttempts(dir)
	if err != nil {
		return nil, nil, "", 0, err
	}
	est, err := readEstimates(dir)
	if err != nil {
		return nil, nil, "", 0, err
	}
	pols = policiesOf(rows)
	if source == "" || !contains(pols, source) {
		source = pols[0]
	}
	ran := map[string]bool{} // the source policy's jobs by name: whether they ran
	for _, r := range rows {
		if r.Policy == source {
			ran[r.Name] = r.Attempts > 0
		}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"name", "submit_s", "duration_s", "gpus", "tenant", "priority", "gpu_milli", "mig_profile", "estimate_s",
		"cpu_milli", "memory_mib", "deps", "dag", "failed_attempts", "retries"})
	n := 0
	for i, r := range rows {
		if r.Policy != source {
			continue
		}
		if r.Attempts == 0 {
			skipped++
			continue
		}
		deps := results.SplitDeps(r.Deps)
		for _, d := range deps {
			did, ok := ran[d]
			switch {
			case !ok:
				return nil, nil, "", 0, src.errorf(i, "deps", "job %q of policy %s depends on %q, which is not a job of the folder", r.Name, source, d)
			case !did:
				return nil, nil, "", 0, src.errorf(i, "deps", "job %q of policy %s ran but depends on %q, which never ran", r.Name, source, d)
			}
		}
		var log []results.AttemptRow
		if atts != nil {
			log = atts[source][r.ID]
			if log == nil {
				log = []results.AttemptRow{}
			}
		}
		run := replayAttempts(r, log)
		milli := ""
		if r.MIGProfile == "" && r.GPUMilli > 0 && r.GPUMilli < 1000 {
			milli = strconv.Itoa(int(r.GPUMilli))
		}
		opt := func(v int64) string {
			if v == 0 {
				return ""
			}
			return strconv.FormatInt(v, 10)
		}
		w.Write([]string{r.Name, strconv.FormatFloat(r.SubmitS, 'f', 6, 64), results.FormatSeconds(hwmodel.Time(run.duration)),
			strconv.Itoa(int(r.GPUs)), r.Tenant, strconv.Itoa(int(r.Priority)), milli, r.MIGProfile, est[r.Name],
			opt(r.CPUMilli), opt(r.MemoryMiB), strings.Join(deps, ";"), r.DAG,
			opt(int64(run.failedAttempts)), opt(int64(run.retries))})
		n++
	}
	w.Flush()
	if n == 0 {
		return nil, nil, "", skipped, fmt.Errorf("%s: no job of policy %s ever ran; nothing to replay", dir, source)
	}
	return []byte(b.String()), pols, recordedCluster(dir), skipped, nil
}

// recordedSeed is the seed run.json records: the seed the folder's
// policies drew from (brigade live builds its policy with seed 0); false
// without run.json or a seed in it.
func recordedSeed(dir string) (uint64, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return 0, false
	}
	var info struct {
		Seed *uint64 `json:"seed"`
	}
	if json.Unmarshal(data, &info) != nil || info.Seed == nil {
		return 0, false
	}
	return *info.Seed, true
}

// recordedCluster is the cluster run.json names: a preset's name, or a
// spec file's path (as given, or relative to the folder when that is where
// it is); "" without run.json or a cluster input.
func recordedCluster(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return ""
	}
	var info results.RunInfo
	if json.Unmarshal(data, &info) != nil {
		return ""
	}
	for _, in := range info.Inputs {
		if in.Role != "cluster" {
			continue
		}
		if in.Embedded {
			return in.Path
		}
		if _, err := os.Stat(in.Path); err == nil {
			return in.Path
		}
		if p := filepath.Join(dir, filepath.Base(in.Path)); fileExists(p) {
			return p
		}
		return in.Path
	}
	return ""
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
