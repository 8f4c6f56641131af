package csvlimittest

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/csvlimit"
)

// The messages of csvlimit.LimitError, which readers put after their own
// file and line.
const (
	FieldsMsg  = "want at most 1024 fields on a line, found more"
	BytesMsg   = "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"
	CommentMsg = "want a line of at most 1048576 bytes, found a longer one"
)

// MaxAlloc is what reading one line over the bounds may allocate.
const MaxAlloc = 16 << 20

// OverLimit is a line of N bytes Fill, over csvlimit's bounds, and the
// message of its error.
type OverLimit struct {
	Name string
	Fill byte
	N    int
	Msg  string
}

// OverLimits are a few commas more than the fields allowed, a byte more
// than a record may hold, and 16 MiB of commas, which a plain encoding/csv
// reader would hold with a 16-byte string header per field (256 MiB).
var OverLimits = []OverLimit{
	{"2000 commas", ',', 2000, FieldsMsg},
	{"a line over 1 MiB", 'x', csvlimit.MaxLineBytes + 1, BytesMsg},
	{"16 MiB of commas", ',', 16 << 20, FieldsMsg},
}

// HeaderOverLimit is a first line over the fields allowed, where a reader
// wants its header.
var HeaderOverLimit = OverLimit{"a header of 2000 commas", ',', 2000, FieldsMsg}

// Line returns head, then n bytes fill on one line, then a line break, as
// a reader that holds 64 KiB of the line at a time.
func Line(head string, fill byte, n int) io.Reader {
	chunk := bytes.Repeat([]byte{fill}, min(n, 64<<10))
	parts := []io.Reader{strings.NewReader(head)}
	for left := n; left > 0; left -= len(chunk) {
		parts = append(parts, bytes.NewReader(chunk[:min(left, len(chunk))]))
	}
	return io.MultiReader(append(parts, strings.NewReader("\n"))...)
}

// WriteLine appends Line(head, fill, n) to path, creating it if need be.
func WriteLine(t testing.TB, path, head string, fill byte, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, Line(head, fill, n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Allocated returns what f allocated, in bytes.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Refused runs read and fails t unless it returned an error whose text is
// want, having allocated at most MaxAlloc.
func Refused(t testing.TB, want string, read func() error) {
	t.Helper()
	var err error
	alloc := Allocated(func() { err = read() })
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if alloc > MaxAlloc {
		t.Errorf("reading the line allocated %d MiB, want at most %d", alloc>>20, MaxAlloc>>20)
	}
}
