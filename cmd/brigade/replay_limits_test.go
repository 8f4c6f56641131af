package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/csvlimit"
)

// appendLine appends n bytes fill on one line, then a line break, to
// path, 64 KiB at a time.
func appendLine(t *testing.T, path string, fill byte, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{fill}, min(n, 64<<10))
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

// TestReplayReadersLimits: a line of a results folder's jobs.csv or
// estimates.csv over csvlimit's bounds, its header or a row, is an error
// at the file and line, after a few MiB at most. 16 MiB of commas would
// cost a plain encoding/csv reader a 16-byte string header per field
// (256 MiB).
func TestReplayReadersLimits(t *testing.T) {
	const (
		fieldsMsg = "want at most 1024 fields on a line, found more"
		bytesMsg  = "want a record (a line, or several when a quoted cell holds line breaks) of at most 1048576 bytes, found a longer one"
	)
	readers := []struct {
		file string
		head func(t *testing.T, dir string) // writes the file's good lines
		read func(dir string) error
	}{
		{"jobs.csv", func(t *testing.T, dir string) {
			jobsCSV(t, dir, [][]string{{"fcfs", "a", "0", "0", "10", "10", "8", "1", "succeeded", "0"}})
		}, func(dir string) error { _, err := readResultJobs(dir); return err }},
		{"estimates.csv", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "estimates.csv"), []byte("name,estimate_s\na,10\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(dir string) error { _, err := readEstimates(dir); return err }},
	}
	for _, r := range readers {
		for _, c := range []struct {
			name   string
			header bool // the line replaces the header and the rows
			fill   byte
			n      int
			line   int
			msg    string
		}{
			{"2000 commas", false, ',', 2000, 3, fieldsMsg},
			{"a line over 1 MiB", false, 'x', csvlimit.MaxLineBytes + 1, 3, bytesMsg},
			{"16 MiB of commas", false, ',', 16 << 20, 3, fieldsMsg},
			{"a header of 2000 commas", true, ',', 2000, 1, fieldsMsg},
		} {
			t.Run(r.file+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, r.file)
				if !c.header {
					r.head(t, dir)
				}
				appendLine(t, path, c.fill, c.n)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				err := r.read(dir)
				runtime.ReadMemStats(&after)
				if want := fmt.Sprintf("%s:%d: %s", path, c.line, c.msg); err == nil || err.Error() != want {
					t.Fatalf("got %v, want %s", err, want)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
					t.Errorf("reading the line allocated %d MiB, want at most 16", alloc>>20)
				}
			})
		}
	}
}

// TestReadEstimatesErrorLine: a bad estimate after a quoted name that
// spans lines is reported at its own line of estimates.csv.
func TestReadEstimatesErrorLine(t *testing.T) {
	dir := t.TempDir()
	body := "name,estimate_s\n\"two\nlines\",10\nb,soon\n"
	if err := os.WriteFile(filepath.Join(dir, "estimates.csv"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readEstimates(dir)
	if err == nil || !strings.Contains(err.Error(), "estimates.csv:4: estimate_s") {
		t.Fatalf("readEstimates: %v; want the error at estimates.csv:4", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "estimates.csv"), []byte("name,estimate_s\n\"two\nlines\",10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readEstimates(dir)
	if err != nil || got["two\nlines"] != "10" {
		t.Fatalf("readEstimates: %v, %v; want the one estimate", got, err)
	}
}
