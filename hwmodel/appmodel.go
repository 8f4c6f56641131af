package hwmodel

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
)

// The application speed model of the Pollux (OSDI'21) artifact's
// simulator: a job trains one application with a fixed batch size on
// the GPUs it is given (its request, or another count a policy such as
// Optimus chooses; the batch configuration follows the count); how fast it progresses depends on where its GPUs are (the
// per-node GPU counts of its placement) and on the statistical
// efficiency of its batch size at its current epoch. The model is data
// (measured step times by placement, per-epoch gradient statistics by
// batch size) plus the arithmetic below, which follows the artifact's
// operation for operation so that its run times come out to the second.

// AppModel is a set of applications, read by LoadApps. It is immutable
// once loaded, so runs on several goroutines may share one.
type AppModel struct {
	apps  map[string]*App
	names []string // sorted
}

// App is one application.
type App struct {
	Name string
	// B0 and MaxBatch are the smallest and largest validated batch sizes;
	// MinLocal and MaxLocal the per-GPU batch sizes the placements were
	// measured over (MaxLocal may be lowered by apps.csv); MaxEpochs the
	// epochs a job trains.
	B0, MaxBatch, MinLocal, MaxLocal, MaxEpochs int
	valid                                       []validation // by batch size
	// progress[e] is the progress at which epoch e starts (e = 0 ..
	// MaxEpochs): the least of the validated runs'.
	progress   []float64
	placements map[string][]placeRow // by rotation-normalised id, by local batch
	linear     map[linKey][2]float64
}

type validation struct {
	batch     int
	sqr, vari []float64 // per epoch
	// iters[e] is the iterations run by the end of epoch e (the optional
	// iteration column; nil without it): Optimus' estimate of the work
	// left reads it (Iterations).
	iters []int
}

type placeRow struct {
	local      int
	step, sync float64
}

type linKey struct{ nodes, replicas, local int }

// AppConfig is a job's batch configuration: per-GPU (atomic) batch,
// gradient accumulation steps and the effective batch they make.
type AppConfig struct {
	Atomic, Accum, Batch int
}

// App returns the application called name.
func (m *AppModel) App(name string) (*App, bool) {
	a, ok := m.apps[name]
	return a, ok
}

// Names lists the applications, sorted.
func (m *AppModel) Names() []string { return slices.Clone(m.names) }

// ceilEps is the artifact's ⌈x⌉, which subtracts 1e-8 first so that a
// quotient a rounding error puts just above an integer stays on it.
func ceilEps(x float64) int { return int(math.Ceil(x - 1e-8)) }

// Config is the batch configuration of a job on replicas GPUs with global
// batch size batch.
func (a *App) Config(replicas, batch int) (AppConfig, error) {
	return a.config(replicas, batch, batch > a.B0)
}

// PredictConfig is the batch configuration the artifact's Optimus
// assumes when it predicts a step time: Config, except that on one GPU it
// always accumulates at least once, whatever the batch size (its
// predict_step_time drops the batch > B0 condition Config has).
func (a *App) PredictConfig(replicas, batch int) (AppConfig, error) {
	return a.config(replicas, batch, true)
}

// config is Config; oneGPUAccum says whether one GPU accumulates at least
// once.
func (a *App) config(replicas, batch int, oneGPUAccum bool) (AppConfig, error) {
	if replicas <= 0 || batch <= 0 {
		return AppConfig{}, fmt.Errorf("%s: want GPUs > 0 and a batch size > 0, got %d and %d", a.Name, replicas, batch)
	}
	local := ceilEps(float64(batch) / float64(replicas))
	accum := ceilEps(float64(local)/float64(a.MaxLocal)) - 1
	if replicas == 1 && oneGPUAccum {
		accum = max(1, accum)
	}
	atomic := ceilEps(float64(local) / float64(accum+1))
	count := replicas * (accum + 1)
	atomic = min(atomic, int(float64(a.MaxBatch)/float64(count)))
	c := AppConfig{Atomic: atomic, Accum: accum, Batch: replicas * atomic * (accum + 1)}
	if atomic <= 0 || c.Batch < a.valid[0].batch || c.Batch > a.MaxBatch {
		return AppConfig{}, fmt.Errorf("%s: %d GPUs with batch size %d make an effective batch of %d, outside the validated %d..%d",
			a.Name, replicas, batch, c.Batch, a.valid[0].batch, a.MaxBatch)
	}
	return c, nil
}

// PlacementID is the artifact's name of a placement: the per-node GPU
// counts without zeros, rotated to their lexicographically smallest
// rotation, as digits ([4 2] is "24").
func PlacementID(counts []int) string {
	var c []int
	for _, n := range counts {
		if n > 0 {
			c = append(c, n)
		}
	}
	best := slices.Clone(c)
	for i := 1; i < len(c); i++ {
		r := append(slices.Clone(c[i:]), c[:i]...)
		if slices.Compare(r, best) < 0 {
			best = r
		}
	}
	var b strings.Builder
	for _, n := range best {
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// Throughput is the step and synchronisation time, in seconds, of one
// iteration at per-GPU batch local on a placement with these per-node GPU
// counts. A placement measured in placements.csv is interpolated linearly
// in local (as scipy's interp1d: from the grid point below, even at a grid
// point); another comes from the table of values the artifact computed by
// interpolating over nodes, GPUs and batch (linear.csv), keyed by nodes
// (at most 16), GPUs and local batch, and is an error when not there.
func (a *App) Throughput(counts []int, local int) (step, sync float64, err error) {
	id := PlacementID(counts)
	if rows, ok := a.placements[id]; ok {
		if local < rows[0].local || local > rows[len(rows)-1].local {
			return 0, 0, fmt.Errorf("%s: placement %s: per-GPU batch %d is outside the measured %d..%d", a.Name, id, local, rows[0].local, rows[len(rows)-1].local)
		}
		k, _ := slices.BinarySearchFunc(rows, local, func(r placeRow, x int) int { return r.local - x })
		k = min(max(k, 1), len(rows)-1)
		lo, hi := rows[k-1], rows[k]
		dx := float64(hi.local - lo.local)
		x := float64(local - lo.local)
		return (hi.step-lo.step)/dx*x + lo.step, (hi.sync-lo.sync)/dx*x + lo.sync, nil
	}
	nodes, replicas := len(id), 0
	for _, ch := range id {
		replicas += int(ch - '0')
	}
	v, ok := a.linear[linKey{min(nodes, 16), replicas, local}]
	if !ok {
		return 0, 0, fmt.Errorf("%s: placement %s (%d nodes, %d GPUs, per-GPU batch %d) is neither measured nor in the interpolated table", a.Name, id, nodes, replicas, local)
	}
	return v[0], v[1], nil
}

// IterTime is the wall time of one iteration, accumulation steps
// included, of configuration c on a placement with these per-node GPU
// counts: step + (step - sync)·accum, as the artifact's simulator and its
// Optimus compute it.
func (a *App) IterTime(counts []int, c AppConfig) (float64, error) {
	step, sync, err := a.Throughput(counts, c.Atomic)
	if err != nil {
		return 0, err
	}
	return step + (step-sync)*float64(c.Accum), nil
}

// Iterations is the number of iterations a run at global batch size
// batch has made by the end of epoch (0-based), interpolated linearly
// between the validated batch sizes around batch as the artifact's
// get_iteration does: (b-lo)·it_hi + (hi-b)·it_lo over hi-lo, in integers
// until the division. It needs the validation files' iteration column.
func (a *App) Iterations(batch, epoch int) (float64, error) {
	hi := slices.IndexFunc(a.valid, func(v validation) bool { return v.batch >= batch })
	if hi < 0 || batch < a.valid[0].batch {
		return 0, fmt.Errorf("%s: batch size %d is outside the validated %d..%d", a.Name, batch, a.B0, a.MaxBatch)
	}
	lo := hi
	if a.valid[hi].batch != batch {
		lo = hi - 1
	}
	l, h := &a.valid[lo], &a.valid[hi]
	if epoch < 0 || epoch >= len(l.iters) || epoch >= len(h.iters) {
		return 0, fmt.Errorf("%s: no iteration count for epoch %d at batch size %d (the validation files' iteration column)", a.Name, epoch, batch)
	}
	if lo == hi {
		return float64(l.iters[epoch]), nil
	}
	num := (batch-l.batch)*h.iters[epoch] + (h.batch-batch)*l.iters[epoch]
	return float64(num) / float64(h.batch-l.batch), nil
}

// gradStats are the gradient's squared norm and variance during epoch at
// effective batch batch, interpolated linearly between the validated
// batch sizes around it.
func (a *App) gradStats(batch, epoch int) (sqr, vari float64) {
	hi := slices.IndexFunc(a.valid, func(v validation) bool { return v.batch >= batch })
	lo := hi
	if a.valid[hi].batch != batch {
		lo = hi - 1
	}
	l, h := &a.valid[lo], &a.valid[hi]
	if lo == hi {
		return l.sqr[epoch], l.vari[epoch]
	}
	d := float64(h.batch - l.batch)
	wl, wh := float64(h.batch-batch), float64(batch-l.batch)
	return (wh*h.sqr[epoch] + wl*l.sqr[epoch]) / d, (wh*h.vari[epoch] + wl*l.vari[epoch]) / d
}

// AppRun is a job's pace on one placement: the wall time of an
// iteration and its statistical gain by epoch.
type AppRun struct {
	app   *App
	iter  float64   // seconds per iteration, accumulation steps included
	gains []float64 // by epoch
}

// Run is the pace of a job with configuration c on a placement with these
// per-node GPU counts.
func (a *App) Run(counts []int, c AppConfig) (AppRun, error) {
	iter, err := a.IterTime(counts, c)
	if err != nil {
		return AppRun{}, err
	}
	r := AppRun{app: a, iter: iter, gains: make([]float64, a.MaxEpochs)}
	if !(r.iter > 0) || math.IsInf(r.iter, 0) {
		return AppRun{}, fmt.Errorf("%s: placement %s: an iteration takes %g s; want a finite time > 0", a.Name, PlacementID(counts), r.iter)
	}
	scale := float64(c.Batch) / float64(a.B0)
	for e := range r.gains {
		sqr, vari := a.gradStats(c.Batch, e)
		r.gains[e] = (vari + sqr) / (vari/scale + sqr)
		if !(r.gains[e] > 0) || math.IsInf(r.gains[e], 0) {
			return AppRun{}, fmt.Errorf("%s: batch %d: the gain of epoch %d is %g; want a finite gain > 0 (grad_sqr and grad_var)", a.Name, c.Batch, e, r.gains[e])
		}
	}
	return r, nil
}

// IterTime is the wall time of one iteration, in seconds.
func (r *AppRun) IterTime() float64 { return r.iter }

// AppState is a job's training state: the progress it has made (in the
// validation traces' units) and its current epoch.
type AppState struct {
	Progress float64
	Epoch    int
}

// Done reports whether the job has trained all its epochs.
func (s AppState) Done(a *App) bool { return s.Epoch >= a.MaxEpochs }

// Advance trains for secs seconds (math.Inf(1): until done) from s and
// returns the seconds used, less than secs only when the job finished.
// Within an epoch progress grows at gain/iteration time; an epoch's end is
// reached after the time to it rounded to whole seconds, half to even (as
// Python's round), and the next epoch goes on at its own gain for the rest
// of secs. So a job's time depends on how secs cut its training, as the
// artifact's does on its scheduling interval.
func (r *AppRun) Advance(s *AppState, secs float64) (used float64, done bool) {
	a := r.app
	for secs > 0 {
		if s.Epoch >= a.MaxEpochs {
			return used, true
		}
		rate := r.gains[s.Epoch] / r.iter
		next := a.progress[s.Epoch+1]
		if s.Progress+rate*secs < next {
			s.Progress += rate * secs
			return used + secs, false
		}
		delta := math.RoundToEven((next - s.Progress) / rate)
		s.Epoch++
		s.Progress = next
		used += delta
		secs -= delta
	}
	return used, s.Epoch >= a.MaxEpochs
}

// LoadApps reads an application model from dir in fsys: apps.csv (columns
// app, max_epochs, max_local_bsz: the applications and the constants the
// traces do not give; an empty max_local_bsz takes the placements'
// largest), linear.csv (app, num_nodes, num_replicas, local_bsz,
// step_time, sync_time: throughputs of unmeasured placements), and per
// application a folder of its name holding placements.csv (placement,
// local_bsz, step_time, sync_time) and validation-<batch>.csv files
// (progress and per-epoch grad_sqr, grad_var; other columns ignored).
// Errors name the file, line and field.
func LoadApps(fsys fs.FS, dir string) (*AppModel, error) {
	m := &AppModel{apps: map[string]*App{}}
	appsFile := path.Join(dir, "apps.csv")
	err := readTable(fsys, appsFile, []string{"app", "max_epochs", "max_local_bsz"}, func(f rowFields) error {
		name := f.str("app")
		if name == "" || strings.ContainsAny(name, "/\\.") {
			return f.bad("app", "want an application's folder name, got %q", name)
		}
		if _, dup := m.apps[name]; dup {
			return f.bad("app", "%q is listed twice", name)
		}
		epochs, err := f.int("max_epochs", 1, 1_000_000)
		if err != nil {
			return err
		}
		maxLocal := 0
		if f.str("max_local_bsz") != "" {
			if maxLocal, err = f.int("max_local_bsz", 1, 1<<30); err != nil {
				return err
			}
		}
		m.apps[name] = &App{Name: name, MaxEpochs: epochs, MaxLocal: maxLocal, placements: map[string][]placeRow{}, linear: map[linKey][2]float64{}}
		m.names = append(m.names, name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(m.apps) == 0 {
		return nil, fmt.Errorf("%s: no application listed", appsFile)
	}
	slices.Sort(m.names)
	for _, name := range m.names {
		if err := loadApp(fsys, path.Join(dir, name), m.apps[name]); err != nil {
			return nil, err
		}
	}
	linFile := path.Join(dir, "linear.csv")
	err = readTable(fsys, linFile, []string{"app", "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}, func(f rowFields) error {
		a, ok := m.apps[f.str("app")]
		if !ok {
			return f.bad("app", "%q is not in apps.csv", f.str("app"))
		}
		var k linKey
		var err error
		if k.nodes, err = f.int("num_nodes", 1, 16); err != nil {
			return err
		}
		if k.replicas, err = f.int("num_replicas", k.nodes, 1<<20); err != nil {
			return err
		}
		if k.local, err = f.int("local_bsz", 1, 1<<30); err != nil {
			return err
		}
		step, err := f.float("step_time")
		if err != nil {
			return err
		}
		sync, err := f.float("sync_time")
		if err != nil {
			return err
		}
		if _, dup := a.linear[k]; dup {
			return f.bad("local_bsz", "%s at %d nodes, %d GPUs, batch %d is given twice", a.Name, k.nodes, k.replicas, k.local)
		}
		a.linear[k] = [2]float64{step, sync}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return m, nil
}

func loadApp(fsys fs.FS, dir string, a *App) error {
	pf := path.Join(dir, "placements.csv")
	a.MinLocal = math.MaxInt
	maxLocal := 0
	err := readTable(fsys, pf, []string{"placement", "local_bsz", "step_time", "sync_time"}, func(f rowFields) error {
		id := f.str("placement")
		if id == "" || strings.Trim(id, "123456789") != "" {
			return f.bad("placement", "want per-node GPU counts as digits 1-9, got %q", id)
		}
		if PlacementID(digits(id)) != id {
			return f.bad("placement", "%q is not its smallest rotation", id)
		}
		local, err := f.int("local_bsz", 1, 1<<30)
		if err != nil {
			return err
		}
		step, err := f.float("step_time")
		if err != nil {
			return err
		}
		sync, err := f.float("sync_time")
		if err != nil {
			return err
		}
		a.placements[id] = append(a.placements[id], placeRow{local, step, sync})
		a.MinLocal, maxLocal = min(a.MinLocal, local), max(maxLocal, local)
		return nil
	})
	if err != nil {
		return err
	}
	if len(a.placements) == 0 {
		return fmt.Errorf("%s: no placement measured", pf)
	}
	for id, rows := range a.placements {
		slices.SortFunc(rows, func(x, y placeRow) int { return x.local - y.local })
		if len(rows) < 2 {
			return fmt.Errorf("%s: placement %s has one batch size; interpolation needs two", pf, id)
		}
		for k := 1; k < len(rows); k++ {
			if rows[k].local == rows[k-1].local {
				return fmt.Errorf("%s: placement %s: local_bsz %d is given twice", pf, id, rows[k].local)
			}
		}
	}
	if a.MaxLocal == 0 {
		a.MaxLocal = maxLocal
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "validation-") || !strings.HasSuffix(n, ".csv") {
			continue
		}
		vf := path.Join(dir, n)
		b, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(n, "validation-"), ".csv"))
		if err != nil || b <= 0 {
			return fmt.Errorf("%s: the name must be validation-<batch size>.csv", vf)
		}
		v := validation{batch: b}
		var prog []float64
		err = readTable(fsys, vf, []string{"progress", "grad_sqr", "grad_var"}, func(f rowFields) error {
			p, err := f.float("progress")
			if err != nil {
				return err
			}
			s, err := f.float("grad_sqr")
			if err != nil {
				return err
			}
			g, err := f.float("grad_var")
			if err != nil {
				return err
			}
			prog, v.sqr, v.vari = append(prog, p), append(v.sqr, s), append(v.vari, g)
			if f.str("iteration") != "" {
				it, err := f.int("iteration", 0, 1<<40)
				if err != nil {
					return err
				}
				v.iters = append(v.iters, it)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if v.iters != nil && len(v.iters) != len(prog) {
			return fmt.Errorf("%s: the iteration column is set on %d of %d rows; want all or none", vf, len(v.iters), len(prog))
		}
		if len(prog) < a.MaxEpochs {
			return fmt.Errorf("%s: %d epochs, fewer than the %d the application trains (apps.csv)", vf, len(prog), a.MaxEpochs)
		}
		if a.progress == nil {
			a.progress = make([]float64, a.MaxEpochs+1)
			copy(a.progress[1:], prog)
		} else {
			for e := 1; e <= a.MaxEpochs; e++ {
				a.progress[e] = min(a.progress[e], prog[e-1])
			}
		}
		a.valid = append(a.valid, v)
	}
	if len(a.valid) == 0 {
		return fmt.Errorf("%s: no validation-<batch size>.csv file", dir)
	}
	slices.SortFunc(a.valid, func(x, y validation) int { return x.batch - y.batch })
	a.B0, a.MaxBatch = a.valid[0].batch, a.valid[len(a.valid)-1].batch
	for e := 1; e <= a.MaxEpochs; e++ {
		if !(a.progress[e] > a.progress[e-1]) {
			return fmt.Errorf("%s: the progress at the end of epoch %d (%g) is not above the previous epoch's", dir, e, a.progress[e])
		}
	}
	return nil
}

func digits(id string) []int {
	out := make([]int, len(id))
	for i, ch := range id {
		out[i] = int(ch - '0')
	}
	return out
}

// rowFields is one record of a table read by readTable.
type rowFields struct {
	file string
	line int
	col  map[string]int
	rec  []string
}

func (f rowFields) str(name string) string {
	k, ok := f.col[name]
	if !ok || k >= len(f.rec) {
		return ""
	}
	return strings.TrimSpace(f.rec[k])
}

func (f rowFields) bad(field, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", f.file, f.line, field, fmt.Sprintf(format, args...))
}

func (f rowFields) int(name string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(f.str(name))
	if err != nil || v < lo || v > hi {
		return 0, f.bad(name, "want an integer in %d..%d, got %q", lo, hi, f.str(name))
	}
	return v, nil
}

func (f rowFields) float(name string) (float64, error) {
	v, err := strconv.ParseFloat(f.str(name), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, f.bad(name, "want a number >= 0, got %q", f.str(name))
	}
	return v, nil
}

// readTable reads a CSV file with a header holding at least the columns
// want, calling row for each record.
func readTable(fsys fs.FS, file string, want []string, row func(rowFields) error) error {
	fh, err := fsys.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	cr := csvlimit.NewReader(fh, '#')
	cr.FieldsPerRecord = -1
	f := rowFields{file: file}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var le *csvlimit.LimitError
			if errors.As(err, &le) {
				return fmt.Errorf("%s:%d: %s", file, le.Line, le.Msg)
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d: %v", file, pe.Line, pe.Err)
			}
			return fmt.Errorf("%s: %w", file, err)
		}
		f.line, _ = cr.FieldPos(0)
		if f.col == nil {
			f.col = map[string]int{}
			for i, h := range rec {
				f.col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
			}
			for _, w := range want {
				if _, ok := f.col[w]; !ok {
					return fmt.Errorf("%s:%d: header: no column %q (want %s)", file, f.line, w, strings.Join(want, ", "))
				}
			}
			continue
		}
		f.rec = rec
		if err := row(f); err != nil {
			return err
		}
	}
	if f.col == nil {
		return fmt.Errorf("%s:1: header: empty file, want the columns %s", file, strings.Join(want, ", "))
	}
	return nil
}
