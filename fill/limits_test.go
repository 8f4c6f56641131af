package fill

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/brigadesim/brigade/csvlimit"
)

// writeLine writes head, then n bytes fill on one line, then a line
// break, to path, 64 KiB at a time.
func writeLine(t *testing.T, path, head string, fill byte, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{fill}, min(n, 64<<10))
	if _, err := io.WriteString(f, head); err != nil {
		t.Fatal(err)
	}
	for left := n; left > 0; left -= len(chunk) {
		if _, err := f.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(f, "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLoadPublishedLimits: a line of either published table over
// csvlimit's bounds, its header or a row, is an error at the file and
// line, after a few MiB at most. 16 MiB of commas would cost a plain
// encoding/csv reader a 16-byte string header per field (256 MiB).
func TestLoadPublishedLimits(t *testing.T) {
	const (
		fieldsMsg = "want at most 1024 fields on a line, found more"
		bytesMsg  = "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"
		table     = "workload,sc_policy,tune,seed,0,1\nopenb,06-FGD,1.3,42,0,1\n"
	)
	for _, file := range []string{"analysis_allo_discrete.csv", "analysis_frag_ratio_discrete.csv"} {
		for _, c := range []struct {
			name string
			head string
			fill byte
			n    int
			line int
			msg  string
		}{
			{"2000 commas", table, ',', 2000, 3, fieldsMsg},
			{"a line over 1 MiB", table, 'x', csvlimit.MaxLineBytes + 1, 3, bytesMsg},
			{"16 MiB of commas", table, ',', 16 << 20, 3, fieldsMsg},
			{"a header of 2000 commas", "", ',', 2000, 1, fieldsMsg},
		} {
			t.Run(file+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				for _, f := range []string{"analysis_allo_discrete.csv", "analysis_frag_ratio_discrete.csv"} {
					if err := os.WriteFile(filepath.Join(dir, f), []byte(table), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				path := filepath.Join(dir, file)
				writeLine(t, path, c.head, c.fill, c.n)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				p, err := LoadPublished(dir)
				runtime.ReadMemStats(&after)
				if want := fmt.Sprintf("%s:%d: %s", path, c.line, c.msg); p != nil || err == nil || err.Error() != want {
					t.Fatalf("got %v, want %s", err, want)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
					t.Errorf("reading the line allocated %d MiB, want at most 16", alloc>>20)
				}
			})
		}
	}
}
