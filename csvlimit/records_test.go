package csvlimit

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// outcome is what a reader made of an input: each record with its line,
// then the error that ended it (nil at a clean end).
type outcome struct {
	records [][]string
	lines   []int
	err     string
}

func viaRecords(in io.Reader, comment rune) outcome {
	r := NewRecords(in, comment)
	return collect(r.Read, r.Line)
}

func viaParser(in io.Reader, comment rune) outcome {
	r := NewReader(in, comment)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	return collect(r.Read, func() int { line, _ := r.FieldPos(0); return line })
}

// collect reads records and their lines until the end or an error.
func collect(read func() ([]string, error), line func() int) outcome {
	var o outcome
	for {
		rec, err := read()
		if err == io.EOF {
			return o
		}
		if err != nil {
			o.err = describe(err)
			return o
		}
		o.records = append(o.records, slices.Clone(rec))
		o.lines = append(o.lines, line())
	}
}

// describe spells out an error with the fields readers use: its type and
// lines as well as its text.
func describe(err error) string {
	var le *LimitError
	if errors.As(err, &le) {
		return fmt.Sprintf("limit %d %s", le.Line, le.Msg)
	}
	return fmt.Sprintf("%T %v", err, err)
}

// sameAsParser fails unless Records reads in exactly as NewReader's
// csv.Reader does.
func sameAsParser(t *testing.T, in string, comment rune) {
	t.Helper()
	got, want := viaRecords(strings.NewReader(in), comment), viaParser(strings.NewReader(in), comment)
	if !slices.EqualFunc(got.records, want.records, slices.Equal) || !slices.Equal(got.lines, want.lines) || got.err != want.err {
		t.Fatalf("input %q (comment %q):\nRecords: %v lines %v err %q\nparser:  %v lines %v err %q",
			in, comment, got.records, got.lines, got.err, want.records, want.lines, want.err)
	}
}

// TestRecordsSameAsParser: plain lines, and every way a line stops being
// plain (a quote, a line break in quotes, a bare quote, a long line, many
// fields) before, at and after other records, read as csv.Reader reads
// them, with the same lines and errors.
func TestRecordsSameAsParser(t *testing.T) {
	long := strings.Repeat("x", plainBuffer+10)
	for _, in := range []string{
		"", "\n", "\n\n", "a", "a\n", "a,b\nc,d\n", "a,b\r\nc,d\r\n", "a,b\rc\n", "a\r", "a\r\r", "\r", "\r\n",
		",\n,,\n", "a,,b\n\nc\n", "# c\na\n", "a\n#c,d\n\"e\"\n",
		"a,b\n\"c\nd\",e\nf,g\n", "a,b\nc\"d\ne\n", "a,b\n\"c\"x\n", "a\n\"unterminated\n",
		"a\n" + long + ",b\nc,d\n", "a\nb," + strings.Repeat(",", MaxFields) + "\n",
		"a\n" + strings.Repeat("y", MaxLineBytes+1) + "\nz\n",
		"a\n" + strings.Repeat(",", MaxFields-1) + "\nb\n",
		"h\n" + strings.Repeat("r,1\n", 5000) + "\"q\",2\n" + strings.Repeat("s,3\n", 10),
		"\ufeffname,gpus\n j , 1 \n",
	} {
		for _, comment := range []rune{0, '#'} {
			sameAsParser(t, in, comment)
		}
	}
}

// TestRecordsInputFailure: an input that fails part-way gives the records
// before it and then its error, as the parser gives them.
func TestRecordsInputFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, in := range []string{"a,b\nc,d\n", "a,b\nc,", "a\n\"b\nc"} {
		mk := func() io.Reader { return io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom)) }
		got, want := viaRecords(mk(), 0), viaParser(mk(), 0)
		if !slices.EqualFunc(got.records, want.records, slices.Equal) || got.err != want.err || !strings.Contains(got.err, "boom") {
			t.Errorf("%q: Records %v %q, parser %v %q", in, got.records, got.err, want.records, want.err)
		}
	}
}

func FuzzRecords(f *testing.F) {
	for _, s := range []string{"a,b\nc,d\n", "a,\"b\nc\"\r\nd\n", "#x\n\n,\r", "a\"b\n", "\"a\"\"b\",c"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, comments bool) {
		comment := rune(0)
		if comments {
			comment = '#'
		}
		sameAsParser(t, in, comment)
		// Small reads move the fast path's buffer boundaries.
		got := viaRecords(iotest.OneByteReader(strings.NewReader(in)), comment)
		want := viaParser(strings.NewReader(in), comment)
		if !slices.EqualFunc(got.records, want.records, slices.Equal) || got.err != want.err {
			t.Fatalf("one byte at a time, %q: %v %q, want %v %q", in, got.records, got.err, want.records, want.err)
		}
	})
}
