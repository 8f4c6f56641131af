package fill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
)

// PublishedPolicy maps a placement name to the policy name of the FGD
// artifact's result files (sc_policy without its number), or "".
func PublishedPolicy(name string) string {
	switch name {
	case "fgd":
		return "FGD"
	case "bestfit":
		return "BestFit"
	case "dotprod":
		return "DotProd"
	case "packing":
		return "GpuPacking"
	case "clustering":
		return "GpuClustering"
	case "random":
		return "Random"
	}
	return ""
}

// Published holds the FGD artifact's per-seed discrete curves
// (fgd-atc23/analysis_allo_discrete.csv, and analysis_frag_ratio_discrete.csv
// when present): the GPU allocation ratio and the fragmentation ratio at
// every whole arrived percent, per trace, policy, load ("tune") and seed.
type Published struct {
	Dir         string // the folder the files were read from
	alloc, frag map[pubKey][]float64
}

type pubKey struct {
	trace, policy string // policy as in PublishedPolicy
	tune          string // loadKey of the tune column, e.g. "1.3"
	seed          uint64
}

// DefaultPublishedDir is where FindPublished looks when given no folder,
// relative to the working directory.
const DefaultPublishedDir = "../shared/reference-results"

// FindPublished reads the published results from dir: a folder holding
// fgd-atc23/, or fgd-atc23 itself. With dir "" it tries
// DefaultPublishedDir and returns (nil, nil) when that is absent.
func FindPublished(dir string) (*Published, error) {
	if dir == "" {
		p, err := FindPublished(DefaultPublishedDir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return p, err
	}
	for _, d := range []string{filepath.Join(dir, "fgd-atc23"), dir} {
		if _, err := os.Stat(filepath.Join(d, "analysis_allo_discrete.csv")); err == nil {
			return LoadPublished(d)
		}
	}
	return nil, fmt.Errorf("published results: no analysis_allo_discrete.csv in %s or %s: %w", filepath.Join(dir, "fgd-atc23"), dir, fs.ErrNotExist)
}

// LoadPublished reads analysis_allo_discrete.csv (required) and
// analysis_frag_ratio_discrete.csv (optional) from dir.
func LoadPublished(dir string) (*Published, error) {
	p := &Published{Dir: dir}
	var err error
	if p.alloc, err = readDiscrete(filepath.Join(dir, "analysis_allo_discrete.csv")); err != nil {
		return nil, err
	}
	if p.frag, err = readDiscrete(filepath.Join(dir, "analysis_frag_ratio_discrete.csv")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return p, nil
}

// readDiscrete reads one of the artifact's discrete tables: columns
// workload, sc_policy ("06-FGD"), tune, seed, optionally total_gpus, then
// one column per whole percent "0", "1", ...; an empty cell is NaN.
func readDiscrete(path string) (map[pubKey][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csvlimit.NewReader(f, 0)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, readError(path, "reading the header: ", err)
	}
	col := map[string]int{}
	pct := []int{} // column index of percent k, in k order
	for i, h := range head {
		col[h] = i
		if k, err := strconv.Atoi(h); err == nil && k == len(pct) {
			pct = append(pct, i)
		}
	}
	for _, c := range []string{"workload", "sc_policy", "tune", "seed"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: no column %q in the header", path, c)
		}
	}
	out := map[pubKey][]float64{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, readError(path, "", err)
		}
		line, _ := r.FieldPos(0)
		pol := rec[col["sc_policy"]]
		if _, after, ok := strings.Cut(pol, "-"); ok {
			pol = after
		}
		seed, err := strconv.ParseUint(rec[col["seed"]], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: field \"seed\": want a whole number, found %q", path, line, rec[col["seed"]])
		}
		vals := make([]float64, len(pct))
		for k, i := range pct {
			vals[k] = math.NaN()
			if i < len(rec) && rec[i] != "" {
				if vals[k], err = strconv.ParseFloat(rec[i], 64); err != nil {
					return nil, fmt.Errorf("%s:%d: field %q: want a number, found %q", path, line, head[i], rec[i])
				}
			}
		}
		tune, err := strconv.ParseFloat(rec[col["tune"]], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: field \"tune\": want a number, found %q", path, line, rec[col["tune"]])
		}
		out[pubKey{rec[col["workload"]], pol, loadKey(tune), seed}] = vals
	}
}

// readError locates an error reading path: a record over csvlimit's
// bounds at path:line, like the errors of its cells; any other error after
// the path and what was being read.
func readError(path, reading string, err error) error {
	var le *csvlimit.LimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %s", path, le.Line, le.Msg)
	}
	return fmt.Errorf("%s: %s%v", path, reading, err)
}

// Mean is the published mean GPU allocation ratio of trace under policy
// (a placement name) at arrived percent k, for load: over the seeds given
// that the files have, or over all the files' seeds when they have none of
// them. ok is false when nothing is published for it.
func (p *Published) Mean(trace, policy string, load float64, k int, seeds []uint64) (float64, bool) {
	return p.mean(p.alloc, trace, policy, load, k, seeds)
}

// FragMean is Mean for the fragmentation ratio (% of idle GPU milli).
func (p *Published) FragMean(trace, policy string, load float64, k int, seeds []uint64) (float64, bool) {
	return p.mean(p.frag, trace, policy, load, k, seeds)
}

// Seeds lists the seeds the files have for trace, policy and load, sorted.
func (p *Published) Seeds(trace, policy string, load float64) []uint64 {
	var out []uint64
	if p == nil {
		return nil
	}
	for key := range p.alloc {
		if key.trace == trace && key.policy == PublishedPolicy(policy) && key.tune == loadKey(load) {
			out = append(out, key.seed)
		}
	}
	slices.Sort(out)
	return out
}

// loadKey writes a load the way keys hold it.
func loadKey(load float64) string { return strconv.FormatFloat(load, 'g', -1, 64) }

func (p *Published) mean(m map[pubKey][]float64, trace, policy string, load float64, k int, seeds []uint64) (float64, bool) {
	if p == nil || m == nil || PublishedPolicy(policy) == "" || k < 0 {
		return 0, false
	}
	all := p.Seeds(trace, policy, load)
	use := make([]uint64, 0, len(seeds))
	for _, s := range seeds {
		if slices.Contains(all, s) {
			use = append(use, s)
		}
	}
	if len(use) == 0 {
		use = all
	}
	var sum float64
	n := 0
	for _, seed := range use {
		vals := m[pubKey{trace, PublishedPolicy(policy), loadKey(load), seed}]
		if k < len(vals) && !math.IsNaN(vals[k]) {
			sum += vals[k]
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
