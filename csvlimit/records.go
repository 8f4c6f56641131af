package csvlimit

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// plainBuffer is the fast path's line buffer: a line that does not fit is
// handed to the general parser with everything after it.
const plainBuffer = 64 << 10

// Records reads CSV records as a csv.Reader from NewReader reads them with
// FieldsPerRecord -1 and ReuseRecord set: the same records, the same
// lines, the same errors. Plain lines, those without a quote that fit
// plainBuffer and MaxFields, are split at their commas without the general
// parser's state machine; from the first line that is not plain to the
// end of the input, the records come from a csv.Reader of NewReader, and
// its line numbers and errors are shifted to count from the input's first
// line.
type Records struct {
	br      *bufio.Reader
	comment byte
	line    int // lines the fast path consumed
	recLine int // line where the last record starts

	// slow is the general parser, once a line was not plain; offset is
	// the number of lines before the ones it reads.
	slow   *csv.Reader
	offset int

	rec []string
}

// NewRecords returns a Records of r with comment lines starting with
// comment (0 for none), which must be 0 or an ASCII character.
func NewRecords(r io.Reader, comment rune) *Records {
	if comment < 0 || comment >= utf8.RuneSelf {
		panic(fmt.Sprintf("csvlimit.NewRecords: comment %q is not an ASCII character", comment))
	}
	return &Records{br: bufio.NewReaderSize(r, plainBuffer), comment: byte(comment)}
}

// Read returns the next record, io.EOF at the end of the input, or the
// error of a malformed record (a *csv.ParseError or a *LimitError, its
// lines counted from the input's first line). The record's slice is
// reused by the next call; its strings are not.
func (r *Records) Read() ([]string, error) {
	if r.slow != nil {
		return r.readSlow()
	}
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return r.handOver(line)
		}
		if err != nil && err != io.EOF {
			// The input failed: the general parser meets the same bytes
			// and then the same error.
			return r.handOverFailed(line, err)
		}
		if len(line) == 0 { // io.EOF with nothing left
			return nil, io.EOF
		}
		atEOF := err == io.EOF
		if bytes.IndexByte(line, '"') >= 0 || bytes.Count(line, []byte{','}) >= MaxFields {
			return r.handOver(line)
		}
		r.line++
		// As csv.Reader: a line's "\r\n" is its end, and so is a "\r"
		// that ends the input.
		switch n := len(line); {
		case atEOF && line[n-1] == '\r':
			line = line[:n-1]
		case n >= 2 && line[n-2] == '\r' && line[n-1] == '\n':
			line = line[:n-2]
		case line[n-1] == '\n':
			line = line[:n-1]
		}
		if r.comment != 0 && len(line) > 0 && line[0] == r.comment {
			if atEOF {
				return nil, io.EOF
			}
			continue
		}
		if len(line) == 0 {
			if atEOF {
				return nil, io.EOF
			}
			continue // an empty line
		}
		r.recLine = r.line
		s := string(line)
		r.rec = r.rec[:0]
		for {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				r.rec = append(r.rec, s)
				break
			}
			r.rec = append(r.rec, s[:i])
			s = s[i+1:]
		}
		return r.rec, nil
	}
}

// Line is the 1-based line where the last record read starts.
func (r *Records) Line() int { return r.recLine }

// handOver gives the general parser the line the fast path could not read
// (its bytes so far) and the rest of the input.
func (r *Records) handOver(line []byte) ([]string, error) {
	return r.slowFrom(io.MultiReader(bytes.NewReader(bytes.Clone(line)), r.br))
}

// handOverFailed is handOver when the input failed after line: the bufio
// reader returns an error once, so the general parser is given it again.
func (r *Records) handOverFailed(line []byte, err error) ([]string, error) {
	return r.slowFrom(io.MultiReader(bytes.NewReader(bytes.Clone(line)), failed{err}))
}

// failed is an input that fails with err.
type failed struct{ err error }

func (f failed) Read([]byte) (int, error) { return 0, f.err }

func (r *Records) slowFrom(rest io.Reader) ([]string, error) {
	r.slow = NewReader(rest, rune(r.comment))
	r.slow.FieldsPerRecord = -1
	r.slow.ReuseRecord = true
	r.offset = r.line
	return r.readSlow()
}

func (r *Records) readSlow() ([]string, error) {
	rec, err := r.slow.Read()
	if err != nil {
		return rec, r.shift(err)
	}
	line, _ := r.slow.FieldPos(0)
	r.recLine = r.offset + line
	return rec, nil
}

// shift moves an error's lines from the general parser's count to the
// input's.
func (r *Records) shift(err error) error {
	var pe *csv.ParseError
	var le *LimitError
	switch {
	case errors.As(err, &le):
		moved := *le
		moved.Line += r.offset
		return &moved
	case errors.As(err, &pe):
		moved := *pe
		moved.StartLine += r.offset
		moved.Line += r.offset
		return &moved
	}
	return err
}
