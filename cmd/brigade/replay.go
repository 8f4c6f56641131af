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
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/results"
	"github.com/parquet-go/parquet-go"
)

// readResultJobs reads the jobs of a results folder (written by brigade sim
// or brigade live): jobs.parquet when present, otherwise jobs.csv. Its
// errors name what is missing.
func readResultJobs(dir string) ([]results.JobRow, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: not a results folder: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a results folder: it is a file, not a directory (give the folder that holds jobs.parquet or jobs.csv)", dir)
	}
	pq := filepath.Join(dir, "jobs.parquet")
	if _, err := os.Stat(pq); err == nil {
		rows, err := parquet.ReadFile[results.JobRow](pq)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pq, err)
		}
		return rows, nil
	}
	path := filepath.Join(dir, "jobs.csv")
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: not a results folder: it has neither jobs.parquet nor jobs.csv (brigade sim --out and brigade live write them)", dir)
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return readJobsCSV(fh, path)
}

// readJobsCSV reads a jobs.csv written by results.WriteJobsCSV.
func readJobsCSV(r io.Reader, path string) ([]results.JobRow, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file: want the jobs.csv header %s", path, strings.Join(results.JobsCSVHeader, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	need := []string{"policy", "id", "name", "tenant", "priority", "submit_s", "start_s", "end_s", "run_s", "jct_s", "gpus", "gpu_milli", "attempts", "state"}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return nil, fmt.Errorf("%s: not a jobs.csv of a results folder: column %q is missing", path, n)
		}
	}
	var out []results.JobRow
	line := 1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
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
		row := results.JobRow{
			Policy: get("policy"), ID: int32(num("id")), Name: get("name"), DAG: get("dag"),
			Tenant: get("tenant"), Priority: int32(num("priority")),
			SubmitS: num("submit_s"), ReadyS: optNum("ready_s"), StartS: num("start_s"), EndS: num("end_s"),
			WaitS: optNum("wait_s"), RunS: num("run_s"), JCTS: num("jct_s"),
			GPUs: int32(num("gpus")), GPUMilli: int32(num("gpu_milli")), Nodes: get("nodes"),
			Attempts: int32(num("attempts")), State: get("state"), MIGProfile: get("mig_profile"),
			HardwareFailures: int32(optNum("hardware_failures")), LostS: optNum("lost_s"), CheckpointS: optNum("checkpoint_s"),
			Reason: get("reason"), ReasonDetail: get("reason_detail"),
		}
		if bad != nil {
			return nil, bad
		}
		out = append(out, row)
	}
}

// readSuccessfulAttempts returns, per policy and job id, the run time of
// the job's succeeded attempt, from the folder's attempts.parquet; nil when
// the folder has none.
func readSuccessfulAttempts(dir string) (map[string]map[int32]float64, error) {
	path := filepath.Join(dir, "attempts.parquet")
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	rows, err := parquet.ReadFile[results.AttemptRow](path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]map[int32]float64{}
	for _, a := range rows {
		if a.Ended != "succeeded" {
			continue
		}
		if out[a.Policy] == nil {
			out[a.Policy] = map[int32]float64{}
		}
		out[a.Policy][a.ID] = a.RunS
	}
	return out, nil
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
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) < 2 || recs[0][0] != "name" || recs[0][1] != "estimate_s" {
		return nil, fmt.Errorf("%s: want the header name,estimate_s", path)
	}
	out := map[string]string{}
	for i, r := range recs[1:] {
		if len(r) < 2 {
			return nil, fmt.Errorf("%s:%d: want name,estimate_s", path, i+2)
		}
		if _, err := strconv.ParseFloat(r[1], 64); err != nil {
			return nil, fmt.Errorf("%s:%d: estimate_s: want a number, found %q", path, i+2, r[1])
		}
		out[r[0]] = r[1]
	}
	return out, nil
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

// replayTrace turns a results folder into a Brigade CSV trace written to
// path (see docs/replay.md for the rules), and returns the folder's
// policies, the cluster run.json records ("" when none) and the number of
// jobs left out because they never ran. The durations are those measured
// under source, or under the folder's first policy when source is not one
// of its policies.
func replayTrace(dir, source, path string) (pols []string, cluster string, skipped int, err error) {
	rows, err := readResultJobs(dir)
	if err != nil {
		return nil, "", 0, err
	}
	if len(rows) == 0 {
		return nil, "", 0, fmt.Errorf("%s: the results folder holds no jobs", dir)
	}
	succ, err := readSuccessfulAttempts(dir)
	if err != nil {
		return nil, "", 0, err
	}
	est, err := readEstimates(dir)
	if err != nil {
		return nil, "", 0, err
	}
	pols = policiesOf(rows)
	if source == "" || !contains(pols, source) {
		source = pols[0]
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"name", "submit_s", "duration_s", "gpus", "tenant", "priority", "gpu_milli", "mig_profile", "estimate_s"})
	n := 0
	for _, r := range rows {
		if r.Policy != source {
			continue
		}
		if r.Attempts == 0 {
			skipped++
			continue
		}
		d := r.RunS - r.LostS
		if r.Attempts == 1 {
			d = r.RunS
		}
		if s, ok := succ[source][r.ID]; ok {
			d = s
		}
		d = math.Max(d, 1e-6)
		milli := ""
		if r.MIGProfile == "" && r.GPUMilli > 0 && r.GPUMilli < 1000 {
			milli = strconv.Itoa(int(r.GPUMilli))
		}
		gpus := r.GPUs
		w.Write([]string{r.Name, strconv.FormatFloat(r.SubmitS, 'f', 6, 64), strconv.FormatFloat(d, 'f', 6, 64),
			strconv.Itoa(int(gpus)), r.Tenant, strconv.Itoa(int(r.Priority)), milli, r.MIGProfile, est[r.Name]})
		n++
	}
	w.Flush()
	if n == 0 {
		return nil, "", skipped, fmt.Errorf("%s: no job of policy %s ever ran; nothing to replay", dir, source)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", 0, err
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, "", 0, err
	}
	cluster = recordedCluster(dir)
	return pols, cluster, skipped, nil
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
