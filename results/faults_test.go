package results

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestFaultMetricsHandWorked: a 4-GPU training job runs 10 h, is hit twice
// (1 h lost in all, 20 min of checkpoints) and succeeds; a 1-GPU job is hit
// once and fails for good (30 min lost of 2 h); a half-GPU job runs 1 h
// untouched.
func TestFaultMetricsHandWorked(t *testing.T) {
	h := hwmodel.Hour
	jobs := []JobRecord{
		{ID: 0, GPUs: 4, GPUMilli: 1000, Run: 10 * h, End: 12 * h, Attempts: 3, State: Succeeded,
			HardwareFailures: 2, Lost: h, Checkpoint: 20 * hwmodel.Minute},
		{ID: 1, GPUs: 1, GPUMilli: 1000, Run: 2 * h, End: 3 * h, Attempts: 1, State: Failed,
			HardwareFailures: 1, Lost: 30 * hwmodel.Minute},
		{ID: 2, GPUs: 1, GPUMilli: 500, Run: h, End: h, Attempts: 1, State: Succeeded},
	}
	faults := []FaultEvent{
		{At: h, Detected: h + 30*hwmodel.Second, JobsHit: 2},
		{At: 5 * h, Detected: 5*h + 10*hwmodel.Second, JobsHit: 1},
		{At: 6 * h, Detected: 6*h + 20*hwmodel.Second, JobsHit: 0},
		{At: 7 * h, Detected: -1}, // the run ended first: no delay
	}
	s := Summarize(RunInput{Policy: "p", TotalGPUs: 8, Jobs: jobs, Faults: faults})
	want := FaultSummary{Count: 4, JobsHit: 3, DetectionDelayS: MeanMax{Mean: 20, Max: 30}}
	if s.Faults != want {
		t.Errorf("faults = %+v, want %+v", s.Faults, want)
	}
	// Job 0 was retried twice; job 1's one failure ended it for good.
	if s.Retries != 2 || s.JobsFailedHardware != 1 {
		t.Errorf("retries %d, failed by hardware %d; want 2, 1", s.Retries, s.JobsFailedHardware)
	}
	// Lost: 4 × 1 h + 1 × 0.5 h = 4.5 GPU-h; checkpoints 4 × 1/3 h.
	if !fnear(s.LostGPUHours, 4.5) || !fnear(s.CheckpointGPUHours, 4.0/3) {
		t.Errorf("lost %v, checkpoint %v GPU-h; want 4.5, 1.3333", s.LostGPUHours, s.CheckpointGPUHours)
	}
	// Allocated: 40 + 2 + 0.5 = 42.5 GPU-h; useful 42.5 − 4.5 − 4/3.
	if g := (42.5 - 4.5 - 4.0/3) / 42.5; !fnear(s.Goodput, g) {
		t.Errorf("goodput %v, want %v", s.Goodput, g)
	}
	var buf bytes.Buffer
	if err := FormatTable(&buf, []Summary{s}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[0], "faults") || !strings.Contains(lines[1], "lost") || !strings.Contains(lines[1], "goodput") ||
		!strings.HasSuffix(strings.TrimSpace(lines[2]), "4.50  86.3%") {
		t.Errorf("table:\n%s", buf.String())
	}

	// Without faults: no fault keys set, goodput 1, no fault columns.
	s = Summarize(RunInput{Policy: "p", TotalGPUs: 8, Jobs: jobs[2:]})
	if s.Faults != (FaultSummary{}) || s.Retries != 0 || s.LostGPUHours != 0 || s.Goodput != 1 {
		t.Errorf("no faults: %+v retries %d lost %v goodput %v", s.Faults, s.Retries, s.LostGPUHours, s.Goodput)
	}
	buf.Reset()
	FormatTable(&buf, []Summary{s})
	if strings.Contains(buf.String(), "goodput") {
		t.Errorf("fault columns without faults:\n%s", buf.String())
	}
}

func fnear(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestTimelineDown: 8 GPUs down for the first half of a 20 s bucket, 0
// after: down_gpus is 4 in the bucket, down GPU-hours 80 GPU-s.
func TestTimelineDown(t *testing.T) {
	tl := NewTimeline(20*hwmodel.Second, 16000)
	tl.Observe(0, State{DownMilli: 8000})
	tl.Observe(10*hwmodel.Second, State{Running: 1, AllocatedMilli: 1000})
	tl.Close(20 * hwmodel.Second)
	b := tl.Buckets()
	if len(b) != 1 || b[0].DownGPUs != 4 {
		t.Fatalf("buckets %+v, want one with DownGPUs 4", b)
	}
	if ig := tl.Integrals(); ig.DownMilliGPUSeconds != 80000 || tl.Max().DownMilli != 8000 {
		t.Errorf("integral %v milli-GPU-s, max %d", ig.DownMilliGPUSeconds, tl.Max().DownMilli)
	}
	s := Summarize(RunInput{TotalGPUs: 16, Timeline: tl, Jobs: []JobRecord{{GPUs: 1, GPUMilli: 1000, Run: 10 * hwmodel.Second, End: 20 * hwmodel.Second, Attempts: 1, State: Succeeded}}})
	if !fnear(s.DownGPUHours, 80.0/3600) {
		t.Errorf("down GPU-h %v", s.DownGPUHours)
	}
}
