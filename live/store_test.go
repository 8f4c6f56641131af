package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A truncated state file is an error naming the file, not a crash.
func TestLiveTruncatedStateFile(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 1)
	d.Submit([]JobSpec{{Name: "a", Command: "true"}, {Name: "b", Command: "true"}})
	run(t, d)
	d.Close()
	whole, err := os.ReadFile(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{100, 4096, 4097, 8192, 12288, len(whole) / 2, len(whole) - 4096, len(whole) - 1} {
		p := filepath.Join(dir, fmt.Sprintf("cut%d.db", n))
		if err := os.WriteFile(p, whole[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		// Only the free tail of the file may be cut without loss: then
		// every record reads back; otherwise the error names the file.
		recs, err := ReadState(p)
		switch {
		case err == nil && len(recs) != 2:
			t.Errorf("%d of %d bytes: ReadState read %d records and no error", n, len(whole), len(recs))
		case err != nil && (!strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "damaged")):
			t.Errorf("%d of %d bytes: ReadState: %v; want an error naming the file", n, len(whole), err)
		}
		t0 := time.Now()
		d, err := Open(Config{GPUs: FakeGPUs(1), Policy: "fcfs", State: p, LogDir: filepath.Join(dir, "logs")})
		switch {
		case err == nil:
			if len(d.recs) != 2 {
				t.Errorf("%d of %d bytes: Open read %d records and no error", n, len(whole), len(d.recs))
			}
			d.Close()
		case !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "damaged"):
			t.Errorf("%d of %d bytes: Open: %v; want an error naming the file", n, len(whole), err)
		}
		if time.Since(t0) > time.Second {
			t.Errorf("%d of %d bytes: Open took %v (a lock left behind?)", n, len(whole), time.Since(t0))
		}
		t.Logf("%d of %d bytes: %v", n, len(whole), err)
	}
	// Garbage over a page the database uses: an error, not a crash.
	for pg := 2; pg*4096 < len(whole); pg++ {
		bad := append([]byte(nil), whole...)
		for i := pg * 4096; i < (pg+1)*4096; i++ {
			bad[i] = 0xab
		}
		p := filepath.Join(dir, fmt.Sprintf("bad%d.db", pg))
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadState(p)
		if err == nil && len(recs) != 2 {
			t.Errorf("page %d garbled: ReadState read %d records and no error", pg, len(recs))
		}
		t.Logf("page %d garbled: %v", pg, err)
	}
}
