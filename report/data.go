package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/brigadesim/brigade/csvlimit"
	"github.com/brigadesim/brigade/results"
)

// Job is what the plots read of one job record.
type Job struct {
	Tenant   string
	Priority int
	// Ran is whether the job finished having run at least once; only such
	// jobs enter the wait and JCT CDFs.
	Ran        bool
	WaitS, JCT float64 // seconds
	// SubmitS is when the job was submitted, in seconds of run time: the
	// time-series plots mark where arrivals end.
	SubmitS float64
}

// Point is one time-series bucket.
type Point struct {
	StartS      float64 // bucket start, seconds of run time
	Utilisation float64 // 0..1
	QueueLength float64
}

// Policy is one policy's data for the plots.
type Policy struct {
	Name   string
	Jobs   []Job
	Series []Point
}

// Data is a run's data for the plots: the summaries (one per policy, in the
// run's order) and, per policy in the same order, jobs and time series.
type Data struct {
	Summaries []results.Summary
	Policies  []Policy
}

// FromRecords builds Data from in-memory results: sums[i], jobs[i] and
// timelines[i] are policy i's (a nil Timeline gives no series).
func FromRecords(sums []results.Summary, jobs [][]results.JobRecord, timelines []*results.Timeline) *Data {
	return fromJobs(sums, jobs, timelines, func(j *results.JobRecord) Job {
		st := results.StatsOf(j)
		return jobOf(&st)
	})
}

// FromStats is FromRecords from the records' results.JobStats, which is
// all the plots read of them.
func FromStats(sums []results.Summary, jobs [][]results.JobStats, timelines []*results.Timeline) *Data {
	return fromJobs(sums, jobs, timelines, jobOf)
}

func jobOf(j *results.JobStats) Job {
	return Job{Tenant: j.Tenant, Priority: j.Priority, Ran: j.Ran(),
		WaitS: j.Wait.Seconds(), JCT: (j.End - j.Submit).Seconds(), SubmitS: j.Submit.Seconds()}
}

// fromJobs is FromRecords of jobs of any kind, each a Job by job.
func fromJobs[T any](sums []results.Summary, jobs [][]T, timelines []*results.Timeline, job func(*T) Job) *Data {
	d := &Data{Summaries: sums}
	for i, s := range sums {
		p := Policy{Name: s.Policy}
		if i < len(jobs) {
			p.Jobs = make([]Job, len(jobs[i]))
			for k := range jobs[i] {
				p.Jobs[k] = job(&jobs[i][k])
			}
		}
		if i < len(timelines) && timelines[i] != nil {
			for _, b := range timelines[i].Buckets() {
				p.Series = append(p.Series, Point{StartS: b.Start.Seconds(), Utilisation: b.GPUUtilisation, QueueLength: b.QueueLength})
			}
		}
		d.Policies = append(d.Policies, p)
	}
	return d
}

// ReadSummaries reads dir/summary.json.
func ReadSummaries(dir string) ([]results.Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, err
	}
	var sums []results.Summary
	if err := json.Unmarshal(b, &sums); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "summary.json"), err)
	}
	return sums, nil
}

// Load reads a results folder: summary.json (required), and jobs.csv and
// timeseries.csv when present (without them the CDF, starvation and
// time-series plots are empty).
func Load(dir string) (*Data, error) {
	sums, err := ReadSummaries(dir)
	if err != nil {
		return nil, err
	}
	d := &Data{Summaries: sums}
	index := map[string]int{}
	for i, s := range sums {
		index[s.Policy] = i
		d.Policies = append(d.Policies, Policy{Name: s.Policy})
	}
	err = readCSV(filepath.Join(dir, "jobs.csv"), func(get func(string) string) error {
		i, ok := index[get("policy")]
		if !ok {
			return nil
		}
		prio, _ := strconv.Atoi(get("priority"))
		attempts, _ := strconv.Atoi(get("attempts"))
		wait, err1 := number(get, "wait_s")
		jct, err2 := number(get, "jct_s")
		submit, err3 := number(get, "submit_s")
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		st := get("state")
		d.Policies[i].Jobs = append(d.Policies[i].Jobs, Job{
			Tenant: get("tenant"), Priority: prio,
			Ran:   attempts > 0 && (st == string(results.Succeeded) || st == string(results.Failed)),
			WaitS: wait, JCT: jct, SubmitS: submit,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readCSV(filepath.Join(dir, "timeseries.csv"), func(get func(string) string) error {
		i, ok := index[get("policy")]
		if !ok {
			return nil
		}
		start, err1 := number(get, "bucket_start_s")
		util, err2 := number(get, "gpu_utilisation")
		q, err3 := number(get, "queue_length")
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		d.Policies[i].Series = append(d.Policies[i].Series, Point{StartS: start, Utilisation: util, QueueLength: q})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// number parses the cell of column col as a finite number.
func number(get func(string) string, col string) (float64, error) {
	v, err := strconv.ParseFloat(get(col), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("column %s: want a number, found %q", col, get(col))
	}
	return v, nil
}

// readCSV calls row for each data row of path, with a getter by column
// name; a missing file is not an error.
func readCSV(path string, row func(get func(string) string) error) error {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	r := csvlimit.NewReader(fh, 0)
	r.ReuseRecord = true
	readErr := func(err error) error {
		var le *csvlimit.LimitError
		if errors.As(err, &le) {
			return fmt.Errorf("%s:%d: %s", path, le.Line, le.Msg)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	header, err := r.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return readErr(err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	var rec []string
	get := func(name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for {
		rec, err = r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readErr(err)
		}
		if err := row(get); err != nil {
			// A quoted cell may span lines: name the record's own line.
			line, _ := r.FieldPos(0)
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}
