package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

func TestDurationUnitAndSig3(t *testing.T) {
	for _, c := range []struct {
		top  float64
		want string
	}{{0, "s"}, {119, "s"}, {120, "min"}, {7199, "min"}, {7200, "h"}, {172799, "h"}, {172800, "d"}} {
		if got := durationUnit(c.top).Name; got != c.want {
			t.Errorf("durationUnit(%g) = %s, want %s", c.top, got, c.want)
		}
	}
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0"}, {1234.5, "1234"}, {12.34, "12.3"}, {1.234, "1.23"}, {0.01234, "0.0123"}, {0.5, "0.5"}, {-3.14159, "-3.14"}} {
		if got := sig3(c.x); got != c.want {
			t.Errorf("sig3(%g) = %q, want %q", c.x, got, c.want)
		}
	}
}

// TestSummaryTableUnits: each duration column has one unit, named in its
// header, and its cells are bare numbers in it, even when the policies'
// values span seconds to hours (the page once wrote "30s" above "3.1h" in
// one column).
func TestSummaryTableUnits(t *testing.T) {
	ss := fixture().Summaries
	ss[0].WaitS.P50, ss[1].WaitS.P50 = 30, 3.1*3600
	ss[0].WaitS.Mean, ss[1].WaitS.Mean = 90, 100
	tab := newSummaryTable(ss)
	// The full header of each column: its group and its name.
	header := map[string]int{}
	k, ci := 0, 0
	for _, g := range tab.Groups {
		if g.Single {
			header[g.Label] = k
			k++
			continue
		}
		for _, c := range tab.Columns[ci : ci+g.Span] {
			header[g.Label+" "+c] = k
			k++
		}
		ci += g.Span
	}
	if k != len(tab.Rows[0]) || ci != len(tab.Columns) {
		t.Fatalf("%d header cells for %d cells a row", k, len(tab.Rows[0]))
	}
	for name, want := range map[string][]string{
		"wait p50 (h)":   {"0.00833", "3.10"},
		"wait mean (s)":  {"90.0", "100"},
		"makespan (h)":   nil, // the fixture's makespan is 7.8 h and 8.7 h
		"wait p99 (min)": nil,
	} {
		i, ok := header[name]
		if !ok {
			t.Errorf("no column %q in %v", name, header)
			continue
		}
		for r, row := range tab.Rows {
			if _, err := strconv.ParseFloat(row[i], 64); err != nil {
				t.Errorf("%s, row %d: %q is not a bare number", name, r, row[i])
			}
			if want != nil && row[i] != want[r] {
				t.Errorf("%s, row %d: %q, want %q", name, r, row[i], want[r])
			}
		}
	}
}

// TestSummaryTableGolden: the page's summary table for the fixture, as
// HTML: two header rows (groups, then columns with their units) and one
// row per policy.
func TestSummaryTableGolden(t *testing.T) {
	page := htmlPage{Dir: "fixture", Summaries: fixture().Summaries, Summary: newSummaryTable(fixture().Summaries)}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, page); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	start, end := strings.Index(s, `<table id="summary">`), strings.Index(s, "</table></div>")
	if start < 0 || end < start {
		t.Fatalf("no summary table in\n%s", s)
	}
	golden(t, "summary-table.golden.html", []byte(s[start:end+len("</table>")]+"\n"))
}

// TestRunInfo: run.json as a definition list, whatever its keys: scalars
// as text, the command as a shell line, lists of scalars joined, lists of
// objects as tables, objects nested; hostile input is an error, never a
// panic.
func TestRunInfo(t *testing.T) {
	const runJSON = `{
  "schema_version": 5,
  "brigade_version": "v1.2.3",
  "seed": 42,
  "command": ["brigade", "live", "--jobs", "my jobs.yaml", "--name=<b>"],
  "inputs": [
    {"role": "jobs", "path": "my jobs.yaml", "embedded": false, "sha256": "ab12"},
    {"role": "cluster", "path": "local", "sha256": ""}
  ],
  "files": ["summary.json", "jobs.csv"],
  "empty": [],
  "live": {"policy": "fcfs", "gpus": [{"index": 0, "model": "H200"}], "note": null}
}`
	v, err := decodeJSON([]byte(runJSON))
	if err != nil {
		t.Fatal(err)
	}
	got := string(renderRunInfo(v))
	golden(t, "run-info.golden.html", []byte(got+"\n"))
	for _, want := range []string{
		"<dt>schema_version</dt><dd>5</dd>",
		`<code>brigade live --jobs &#39;my jobs.yaml&#39; &#39;--name=&lt;b&gt;&#39;</code>`,
		"<dd>summary.json, jobs.csv</dd>",
		"<th>role</th><th>path</th><th>embedded</th><th>sha256</th>",
		"<td>cluster</td><td>local</td><td>–</td><td>–</td>",
		`<dl class="nested"><dt>policy</dt><dd>fcfs</dd>`,
		"<dt>empty</dt><dd>none</dd>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered run.json lacks %q", want)
		}
	}
	for _, bad := range []string{"<b>", "{", "["} {
		if strings.Contains(got, bad) {
			t.Errorf("rendered run.json holds %q: raw JSON or unescaped text", bad)
		}
	}
	for _, in := range []string{``, `{`, `{"a":1}{"b":2}`, `[1,2]`, strings.Repeat("[", 100000) + strings.Repeat("]", 100000)} {
		v, err := decodeJSON([]byte(in))
		if err == nil && v.kind == 'o' {
			t.Errorf("%.20q: no error", in)
		}
	}
}
