package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if intended, run go test ./report -update and review the diff\ngot:\n%s", name, got)
	}
}

// fixture is two policies over six jobs of two tenants, with a timeline.
func fixture() *Data {
	var sums []results.Summary
	var jobs [][]results.JobRecord
	var tls []*results.Timeline
	tenants := []policies.Tenant{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}}
	for _, pol := range []string{"fcfs", "sjf"} {
		js := fixtureJobs(pol)
		tl := results.NewTimeline(hwmodel.Hour, 4000)
		for i, j := range js {
			tl.Observe(j.Submit, results.State{Queued: i % 2, Running: 1, AllocatedMilli: 1000 * int64(1+i%4)})
		}
		tl.Close(8 * hwmodel.Hour)
		sums = append(sums, results.Summarize(results.RunInput{Policy: pol, TotalGPUs: 4, Tenants: tenants, Jobs: js, Timeline: tl}))
		jobs = append(jobs, js)
		tls = append(tls, tl)
	}
	return FromRecords(sums, jobs, tls)
}

func TestWritePlotsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := WritePlots(a, fixture()); err != nil {
		t.Fatal(err)
	}
	if err := WritePlots(b, fixture()); err != nil {
		t.Fatal(err)
	}
	for _, name := range FigureNames {
		for _, ext := range []string{".png", ".svg"} {
			x, err := os.ReadFile(filepath.Join(a, name+ext))
			if err != nil {
				t.Fatal(err)
			}
			y, err := os.ReadFile(filepath.Join(b, name+ext))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x, y) {
				t.Errorf("%s%s differs between two draws of the same data", name, ext)
			}
			if ext == ".svg" && !bytes.Contains(x, []byte("@font-face")) {
				t.Errorf("%s.svg does not embed its fonts", name)
			}
			if ext == ".png" && !bytes.HasPrefix(x, []byte("\x89PNG")) {
				t.Errorf("%s.png is not a PNG", name)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(a, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestLoadAndHTML(t *testing.T) {
	d := fixture()
	dir := t.TempDir()
	if err := results.WriteSummaryJSON(filepath.Join(dir, "summary.json"), d.Summaries); err != nil {
		t.Fatal(err)
	}
	// jobs.csv through the results writer, so Load reads what sim writes.
	var pj []results.PolicyJobs
	for _, p := range []string{"fcfs", "sjf"} {
		pj = append(pj, results.PolicyJobs{Policy: p, Jobs: fixtureJobs(p)})
	}
	if err := results.WriteJobsCSV(filepath.Join(dir, "jobs.csv"), pj); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Policies {
		if len(got.Policies[i].Jobs) != len(d.Policies[i].Jobs) {
			t.Fatalf("policy %d: %d jobs loaded, want %d", i, len(got.Policies[i].Jobs), len(d.Policies[i].Jobs))
		}
		for k, j := range got.Policies[i].Jobs {
			if j != d.Policies[i].Jobs[k] {
				t.Errorf("policy %d job %d: loaded %+v, want %+v", i, k, j, d.Policies[i].Jobs[k])
			}
		}
	}

	// Without run.json: the page says so.
	var buf bytes.Buffer
	if err := WriteHTML(&buf, dir); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<svg"); n != len(FigureNames) {
		t.Errorf("%d inline SVGs, want %d", n, len(FigureNames))
	}
	for _, bad := range []string{`src="http`, `href="http`, "<?xml", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must open with no network", bad)
		}
	}
	if n := strings.Count(page, "@font-face"); n != 1 {
		t.Errorf("page embeds %d fonts, want the one family the plots use, once", n)
	}
	if !strings.Contains(page, "No run.json") {
		t.Error("page does not say run.json is missing")
	}
	// With run.json: its keys appear as terms of a list, in the file's
	// order, the command line as one line, not as JSON.
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"version":"v0.test","seed":7,"command":["brigade","sim","--out","my runs"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := WriteReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page = string(b)
	for _, want := range []string{"<dt>version</dt><dd>v0.test</dd>", "<dt>command</dt><dd><code>brigade sim --out &#39;my runs&#39;</code></dd>", `id="summary"`, `id="tenants"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "[&#34;brigade&#34;") {
		t.Error("the command is shown as raw JSON")
	}
	if v, c := strings.Index(page, "<dt>version</dt>"), strings.Index(page, "<dt>command</dt>"); v > c {
		t.Error("run.json keys are not in the file's order")
	}
}

func fixtureJobs(policy string) []results.JobRecord {
	k := map[string]int{"fcfs": 0, "sjf": 1}[policy]
	var js []results.JobRecord
	for i := range 6 {
		wait := hwmodel.Time(i*(k+1)) * 10 * hwmodel.Minute
		submit := hwmodel.Time(i) * hwmodel.Hour
		js = append(js, results.JobRecord{
			ID: int32(i), Tenant: []string{"a", "b"}[i%2], Priority: i % 3,
			Submit: submit, Ready: submit, Start: submit + wait, End: submit + wait + 2*hwmodel.Hour,
			Wait: wait, Run: 2 * hwmodel.Hour, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: results.Succeeded,
		})
	}
	return js
}

func TestCompareGolden(t *testing.T) {
	a := fixture().Summaries
	b := fixture().Summaries
	b[0].WaitS.Mean *= 1.5
	b[0].GPUUtilisation *= 1.05
	b[1].Starvation.StarvedJobs = 3
	b = append(b, results.Summary{Policy: "fair"})
	c := Compare("runs/a", a, "runs/b", b, 0.10)
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.golden.txt", buf.Bytes())
	found := map[string]Change{}
	for _, ch := range c.Changes {
		found[ch.Policy+" "+ch.Metric] = ch
	}
	if ch := found["fcfs wait_s.mean"]; !ch.Large || ch.Verdict != "worse" || ch.Rel < 0.499 || ch.Rel > 0.501 {
		t.Errorf("fcfs wait_s.mean: %+v, want a large worse move of +50%%", ch)
	}
	if ch := found["fcfs gpu_utilisation"]; ch.Large || ch.Verdict != "better" {
		t.Errorf("fcfs gpu_utilisation: %+v, want a small better move", ch)
	}
	if len(c.OnlyB) != 1 || c.OnlyB[0] != "fair" {
		t.Errorf("OnlyB = %v, want [fair]", c.OnlyB)
	}
	buf.Reset()
	if err := c.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `class="large worse"`) {
		t.Error("HTML comparison does not mark the large worse move")
	}
}

// TestPlotsNoWait: when no job waited, every wait is drawn at 1 s; the log
// axis must still have a sane range (it once looped without end).
func TestPlotsNoWait(t *testing.T) {
	d := fixture()
	for i := range d.Policies {
		for k := range d.Policies[i].Jobs {
			d.Policies[i].Jobs[k].WaitS = 0
		}
	}
	if _, err := Figures(&Data{}); err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := figs[0].SVG(); err != nil {
		t.Fatal(err)
	}
}

// TestLoadErrorNamesTheRecordsLine: a bad cell after a quoted cell that
// spans lines is reported at its own line of the file, not at its record
// count.
func TestLoadErrorNamesTheRecordsLine(t *testing.T) {
	d := fixture()
	dir := t.TempDir()
	if err := results.WriteSummaryJSON(filepath.Join(dir, "summary.json"), d.Summaries); err != nil {
		t.Fatal(err)
	}
	jobs := "policy,tenant,wait_s,jct_s,submit_s\n" +
		"fcfs,\"two\nlines\",1,2,3\n" +
		"fcfs,a,x,2,3\n"
	if err := os.WriteFile(filepath.Join(dir, "jobs.csv"), []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "jobs.csv:4: column wait_s") {
		t.Fatalf("Load: %v; want the error at jobs.csv:4, column wait_s", err)
	}
}
