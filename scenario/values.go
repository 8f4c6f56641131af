package scenario

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/results"
)

// A value names one number or text of a setup's run:
//
//	KEY                   a summary.json field by its dotted path (wait_s.p99, faults.count)
//	setup.FIELD           the setup's name, what, cluster or policy
//	job.NAME.FIELD        an explicit job's state, jct_s, wait_s, attempts, hardware_failures,
//	                      preemptions or preempt_lost_s (the time they cost it: unsaved progress, start-up, restart)
//	generated.FIELD       over the jobs not listed explicitly (generated, or a trace's): jobs, succeeded,
//	                      wait_s_mean (of those that ran), restarts (attempts beyond each job's first:
//	                      preemptions, failures, retries)
//	tenant.NAME.FIELD     over one tenant's jobs: jobs, wait_s_mean and wait_s_p95 (of those that ran), gpu_hours
//	A / B                 two numbers shown as A/B (format "of")
var (
	setupFields     = []string{"name", "what", "cluster", "policy"}
	jobFields       = []string{"state", "jct_s", "wait_s", "attempts", "hardware_failures", "preemptions", "preempt_lost_s"}
	generatedFields = []string{"jobs", "succeeded", "wait_s_mean", "restarts"}
	tenantFields    = []string{"jobs", "wait_s_mean", "wait_s_p95", "gpu_hours"}
	formats         = []string{"", "text", "int", "float0", "float2", "percent", "percent2", "duration", "days", "of"}
	seriesNames     = []string{"gpu_utilisation", "down_gpus", "queue_length"}
)

// summaryKeys are the summary.json fields a value may name.
var summaryKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range results.FieldNames() {
		m[k] = true
	}
	return m
}()

func checkValue(v string) error {
	if a, b, ok := strings.Cut(v, "/"); ok {
		if err := checkValue(strings.TrimSpace(a)); err != nil {
			return err
		}
		return checkValue(strings.TrimSpace(b))
	}
	parts := strings.Split(v, ".")
	switch {
	case v == "":
		return fmt.Errorf("missing: want a summary.json field, setup.FIELD, job.NAME.FIELD or generated.FIELD")
	case parts[0] == "setup":
		if len(parts) != 2 || !slices.Contains(setupFields, parts[1]) {
			return fmt.Errorf("%q: want setup.FIELD, FIELD one of %s", v, strings.Join(setupFields, ", "))
		}
	case parts[0] == "job":
		if len(parts) != 3 || !slices.Contains(jobFields, parts[2]) {
			return fmt.Errorf("%q: want job.NAME.FIELD, FIELD one of %s", v, strings.Join(jobFields, ", "))
		}
	case parts[0] == "tenant":
		if len(parts) != 3 || parts[1] == "" || !slices.Contains(tenantFields, parts[2]) {
			return fmt.Errorf("%q: want tenant.NAME.FIELD, FIELD one of %s", v, strings.Join(tenantFields, ", "))
		}
	case parts[0] == "generated":
		if len(parts) != 2 || !slices.Contains(generatedFields, parts[1]) {
			return fmt.Errorf("%q: want generated.FIELD, FIELD one of %s", v, strings.Join(generatedFields, ", "))
		}
	case !summaryKeys[v]:
		keys := slices.Sorted(maps.Keys(summaryKeys))
		if s := config.Suggest(v, keys); s != "" {
			return fmt.Errorf("%q is not a summary.json field; did you mean %q? (docs/metrics.md)", v, s)
		}
		return fmt.Errorf("%q is not a summary.json field (docs/metrics.md)", v)
	}
	return nil
}

func checkFormat(f string) error {
	if !slices.Contains(formats, f) {
		return fmt.Errorf("%q: want one of %s", f, strings.Join(formats[1:], ", "))
	}
	return nil
}

func checkSeries(s string) error {
	if !slices.Contains(seriesNames, s) {
		return fmt.Errorf("%q: want one of %s", s, strings.Join(seriesNames, ", "))
	}
	return nil
}

// value reads v from one setup's outcome: a float64 or a string.
func (o *Outcome) value(v string) (any, error) {
	if a, b, ok := strings.Cut(v, "/"); ok {
		x, err := o.number(strings.TrimSpace(a))
		if err != nil {
			return nil, err
		}
		y, err := o.number(strings.TrimSpace(b))
		if err != nil {
			return nil, err
		}
		return [2]float64{x, y}, nil
	}
	parts := strings.Split(v, ".")
	switch parts[0] {
	case "setup":
		return map[string]string{"name": o.Setup.Name, "what": o.Setup.What, "cluster": o.Setup.Cluster, "policy": o.Setup.Policy}[parts[1]], nil
	case "job":
		for i, name := range o.explicit {
			if name != parts[1] {
				continue
			}
			j := o.Run.Jobs[o.explicitAt[i]]
			switch parts[2] {
			case "state":
				return string(j.State), nil
			case "jct_s":
				return (j.End - j.Submit).Seconds(), nil
			case "wait_s":
				return j.Wait.Seconds(), nil
			case "attempts":
				return float64(j.Attempts), nil
			case "hardware_failures":
				return float64(j.HardwareFailures), nil
			case "preemptions":
				return float64(j.Preemptions), nil
			case "preempt_lost_s":
				return j.PreemptLost.Seconds(), nil
			}
		}
		return nil, fmt.Errorf("%q: no explicit job %q", v, parts[1])
	case "tenant":
		return o.tenantValue(parts[1], parts[2]), nil
	case "generated":
		var done, ran, restarts int
		var wait float64
		isExplicit := make([]bool, len(o.Run.Jobs))
		for _, k := range o.explicitAt {
			isExplicit[k] = true
		}
		for k, j := range o.Run.Jobs {
			if isExplicit[k] {
				continue
			}
			if j.State == results.Succeeded {
				done++
			}
			if j.Attempts > 0 {
				ran++
				wait += j.Wait.Seconds()
				restarts += j.Attempts - 1
			}
		}
		switch parts[1] {
		case "jobs":
			return float64(len(o.Run.Jobs) - len(o.explicitAt)), nil
		case "succeeded":
			return float64(done), nil
		case "restarts":
			return float64(restarts), nil
		case "wait_s_mean":
			if ran == 0 {
				return 0.0, nil
			}
			return wait / float64(ran), nil
		}
	}
	x, ok := o.summary[v]
	switch {
	case !ok && summaryKeys[v]:
		return 0.0, nil // an optional part the run lacks (data: no job read a dataset)
	case !ok:
		return nil, fmt.Errorf("%q is not a summary.json field", v)
	}
	return x, nil
}

// tenantValue is one figure over tenant's jobs (0 for a tenant without
// jobs): their count, the mean and 95th percentile of the waits of those
// that ran (the empirical quantile, results' estimator: the smallest wait
// at or above 95% of them), their GPU-hours.
func (o *Outcome) tenantValue(tenant, field string) float64 {
	var waits []float64
	n, gpuHours := 0, 0.0
	for _, j := range o.Run.Jobs {
		if j.Tenant != tenant {
			continue
		}
		n++
		gpuHours += float64(j.GPUs) * float64(j.GPUMilli) / 1000 * j.Run.Seconds() / 3600
		if j.Attempts > 0 {
			waits = append(waits, j.Wait.Seconds())
		}
	}
	switch field {
	case "jobs":
		return float64(n)
	case "gpu_hours":
		return gpuHours
	}
	if len(waits) == 0 {
		return 0
	}
	if field == "wait_s_mean" {
		sum := 0.0
		for _, w := range waits {
			sum += w
		}
		return sum / float64(len(waits))
	}
	slices.Sort(waits)
	return waits[max(0, int(math.Ceil(0.95*float64(len(waits))))-1)]
}

func (o *Outcome) number(v string) (float64, error) {
	x, err := o.value(v)
	if err != nil {
		return 0, err
	}
	f, ok := x.(float64)
	if !ok {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return f, nil
}

// format writes x as format f.
func format(x any, f string) string {
	switch x := x.(type) {
	case string:
		return x
	case [2]float64:
		return fmt.Sprintf("%.0f/%.0f", x[0], x[1])
	case float64:
		switch f {
		case "int", "float0":
			return fmt.Sprintf("%.0f", x)
		case "float2":
			return fmt.Sprintf("%.2f", x)
		case "percent":
			return fmt.Sprintf("%.1f%%", 100*x)
		case "percent2":
			return fmt.Sprintf("%.2f%%", 100*x)
		case "duration":
			return results.HumanDuration(x)
		case "days":
			return fmt.Sprintf("%.2f d", x/86400)
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fmt.Sprintf("%.0f", x)
		}
		return fmt.Sprintf("%.4g", x)
	}
	return fmt.Sprint(x)
}

// plotted is x in the unit a chart of format f shows: hours for
// durations, days for days, percent for fractions.
func plotted(x float64, f string) (float64, string) {
	switch f {
	case "duration":
		return x / 3600, "hours"
	case "days":
		return x / 86400, "days"
	case "percent", "percent2":
		return 100 * x, "%"
	}
	return x, ""
}
