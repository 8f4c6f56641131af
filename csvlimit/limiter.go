package csvlimit

import (
	"encoding/csv"
	"fmt"
	"io"
	"unicode/utf8"
)

// The limits NewReader holds a reader to. No file Brigade reads needs
// more: a trace row has at most 22 fields, the widest table (the FGD
// artifact's per-percent means) 136, and the longest line of any of them
// a few kilobytes.
const (
	// MaxLineBytes bounds a record: one line, or several when a quoted
	// cell holds line breaks.
	MaxLineBytes = 1 << 20
	// MaxFields bounds the fields of a record.
	MaxFields = 1024
)

// LimitError is a record over MaxLineBytes or MaxFields. Line is the
// 1-based line where the record starts; Msg says which limit it broke, in
// words a reader can put after its own file and line.
type LimitError struct {
	Line int
	Msg  string
}

func (e *LimitError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// NewReader returns a csv.Reader of r whose records are held to
// MaxLineBytes and MaxFields, with Comment set to comment (0 for none).
// Reading past a limit returns a *LimitError. comment must be 0 or an
// ASCII character: the limiter tells comment lines by their first byte.
func NewReader(r io.Reader, comment rune) *csv.Reader {
	if comment < 0 || comment >= utf8.RuneSelf {
		panic(fmt.Sprintf("csvlimit.NewReader: comment %q is not an ASCII character", comment))
	}
	lim := newRecordLimiter(r, MaxLineBytes, MaxFields)
	lim.comment = byte(comment)
	cr := csv.NewReader(lim)
	cr.Comment = comment
	return cr
}

// recordLimiter passes bytes through and fails, before the CSV parser
// buffers them, on the first record longer than maxBytes or with more
// than maxFields fields (see the package comment for how it reads quotes
// and comments).
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
				l.err = &LimitError{l.startLine, fmt.Sprintf("want a line of at most %d bytes, found a longer one", l.maxBytes)}
			}
		case l.size > l.maxBytes:
			l.err = &LimitError{l.startLine, fmt.Sprintf("want a record (a line, or several when a quoted cell holds line breaks) of at most %d bytes, found a longer one", l.maxBytes)}
		case l.fields > l.maxFields:
			l.err = &LimitError{l.startLine, fmt.Sprintf("want at most %d fields on a line, found more", l.maxFields)}
		}
		if l.err != nil {
			// Hand over what came before, so that the records before
			// this one are read; the parser meets the error when it asks
			// for more.
			return i, l.err
		}
	}
	return n, err
}
