package serving

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// TraceRequest is one request of a request trace: its arrival time, its
// class (a name of the service's classes), its token counts and, when
// the trace has prefix columns, its prefix group (-1: none; the trace's
// group names numbered in the order they first appear) and the prompt
// tokens it shares with that group.
type TraceRequest struct {
	At            hwmodel.Time
	Class         string
	Input, Output int32
	Group         int32
	PrefixLength  int32
}

// TraceHeader is the header line a request trace starts with;
// TraceHeaderPrefix the header of one that names each request's prefix
// group (empty: none) and prefix length in tokens.
const (
	TraceHeader       = "time_s,class,input_tokens,output_tokens"
	TraceHeaderPrefix = TraceHeader + ",prefix_group,prefix_length"
)

// maxPrefixGroups bounds a trace's distinct prefix groups.
const maxPrefixGroups = 1 << 24

// maxTraceTokens bounds one request's token counts.
const maxTraceTokens = 1 << 30

// TraceReader streams a request trace, a CSV file (".gz" is read
// transparently) whose header is TraceHeader and whose rows give the
// arrival time in seconds from the start of the run (non-decreasing), the
// class name and the input and output token counts (whole numbers >= 1).
// Blank lines and lines starting with '#' are skipped. Errors name the
// file, the line and the column.
type TraceReader struct {
	path  string
	f     *os.File
	gz    *gzip.Reader
	sc    *bufio.Scanner
	line  int
	last  hwmodel.Time
	class map[string]string // interned class names
	ncols int               // 4, or 6 with the prefix columns
	group map[string]int32  // prefix group names → ids, first seen first
	err   error
}

// OpenTrace opens a request trace and reads its header.
func OpenTrace(path string) (*TraceReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t := &TraceReader{path: path, f: f, class: map[string]string{}, ncols: 4}
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if t.gz, err = gzip.NewReader(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = t.gz
	}
	t.sc = bufio.NewScanner(r)
	t.sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line, ok, err := t.scan()
	switch {
	case err != nil:
	case !ok:
		err = t.errorf("", "the file is empty; want the header %s", TraceHeader)
	case strings.TrimSpace(line) == TraceHeaderPrefix:
		t.ncols, t.group = 6, map[string]int32{}
		return t, nil
	case strings.TrimSpace(line) != TraceHeader:
		err = t.errorf("", "want the header %s (or %s), got %q", TraceHeader, TraceHeaderPrefix, clip(line))
	default:
		return t, nil
	}
	t.Close()
	return nil, err
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// scan returns the next line that is neither blank nor a comment.
func (t *TraceReader) scan() (string, bool, error) {
	for t.sc.Scan() {
		t.line++
		line := strings.TrimSuffix(t.sc.Text(), "\r")
		if s := strings.TrimSpace(line); s == "" || s[0] == '#' {
			continue
		}
		return line, true, nil
	}
	if err := t.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "", false, t.errorf("", "line longer than 1 MiB")
		}
		return "", false, fmt.Errorf("%s: %w", t.path, err)
	}
	return "", false, nil
}

func (t *TraceReader) errorf(column, format string, args ...any) error {
	at := t.path
	if t.line > 0 {
		at += ":" + strconv.Itoa(t.line)
	}
	if column != "" {
		at += ": " + column
	}
	return fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...))
}

// Next returns the next request, or io.EOF after the last. After an
// error other than io.EOF, Next returns the same error again.
func (t *TraceReader) Next() (TraceRequest, error) {
	if t.err != nil {
		return TraceRequest{}, t.err
	}
	r, err := t.next()
	if err != nil {
		t.err = err
	}
	return r, err
}

func (t *TraceReader) next() (TraceRequest, error) {
	line, ok, err := t.scan()
	if err != nil {
		return TraceRequest{}, err
	}
	if !ok {
		return TraceRequest{}, io.EOF
	}
	var buf [6]string
	cols := buf[:t.ncols]
	head := TraceHeader
	if t.ncols == 6 {
		head = TraceHeaderPrefix
	}
	rest := line
	for i := range cols {
		if i == len(cols)-1 {
			if strings.Contains(rest, ",") {
				return TraceRequest{}, t.errorf("", "want %d columns (%s), got more", len(cols), head)
			}
			cols[i] = rest
			break
		}
		c, r, found := strings.Cut(rest, ",")
		if !found {
			return TraceRequest{}, t.errorf("", "want %d columns (%s), got %d", len(cols), head, i+1)
		}
		cols[i], rest = c, r
	}
	req := TraceRequest{Group: -1}
	s, err := strconv.ParseFloat(strings.TrimSpace(cols[0]), 64)
	if err != nil || math.IsNaN(s) || s < 0 || s > 9e12 {
		return req, t.errorf("time_s", "want seconds >= 0, got %q", cols[0])
	}
	req.At = hwmodel.FromSeconds(s)
	if req.At < t.last {
		return req, t.errorf("time_s", "%s is before the previous row's %s; times must not decrease", strings.TrimSpace(cols[0]), strconv.FormatFloat(t.last.Seconds(), 'f', -1, 64))
	}
	t.last = req.At
	name := strings.TrimSpace(cols[1])
	if name == "" {
		return req, t.errorf("class", "want a class name")
	}
	if c, ok := t.class[name]; ok {
		req.Class = c
	} else {
		if len(t.class) >= maxClasses*16 {
			return req, t.errorf("class", "more than %d distinct class names", maxClasses*16)
		}
		t.class[name] = name
		req.Class = name
	}
	for k, dst := range []*int32{&req.Input, &req.Output} {
		col := []string{"input_tokens", "output_tokens"}[k]
		n, err := strconv.ParseInt(strings.TrimSpace(cols[2+k]), 10, 64)
		if err != nil || n < 1 || n > maxTraceTokens {
			return req, t.errorf(col, "want a whole number of tokens from 1 to %d, got %q", maxTraceTokens, cols[2+k])
		}
		*dst = int32(n)
	}
	if t.ncols == 6 {
		return req, t.prefix(&req, cols[4], cols[5])
	}
	return req, nil
}

// prefix reads a row's prefix columns: a group name (empty: none) and
// the prompt tokens shared with the group, at most the request's input.
func (t *TraceReader) prefix(req *TraceRequest, group, length string) error {
	group, length = strings.TrimSpace(group), strings.TrimSpace(length)
	if group == "" {
		if length != "" && length != "0" {
			return t.errorf("prefix_length", "%s tokens with no prefix_group; want a group or an empty length", length)
		}
		return nil
	}
	n, err := strconv.ParseInt(length, 10, 64)
	if err != nil || n < 0 || n > int64(req.Input) {
		return t.errorf("prefix_length", "want a whole number of tokens from 0 to input_tokens (%d), got %q", req.Input, length)
	}
	id, ok := t.group[group]
	if !ok {
		if len(t.group) >= maxPrefixGroups {
			return t.errorf("prefix_group", "more than %d distinct prefix groups", maxPrefixGroups)
		}
		id = int32(len(t.group))
		t.group[group] = id
	}
	req.Group, req.PrefixLength = id, int32(n)
	return nil
}

// Line is the line number of the last line read.
func (t *TraceReader) Line() int { return t.line }

// Close closes the file.
func (t *TraceReader) Close() error {
	if t.f == nil {
		return nil
	}
	if t.gz != nil {
		t.gz.Close()
	}
	err := t.f.Close()
	t.f = nil
	return err
}
