package workloads

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/brigadesim/brigade/csvlimit"
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

// table reads a CSV file whose first non-comment record is a header, and
// hands out the remaining records with their line numbers and cells looked
// up by column name.
type table struct {
	file    string
	r       *csvlimit.Records
	header  []string
	hline   int // line of the header
	col     map[string]int
	slots   [128]colSlot // index's memory of col
	sources textBlock    // where source cuts Job.Source strings from
	rec     []string     // current record
	line    int          // line of the current record
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
	var comment rune
	if comments {
		comment = '#'
	}
	// Records reads as csv.Reader with FieldsPerRecord -1 (field counts
	// are checked here, with a better message) and ReuseRecord.
	r := csvlimit.NewRecords(rd, comment)
	t := &table{file: file, r: r}
	rec, err := r.Read()
	if err == io.EOF {
		return nil, &ParseError{File: file, Line: 1, Msg: fmt.Sprintf("want a header line naming the columns (%s), found an empty file", columnNames(cols, true))}
	}
	if err != nil {
		return nil, t.readError(err)
	}
	t.hline = r.Line()
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
	t.line = t.r.Line()
	if len(rec) != len(t.header) {
		return false, &ParseError{File: t.file, Line: t.line, Msg: fmt.Sprintf("want %s as in the header on line %d, found %d", hwmodel.Plural(len(t.header), "field", "fields"), t.hline, len(rec))}
	}
	return true, nil
}

func (t *table) readError(err error) error {
	var pe *csv.ParseError
	var le *csvlimit.LimitError
	if errors.As(err, &le) {
		return &ParseError{File: t.file, Line: le.Line, Msg: le.Msg}
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
	_, ok := t.index(name)
	return ok
}

// get returns the trimmed cell of a column, or "" if the header lacks it.
func (t *table) get(name string) string {
	i, ok := t.index(name)
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// colSlot is one entry of table.slots: where the column named by the
// len bytes at name was found (-1: not in the header).
type colSlot struct {
	name *byte
	len  int
	at   int
}

// index is t.col[name], remembered by the address of name's bytes. A
// reader asks for each of a few dozen columns on every row, by names that
// are string constants, and a map lookup hashes the name each time. Two
// strings whose bytes start at one address and have one length are the
// same bytes, and a slot's pointer keeps those bytes from being freed and
// reused while the slot holds it. Slots are probed from the address's
// hash; a name that finds no slot free nearby is looked up in the map.
func (t *table) index(name string) (int, bool) {
	p := unsafe.StringData(name)
	h := int(uint64(uintptr(unsafe.Pointer(p))+uintptr(len(name))) * 0x9E3779B97F4A7C15 >> 57)
	for k := range slotProbes {
		s := &t.slots[(h+k)%len(t.slots)]
		if s.name == p && s.len == len(name) {
			return s.at, s.at >= 0
		}
		if s.name == nil {
			at, ok := t.col[name]
			if !ok {
				at = -1
			}
			*s = colSlot{name: p, len: len(name), at: at}
			return at, ok
		}
	}
	at, ok := t.col[name]
	return at, ok
}

// slotProbes is how many slots index tries for a name.
const slotProbes = 8

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
func (t *table) source() string { return t.sources.join(t.file, ':', int64(t.line)) }

// textBlock cuts short strings such as Job.Source ("file.csv:12") from
// blocks of bytes, so that a block is one allocation for a hundred rows or
// so instead of one a row. Bytes are only appended, and a full block is
// left to the strings cut from it, so no string's bytes ever change.
type textBlock struct{ buf []byte }

// join returns prefix, sep and n written in decimal, as one string.
func (b *textBlock) join(prefix string, sep byte, n int64) string {
	need := len(prefix) + 1 + 20 // the prefix, sep and any int64
	if cap(b.buf)-len(b.buf) < need {
		b.buf = make([]byte, 0, max(4096, need))
	}
	start := len(b.buf)
	b.buf = append(b.buf, prefix...)
	b.buf = append(b.buf, sep)
	b.buf = strconv.AppendInt(b.buf, n, 10)
	s := b.buf[start:]
	return unsafe.String(&s[0], len(s))
}

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
