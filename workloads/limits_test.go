package workloads

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/csvlimit"
	"github.com/brigadesim/brigade/csvlimit/csvlimittest"
)

// gzipBomb writes header, then n bytes fill on one line, then a newline,
// as a gzip file in dir, and returns its path. A repeated byte compresses
// about 1000:1, so 16 MiB of it make a file of about 16 KB.
func gzipBomb(t *testing.T, dir, header string, fill byte, n int) string {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := io.WriteString(z, header); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{fill}, 1<<16)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := z.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(z, "\n"); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bomb.csv.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadGzipBomb: a small .csv.gz that expands to one 16 MiB line, of
// commas or of one long cell, is refused at its line, in every format,
// having buffered a few MiB at most. Without the limits encoding/csv holds
// the line and a string header per field (16 bytes each: 256 MiB for
// these commas, past 4 GiB for the 100 MiB of them a 102 KB file holds).
func TestReadGzipBomb(t *testing.T) {
	const size = 16 << 20
	for _, f := range []struct{ format, header string }{
		{"brigade", "name,submit_s,duration_s,gpus\n"},
		{"philly", "timestamp,duration,num_gpus,cluster\n"},
		{"openb", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"},
	} {
		for _, c := range []struct {
			fill byte
			msg  string
		}{{',', "want at most 1024 fields on a line"}, {'x', "at most 1048576 bytes"}} {
			t.Run(f.format+"/"+string(c.fill), func(t *testing.T) {
				path := gzipBomb(t, t.TempDir(), f.header, c.fill, size)
				readBomb(t, path, f.format, c.msg)
			})
		}
	}
	// SWF is no CSV: a line of spaces, of digits or of one long word is
	// over the line limit, and found by the auto format too.
	for _, fill := range []byte{' ', '7', 'x'} {
		for _, format := range []string{"swf", AutoFormat} {
			t.Run("swf/"+format+"/"+string(fill), func(t *testing.T) {
				path := gzipBomb(t, t.TempDir(), "; Version: 2.2\n", fill, size)
				readBomb(t, path, format, "want a line of at most 1048576 bytes")
			})
		}
	}
}

func readBomb(t *testing.T, path, format, msg string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 64<<10 {
		t.Fatalf("the bomb is %v bytes (%v), want a small file", fi.Size(), err)
	}
	var w *Workload
	alloc := csvlimittest.Allocated(func() { w, err = ReadFile(path, format) })
	if w != nil {
		t.Fatalf("read %d jobs from one enormous line", len(w.Jobs))
	}
	checkParseError(t, err, path, badCase{line: 2, msg: []string{msg}})
	if alloc > csvlimittest.MaxAlloc {
		t.Errorf("reading the bomb allocated %d MiB, want at most %d", alloc>>20, csvlimittest.MaxAlloc>>20)
	}
}

// TestReadLimits holds the readers to csvlimit.MaxLineBytes and
// csvlimit.MaxFields on plain input: long lines, long records made of
// quoted line breaks, many fields, and comment lines whose quotes must not
// confuse the count.
func TestReadLimits(t *testing.T) {
	const header = "name,submit_s,duration_s,gpus,tenant\n"
	long := strings.Repeat("x", csvlimit.MaxLineBytes)
	cases := []struct {
		name  string
		input string
		line  int    // 0: no error
		msg   string // in the error
	}{
		{"long cell", header + "a,0,1,1,t\nb,0,1,1," + long + "\n", 3, "record (a line, or several"},
		{"long header", "name,submit_s,duration_s,gpus,tenant" + long + "\n", 1, "at most 1048576 bytes"},
		{"long quoted record", header + "a,0,1,1,\"" + strings.Repeat("x\n", csvlimit.MaxLineBytes/2+1) + "\"\n", 2, "several when a quoted cell"},
		{"many fields", header + "a,0,1,1,t" + strings.Repeat(",", csvlimit.MaxFields) + "\n", 2, "at most 1024 fields"},
		{"many fields in the header", "name" + strings.Repeat(",x", csvlimit.MaxFields) + "\n", 1, "at most 1024 fields"},
		{"long comment", header + "#" + long + "\na,0,1,1,t\n", 2, "want a line of at most"},
		// Quotes in a comment are not CSV: an odd number of them must not
		// make the rest of the file one quoted record, and commas in it
		// are not fields.
		{"comment with a quote", header + "# a \"quote" + strings.Repeat(",", 2*csvlimit.MaxFields) + "\n" + strings.Repeat("a,0,1,1,t\n", 1) + "b,0,1,1,\"t,\"\"u\"\"\"\n", 0, ""},
		// Just under both limits: read as usual.
		{"at the limits", header + "a,0,1,1," + strings.Repeat("y", csvlimit.MaxLineBytes-len("a,0,1,1,")-1) + "\n", 0, ""},
		// A record of many short lines in a quoted cell, under the limit.
		{"quoted line breaks", header + "a,0,1,1,\"t\n\n\nu\"\n", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := ReadBrigade(strings.NewReader(c.input), "limits.csv")
			if c.line == 0 {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if w.Validate() != nil || len(w.Jobs) == 0 {
					t.Fatalf("bad workload: %v", w.Validate())
				}
				return
			}
			checkParseError(t, err, "limits.csv", badCase{line: c.line, msg: []string{c.msg}})
		})
	}
}

// TestReadNoJobs: a trace whose header no job follows is an error naming
// the file, in every format; openb says when it skipped Pending pods.
func TestReadNoJobs(t *testing.T) {
	for _, c := range []struct {
		name  string
		read  func(io.Reader, string) (*Workload, error)
		input string
		msg   string
	}{
		{"brigade", ReadBrigade, "name,submit_s,duration_s,gpus\n", "no jobs after the header"},
		{"brigade comments only", ReadBrigade, "name,submit_s,duration_s,gpus\n# a,0,1,1\n\n", "no jobs after the header"},
		{"philly", ReadPhilly, "timestamp,duration,num_gpus,cluster\n", "no jobs after the header"},
		{"swf", ReadSWF, "; Version: 2.2\n;\n\n", "no jobs after the header"},
		{"swf run time unknown only", ReadSWF, "; Version: 2.2\n1 0 -1 -1 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
			"no jobs after the header (1 record skipped: run time unknown (-1), the first on line 2)"},
		{"openb", ReadOpenB, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,pod_phase,creation_time,deletion_time,scheduled_time\n", "no jobs after the header"},
		{"openb pending only", ReadOpenB, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
			"p,1000,1024,1,1000,BE,Pending,0,10,\n", "no jobs after the header (1 pod in phase Pending, skipped: they never ran)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := c.read(strings.NewReader(c.input), "empty.csv")
			if w != nil {
				t.Fatalf("got a workload of %d jobs, want an error", len(w.Jobs))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if got, want := err.Error(), "empty.csv: "+c.msg; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
