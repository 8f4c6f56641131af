package results

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brigadesim/brigade/hwmodel"
)

// csvRows writes CSV as encoding/csv's Writer does with its defaults
// (comma, "\n" line ends, its quoting rules), byte for byte, but appends
// numbers straight into one buffer instead of formatting each into a
// string of its own: the results of a run of 100,000 jobs are millions of
// cells.
type csvRows struct {
	w   io.Writer
	b   []byte
	sep bool // a cell is already on the current line
	err error
}

func newCSVRows(w io.Writer) *csvRows { return &csvRows{w: w, b: make([]byte, 0, 80<<10)} }

func (r *csvRows) comma() {
	if r.sep {
		r.b = append(r.b, ',')
	}
	r.sep = true
}

// str writes a text cell, quoted where encoding/csv quotes it.
func (r *csvRows) str(s string) {
	r.comma()
	if !csvNeedsQuotes(s) {
		r.b = append(r.b, s...)
		return
	}
	r.b = append(r.b, '"')
	for len(s) > 0 {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			i = len(s)
		}
		r.b = append(r.b, s[:i]...)
		s = s[i:]
		if len(s) > 0 {
			r.b = append(r.b, '"', '"')
			s = s[1:]
		}
	}
	r.b = append(r.b, '"')
}

// csvNeedsQuotes is encoding/csv's rule for a comma-separated field.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\n' || c == '\r' || c == '"' || c == ',' {
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// The cells below hold digits, signs and dots only, which no rule quotes.

func (r *csvRows) int(v int64) {
	r.comma()
	r.b = strconv.AppendInt(r.b, v, 10)
}

// seconds writes FormatSeconds(t).
func (r *csvRows) seconds(t hwmodel.Time) {
	r.comma()
	r.b = appendSeconds(r.b, t)
}

// float6 writes v with six decimals, as strconv.FormatFloat(v, 'f', 6, 64).
func (r *csvRows) float6(v float64) {
	r.comma()
	r.b = strconv.AppendFloat(r.b, v, 'f', 6, 64)
}

// empty writes an empty cell.
func (r *csvRows) empty() { r.comma() }

// end ends the line, writing the buffer out when it is full.
func (r *csvRows) end() {
	r.b = append(r.b, '\n')
	r.sep = false
	if len(r.b) >= 64<<10 {
		r.flush()
	}
}

func (r *csvRows) flush() {
	if r.err == nil && len(r.b) > 0 {
		_, r.err = r.w.Write(r.b)
	}
	r.b = r.b[:0]
}

// header writes a header row.
func (r *csvRows) header(cols []string) {
	for _, c := range cols {
		r.str(c)
	}
	r.end()
}

// close writes out what is buffered and returns the first write error.
func (r *csvRows) close() error {
	r.flush()
	return r.err
}
