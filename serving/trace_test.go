package serving

import (
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestTraceReader(t *testing.T) {
	r, err := OpenTrace("testdata/requests.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := []TraceRequest{
		{0, "interactive", 512, 128, -1, 0},
		{250 * hwmodel.Millisecond, "interactive", 300, 64, -1, 0},
		{1500 * hwmodel.Millisecond, "batch-api", 2000, 400, -1, 0},
		{1500 * hwmodel.Millisecond, "interactive", 10, 1, -1, 0},
	}
	for i, w := range want {
		got, err := r.Next()
		if err != nil || got != w {
			t.Fatalf("request %d = %+v, %v; want %+v", i, got, err, w)
		}
	}
	for range 2 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the last request: %v, want io.EOF", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTraceReaderGzip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.csv.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	io.WriteString(z, TraceHeader+"\r\n3,a,1,2\r\n")
	z.Close()
	f.Close()
	r, err := OpenTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Next(); err != nil || got != (TraceRequest{3 * hwmodel.Second, "a", 1, 2, -1, 0}) {
		t.Fatalf("%+v %v", got, err)
	}
}

// TestTraceReaderPrefix: group names get ids in the order they first
// appear; a row with an empty group has none.
func TestTraceReaderPrefix(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.csv")
	in := TraceHeaderPrefix + "\n0,a,100,1,sys-b,64\n1,a,50,1,,\n2,a,80,1,sys-a,80\n3,a,90,1,sys-b,0\n"
	if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for k, w := range [][2]int32{{0, 64}, {-1, 0}, {1, 80}, {0, 0}} {
		q, err := r.Next()
		if err != nil || q.Group != w[0] || q.PrefixLength != w[1] {
			t.Fatalf("row %d: %+v, %v; want group %d, prefix %d", k, q, err, w[0], w[1])
		}
	}
}

func TestTraceReaderErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "t.csv: the file is empty; want the header time_s,class,input_tokens,output_tokens"},
		{"header", "time,class,in,out\n", `t.csv:1: want the header time_s,class,input_tokens,output_tokens (or time_s,class,input_tokens,output_tokens,prefix_group,prefix_length), got "time,class,in,out"`},
		{"columns", TraceHeader + "\n1,a,2\n", "t.csv:2: want 4 columns"},
		{"more columns", TraceHeader + "\n1,a,2,3,4\n", "t.csv:2: want 4 columns (time_s,class,input_tokens,output_tokens), got more"},
		{"time", TraceHeader + "\nsoon,a,2,3\n", `t.csv:2: time_s: want seconds >= 0, got "soon"`},
		{"negative", TraceHeader + "\n-1,a,2,3\n", `t.csv:2: time_s: want seconds >= 0`},
		{"order", TraceHeader + "\n5,a,2,3\n# c\n4.5,a,2,3\n", "t.csv:4: time_s: 4.5 is before the previous row's 5; times must not decrease"},
		{"class", TraceHeader + "\n1, ,2,3\n", "t.csv:2: class: want a class name"},
		{"input", TraceHeader + "\n1,a,0,3\n", `t.csv:2: input_tokens: want a whole number of tokens from 1 to 1073741824, got "0"`},
		{"output", TraceHeader + "\n1,a,2,3.5\n", `t.csv:2: output_tokens: want a whole number of tokens`},
		{"prefix columns", TraceHeaderPrefix + "\n1,a,2,3\n", "t.csv:2: want 6 columns (time_s,class,input_tokens,output_tokens,prefix_group,prefix_length), got 4"},
		{"prefix longer than input", TraceHeaderPrefix + "\n1,a,100,3,sys,100\n2,a,100,3,sys,101\n", `t.csv:3: prefix_length: want a whole number of tokens from 0 to input_tokens (100), got "101"`},
		{"prefix length", TraceHeaderPrefix + "\n1,a,100,3,sys,\n", `t.csv:2: prefix_length: want a whole number of tokens from 0 to input_tokens (100), got ""`},
		{"prefix without group", TraceHeaderPrefix + "\n1,a,100,3,,20\n", `t.csv:2: prefix_length: 20 tokens with no prefix_group`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.csv")
			if err := os.WriteFile(p, []byte(c.in), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := OpenTrace(p)
			for err == nil {
				_, err = r.Next()
			}
			if r != nil {
				r.Close()
			}
			if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %s", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), p) {
				t.Fatalf("err = %v does not name the file", err)
			}
		})
	}
	if _, err := OpenTrace(filepath.Join(t.TempDir(), "none.csv")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func FuzzTraceReader(f *testing.F) {
	f.Add([]byte(TraceHeader + "\n0,a,1,1\n1.5,b,20,30\n"))
	f.Add([]byte(TraceHeader + "\n1,a,1\n"))
	f.Add([]byte(TraceHeaderPrefix + "\n1,a,10,1,g,5\n2,a,10,1,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenTrace(p)
		if err != nil {
			return
		}
		defer r.Close()
		var last hwmodel.Time
		for {
			q, err := r.Next()
			if err != nil {
				return
			}
			if q.At < last || q.Input < 1 || q.Output < 1 || q.Class == "" || q.Group < -1 || q.PrefixLength < 0 || q.PrefixLength > q.Input {
				t.Fatalf("bad request %+v", q)
			}
			last = q.At
		}
	})
}
