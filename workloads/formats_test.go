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
		{"unknown header", "# x\nid,start,end\n", `:2: cannot tell the trace format from the header "id,start,end" (philly has timestamp and num_gpus, openb has num_gpu and gpu_milli, brigade has submit_s)`, true},
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
// own good.csv, and ReadFile with AutoFormat reads it exactly as with the
// format named.
func TestRegistryReadsItsTestdata(t *testing.T) {
	for _, name := range FormatNames() {
		path := filepath.Join("testdata", name, "good.csv")
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
	err := CheckFormat("swf")
	if err == nil || err.Error() != `want philly, openb or brigade, or auto to tell by the header; got "swf"` {
		t.Errorf("swf: %v", err)
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
