package iteration

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Calibration from coefficients far off must find ones whose replay
// matches the measured requests: BLIS's rate-14 sample, whose times the
// shipped coefficients reproduce to the µs, so the fit has an exact
// answer to find.
func TestCalibrateRecoversMeasuredTimes(t *testing.T) {
	p, lat := qwenH100(t)
	reqs, err := ReadBLISTrace("testdata/blis/r14_head.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	reqs = reqs[:300]
	rep, err := Replay(p, lat, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for k := range reqs {
		reqs[k].First, reqs[k].Last = rep.Reqs[k].First, rep.Reqs[k].First+rep.Reqs[k].ITLSum
	}
	a, _ := ReadArch("testdata/blis/qwen3-14b-config.json")
	gpus, _ := ReadGPUs("testdata/blis/hardware_config.json")
	truth := *lat.Coeffs()
	start := truth
	start.Alpha[0] *= 0.7
	start.Alpha[2] *= 1
	for k, f := range []float64{1.3, 1, 1, 1, 1, 0.7, 1.4, 1, 1, 1.25, 1} {
		start.Beta[k] *= f
	}
	cal, err := Calibrate(p, a, gpus["H100"], 1, start, reqs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, %d replays; RMS relative error %.4f -> %.5f; fitted %v", cal.Used, cal.Replays, cal.ErrBefore, cal.ErrAfter, cal.Fitted)
	if cal.ErrBefore < 0.1 {
		t.Fatalf("the starting coefficients are only %.3f off: the test would not show a fit", cal.ErrBefore)
	}
	if cal.ErrAfter > 0.005 {
		t.Errorf("after calibration the RMS relative error is %.4f; want ≤ 0.005", cal.ErrAfter)
	}
	want, got := cal.Measured.Slice(), cal.After.Slice()
	for k, name := range StatNames {
		if math.Abs(got[k]/want[k]-1) > 0.01 {
			t.Errorf("%s: calibrated replay %.3f ms, measured %.3f ms: want within 1 %%", name, got[k], want[k])
		}
	}
	// The fitted file reads back to the same coefficients.
	var buf bytes.Buffer
	if err := WriteCoeffs(&buf, cal.Fitted); err != nil {
		t.Fatal(err)
	}
	back, err := ParseCoeffs(buf.Bytes(), "fitted.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	for k := range back.Beta {
		if math.Abs(back.Beta[k]-cal.Fitted.Beta[k]) > 1e-9*math.Max(1, math.Abs(cal.Fitted.Beta[k])) {
			t.Errorf("beta %d: wrote %g, read %g", k, cal.Fitted.Beta[k], back.Beta[k])
		}
	}
}

func TestCalibrateWantsMeasuredTimes(t *testing.T) {
	p, lat := qwenH100(t)
	a, _ := ReadArch("testdata/blis/qwen3-14b-config.json")
	gpus, _ := ReadGPUs("testdata/blis/hardware_config.json")
	reqs := []TraceReq{{Arrive: 0, In: 100, Out: 10, First: -1, Last: -1}}
	_, err := Calibrate(p, a, gpus["H100"], 1, *lat.Coeffs(), reqs)
	if err == nil || !strings.Contains(err.Error(), "first_chunk_time_us") {
		t.Fatalf("got %v; want an error naming the missing columns", err)
	}
}
