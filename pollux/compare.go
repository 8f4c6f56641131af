package pollux

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/brigadesim/brigade/hwmodel"
)

// Row compares one workload at one load with the published run.
type Row struct {
	Baseline string // "tiresias", "optimus": the published run
	Load     string
	Workload string // "workload-1"
	Jobs     int
	// Ours and Published are the mean JCTs in seconds; Exact counts the
	// jobs whose JCT equals the published one; Missing those the
	// published run lacks or ours does.
	Ours, Published float64
	Exact, Missing  int
}

// Compare runs every workload of every load under spec and compares it
// with the published Tiresias JCTs. loads nil means all.
func Compare(spec string, loads []string) ([]Row, error) {
	b, _ := LookupBaseline("tiresias")
	return CompareBaseline(b, spec, loads)
}

// CompareBaseline runs every workload of each of the baseline's loads in
// loads (nil: all of them) under spec ("": the baseline's own) and
// compares it with the baseline's published JCTs. A load the baseline
// does not publish is an error.
func CompareBaseline(b Baseline, spec string, loads []string) ([]Row, error) {
	apps, err := Apps()
	if err != nil {
		return nil, err
	}
	if loads == nil {
		loads = b.Loads
	}
	if spec == "" {
		spec = b.Spec
	}
	var rows []Row
	for _, load := range loads {
		pub, err := PublishedOf(b.Name, load)
		if err != nil {
			return nil, err
		}
		for n := 1; n <= Workloads; n++ {
			w, err := Workload(load, n)
			if err != nil {
				return nil, err
			}
			ours, err := JCTs(w, apps, spec)
			if err != nil {
				return nil, fmt.Errorf("load %s workload %d: %w", load, n, err)
			}
			name := "workload-" + strconv.Itoa(n)
			names := make([]string, len(w.Jobs))
			for i := range w.Jobs {
				names[i] = w.Jobs[i].Name
			}
			r := compareOne(load, name, names, ours, pub[name])
			r.Baseline = b.Name
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// compareOne compares one workload's JCTs with the published ones, in
// the workload's job order (names), so that no map order reaches a sum.
func compareOne(load, name string, names []string, ours, pub map[string]float64) Row {
	r := Row{Load: load, Workload: name, Jobs: len(names)}
	var so, sp float64
	np := 0
	for _, job := range names {
		o := ours[job]
		so += o
		p, ok := pub[job]
		if !ok {
			r.Missing++
			continue
		}
		sp += p
		np++
		if o == p {
			r.Exact++
		}
	}
	// Published jobs the workload lacks.
	r.Missing += len(pub) - np
	if len(names) > 0 {
		r.Ours = so / float64(len(names))
	}
	if np > 0 {
		r.Published = sp / float64(np)
	}
	return r
}

// Write prints the rows as a table: per baseline, workload and load our
// mean JCT beside the published one and the jobs exactly equal, then per
// baseline and load the mean over workloads, then the total.
func Write(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "baseline\tload\tworkload\tjobs\tmean JCT (s)\tpublished (s)\tdiff\texact\t")
	var exact, jobs, missing int
	type group struct{ baseline, load string }
	byLoad := map[group][]Row{}
	var order []group
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%s\t%d\t\n", r.Baseline, r.Load, r.Workload, r.Jobs, r.Ours, r.Published, pct(r.Ours, r.Published), r.Exact)
		exact += r.Exact
		jobs += r.Jobs
		missing += r.Missing
		g := group{r.Baseline, r.Load}
		if _, ok := byLoad[g]; !ok {
			order = append(order, g)
		}
		byLoad[g] = append(byLoad[g], r)
	}
	for _, g := range order {
		var o, p float64
		e, n := 0, 0
		for _, r := range byLoad[g] {
			o += r.Ours
			p += r.Published
			e += r.Exact
			n += r.Jobs
		}
		k := float64(len(byLoad[g]))
		fmt.Fprintf(tw, "%s\t%s\tmean of %d\t%d\t%.4f\t%.4f\t%s\t%d\t\n", g.baseline, g.load, len(byLoad[g]), n, o/k, p/k, pct(o/k, p/k), e)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%s of %s exactly equal to the published JCTs\n", hwmodel.Plural(exact, "job", "jobs"), strconv.Itoa(jobs)); err != nil {
		return err
	}
	if missing > 0 {
		_, err := fmt.Fprintf(w, "%s in one of the runs and not the other\n", hwmodel.Plural(missing, "job", "jobs"))
		return err
	}
	return nil
}

func pct(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100*(a-b)/b)
}
