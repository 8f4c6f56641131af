package results

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// One H200 with 7 compute slices, hand-worked over 40 s:
//
//	[0, 10)  3 slices busy, a MIG request queued, 4 free slices in a free
//	         instance it does not fit (all fragmented)
//	[10, 30) 6 busy, nothing queued (free and fragmented not measured)
//	[30, 40) 0 busy, queued again, 7 free slices of which 3 fragmented
//
// ∫busy = 30 + 120 + 0 = 150, ∫total = 280: utilisation 150/280.
// ∫frag = 40 + 30 = 70, ∫free = 40 + 70 = 110: fragmentation 70/110.
func migTimeline() *Timeline {
	s := hwmodel.Second
	tl := NewTimeline(20*s, 1000)
	tl.Observe(0, State{Queued: 1, MIGSlices: 7, MIGBusySlices: 3, MIGFreeSlices: 4, MIGFragSlices: 4})
	tl.Observe(10*s, State{Running: 2, MIGSlices: 7, MIGBusySlices: 6})
	tl.Observe(30*s, State{Queued: 1, MIGSlices: 7, MIGFreeSlices: 7, MIGFragSlices: 3})
	tl.Close(40 * s)
	return tl
}

func TestTimelineMIGHandWorked(t *testing.T) {
	tl := migTimeline()
	ig := tl.Integrals()
	if ig.MIGSliceSeconds != 280 || ig.MIGBusySliceSeconds != 150 || ig.MIGFreeSliceSeconds != 110 || ig.MIGFragSliceSeconds != 70 {
		t.Fatalf("integrals %+v, want total 280, busy 150, free 110, frag 70 slice-seconds", ig)
	}
	b := tl.Buckets()
	if len(b) != 2 {
		t.Fatalf("%d buckets, want 2", len(b))
	}
	// Bucket [0, 20): busy 30 + 60 = 90 of 140; frag 40 of free 40.
	// Bucket [20, 40): busy 60 of 140; frag 30 of free 70.
	want := [][2]float64{{90.0 / 140, 1}, {60.0 / 140, 30.0 / 70}}
	for i, w := range want {
		if math.Abs(b[i].MIGSliceUtilisation-w[0]) > 1e-12 || math.Abs(b[i].MIGFragmentation-w[1]) > 1e-12 {
			t.Errorf("bucket %d: utilisation %v, fragmentation %v; want %v, %v", i, b[i].MIGSliceUtilisation, b[i].MIGFragmentation, w[0], w[1])
		}
	}
	if m := tl.Max(); m.MIGBusySlices != 6 || m.MIGSlices != 7 {
		t.Errorf("max %+v, want 6 busy of 7", m)
	}
}

func TestSummarizeMIG(t *testing.T) {
	s := Summarize(RunInput{
		Policy: "fcfs", TotalGPUs: 1, Timeline: migTimeline(),
		Jobs:                []JobRecord{{ID: 0, Submit: 0, Start: 0, End: 40 * hwmodel.Second, Run: 40 * hwmodel.Second, GPUs: 1, GPUMilli: 429, Attempts: 1, State: Succeeded, MIGProfile: "3g.71gb"}},
		MIGReconfigurations: 2, MIGReconfigGPUTime: 60 * hwmodel.Second,
	})
	if math.Abs(s.MIGSliceUtilisation-150.0/280) > 1e-12 || math.Abs(s.MIGFragmentation-70.0/110) > 1e-12 {
		t.Errorf("utilisation %v, fragmentation %v; want %v, %v", s.MIGSliceUtilisation, s.MIGFragmentation, 150.0/280, 70.0/110)
	}
	if s.MIGReconfigurations != 2 || s.MIGReconfigGPUS != 60 {
		t.Errorf("reconfigurations %d costing %v GPU-s, want 2 and 60", s.MIGReconfigurations, s.MIGReconfigGPUS)
	}
	// A MIG job's GPU-time is its instance's share: 0.429 GPU × 40 s.
	if got, want := s.Tenants[0].GPUHours, 0.429*40/3600; math.Abs(got-want) > 1e-12 {
		t.Errorf("tenant GPU-hours %v, want %v", got, want)
	}
	var b bytes.Buffer
	if err := FormatTable(&b, []Summary{s, Summarize(RunInput{Policy: "whole"})}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[0], "mig") || !strings.HasSuffix(lines[1], "util   frag   reconf") {
		t.Fatalf("table without the MIG columns:\n%s", b.String())
	}
	if !strings.HasSuffix(lines[2], "53.6%  63.6%  2") || !strings.HasSuffix(lines[3], "0.0%   0.0%   0") {
		t.Errorf("MIG columns wrong:\n%s", b.String())
	}
}

func TestFormatTableWithoutMIGHasNoMIGColumns(t *testing.T) {
	var b bytes.Buffer
	if err := FormatTable(&b, []Summary{Summarize(handInput())}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "mig") || strings.Contains(b.String(), "reconf") {
		t.Errorf("MIG columns on a run without MIG:\n%s", b.String())
	}
}
