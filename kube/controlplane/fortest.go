package controlplane

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// coldBuildBudget is how long a test must have left to build the binaries
// itself: the cold build takes about a quarter of an hour on 2 busy cores.
const coldBuildBudget = 45 * time.Minute

// ForTest starts a control plane for one test and stops it (and removes
// its folder) when the test ends. If the binaries are not built yet, it
// builds them only when the test's -timeout leaves room; otherwise it
// fails, saying how to build them once for the machine.
func ForTest(t testing.TB) *ControlPlane {
	t.Helper()
	return ForTestWith(t, Options{})
}

// ForTestWith is ForTest with options: extra kube-apiserver flags (an
// authorization mode, feature gates, API versions) or other KWOK stages.
// Its BinDir and Log are ForTest's own.
func ForTestWith(t testing.TB, o Options) *ControlPlane {
	t.Helper()
	ctx := context.Background()
	bin, ok, err := Cached(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if d, has := t.(interface{ Deadline() (time.Time, bool) }); has {
			if end, set := d.Deadline(); set && time.Until(end) < coldBuildBudget {
				t.Fatalf("controlplane: kube-apiserver, etcd and kwok are not built on this machine (%s);"+
					" build them once with scripts/k8s-control-plane.sh build (about 15 min on 2 cores),"+
					" or give go test -timeout 60m", bin)
			}
		}
		if bin, err = Binaries(ctx, os.Stderr); err != nil {
			t.Fatal(err)
		}
	}
	o.BinDir, o.Log = bin, testLog{t}
	cp, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range cp.procs {
				t.Logf("end of %s:\n%s", p.logPath, tail(p.logPath, 15))
			}
		}
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cp
}

// testLog sends progress lines to t.Log.
type testLog struct{ t testing.TB }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
