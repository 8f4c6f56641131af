package csvlimit

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// readAll reads r through NewReader to the first error.
func readAll(r io.Reader, comment rune) ([][]string, error) {
	cr := NewReader(r, comment)
	cr.FieldsPerRecord = -1
	var out [][]string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// TestNewReader holds NewReader to MaxLineBytes and MaxFields: long lines,
// long records made of quoted line breaks, many fields and long comment
// lines are refused at the line where they start, after the records
// before them; quotes and commas in comment lines do not count, and input
// just within the limits reads as usual.
func TestNewReader(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes)
	cases := []struct {
		name    string
		input   string
		comment rune
		records int    // read before the error, or in all
		line    int    // of the error; 0: none
		msg     string // the error's Msg
	}{
		{"long cell", "a,b\nc," + long + "\n", 0, 1, 2,
			"want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"},
		{"long first line", long + "x\n", 0, 0, 1, "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"},
		{"long quoted record", "a,b\n\"" + strings.Repeat("x\n", MaxLineBytes/2+1) + "\"\n", 0, 1, 2, "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"},
		{"many fields", "a,b\nc,d\n" + strings.Repeat(",", MaxFields) + "\n", 0, 2, 3, "want at most 1024 fields on a line, found more"},
		{"many fields after a quoted line break", "a,\"b\nc\"\n" + strings.Repeat(",", MaxFields) + "\n", 0, 1, 3, "want at most 1024 fields on a line, found more"},
		{"long comment", "a,b\n#" + long + "\nc,d\n", '#', 1, 2, "want a line of at most 1048576 bytes, found a longer one"},
		{"comment with a quote and commas", "a,b\n# \"q" + strings.Repeat(",", 2*MaxFields) + "\nc,\"d,\"\"e\"\"\"\n", '#', 2, 0, ""},
		{"commas of a comment without Comment", "a,b\n#" + strings.Repeat(",", MaxFields) + "\n", 0, 1, 2, "want at most 1024 fields on a line, found more"},
		{"quoted commas", "\"" + strings.Repeat(",", 2*MaxFields) + "\",b\n", 0, 1, 0, ""},
		{"at the byte limit", strings.Repeat("y", MaxLineBytes-1) + "\n", 0, 1, 0, ""},
		{"at the field limit", strings.Repeat(",", MaxFields-1) + "\n", 0, 1, 0, ""},
		{"quoted line breaks", "a,\"b\n\n\nc\"\nd,e\n", 0, 2, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, err := readAll(strings.NewReader(c.input), c.comment)
			if len(recs) != c.records {
				t.Errorf("read %d records, want %d", len(recs), c.records)
			}
			if c.line == 0 {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want a *LimitError", err)
			}
			if le.Line != c.line || le.Msg != c.msg {
				t.Errorf("got line %d %q, want line %d %q", le.Line, le.Msg, c.line, c.msg)
			}
			if want := fmt.Sprintf("line %d: %s", c.line, c.msg); le.Error() != want {
				t.Errorf("Error() = %q, want %q", le.Error(), want)
			}
		})
	}
}

// TestNewReaderSticky: once a limit is passed, every later read returns
// the same error rather than the records after it.
func TestNewReaderSticky(t *testing.T) {
	cr := NewReader(strings.NewReader(strings.Repeat(",", MaxFields)+"\na,b\n"), 0)
	_, first := cr.Read()
	var le *LimitError
	if !errors.As(first, &le) {
		t.Fatalf("got %v, want a *LimitError", first)
	}
	for range 3 {
		if rec, err := cr.Read(); err != first {
			t.Fatalf("read %q, %v after the limit, want %v", rec, err, first)
		}
	}
}

// TestNewReaderComment: NewReader sets Comment, and refuses a comment
// character that the limiter cannot tell by one byte.
func TestNewReaderComment(t *testing.T) {
	if got := NewReader(strings.NewReader(""), '#').Comment; got != '#' {
		t.Errorf("Comment = %q, want '#'", got)
	}
	if got := NewReader(strings.NewReader(""), 0).Comment; got != 0 {
		t.Errorf("Comment = %q, want none", got)
	}
	for _, c := range []rune{'§', -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewReader took the comment %q", c)
				}
			}()
			NewReader(strings.NewReader(""), c)
		}()
	}
}

// TestNewReaderMemory: 64 MiB on one line, of commas or of one long cell,
// costs a few MiB. Without the limiter encoding/csv would hold the line
// and a string header per field (16 bytes each: a GiB for these commas).
func TestNewReaderMemory(t *testing.T) {
	for _, fill := range []byte{',', 'x'} {
		t.Run(string(fill), func(t *testing.T) {
			chunk := bytes.Repeat([]byte{fill}, 64<<10)
			parts := []io.Reader{strings.NewReader("a,b\n")}
			for range 1024 {
				parts = append(parts, bytes.NewReader(chunk))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := readAll(io.MultiReader(parts...), 0)
			runtime.ReadMemStats(&after)
			var le *LimitError
			if !errors.As(err, &le) || le.Line != 2 {
				t.Fatalf("got %v, want a *LimitError at line 2", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("reading the line allocated %d MiB, want at most 16", alloc>>20)
			}
		})
	}
}

// csvRecord is one record as encoding/csv reads it, with the bytes of
// input it took (from the end of the record before; comment and blank
// lines before it included).
type csvRecord struct {
	fields []string
	span   int64
}

// readCSVAll reads r as the readers' parsers do, to the first error.
func readCSVAll(r io.Reader, comments bool) (recs []csvRecord, tail int64, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	if comments {
		cr.Comment = '#'
	}
	var off int64
	for {
		rec, err := cr.Read()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return recs, cr.InputOffset() - off, err
		}
		recs = append(recs, csvRecord{rec, cr.InputOffset() - off})
		off = cr.InputOffset()
	}
}

// FuzzRecordLimiter: the limiter never refuses what it should pass. With
// small limits (40 bytes, 4 fields), whenever it stops a read, reading the
// same bytes without it meets a syntax error or a record (or trailing
// comment) that breaks a limit; the records before the stop are the same
// either way; and when it does not stop the read, nothing differs.
func FuzzRecordLimiter(f *testing.F) {
	for _, s := range []string{
		"a,b\nc,d\n",
		"a,b,c,d,e\n",
		"x\n" + strings.Repeat("y", 50) + "\n",
		"\"a\nb\nc\",d\n",
		"\"a,b,c,d,e,f\"\n",
		"# \"a,b,c,d,e,f\n\"q\"\"\",x\n",
		"a,\"b\"\"c\",d\r\n\r\n#,,,,,,,,\n",
		"a\"b,c\n" + strings.Repeat(",", 10) + "\n",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	const maxBytes, maxFields = 40, 4
	f.Fuzz(func(t *testing.T, data []byte, comments bool) {
		plain, plainTail, plainErr := readCSVAll(bytes.NewReader(data), comments)
		lim := newRecordLimiter(bytes.NewReader(data), maxBytes, maxFields)
		if comments {
			lim.comment = '#'
		}
		got, _, err := readCSVAll(lim, comments)
		if len(got) > len(plain) {
			t.Fatalf("%d records through the limiter, %d without", len(got), len(plain))
		}
		for i := range got {
			if !slices.Equal(got[i].fields, plain[i].fields) {
				t.Fatalf("record %d: %q through the limiter, %q without", i, got[i].fields, plain[i].fields)
			}
		}
		var le *LimitError
		if !errors.As(err, &le) {
			if len(got) != len(plain) || fmt.Sprint(err) != fmt.Sprint(plainErr) {
				t.Fatalf("without a limit passed: %d records and %v, want %d and %v", len(got), err, len(plain), plainErr)
			}
			return
		}
		if plainErr != nil || plainTail > maxBytes {
			return
		}
		for _, r := range plain[len(got):] {
			if len(r.fields) > maxFields || r.span > maxBytes {
				return
			}
		}
		t.Fatalf("the limiter refused valid input within the limits: %v", err)
	})
}
