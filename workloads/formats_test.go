package workloads

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDetectFormat: the header, not the file name, tells the format, past
// comments, blank lines, a byte-order mark and gzip; a header no format
// claims names the file, the header's line and what each format needs.
func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // a format, or a substring of the error
		wantErr       bool
	}{
		{"philly", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-03 00:00:00,60,1,60,vc1\n", "philly", false},
		{"philly columns reordered", "cluster,num_gpus,duration,timestamp\n", "philly", false},
		{"openb", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n", "openb", false},
		{"brigade", "name,submit_s,duration_s,gpus\nj,0,1,1\n", "brigade", false},
		{"brigade after comments", "# made by hand\n\n#another\nname,submit_s,duration_s,gpus\n", "brigade", false},
		{"byte-order mark and case", "\ufeffName,Submit_S,Duration_S,GPUs\r\n", "brigade", false},
		{"brigade missing a column", "name,submit_s,gpus\n", "brigade", false}, // the reader says which column
		{"swf header", "; Version: 2.2\n; MaxProcs: 128\n    1 0 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n", "swf", false},
		{"swf after blank lines", "\n  \n\t; Computer: x\n", "swf", false},
		{"swf without a header", "1\t0\t-1\t10\t1\t-1\t-1\t-1\t-1\t-1\t1\t1\t1\t-1\t-1\t-1\t-1\t-1.5\r\n", "swf", false},
		{"swf after a byte-order mark", "\ufeff; Version: 2.2\n", "swf", false},
		// 17 numbers, or 18 fields one of which is no number: neither SWF
		// nor a CSV header.
		{"17 numbers", "1 0 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1\n", `:1: cannot tell the trace format from the header "1 0 -1`, true},
		{"18 fields, one a word", "1 0 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 x\n", `:1: cannot tell the trace format`, true},
		{"unknown header", "# x\nid,start,end\n", `:2: cannot tell the trace format from the header "id,start,end" (philly has timestamp and num_gpus, openb has num_gpu and gpu_milli, brigade has submit_s, pollux has application and num_replicas, swf has ';' header lines or records of 18 numbers)`, true},
		{"empty", "", ":1: want a header line", true},
		{"only comments", "# nothing\n\n", ":1: want a header line", true},
		{"bad csv", "a,\"b\n", ":1: want a CSV header", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, gz := range []bool{false, true} {
				path := filepath.Join(t.TempDir(), "x.csv")
				data := []byte(tc.content)
				if gz {
					path += ".gz"
					var b bytes.Buffer
					z := gzip.NewWriter(&b)
					z.Write(data)
					z.Close()
					data = b.Bytes()
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				got, err := DetectFormat(path)
				if tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), path+tc.want) {
						t.Errorf("gz=%v: got %q, %v; want an error containing %q", gz, got, err, tc.want)
					}
					continue
				}
				if err != nil || got != tc.want {
					t.Errorf("gz=%v: got %q, %v; want %q", gz, got, err, tc.want)
				}
			}
		})
	}
}

// TestRegistryReadsItsTestdata: every registered format is detected on its
// own good file (good.csv, good.swf), and ReadFile with AutoFormat reads it
// exactly as with the format named.
func TestRegistryReadsItsTestdata(t *testing.T) {
	for _, name := range FormatNames() {
		paths, _ := filepath.Glob(filepath.Join("testdata", name, "good.*"))
		if len(paths) != 1 {
			t.Errorf("%s: want one testdata/%s/good.* file, found %v", name, name, paths)
			continue
		}
		path := paths[0]
		got, err := DetectFormat(path)
		if err != nil || got != name {
			t.Errorf("%s: detected %q, %v", path, got, err)
			continue
		}
		a, err := ReadFile(path, AutoFormat)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadFile(path, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Jobs) == 0 || len(a.Jobs) != len(b.Jobs) || a.Jobs[0].Name != b.Jobs[0].Name {
			t.Errorf("%s: auto read %d jobs, named read %d", path, len(a.Jobs), len(b.Jobs))
		}
	}
	if _, err := DetectFormat("testdata/nope.csv"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestCheckFormat(t *testing.T) {
	for _, ok := range append(FormatNames(), AutoFormat) {
		if err := CheckFormat(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	err := CheckFormat("pbs")
	if err == nil || err.Error() != `want philly, openb, brigade, pollux or swf, or auto to tell by the header; got "pbs"` {
		t.Errorf("pbs: %v", err)
	}
}

// TestClaimsNoCSVHeader: no format's Claims claims a CSV format's header
// (its Signature columns, or a whole good file's first line), nor a
// comment, so detection stays unambiguous.
func TestClaimsNoCSVHeader(t *testing.T) {
	var lines []string
	for _, f := range formats {
		if len(f.Signature) == 0 {
			continue
		}
		lines = append(lines, strings.Join(f.Signature, ","), strings.Join(f.Signature, " "))
		raw, err := os.ReadFile(filepath.Join("testdata", f.Name, "good.csv"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
				break
			}
		}
	}
	for _, f := range formats {
		if (f.Claims == nil) == (len(f.Signature) == 0) || (f.Claims == nil) != (f.Looks == "") {
			t.Errorf("%s: a format has a Signature, or Claims and Looks, not both", f.Name)
		}
		for _, l := range lines {
			if f.Claims != nil && f.Claims(l) {
				t.Errorf("%s claims the CSV header %q", f.Name, l)
			}
		}
	}
}

// The header, not the file's name, tells a trace's format.
func ExampleDetectFormat() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mine.txt")
	os.WriteFile(path, []byte("# my jobs\nname,submit_s,duration_s,gpus\ntrain,0,3600,8\n"), 0o644)
	format, err := DetectFormat(path)
	fmt.Println(format, err)
	w, err := ReadFile(path, AutoFormat)
	fmt.Println(len(w.Jobs), w.Jobs[0].Name, err)
	// Output:
	// brigade <nil>
	// 1 train <nil>
}
