package workloads

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestReadSWFGood reads a hand-made trace with a record of every kind
// (testdata/swf/good.swf). The first record kept is job 1, submitted at
// 100 s, so every submit time is less 100. Kept, in submit order:
//   - line 5, job 1: 8 processors requested, run 3600 s, requested 7200 s
//     (the estimate), user 3, completed;
//   - line 6, job 2: req_procs -1, so the 4 allocated; no requested time,
//     so no estimate; status 0, so it ends Failed;
//   - line 10, job 5: user -1 ("unknown"); a fractional run time; req_time
//     0 is no estimate; preceding job 4 and think time 30 are ignored;
//   - line 14, job 9: cancelled (status 5) after running 500 s, so it ends
//     Failed; its estimate, 400 s, is below its run time and kept as given;
//   - line 17, job 10: tab-separated with a CR line end; run "1e2" s.
//
// Skipped: job 3 (line 7, cancelled, run -1), job 4 (line 8, run 0), job 6
// (line 11, run -1), job 7 (line 12, submit -1), job 8 (line 13, no
// processor count) and the two parts of job 9 (lines 15 and 16, status 2
// and 3).
func TestReadSWFGood(t *testing.T) {
	const p = "testdata/swf/good.swf"
	w := mustRead(t, p, "swf")
	compareJobs(t, w, []brief{
		{Name: "swf-1", Tenant: "user-3", Submit: 0, Duration: 3600, Estimate: 7200, Req: whole(8), Source: p + ":5"},
		{Name: "swf-2", Tenant: "user-7", Submit: 50, Duration: 60, Req: whole(4), Failed: 1, Source: p + ":6"},
		{Name: "swf-5", Tenant: "unknown", Submit: 100, Duration: 90.5, Req: whole(2), Source: p + ":10"},
		{Name: "swf-9", Tenant: "user-7", Submit: 130, Duration: 500, Estimate: 400, Req: whole(16), Failed: 1, Source: p + ":14"},
		{Name: "swf-10", Tenant: "user-12", Submit: 140, Duration: 100, Estimate: 3600, Req: whole(1), Source: p + ":17"},
	}, []Tenant{{"user-3", 1}, {"user-7", 1}, {"unknown", 1}, {"user-12", 1}})
	want := []Skip{
		{2, 15, swfSkipWhy[swfSkipPart]},
		{1, 7, swfSkipWhy[swfSkipCancelled]},
		{1, 11, swfSkipWhy[swfSkipRunUnknown]},
		{1, 8, swfSkipWhy[swfSkipRunZero]},
		{1, 12, swfSkipWhy[swfSkipSubmitUnknown]},
		{1, 13, swfSkipWhy[swfSkipNoProcs]},
	}
	if !reflect.DeepEqual(w.Skipped, want) {
		t.Errorf("skipped %+v,\nwant %+v", w.Skipped, want)
	}
	if got := SkipText(w.Skipped[:1]); got != "2 records skipped: part of a checkpointed or swapped job (status 2, 3 or 4), which the job's own record covers whole, the first on line 15" {
		t.Errorf("SkipText: %q", got)
	}
}

func TestReadSWFBad(t *testing.T) {
	runBadCases(t, "swf", []badCase{
		{"bad-fields.swf", 3, "", []string{"want 18 whitespace-separated fields (an SWF record), found 17"}},
		{"bad-many-fields.swf", 2, "", []string{"want 18", "found 20"}},
		{"bad-number.swf", 2, "run", []string{"want a number", `"12O"`, "(field 4 of 18)"}},
		// A field the reader ignores must still be a number.
		{"bad-ignored-number.swf", 2, "partition", []string{"want a number", `"x1"`, "(field 16 of 18)"}},
		{"bad-negative-submit.swf", 3, "submit", []string{"want a submit time in seconds, 0 to 1e+12, or -1 for unknown; found -5"}},
		{"bad-huge-run.swf", 2, "run", []string{"0 to 1e+12", "found 2e12"}},
		{"bad-procs.swf", 2, "req_procs", []string{"want a processor count, an integer in 0..1048576, or -1 for unknown; found 1.5"}},
		{"bad-status.swf", 2, "status", []string{"an integer in 0..5, or -1 for unknown; found 7", "(field 11 of 18)"}},
		{"bad-user.swf", 2, "user", []string{"an integer >= 0, or -1 for unknown; found -3"}},
		{"bad-job-number.swf", 2, "job", []string{"want a job number, an integer >= 0; found -1"}},
		{"bad-duplicate.swf", 3, "name", []string{`"swf-1" is already used by the job at testdata/swf/bad-duplicate.swf:2`}},
		{"bad-csv.swf", 1, "", []string{"want 18 whitespace-separated fields", "found 1"}},
		{"bad-no-records.swf", 0, "", []string{"no jobs after the header"}},
		{"bad-all-skipped.swf", 0, "", []string{"no jobs after the header (1 record skipped: cancelled before starting", "the first on line 3; 1 record skipped: run time 0", "the first on line 2)"}},
	})
}

// TestReadSWFLines: white space, blank and comment lines, a byte-order
// mark, and the errors of lines over the limit or a broken input.
func TestReadSWFLines(t *testing.T) {
	const rec = "1 0 -1 10 2 -1 -1 -1 -1 -1 1 4 -1 -1 -1 -1 -1 -1"
	for _, c := range []struct {
		name, input string
		jobs        int    // jobs read; 0 for an error
		line        int    // the error's line
		msg         string // in the error
	}{
		{"plain", rec + "\n", 1, 0, ""},
		{"no final newline", rec, 1, 0, ""},
		{"byte-order mark", "\ufeff" + rec + "\n", 1, 0, ""},
		{"byte-order mark on a comment", "\ufeff; Version: 2.2\n" + rec + "\n", 1, 0, ""},
		{"leading white space and CRLF", "\r\n \t; x\r\n\t " + rec + " \r\n\r\n", 1, 0, ""},
		{"comment after blanks", "\n\n   ; Note: x\n" + rec + "\n", 1, 0, ""},
		{"non-ASCII space is no separator", strings.Replace(rec, " ", "\u00a0", 1) + "\n", 0, 1, "found 17"},
		{"long line", "; x\n" + strings.Repeat("9", 1<<20) + "\n", 0, 2, "want a line of at most 1048576 bytes"},
		{"long comment", ";" + strings.Repeat(" ", 1<<20) + "\n" + rec + "\n", 0, 1, "want a line of at most 1048576 bytes"},
		{"empty", "", 0, 0, "no jobs after the header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := ReadSWF(strings.NewReader(c.input), "lines.swf")
			if c.jobs > 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(w.Jobs) != c.jobs || w.Jobs[0].Req.GPUs != 2 || w.Jobs[0].Tenant != "user-4" {
					t.Fatalf("got %+v", w.Jobs)
				}
				return
			}
			checkParseError(t, err, "lines.swf", badCase{line: c.line, msg: []string{c.msg}})
		})
	}
	// A gzip stream cut short: an error after the last good line.
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(strings.Repeat(rec+"\n", 1000)))
	z.Close()
	zr, err := gzip.NewReader(bytes.NewReader(b.Bytes()[:b.Len()/2]))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadSWF(zr, "cut.swf.gz")
	checkParseError(t, err, "cut.swf.gz", badCase{msg: []string{"reading the input after line"}})
}

// TestReadSWFSample reads the first 60 lines of the NASA iPSC/860 trace
// (testdata/swf/nasa-ipsc-head.swf, see its README): 32 header lines and
// 28 records, all kept. Counted from the file with awk: processors 1 ×8,
// 2 ×1, 4 ×4, 16 ×1, 32 ×9, 128 ×5; users in order of first record 1, 2,
// 4, 5, 6, 7, 8; the last submit 32463 s (the first is 0). GPU-seconds:
// the five 128-processor jobs run 1451+3726+1067+10927+2927 = 20098 s,
// 2,572,544 GPU-s, and the other 23 jobs 66,938 GPU-s: 2,639,482 in all.
// Read gzipped it gives the same jobs, and is detected as SWF either way.
func TestReadSWFSample(t *testing.T) {
	const p = "testdata/swf/nasa-ipsc-head.swf"
	w := mustRead(t, p, AutoFormat)
	if len(w.Jobs) != 28 || w.Skipped != nil {
		t.Fatalf("%d jobs, skipped %v; want 28 jobs and none skipped", len(w.Jobs), w.Skipped)
	}
	byGPUs := map[int]int{}
	var gpuSeconds int64
	for _, j := range w.Jobs {
		byGPUs[j.Req.GPUs]++
		gpuSeconds += int64(j.Req.GPUs) * int64(j.Duration/hwmodel.Second)
		if j.Estimate != 0 || j.FailedAttempts != 0 {
			t.Errorf("%s: estimate %v, failed %d; the trace has neither", j.Name, j.Estimate, j.FailedAttempts)
		}
	}
	if want := map[int]int{1: 8, 2: 1, 4: 4, 16: 1, 32: 9, 128: 5}; !reflect.DeepEqual(byGPUs, want) {
		t.Errorf("jobs by GPUs %v, want %v", byGPUs, want)
	}
	if gpuSeconds != 2639482 {
		t.Errorf("%d GPU-seconds, want 2,639,482", gpuSeconds)
	}
	var tenants []string
	for _, tn := range w.Tenants {
		tenants = append(tenants, tn.Name)
	}
	if want := []string{"user-1", "user-2", "user-4", "user-5", "user-6", "user-7", "user-8"}; !reflect.DeepEqual(tenants, want) {
		t.Errorf("tenants %v, want %v", tenants, want)
	}
	first, last := w.Jobs[0], w.Jobs[len(w.Jobs)-1]
	if first.Name != "swf-1" || first.Duration != 1451*hwmodel.Second || first.Source != p+":33" {
		t.Errorf("first job %+v", first)
	}
	if last.Name != "swf-97" || last.Submit != 32463*hwmodel.Second {
		t.Errorf("last job %s at %v, want swf-97 at 32463 s", last.Name, last.Submit)
	}

	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(raw)
	z.Close()
	gz := filepath.Join(t.TempDir(), "head.swf.gz")
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := DetectFormat(gz); f != "swf" || err != nil {
		t.Fatalf("detected %q, %v", f, err)
	}
	wz := mustRead(t, gz, AutoFormat)
	if !reflect.DeepEqual(briefs(wz)[0].Req, briefs(w)[0].Req) || len(wz.Jobs) != len(w.Jobs) || wz.Jobs[27].Name != last.Name {
		t.Errorf("gzipped read differs")
	}
}

// TestRealSWF reads both shipped Parallel Workloads Archive traces whole.
// The counts were taken from the files with awk: NASA iPSC/860 has 18,239
// records, 173 of them with run time 0 (status -1 throughout); LCG has
// 188,041, 521 with run time 0, and every record has a requested time.
func TestRealSWF(t *testing.T) {
	for _, c := range []struct {
		file                       string
		jobs, zero, users, maxGPUs int
		estimates                  int
		lastSubmit, gpuSeconds     int64
	}{
		{"pwa-swf/NASA-iPSC-1993-3.1-cln.swf.gz", 18066, 173, 69, 128, 0, 7948936, 474238015},
		{"pwa-swf/LCG.swf.gz", 187520, 521, 216, 1, 187520, 950392, 1502530759},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			w := mustRead(t, tracePath(t, c.file), AutoFormat)
			if len(w.Jobs) != c.jobs {
				t.Errorf("%d jobs, want %d", len(w.Jobs), c.jobs)
			}
			if len(w.Skipped) != 1 || w.Skipped[0].Count != c.zero || w.Skipped[0].Why != swfSkipWhy[swfSkipRunZero] {
				t.Errorf("skipped %+v, want %d with run time 0", w.Skipped, c.zero)
			}
			if len(w.Tenants) != c.users {
				t.Errorf("%d tenants, want %d users", len(w.Tenants), c.users)
			}
			var maxGPUs, estimates int
			var gpuSeconds int64
			for _, j := range w.Jobs {
				maxGPUs = max(maxGPUs, j.Req.GPUs)
				gpuSeconds += int64(j.Req.GPUs) * int64(j.Duration/hwmodel.Second)
				if j.Estimate > 0 {
					estimates++
				}
			}
			if maxGPUs != c.maxGPUs || estimates != c.estimates || gpuSeconds != c.gpuSeconds {
				t.Errorf("max GPUs %d, estimates %d, GPU-seconds %d; want %d, %d, %d", maxGPUs, estimates, gpuSeconds, c.maxGPUs, c.estimates, c.gpuSeconds)
			}
			if got := w.Jobs[len(w.Jobs)-1].Submit; got != hwmodel.Time(c.lastSubmit)*hwmodel.Second {
				t.Errorf("last submit %g s, want %d s", got.Seconds(), c.lastSubmit)
			}
		})
	}
}
