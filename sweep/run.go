package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

// RunSpec is one run's coordinates: all of the grid's policies on one
// workload, cluster, load and seed.
type RunSpec struct {
	Index    int     // position in the canonical order
	Key      string  // file name of its record, from the coordinates' indices
	Workload string  // trace path as written in the grid, or "synthetic:N"
	Cluster  string  // as written in the grid
	Load     float64 // 0: as recorded (traces) or the generator's own load
	Seed     uint64

	wi, ci int // indices into the grid's workloads and clusters
}

// Runs lists the grid's runs in canonical order: workloads (traces, then
// synthetic settings, as listed) × clusters × loads × seeds, the last
// varying fastest.
func (g *Grid) Runs() []RunSpec {
	var names []string
	for _, t := range g.Traces {
		names = append(names, t.Path)
	}
	for _, s := range g.Synthetic {
		names = append(names, fmt.Sprintf("synthetic:%d", s.Jobs))
	}
	loads := g.Loads
	if len(loads) == 0 {
		loads = []float64{0}
	}
	var out []RunSpec
	for wi, w := range names {
		for ci, c := range g.Clusters {
			for li, l := range loads {
				for _, s := range g.Seeds {
					out = append(out, RunSpec{
						Index: len(out), Key: fmt.Sprintf("w%d-c%d-l%d-s%d", wi, ci, li, s),
						Workload: w, Cluster: c, Load: l, Seed: s, wi: wi, ci: ci,
					})
				}
			}
		}
	}
	return out
}

// Shard is shard I of N: the runs whose canonical index mod N is I.
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	var sh Shard
	a, b, ok := strings.Cut(s, "/")
	if _, err := fmt.Sscanf(a+" "+b, "%d %d", &sh.I, &sh.N); !ok || err != nil || sh.N < 1 || sh.I < 0 || sh.I >= sh.N {
		return Shard{}, fmt.Errorf("want i/n with 0 <= i < n, got %q", s)
	}
	return sh, nil
}

// Has tells whether the run of canonical index i is this shard's.
func (s Shard) Has(i int) bool { return s.N <= 1 || i%s.N == s.I }

// Record is one finished run, as stored in DIR/runs.d/<key>.json.
type Record struct {
	Grid     string      `json:"grid"` // Grid.Fingerprint
	Index    int         `json:"index"`
	Key      string      `json:"key"`
	Workload string      `json:"workload"`
	Cluster  string      `json:"cluster"`
	Load     float64     `json:"load"`
	Seed     uint64      `json:"seed"`
	Policies []PolicyRow `json:"policies"`
}

// PolicyRow is one policy's metrics in a run, in the grid's metric order;
// nil for a value that is not a finite number.
type PolicyRow struct {
	Policy  string     `json:"policy"`
	Metrics []*float64 `json:"metrics"`
}

// Options are how Sweep runs.
type Options struct {
	Workers  int                   // default GOMAXPROCS
	Shard    Shard                 // zero: every run
	Progress func(done, total int) // after each run (resumed ones count at the start)
	Log      io.Writer             // one line per resumed/failed run; nil: none
}

// RecordsDir is the folder of a sweep's run records.
const RecordsDir = "runs.d"

// GridFile is the grid, as decoded, that a sweep folder was written for.
const GridFile = "grid.json"

// Sweep runs the grid's runs of opt.Shard that dir does not record yet,
// records each as it finishes, then writes the tables of every recorded
// run. It returns the tables' records.
func Sweep(g *Grid, dir string, opt Options) ([]Record, error) {
	if err := os.MkdirAll(filepath.Join(dir, RecordsDir), 0o755); err != nil {
		return nil, err
	}
	if err := writeGrid(dir, g); err != nil {
		return nil, err
	}
	have, err := ReadRecords(dir, g)
	if err != nil {
		return nil, err
	}
	var todo []RunSpec
	total := 0
	for _, r := range g.Runs() {
		if !opt.Shard.Has(r.Index) {
			continue
		}
		total++
		if _, ok := have[r.Key]; !ok {
			todo = append(todo, r)
		}
	}
	if opt.Log != nil && total > len(todo) {
		fmt.Fprintf(opt.Log, "brigade sweep: resuming: %d of %d runs already recorded in %s\n", total-len(todo), total, dir)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu       sync.Mutex
		done     = total - len(todo)
		firstErr error
		wg       sync.WaitGroup
		next     = make(chan RunSpec)
	)
	if opt.Progress != nil {
		opt.Progress(done, total)
	}
	for range min(workers, max(1, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				rec, err := RunOne(g, r)
				if err == nil {
					err = writeRecord(dir, rec)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("run %s (%s on %s, load %g, seed %d): %w", r.Key, r.Workload, r.Cluster, r.Load, r.Seed, err)
				}
				if err == nil {
					have[r.Key] = rec
					done++
					if opt.Progress != nil {
						opt.Progress(done, total)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range todo {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- r
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	recs := sorted(have)
	return recs, WriteTables(dir, g, recs)
}

// RunOne runs one run: every policy of the grid on the run's arrivals.
func RunOne(g *Grid, r RunSpec) (Record, error) {
	spec, err := g.Cluster(r.ci)
	if err != nil {
		return Record{}, err
	}
	probe, err := spec.Build()
	if err != nil {
		return Record{}, err
	}
	gpus := probe.TotalGPUs()
	var w *workloads.Workload
	if r.wi < len(g.Traces) {
		t := g.Traces[r.wi]
		if w, err = workloads.ReadFile(g.path(t.Path), t.Format); err != nil {
			return Record{}, err
		}
		if r.Load > 0 {
			if err := w.ScaleToLoad(gpus, r.Load); err != nil {
				return Record{}, err
			}
		}
	} else {
		s := g.Synthetic[r.wi-len(g.Traces)]
		load := r.Load
		if load == 0 {
			load = s.Load
		}
		if load == 0 {
			load = 0.9
		}
		if w, err = runner.SyntheticAtLoad(s.Jobs, r.Seed, gpus, load); err != nil {
			return Record{}, err
		}
	}
	w.FillEstimates()
	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	target := policies.TargetFromRequests(reqs)
	bucket, _ := g.bucket()
	starvation, _ := g.starvation()
	specs := make([]policies.Spec, len(g.Policies))
	for i, p := range g.Policies {
		if specs[i], err = p.Spec(); err != nil {
			return Record{}, fmt.Errorf("policies[%d]: %w", i, err)
		}
	}
	// One run for all the policies: they are summarised against one
	// starvation threshold, the grid's or the one runner shares over them.
	all, err := runner.Run(runner.Spec{
		Workload: w, WorkloadName: r.Workload,
		NewCluster: spec.Build, ClusterName: spec.Name,
		Policies: specs, Placer: policies.PlacerConfig{Seed: r.Seed, Target: target}, Seed: r.Seed,
		StarvationThreshold: starvation,
		Options:             runner.Options{Bucket: bucket, FragTarget: &target},
	})
	if err != nil {
		return Record{}, err
	}
	sums := make([]results.Summary, len(g.Policies))
	for i := range all {
		sums[i] = all[i].Summary
	}
	all = nil
	rec := Record{Grid: g.Fingerprint(), Index: r.Index, Key: r.Key, Workload: r.Workload, Cluster: r.Cluster, Load: r.Load, Seed: r.Seed}
	for i, s := range sums {
		row := PolicyRow{Policy: g.Label(i)}
		for _, m := range g.Metrics {
			v, err := Metric(s, m)
			if err != nil {
				return Record{}, err
			}
			if v != v || v > 1e308 || v < -1e308 {
				row.Metrics = append(row.Metrics, nil)
			} else {
				row.Metrics = append(row.Metrics, &v)
			}
		}
		rec.Policies = append(rec.Policies, row)
	}
	return rec, nil
}

func writeGrid(dir string, g *Grid) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, GridFile)
	if old, err := os.ReadFile(path); err == nil {
		if string(old) != string(b)+"\n" {
			return fmt.Errorf("%s holds another grid's results (%s differs); use another --out", dir, path)
		}
		return nil
	}
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadGridDir reads the grid a sweep folder was written for.
func ReadGridDir(dir string) (*Grid, []byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, GridFile))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a sweep folder: %w", dir, err)
	}
	var g Grid
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, GridFile), err)
	}
	return &g, b, nil
}

func writeRecord(dir string, rec Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return results.AtomicWriteFile(filepath.Join(dir, RecordsDir, rec.Key+".json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadRecords reads dir's run records, keyed by run key; a record of
// another grid, or of no run of g, is an error.
func ReadRecords(dir string, g *Grid) (map[string]Record, error) {
	keys := map[string]RunSpec{}
	for _, r := range g.Runs() {
		keys[r.Key] = r
	}
	out := map[string]Record{}
	ents, err := os.ReadDir(filepath.Join(dir, RecordsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	fp := g.Fingerprint()
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue // temporary files of an interrupted write
		}
		path := filepath.Join(dir, RecordsDir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r, ok := keys[rec.Key]
		if rec.Grid != fp || !ok || rec.Index != r.Index || rec.Key+".json" != name || len(rec.Policies) != len(g.Policies) {
			return nil, fmt.Errorf("%s: a record of another grid (grid %s, this one %s); use another --out", path, rec.Grid, fp)
		}
		out[rec.Key] = rec
	}
	return out, nil
}

func sorted(m map[string]Record) []Record {
	out := make([]Record, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// Merge joins shard folders' records into dir and writes the tables one
// machine would have written. Every shard must hold the same grid; a run
// recorded twice must agree. It fails when a run of the grid is missing
// unless partial is set.
func Merge(dir string, shards []string, partial bool) (*Grid, []Record, error) {
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("no shard folder given")
	}
	g, raw, err := ReadGridDir(shards[0])
	if err != nil {
		return nil, nil, err
	}
	all := map[string]Record{}
	for _, s := range shards {
		_, b, err := ReadGridDir(s)
		if err != nil {
			return nil, nil, err
		}
		if string(b) != string(raw) {
			return nil, nil, fmt.Errorf("%s and %s were written for different grids", shards[0], s)
		}
		recs, err := ReadRecords(s, g)
		if err != nil {
			return nil, nil, err
		}
		for k, r := range recs {
			if old, ok := all[k]; ok {
				a, _ := json.Marshal(old)
				b, _ := json.Marshal(r)
				if string(a) != string(b) {
					return nil, nil, fmt.Errorf("run %s is recorded differently in two shards (last in %s)", k, s)
				}
			}
			all[k] = r
		}
	}
	var missing []string
	for _, r := range g.Runs() {
		if _, ok := all[r.Key]; !ok {
			missing = append(missing, r.Key)
		}
	}
	if len(missing) > 0 && !partial {
		return nil, nil, fmt.Errorf("%d of %d runs are in no shard (first: %s); rerun the missing shards, or pass --partial", len(missing), len(g.Runs()), missing[0])
	}
	if err := os.MkdirAll(filepath.Join(dir, RecordsDir), 0o755); err != nil {
		return nil, nil, err
	}
	if err := writeGrid(dir, g); err != nil {
		return nil, nil, err
	}
	recs := sorted(all)
	for _, r := range recs {
		if err := writeRecord(dir, r); err != nil {
			return nil, nil, err
		}
	}
	return g, recs, WriteTables(dir, g, recs)
}
