package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/results"
)

var (
	xmlProlog = regexp.MustCompile(`^\s*<\?xml[^>]*\?>\s*(<!DOCTYPE[^>]*>\s*)?`)
	fontFace  = regexp.MustCompile(`@font-face\{\s*font-family:"([^"]*)";[^}]*\}`)
)

// dedupeFonts drops from svg each @font-face of a family that an earlier
// inline SVG of the page already embeds: a <style> inside inline SVG applies
// to the whole document, so one copy serves every plot, and the page is
// about a fifth of the size.
func dedupeFonts(svg []byte, seen map[string]bool) []byte {
	return fontFace.ReplaceAllFunc(svg, func(m []byte) []byte {
		family := string(fontFace.FindSubmatch(m)[1])
		if seen[family] {
			return nil
		}
		seen[family] = true
		return m
	})
}

type htmlFigure struct {
	Name, Title string
	SVG         template.HTML
}

type htmlPage struct {
	Dir       string
	Run       template.HTML // run.json as a definition list; "" without one
	Summaries []results.Summary
	Summary   summaryTable
	Tenants   []string
	Figures   []htmlFigure
}

// WriteHTML writes the self-contained report of the results folder dir to
// w: the run's metadata (run.json, if present), the summary tables
// (summary.json) and every plot inline as SVG, drawn from the folder's
// files (Load). It loads nothing from the network.
func WriteHTML(w io.Writer, dir string) error {
	d, err := Load(dir)
	if err != nil {
		return err
	}
	run, err := readRunJSON(dir)
	if err != nil {
		return err
	}
	figs, err := Figures(d)
	if err != nil {
		return err
	}
	page := htmlPage{Dir: filepath.Base(filepath.Clean(dir)), Run: run, Summaries: d.Summaries,
		Summary: newSummaryTable(d.Summaries), Tenants: tenantOrder(d)}
	seen := map[string]bool{}
	for _, f := range figs {
		b, err := f.SVG()
		if err != nil {
			return err
		}
		b = dedupeFonts(xmlProlog.ReplaceAll(b, nil), seen)
		page.Figures = append(page.Figures, htmlFigure{Name: f.Name, Title: f.Title, SVG: template.HTML(b)}) // #nosec: our own renderer's output
	}
	return pageTemplate.Execute(w, page)
}

// WriteReport writes dir/report.html atomically and returns its path.
func WriteReport(dir string) (string, error) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "report.html")
	return path, results.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

var funcs = template.FuncMap{
	"share": func(s results.Summary, tenant string) string {
		for _, t := range s.Tenants {
			if t.Tenant == tenant {
				return fmt.Sprintf("%.1f", 100*t.Share)
			}
		}
		return "–"
	},
	"fair": func(ss []results.Summary, tenant string) string {
		if len(ss) > 0 {
			for _, t := range ss[0].Tenants {
				if t.Tenant == tenant {
					return fmt.Sprintf("%.1f", 100*t.FairShare)
				}
			}
		}
		return "–"
	},
}

// A durUnit is how a column of durations is written: seconds divided by
// Div, named Name in the column's header.
type durUnit struct {
	Div  float64
	Name string
}

// durationUnit picks the unit for a column of durations whose largest is
// top seconds: the largest unit in which it is at least 2 (120 s is 2 min,
// 2 h, 2 d), so every cell of the column has the same unit and a few
// significant digits.
func durationUnit(top float64) durUnit {
	switch {
	case top >= 2*86400:
		return durUnit{86400, "d"}
	case top >= 2*3600:
		return durUnit{3600, "h"}
	case top >= 120:
		return durUnit{60, "min"}
	}
	return durUnit{1, "s"}
}

// sig3 writes x with three significant digits and no exponent (1234 →
// "1234", 12.34 → "12.3", 0.01234 → "0.0123").
func sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case x == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// summaryTable is the page's summary table: a header of column groups
// (Groups) over column names (Columns), then one row per policy. Each
// duration column has one unit, chosen from its largest value and named in
// its header, so that no column mixes units.
type summaryTable struct {
	Groups  []headGroup
	Columns []string
	Rows    [][]string
}

// headGroup spans Span columns; a group of one column (Single) is one
// header cell over both header rows.
type headGroup struct {
	Label  string
	Span   int
	Single bool
}

func newSummaryTable(ss []results.Summary) summaryTable {
	type col struct {
		name string
		text func(results.Summary) string
	}
	type group struct {
		label string
		cols  []col
	}
	// dur is a duration column: its unit comes from the largest value.
	dur := func(name string, get func(results.Summary) float64) col {
		top := 0.0
		for _, s := range ss {
			top = max(top, get(s))
		}
		u := durationUnit(top)
		return col{name + " (" + u.Name + ")", func(s results.Summary) string { return sig3(get(s) / u.Div) }}
	}
	num := func(name string, get func(results.Summary) float64, f func(float64) string) col {
		return col{name, func(s results.Summary) string { return f(get(s)) }}
	}
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) }
	f3 := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	groups := []group{
		{"policy", []col{{"policy", func(s results.Summary) string { return s.Policy }}}},
		{"jobs", []col{
			{"done", func(s results.Summary) string { return fmt.Sprintf("%d/%d", s.JobsSucceeded, s.JobsSubmitted) }},
			{"failed", func(s results.Summary) string { return strconv.Itoa(s.JobsFailed) }},
		}},
		{"wait", []col{
			dur("mean", func(s results.Summary) float64 { return s.WaitS.Mean }),
			dur("p50", func(s results.Summary) float64 { return s.WaitS.P50 }),
			dur("p95", func(s results.Summary) float64 { return s.WaitS.P95 }),
			dur("p99", func(s results.Summary) float64 { return s.WaitS.P99 }),
		}},
		{"job completion time", []col{
			dur("mean", func(s results.Summary) float64 { return s.JCTS.Mean }),
			dur("p99", func(s results.Summary) float64 { return s.JCTS.P99 }),
		}},
		{"bounded slowdown", []col{num("mean", func(s results.Summary) float64 { return s.BoundedSlowdown.Mean }, sig3)}},
		{"throughput", []col{num("jobs/h", func(s results.Summary) float64 { return s.ThroughputJobsPerH }, sig3)}},
		{"GPU utilisation (%)", []col{
			num("makespan", func(s results.Summary) float64 { return s.GPUUtilisation }, pct),
			num("arrivals", func(s results.Summary) float64 { return s.GPUUtilisationArrivals }, pct),
		}},
		{"starvation", []col{
			{"starved jobs", func(s results.Summary) string { return strconv.Itoa(s.Starvation.StarvedJobs) }},
			dur("longest wait", func(s results.Summary) float64 { return s.Starvation.LongestWaitS }),
		}},
		{"Jain's index", []col{
			num("share", func(s results.Summary) float64 { return s.JainIndex }, f3),
			num("slowdown", func(s results.Summary) float64 { return s.JainIndexSlowdown }, f3),
		}},
		{"makespan", []col{dur("makespan", func(s results.Summary) float64 { return s.MakespanS })}},
	}
	var t summaryTable
	for _, g := range groups {
		// A group of one column is one header cell over both rows.
		single, label := len(g.cols) == 1, g.label
		if single {
			switch c := g.cols[0].name; {
			case c == label || strings.HasPrefix(c, label+" ("):
				label = c
			default:
				label += " (" + c + ")"
			}
		}
		t.Groups = append(t.Groups, headGroup{label, len(g.cols), single})
		for _, c := range g.cols {
			if !single {
				t.Columns = append(t.Columns, c.name)
			}
		}
	}
	for _, s := range ss {
		var row []string
		for _, g := range groups {
			for _, c := range g.cols {
				row = append(row, c.text(s))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

var pageTemplate = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Brigade report: {{.Dir}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1300px; padding: 0 1em; color: #222; }
.wide { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.45em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; text-align: center; font-weight: 600; }
#summary { font-size: 0.85em; font-variant-numeric: tabular-nums; }
#summary td { white-space: nowrap; }
#summary th { white-space: normal; }
dl.run { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.3em 1.2em; margin: 1em 0; }
dl.run > dt { font-weight: 600; }
dl.run > dd { margin: 0; min-width: 0; }
dl.nested { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.1em 0.8em; margin: 0; }
dl.nested > dd { margin: 0; }
dl.run code { overflow-wrap: anywhere; }
table.records { margin: 0; font-size: 0.95em; }
table.records td { text-align: left; overflow-wrap: anywhere; }
figure { margin: 2em 0; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid #eee; }
figcaption { font-weight: bold; margin-bottom: 0.3em; }
</style>
</head>
<body>
<h1>Brigade report: {{.Dir}}</h1>
<h2>Run</h2>
{{if .Run}}{{.Run}}
{{else}}<p>No run.json in this folder: the run's metadata is limited to what summary.json records.</p>{{end}}
{{with index .Summaries 0}}<p>Workload: {{.Workload}}<br>Cluster: {{.Cluster}}<br>Seed: {{.Seed}}</p>{{end}}
<h2>Summary</h2>
<div class="wide" id="summary-box"><table id="summary">
<thead><tr>{{range .Summary.Groups}}<th{{if .Single}} rowspan="2"{{else}} colspan="{{.Span}}"{{end}}>{{.Label}}</th>{{end}}</tr>
<tr>{{range .Summary.Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Summary.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<h3>GPU share per tenant (% of the GPU-hours used)</h3>
<div class="wide"><table id="tenants">
<thead><tr><th>tenant</th><th>fair share</th>{{range .Summaries}}<th>{{.Policy}}</th>{{end}}</tr></thead>
<tbody>
{{$s := .Summaries}}{{range .Tenants}}{{$t := .}}<tr><td>{{$t}}</td><td>{{fair $s $t}}</td>{{range $s}}<td>{{share . $t}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<h2>Plots</h2>
{{range .Figures}}<figure id="{{.Name}}" class="plot"><figcaption>{{.Title}}</figcaption>
{{.SVG}}
</figure>
{{end}}
<script>
// Marks the page for headless checks: how many plots have a visible size,
// and whether the summary table fits its box without a scroll bar.
(function () {
  var n = 0, figs = document.querySelectorAll("figure.plot");
  figs.forEach(function (f) {
    var s = f.querySelector("svg");
    if (s) { var r = s.getBoundingClientRect(); if (r.width > 100 && r.height > 50) { n++; } }
  });
  document.body.setAttribute("data-plots", String(figs.length));
  document.body.setAttribute("data-plots-visible", String(n));
  var box = document.getElementById("summary-box");
  var fits = box.scrollWidth <= box.clientWidth && document.documentElement.scrollWidth <= window.innerWidth;
  document.body.setAttribute("data-summary-fits", fits ? "yes" : "no");
})();
</script>
</body>
</html>
`))
