package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/csvlimit/csvlimittest"
)

// TestReplayReadersLimits: a line of a results folder's jobs.csv or
// estimates.csv over csvlimit's bounds, its header or a row, is an error
// at the file and line, after a few MiB at most. 16 MiB of commas would
// cost a plain encoding/csv reader a 16-byte string header per field
// (256 MiB).
func TestReplayReadersLimits(t *testing.T) {
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
	type limitCase struct {
		csvlimittest.OverLimit
		header bool // the line replaces the header and the rows
		line   int
	}
	cases := []limitCase{{csvlimittest.HeaderOverLimit, true, 1}}
	for _, c := range csvlimittest.OverLimits {
		cases = append(cases, limitCase{c, false, 3})
	}
	for _, r := range readers {
		for _, c := range cases {
			t.Run(r.file+"/"+c.Name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, r.file)
				if !c.header {
					r.head(t, dir)
				}
				csvlimittest.WriteLine(t, path, "", c.Fill, c.N)
				csvlimittest.Refused(t, fmt.Sprintf("%s:%d: %s", path, c.line, c.Msg), func() error { return r.read(dir) })
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
