package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/brigadesim/brigade/results"
)

// Meta is the run's metadata as key, value pairs (from run.json, whatever
// its schema: top-level keys sorted, nested values as compact JSON).
type Meta struct{ Key, Value string }

// ReadMeta reads dir/run.json; a missing file gives nil and no error.
func ReadMeta(dir string) ([]Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Meta, 0, len(keys))
	for _, k := range keys {
		var s string
		if json.Unmarshal(m[k], &s) == nil {
			out = append(out, Meta{k, s})
			continue
		}
		var buf bytes.Buffer
		if json.Compact(&buf, m[k]) != nil {
			buf.Reset()
			buf.Write(m[k])
		}
		out = append(out, Meta{k, buf.String()})
	}
	return out, nil
}

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
	Meta      []Meta
	Summaries []results.Summary
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
	meta, err := ReadMeta(dir)
	if err != nil {
		return err
	}
	figs, err := Figures(d)
	if err != nil {
		return err
	}
	page := htmlPage{Dir: filepath.Base(filepath.Clean(dir)), Meta: meta, Summaries: d.Summaries, Tenants: tenantOrder(d)}
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
	"dur": fmtDuration,
	"pct": func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"f3":  func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"f1":  func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"share": func(s results.Summary, tenant string) string {
		for _, t := range s.Tenants {
			if t.Tenant == tenant {
				return fmt.Sprintf("%.1f%%", 100*t.Share)
			}
		}
		return "–"
	},
	"fair": func(ss []results.Summary, tenant string) string {
		if len(ss) > 0 {
			for _, t := range ss[0].Tenants {
				if t.Tenant == tenant {
					return fmt.Sprintf("%.1f%%", 100*t.FairShare)
				}
			}
		}
		return "–"
	},
}

// fmtDuration writes seconds as s, min, h or d with three significant
// digits.
func fmtDuration(s float64) string {
	switch {
	case s >= 2*86400:
		return fmt.Sprintf("%.3gd", s/86400)
	case s >= 2*3600:
		return fmt.Sprintf("%.3gh", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.3gmin", s/60)
	}
	return fmt.Sprintf("%.3gs", s)
}

var pageTemplate = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Brigade report: {{.Dir}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1300px; padding: 0 1em; color: #222; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; }
td.meta { text-align: left; font-family: monospace; white-space: pre-wrap; word-break: break-all; max-width: 900px; }
figure { margin: 2em 0; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid #eee; }
figcaption { font-weight: bold; margin-bottom: 0.3em; }
</style>
</head>
<body>
<h1>Brigade report: {{.Dir}}</h1>
<h2>Run</h2>
{{if .Meta}}<table><tbody>
{{range .Meta}}<tr><th>{{.Key}}</th><td class="meta">{{.Value}}</td></tr>
{{end}}</tbody></table>
{{else}}<p>No run.json in this folder: the run's metadata is limited to what summary.json records.</p>{{end}}
{{with index .Summaries 0}}<p>Workload: {{.Workload}}<br>Cluster: {{.Cluster}}<br>Seed: {{.Seed}}</p>{{end}}
<h2>Summary</h2>
<div class="wide"><table id="summary">
<thead><tr><th>policy</th><th>jobs done</th><th>failed</th><th>wait mean</th><th>wait p50</th><th>wait p95</th><th>wait p99</th><th>JCT mean</th><th>JCT p99</th><th>bounded slowdown</th><th>throughput (jobs/h)</th><th>GPU util (makespan)</th><th>GPU util (arrivals)</th><th>starved</th><th>longest wait</th><th>Jain (share)</th><th>Jain (slowdown)</th><th>makespan</th></tr></thead>
<tbody>
{{range .Summaries}}<tr><td>{{.Policy}}</td><td>{{.JobsSucceeded}}/{{.JobsSubmitted}}</td><td>{{.JobsFailed}}</td><td>{{dur .WaitS.Mean}}</td><td>{{dur .WaitS.P50}}</td><td>{{dur .WaitS.P95}}</td><td>{{dur .WaitS.P99}}</td><td>{{dur .JCTS.Mean}}</td><td>{{dur .JCTS.P99}}</td><td>{{f1 .BoundedSlowdown.Mean}}</td><td>{{f1 .ThroughputJobsPerH}}</td><td>{{pct .GPUUtilisation}}</td><td>{{pct .GPUUtilisationArrivals}}</td><td>{{.Starvation.StarvedJobs}}</td><td>{{dur .Starvation.LongestWaitS}}</td><td>{{f3 .JainIndex}}</td><td>{{f3 .JainIndexSlowdown}}</td><td>{{dur .MakespanS}}</td></tr>
{{end}}</tbody></table></div>
<h3>GPU share per tenant</h3>
<table id="tenants">
<thead><tr><th>tenant</th><th>fair share</th>{{range .Summaries}}<th>{{.Policy}}</th>{{end}}</tr></thead>
<tbody>
{{$s := .Summaries}}{{range .Tenants}}{{$t := .}}<tr><td>{{$t}}</td><td>{{fair $s $t}}</td>{{range $s}}<td>{{share . $t}}</td>{{end}}</tr>
{{end}}</tbody></table>
<h2>Plots</h2>
{{range .Figures}}<figure id="{{.Name}}" class="plot"><figcaption>{{.Title}}</figcaption>
{{.SVG}}
</figure>
{{end}}
<script>
// Marks the page with how many plots have a visible size, for headless checks.
(function () {
  var n = 0, figs = document.querySelectorAll("figure.plot");
  figs.forEach(function (f) {
    var s = f.querySelector("svg");
    if (s) { var r = s.getBoundingClientRect(); if (r.width > 100 && r.height > 50) { n++; } }
  });
  document.body.setAttribute("data-plots", String(figs.length));
  document.body.setAttribute("data-plots-visible", String(n));
})();
</script>
</body>
</html>
`))
