package workloads

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
	"github.com/brigadesim/brigade/hwmodel"
)

// swfFields is the number of fields of a Standard Workload Format record.
const swfFields = 18

// swfFieldNames name the fields of an SWF record, in order, in errors
// (docs/trace-format.md lists what each holds).
var swfFieldNames = [swfFields]string{
	"job", "submit", "wait", "run", "alloc_procs", "avg_cpu", "used_mem",
	"req_procs", "req_time", "req_mem", "status", "user", "group", "app",
	"queue", "partition", "preceding_job", "think_time",
}

// The fields ReadSWF reads, as indices into a record; it checks that the
// others are numbers and ignores them.
const (
	swfJob      = 0
	swfSubmit   = 1
	swfRun      = 3
	swfAlloc    = 4
	swfReqProcs = 7
	swfReqTime  = 8
	swfStatus   = 10
	swfUser     = 11
)

// The kinds of record ReadSWF leaves out, in the order Workload.Skipped
// lists them: a record is counted under the first kind it is of.
const (
	swfSkipPart = iota
	swfSkipCancelled
	swfSkipRunUnknown
	swfSkipRunZero
	swfSkipSubmitUnknown
	swfSkipNoProcs
	swfSkipKinds
)

var swfSkipWhy = [swfSkipKinds]string{
	swfSkipPart:          "part of a checkpointed or swapped job (status 2, 3 or 4), which the job's own record covers whole",
	swfSkipCancelled:     "cancelled before starting (status 5, run time 0 or -1)",
	swfSkipRunUnknown:    "run time unknown (-1)",
	swfSkipRunZero:       "run time 0 (under half a second), which leaves nothing to replay",
	swfSkipSubmitUnknown: "submit time unknown (-1)",
	swfSkipNoProcs:       "processor count unknown (req_procs and alloc_procs both -1 or 0)",
}

// ReadSWF reads a trace in the Standard Workload Format of the Parallel
// Workloads Archive, version 2.2: header lines starting with ';', then one
// job per line as 18 numbers separated by white space, -1 meaning unknown.
// Blank lines and every line starting with ';' are skipped; a line of
// another number of fields is an error. Every field must be a number; the
// fields read must be -1 or in their range (non-negative, status 0..5).
// docs/trace-format.md gives the mapping and its reasons:
//
//   - The job numbered n is named "swf-n"; numbers must be unique.
//   - Submit is the submit time less the earliest submit time of the
//     records kept, so the run starts at 0. Duration is the run time.
//   - Estimate is the requested time (req_time) when it is > 0, else 0
//     (none: FillEstimates fills it, as for the traces without any).
//   - The job asks for req_procs whole GPUs of any model, or alloc_procs
//     when req_procs is -1 or 0: one processor is one GPU.
//   - The tenant is "user-u" for user u, "unknown" for user -1.
//   - A failed job (status 0) and a job cancelled after it started
//     (status 5 with a run time) run for their run time and end Failed:
//     FailedAttempts 1, MaxRetries 0.
//   - preceding_job and think_time are ignored: no dependencies.
//
// Records that cannot be replayed are left out and counted, by kind, in
// Workload.Skipped: the parts of a checkpointed or swapped job (status 2,
// 3 or 4), and records with an unknown or zero run time, an unknown submit
// time or no processor count. A trace with no job left is an error.
// file names the input in errors and in Job.Source.
func ReadSWF(r io.Reader, file string) (*Workload, error) {
	src := &watchedReader{r: r}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 64<<10), csvlimit.MaxLineBytes)
	p := swfParser{file: file}
	var (
		jobRows     chunks[Job]
		submitRows  chunks[hwmodel.Time]
		names, srcs textBlock
		skips       [swfSkipKinds]Skip
		lastUser    int64 = -2 // the user lastTenant names
		lastTenant  string
	)
	for sc.Scan() {
		if src.err != nil {
			// The scanner hands over what it holds, the last of it
			// perhaps a line cut short: read none of it.
			break
		}
		p.line++
		text := sc.Text()
		if p.line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a byte-order mark
		}
		if rest := strings.TrimLeft(text, swfSpace); rest == "" || rest[0] == ';' {
			continue
		}
		if n := swfSplit(text, &p.f); n != swfFields {
			return nil, &ParseError{File: file, Line: p.line, Msg: fmt.Sprintf("want %d whitespace-separated fields (an SWF record), found %d", swfFields, n)}
		}
		rec, err := p.record()
		if err != nil {
			return nil, err
		}
		kind := rec.skip()
		if kind >= 0 {
			if skips[kind].Count == 0 {
				skips[kind] = Skip{Line: p.line, Why: swfSkipWhy[kind]}
			}
			skips[kind].Count++
			continue
		}
		if rec.user != lastUser {
			lastUser, lastTenant = rec.user, "unknown"
			if rec.user >= 0 {
				lastTenant = names.join("user", '-', rec.user)
			}
		}
		j := jobRows.next()
		*j = Job{
			Name:     names.join("swf", '-', rec.id),
			Tenant:   lastTenant,
			Duration: rec.run,
			Estimate: rec.estimate,
			Req:      hwmodel.Request{GPUs: int(rec.procs), GPUMilli: hwmodel.MilliPerGPU},
			Source:   srcs.join(file, ':', int64(p.line)),
		}
		if rec.status == 0 || rec.status == 5 {
			j.FailedAttempts = 1
		}
		submitRows.add(rec.submit)
	}
	if err := cmp.Or(src.err, sc.Err()); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{File: file, Line: p.line + 1, Msg: fmt.Sprintf("want a line of at most %d bytes, found a longer one", csvlimit.MaxLineBytes)}
		}
		return nil, &ParseError{File: file, Msg: fmt.Sprintf("reading the input after line %d: %v", p.line, err)}
	}
	var skipped []Skip
	for _, s := range skips {
		if s.Count > 0 {
			skipped = append(skipped, s)
		}
	}
	jobs, submits := jobRows.slice(), submitRows.slice()
	if len(jobs) == 0 {
		msg := "no jobs after the header"
		if len(skipped) > 0 {
			msg += " (" + SkipText(skipped) + ")"
		}
		return nil, &ParseError{File: file, Msg: msg}
	}
	first := submits[0]
	for _, s := range submits {
		first = min(first, s)
	}
	for i := range jobs {
		jobs[i].Submit = submits[i] - first
	}
	w, err := build(jobs, nil, nil, file, true)
	if err != nil {
		return nil, err
	}
	w.Skipped = skipped
	return w, nil
}

// SkipText describes skipped records in one line: "3 records skipped: run
// time unknown (-1), the first on line 40; ...".
func SkipText(skipped []Skip) string {
	parts := make([]string, len(skipped))
	for i, s := range skipped {
		parts[i] = fmt.Sprintf("%s skipped: %s, the first on line %d", hwmodel.Plural(s.Count, "record", "records"), s.Why, s.Line)
	}
	return strings.Join(parts, "; ")
}

// watchedReader passes r's reads on and keeps the first error other than
// io.EOF that r returned.
type watchedReader struct {
	r   io.Reader
	err error
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// swfSpace is the white space that separates an SWF record's fields.
const swfSpace = " \t\r\v\f"

// swfSplit cuts line into its fields, at runs of swfSpace, into f, and
// returns how many fields the line has (f holds the first swfFields).
func swfSplit(line string, f *[swfFields]string) int {
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && strings.IndexByte(swfSpace, line[i]) >= 0 {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && strings.IndexByte(swfSpace, line[j]) < 0 {
			j++
		}
		if n < swfFields {
			f[n] = line[i:j]
		}
		n++
		i = j
	}
	return n
}

// swfClaims is the SWF entry's Claims in the format registry: the line is
// a header comment (it starts with ';') or a record of 18 numbers. No CSV
// header is either: a header names columns, and no column's name starts
// with ';' or is a number.
func swfClaims(line string) bool {
	if strings.HasPrefix(line, ";") {
		return true
	}
	var f [swfFields]string
	if swfSplit(line, &f) != swfFields {
		return false
	}
	for _, s := range f {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return false
		}
	}
	return true
}

// swfParser reads the fields of one record at a time.
type swfParser struct {
	file string
	line int
	f    [swfFields]string
}

// swfRecord is what ReadSWF takes from a record. procs is req_procs, or
// alloc_procs when req_procs is -1 or 0; user and status are -1 when
// unknown; submit and run are 0 when unknown, and say so.
type swfRecord struct {
	id, procs, user, status   int64
	submit, run, estimate     hwmodel.Time
	submitUnknown, runUnknown bool
}

// skip is the kind of record r is among those ReadSWF leaves out, or -1
// when it is kept.
func (r *swfRecord) skip() int {
	switch {
	case r.status >= 2 && r.status <= 4:
		return swfSkipPart
	case r.status == 5 && r.run <= 0:
		return swfSkipCancelled
	case r.runUnknown:
		return swfSkipRunUnknown
	case r.run <= 0:
		return swfSkipRunZero
	case r.submitUnknown:
		return swfSkipSubmitUnknown
	case r.procs <= 0:
		return swfSkipNoProcs
	}
	return -1
}

// record checks every field of the current record and returns the ones
// ReadSWF reads.
func (p *swfParser) record() (swfRecord, error) {
	var r swfRecord
	var err error
	for k := range p.f {
		if _, err := p.number(k); err != nil {
			return r, err
		}
	}
	if r.id, err = p.integer(swfJob, 0, math.MaxInt64, false, "a job number"); err != nil {
		return r, err
	}
	var submit, run, reqTime float64
	if submit, err = p.seconds(swfSubmit, "a submit time"); err != nil {
		return r, err
	}
	if run, err = p.seconds(swfRun, "a run time"); err != nil {
		return r, err
	}
	if reqTime, err = p.seconds(swfReqTime, "a requested time"); err != nil {
		return r, err
	}
	alloc, err := p.integer(swfAlloc, 0, maxGPUs, true, "a processor count")
	if err != nil {
		return r, err
	}
	req, err := p.integer(swfReqProcs, 0, maxGPUs, true, "a processor count")
	if err != nil {
		return r, err
	}
	if r.status, err = p.integer(swfStatus, 0, 5, true, "a status"); err != nil {
		return r, err
	}
	if r.user, err = p.integer(swfUser, 0, math.MaxInt64, true, "a user number"); err != nil {
		return r, err
	}
	r.submitUnknown, r.runUnknown = submit < 0, run < 0
	if !r.submitUnknown {
		r.submit = hwmodel.FromSeconds(submit)
	}
	if !r.runUnknown {
		r.run = hwmodel.FromSeconds(run)
	}
	if reqTime > 0 {
		r.estimate = hwmodel.FromSeconds(reqTime)
	}
	r.procs = req
	if req <= 0 {
		r.procs = alloc
	}
	return r, nil
}

// errorf is a ParseError at field k of the current record; the message
// ends by saying where the field is in the record.
func (p *swfParser) errorf(k int, format string, args ...any) *ParseError {
	return &ParseError{File: p.file, Line: p.line, Field: swfFieldNames[k],
		Msg: fmt.Sprintf(format, args...) + fmt.Sprintf(" (field %d of %d)", k+1, swfFields)}
}

// number parses field k as a finite number.
func (p *swfParser) number(k int) (float64, error) {
	s := p.f[k]
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, p.errorf(k, "want a number, found %q", s)
	}
	return v, nil
}

// seconds parses field k as seconds in [0, maxSeconds], or -1 for
// unknown (returned as -1).
func (p *swfParser) seconds(k int, what string) (float64, error) {
	v, err := p.number(k)
	if err != nil {
		return 0, err
	}
	if v != -1 && (v < 0 || v > maxSeconds) {
		return 0, p.errorf(k, "want %s in seconds, 0 to %g, or -1 for unknown; found %s", what, float64(maxSeconds), p.f[k])
	}
	return v, nil
}

// integer parses field k as an integer in [lo, hi], or -1 when unknown
// is allowed.
func (p *swfParser) integer(k int, lo, hi int64, unknown bool, what string) (int64, error) {
	s := p.f[k]
	orUnknown := ""
	if unknown {
		orUnknown = ", or -1 for unknown"
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || !(n >= lo && n <= hi || unknown && n == -1) {
		if hi == math.MaxInt64 {
			return 0, p.errorf(k, "want %s, an integer >= %d%s; found %s", what, lo, orUnknown, s)
		}
		return 0, p.errorf(k, "want %s, an integer in %d..%d%s; found %s", what, lo, hi, orUnknown, s)
	}
	return n, nil
}
