package report

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

// TestLoadLimits: a line of jobs.csv or timeseries.csv over csvlimit's
// bounds is an error at the file and line, after a few MiB at most. 16 MiB
// of commas would cost a plain encoding/csv reader a 16-byte string
// header per field (256 MiB).
func TestLoadLimits(t *testing.T) {
	for _, file := range []string{"jobs.csv", "timeseries.csv"} {
		for _, c := range []struct {
			name string
			fill byte
			n    int
			msg  string
		}{
			{"2000 commas", ',', 2000, "want at most 1024 fields on a line, found more"},
			{"a line over 1 MiB", 'x', csvlimit.MaxLineBytes + 1, "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"},
			{"16 MiB of commas", ',', 16 << 20, "want at most 1024 fields on a line, found more"},
		} {
			t.Run(file+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte("[]\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, file)
				writeLine(t, path, "policy,submit_s\nfcfs,0\n", c.fill, c.n)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				d, err := Load(dir)
				runtime.ReadMemStats(&after)
				if want := fmt.Sprintf("%s:3: %s", path, c.msg); d != nil || err == nil || err.Error() != want {
					t.Fatalf("got %v, want %s", err, want)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
					t.Errorf("reading the line allocated %d MiB, want at most 16", alloc>>20)
				}
			})
		}
	}
}
