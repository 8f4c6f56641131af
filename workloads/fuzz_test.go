package workloads

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addFixtures seeds a fuzz corpus with every trace (*.csv, *.swf) under
// testdata/<dir>.
func addFixtures(f *testing.F, dir string) {
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.csv"))
	swf, _ := filepath.Glob(filepath.Join("testdata", dir, "*.swf"))
	files = append(files, swf...)
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkRead holds any reader's result to the package's promises: an error
// is a *ParseError about the named file, and a workload passes Validate.
// shifted says the format moves the earliest submit time to 0.
func checkRead(t *testing.T, read func(io.Reader, string) (*Workload, error), data []byte, shifted bool) {
	const file = "fuzz.csv"
	w, err := read(bytes.NewReader(data), file)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %T is not a *ParseError: %v", err, err)
		}
		if pe.File != file || pe.Line < 0 || pe.Msg == "" {
			t.Fatalf("badly located error: %+v", pe)
		}
		if w != nil {
			t.Fatal("workload returned along with an error")
		}
		return
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("parsed workload breaks an invariant: %v", err)
	}
	if shifted && len(w.Jobs) > 0 && w.Jobs[0].Submit != 0 {
		t.Fatalf("earliest submit %v, want 0", w.Jobs[0].Submit)
	}
	for _, j := range w.Jobs {
		if !strings.HasPrefix(j.Source, file+":") {
			t.Fatalf("job %q has source %q", j.Name, j.Source)
		}
	}
	// Estimates filled from the workload keep it valid.
	w.FillEstimates()
	if err := w.Validate(); err != nil {
		t.Fatalf("after FillEstimates: %v", err)
	}
}

func FuzzReadPhilly(f *testing.F) {
	addFixtures(f, "philly")
	f.Add([]byte("timestamp,duration,num_gpus,cluster\n0001-01-01 00:00:00,1e-7,1,a\n9999-12-31 23:59:59.999,1e12,1048576,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, ReadPhilly, data, true) })
}

func FuzzReadBrigade(f *testing.F) {
	addFixtures(f, "brigade")
	f.Add([]byte("name,submit_s,duration_s,gpus,deps\na,0,1,1,b;c\nb,0,1,1,c\nc,0,1,1,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, ReadBrigade, data, false) })
}

func FuzzReadSWF(f *testing.F) {
	addFixtures(f, "swf")
	f.Add([]byte("; MaxProcs: 8\n1 0 -1 1e-7 1 -1 -1 1048576 1e12 -1 5 -1 -1 -1 -1 -1 -1 -1\n2 1e12 -1 1e12 -1 0.5 0 -1 -1 -1 0 9223372036854775807 1 1 1 1 1 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, ReadSWF, data, true) })
}

func FuzzReadOpenB(f *testing.F) {
	addFixtures(f, "openb")
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, ReadOpenB, data, true) })
}

func FuzzReadTenants(f *testing.F) {
	addFixtures(f, "tenants")
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadTenants(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			return
		}
		if err := checkTenantList(ts, ""); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzReadPollux(f *testing.F) {
	addFixtures(f, "pollux")
	f.Add([]byte("name,time,application,num_replicas,batch_size\na,0,x,1048576,1\nb,1e12,y,1,1048576\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, ReadPollux, data, false) })
}
