package hwmodel

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/csvlimit"
)

// overLimit is a line of n bytes fill, over csvlimit's bounds, and what
// the error says.
type overLimit struct {
	name string
	fill byte
	n    int
	msg  string
}

// overLimits: a few commas more than the fields allowed, a byte more than
// a record may hold, and 16 MiB of commas, which a plain encoding/csv
// reader would hold with a 16-byte string header per field (256 MiB).
var overLimits = []overLimit{
	{"2000 commas", ',', 2000, "want at most 1024 fields on a line, found more"},
	{"a line over 1 MiB", 'x', csvlimit.MaxLineBytes + 1, "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"},
	{"16 MiB of commas", ',', 16 << 20, "want at most 1024 fields on a line, found more"},
}

// lineOf returns head, then n bytes fill on one line, then a line break,
// as a reader that holds 64 KiB of it at a time.
func lineOf(head string, fill byte, n int) io.Reader {
	chunk := bytes.Repeat([]byte{fill}, min(n, 64<<10))
	parts := []io.Reader{strings.NewReader(head)}
	for left := n; left > 0; left -= len(chunk) {
		parts = append(parts, bytes.NewReader(chunk[:min(left, len(chunk))]))
	}
	return io.MultiReader(append(parts, strings.NewReader("\n"))...)
}

// allocated returns what f allocated, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestOpenBNodeListLimits: a node list line over csvlimit's bounds is a
// *NodeListError at the file and line, after a few MiB at most.
func TestOpenBNodeListLimits(t *testing.T) {
	const head = "sn,cpu_milli,memory_mib,gpu,model\na,1,1,1,T4\n"
	for _, c := range overLimits {
		t.Run(c.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = ParseOpenBNodeList(lineOf(head, c.fill, c.n), "nodes.csv", "x") })
			ne, ok := err.(*NodeListError)
			if !ok || ne.File != "nodes.csv" || ne.Line != 3 || err.Error() != "nodes.csv:3: "+c.msg {
				t.Fatalf("got %v (%T), want a *NodeListError: nodes.csv:3: %s", err, err, c.msg)
			}
			if alloc > 16<<20 {
				t.Errorf("reading the line allocated %d MiB, want at most 16", alloc>>20)
			}
		})
	}
}

// TestReadFaultTraceLimits: a failure trace line over csvlimit's bounds,
// after a comment and a failure, is an error at the file and line, after
// a few MiB at most; a comment line is held to the byte bound too.
func TestReadFaultTraceLimits(t *testing.T) {
	c := faultCluster(t, 3, 8)
	const head = "time_s,node,gpu,duration_s\n# a comment\n60,node-0,5,30\n"
	cases := append(slices.Clip(overLimits), overLimit{"a comment over 1 MiB", '#', csvlimit.MaxLineBytes + 1, "want a line of at most 1048576 bytes, found a longer one"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "faults.csv")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, lineOf(head, tc.fill, tc.n)); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			alloc := allocated(func() { _, err = ReadFaultTrace(p, c) })
			if want := fmt.Sprintf("%s:4: %s", p, tc.msg); err == nil || err.Error() != want {
				t.Fatalf("got %v, want %s", err, want)
			}
			if alloc > 16<<20 {
				t.Errorf("reading the line allocated %d MiB, want at most 16", alloc>>20)
			}
		})
	}
}
