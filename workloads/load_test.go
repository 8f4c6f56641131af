package workloads

import (
	"math"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestOfferedLoadAndScaleToLoad(t *testing.T) {
	s := hwmodel.Second
	w := &Workload{Jobs: []Job{
		{Name: "a", Submit: 0, Duration: 100 * s, Req: hwmodel.Request{GPUs: 2, GPUMilli: 1000}},
		{Name: "b", Submit: 50 * s, Duration: 100 * s, Req: hwmodel.Request{GPUs: 1, GPUMilli: 500}},
		{Name: "c", Submit: 100 * s, Duration: 50 * s, Req: hwmodel.Request{GPUs: 0}},
	}}
	// (2×100 + 0.5×100) GPU-s over a 100 s window on 5 GPUs = 0.5.
	if got := w.OfferedLoad(5); math.Abs(got-0.5) > 1e-12 {
		t.Fatalf("OfferedLoad = %v, want 0.5", got)
	}
	if err := w.ScaleToLoad(5, 1.0); err != nil {
		t.Fatal(err)
	}
	if w.Jobs[1].Submit != 25*s || w.Jobs[2].Submit != 50*s {
		t.Fatalf("submits after scaling to load 1: %v %v, want 25 s and 50 s", w.Jobs[1].Submit, w.Jobs[2].Submit)
	}
	if got := w.OfferedLoad(5); math.Abs(got-1) > 1e-12 {
		t.Fatalf("OfferedLoad after scaling = %v, want 1", got)
	}
	if err := w.ScaleToLoad(5, 0); err == nil {
		t.Fatal("ScaleToLoad(0) succeeded, want an error")
	}
	if err := (&Workload{Jobs: w.Jobs[:1]}).ScaleToLoad(5, 1); err == nil {
		t.Fatal("scaling a one-job workload succeeded, want an error")
	}
}
