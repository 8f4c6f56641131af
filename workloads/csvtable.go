package workloads

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Limits that keep every parsed value far from int64 overflow, so that the
// engine may add a submit time, waits and several attempts' durations.
const (
	// maxSeconds bounds any time or duration read from a file: about
	// 31,700 years, or 1e18 microseconds.
	maxSeconds = 1e12
	maxTime    = hwmodel.Time(maxSeconds) * hwmodel.Second
	// maxGPUs bounds a job's GPU count.
	maxGPUs = 1 << 20
	// maxCount bounds retries and failed attempts.
	maxCount = 1 << 20
	// maxResource bounds cpu_milli and memory_mib (2^50 is about a
	// thousand terabytes of memory).
	maxResource = 1 << 50
)

// Limits on the shape of a CSV file, checked on the bytes before the CSV
// parser sees them: encoding/csv holds a whole record in memory, plus a
// string header per field, so without them a small gzip file that expands
// to one enormous line of commas would exhaust the memory of the machine.
// No trace needs more: a Brigade CSV row has at most 22 fields and the
// longest line of the shipped traces is under 200 bytes.
const (
	// MaxLineBytes bounds a record: one line, or several when a quoted
	// cell holds line breaks.
	MaxLineBytes = 1 << 20
	// MaxFields bounds the fields of a record.
	MaxFields = 1024
)

// table reads a CSV file whose first non-comment record is a header, and
// hands out the remaining records with their line numbers and cells looked
// up by column name.
type table struct {
	file   string
	r      *csv.Reader
	header []string
	hline  int // line of the header
	col    map[string]int
	rec    []string // current record
	line   int      // line of the current record
}

// column describes one column a reader understands.
type column struct {
	name     string
	required bool
}

// openTable reads the header. cols lists the columns the format knows;
// strict makes any other column an error (otherwise extra columns are
// ignored). comments enables '#' comment lines.
func openTable(rd io.Reader, file string, cols []column, strict, comments bool) (*table, error) {
	lim := newRecordLimiter(rd, MaxLineBytes, MaxFields)
	if comments {
		lim.comment = '#'
	}
	r := csv.NewReader(lim)
	r.FieldsPerRecord = -1 // checked here, with a better message
	r.ReuseRecord = true
	if comments {
		r.Comment = '#'
	}
	t := &table{file: file, r: r}
	rec, err := r.Read()
	if err == io.EOF {
		return nil, &ParseError{File: file, Line: 1, Msg: fmt.Sprintf("want a header line naming the columns (%s), found an empty file", columnNames(cols, true))}
	}
	if err != nil {
		return nil, t.readError(err)
	}
	t.hline, _ = r.FieldPos(0)
	t.header = make([]string, len(rec))
	t.col = make(map[string]int, len(rec))
	for i, h := range rec {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a byte-order mark
		}
		h = strings.ToLower(strings.TrimSpace(h))
		t.header[i] = h
		if j, dup := t.col[h]; dup {
			return nil, &ParseError{File: file, Line: t.hline, Field: h, Msg: fmt.Sprintf("column %q appears twice in the header (columns %d and %d)", h, j+1, i+1)}
		}
		t.col[h] = i
	}
	known := make(map[string]bool, len(cols))
	for _, c := range cols {
		known[c.name] = true
	}
	if strict {
		for _, h := range t.header {
			if !known[h] {
				return nil, &ParseError{File: file, Line: t.hline, Field: h, Msg: fmt.Sprintf("unknown column %q; known columns are %s", h, columnNames(cols, false))}
			}
		}
	}
	for _, c := range cols {
		if _, ok := t.col[c.name]; c.required && !ok {
			return nil, &ParseError{File: file, Line: t.hline, Field: c.name, Msg: fmt.Sprintf("required column %q is missing from the header %q (required: %s)", c.name, strings.Join(rec, ","), columnNames(cols, true))}
		}
	}
	return t, nil
}

func columnNames(cols []column, requiredOnly bool) string {
	var names []string
	for _, c := range cols {
		if c.required || !requiredOnly {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}

// next advances to the next record; it returns false at the end of input
// or on an error, which it returns.
func (t *table) next() (bool, error) {
	rec, err := t.r.Read()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, t.readError(err)
	}
	t.rec = rec
	t.line, _ = t.r.FieldPos(0)
	if len(rec) != len(t.header) {
		return false, &ParseError{File: t.file, Line: t.line, Msg: fmt.Sprintf("want %s as in the header on line %d, found %d", hwmodel.Plural(len(t.header), "field", "fields"), t.hline, len(rec))}
	}
	return true, nil
}

func (t *table) readError(err error) error {
	var pe *csv.ParseError
	var le *limitError
	if errors.As(err, &le) {
		return &ParseError{File: t.file, Line: le.line, Msg: le.msg}
	}
	if errors.As(err, &pe) {
		return &ParseError{File: t.file, Line: pe.Line, Msg: "malformed CSV: " + pe.Err.Error()}
	}
	// Not a CSV syntax error: the underlying reader failed (for example a
	// corrupt gzip stream), somewhere after the last good record.
	return &ParseError{File: t.file, Msg: fmt.Sprintf("reading the input after line %d: %v", t.line, err)}
}

// has reports whether the header has the column.
func (t *table) has(name string) bool {
	_, ok := t.col[name]
	return ok
}

// get returns the trimmed cell of a column, or "" if the header lacks it.
func (t *table) get(name string) string {
	i, ok := t.col[name]
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

func (t *table) errorf(field, format string, args ...any) *ParseError {
	return &ParseError{File: t.file, Line: t.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// noJobs is the error of a trace whose header no job follows: a run of
// no jobs would write a full set of results about nothing. why, when not
// empty, says what the reader skipped.
func (t *table) noJobs(why string) *ParseError {
	msg := "no jobs after the header"
	if why != "" {
		msg += " (" + why + ")"
	}
	return &ParseError{File: t.file, Msg: msg}
}

// source is the current record's location for Job.Source.
func (t *table) source() string { return t.file + ":" + strconv.Itoa(t.line) }

// seconds parses a cell holding seconds as a finite number in [lo, maxSeconds].
func (t *table) seconds(field string, lo float64) (float64, error) {
	s := t.get(field)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, t.errorf(field, "want a number of seconds, found %q", s)
	}
	if f < lo || f > maxSeconds {
		return 0, t.errorf(field, "want seconds in [%g, %g], found %s", lo, float64(maxSeconds), s)
	}
	return f, nil
}

// positiveSeconds parses a duration that must be > 0.
func (t *table) positiveSeconds(field string) (hwmodel.Time, error) {
	s := t.get(field)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, t.errorf(field, "want a number of seconds, found %q", s)
	}
	if f <= 0 || f > maxSeconds {
		return 0, t.errorf(field, "want a duration in seconds > 0 and <= %g, found %s", float64(maxSeconds), s)
	}
	d := hwmodel.FromSeconds(f)
	if d <= 0 {
		return 0, t.errorf(field, "want a duration of at least one microsecond, found %s s", s)
	}
	return d, nil
}

// integer parses a cell as an integer in [lo, hi].
func (t *table) integer(field string, lo, hi int64) (int64, error) {
	s := t.get(field)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, t.errorf(field, "want an integer in %d..%d, found %q", lo, hi, s)
	}
	if n < lo || n > hi {
		return 0, t.errorf(field, "want an integer in %d..%d, found %d", lo, hi, n)
	}
	return n, nil
}

// optInteger is integer with a default for an empty cell or a missing column.
func (t *table) optInteger(field string, lo, hi, def int64) (int64, error) {
	if t.get(field) == "" {
		return def, nil
	}
	return t.integer(field, lo, hi)
}

// limitError is a record over the byte or field limit, at a 1-based line.
type limitError struct {
	line int
	msg  string
}

func (e *limitError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// recordLimiter passes bytes through and fails, before the CSV parser
// buffers them, on the first record longer than maxBytes or with more
// than maxFields fields (MaxLineBytes and MaxFields for the readers). It follows CSV's quoting as far as it needs to:
// a '"' toggles quoting (a doubled "" inside quotes toggles twice), and a
// line break or a comma counts only outside quotes. A bare quote inside an
// unquoted cell, which this would misread, is a syntax error the CSV
// parser reports first, on that line. Comment lines (comment != 0) are
// skipped as the parser skips them, quotes and all.
type recordLimiter struct {
	r                   io.Reader
	maxBytes, maxFields int
	comment             byte
	err                 error // sticky, once a limit was passed

	line      int // 1-based line of the next byte
	startLine int // line where the current record started
	size      int // bytes of the current record so far
	fields    int // fields of the current record so far
	quoted    bool
	inComment bool
	atStart   bool // the next byte starts a line outside quotes
}

func newRecordLimiter(r io.Reader, maxBytes, maxFields int) *recordLimiter {
	return &recordLimiter{r: r, maxBytes: maxBytes, maxFields: maxFields, line: 1, atStart: true}
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		c := p[i]
		if l.atStart {
			l.atStart = false
			l.startLine, l.size, l.fields = l.line, 0, 1
			l.inComment = l.comment != 0 && c == l.comment
		}
		l.size++
		switch {
		case c == '\n':
			l.line++
			if !l.quoted {
				l.atStart, l.inComment = true, false
				continue
			}
		case l.inComment:
		case c == '"':
			l.quoted = !l.quoted
		case c == ',' && !l.quoted:
			l.fields++
		}
		switch {
		case l.inComment:
			// A comment line is not parsed: only its length matters.
			if l.size > l.maxBytes {
				l.err = &limitError{l.startLine, fmt.Sprintf("want a line of at most %d bytes, found a longer one", l.maxBytes)}
			}
		case l.size > l.maxBytes:
			l.err = &limitError{l.startLine, fmt.Sprintf("want a record (a line, or several when a quoted cell holds line breaks) of at most %d bytes, found a longer one", l.maxBytes)}
		case l.fields > l.maxFields:
			l.err = &limitError{l.startLine, fmt.Sprintf("want at most %d fields on a line, found more", l.maxFields)}
		}
		if l.err != nil {
			// Hand over what came before; the parser meets the error
			// when it asks for more.
			return i, l.err
		}
	}
	return n, err
}
