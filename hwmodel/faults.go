package hwmodel

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
	"gonum.org/v1/gonum/stat/distuv"
)

// Fault is one hardware failure: node Node (an index into the cluster) or,
// when GPU >= 0, only that GPU of the node, goes out of service at At and
// comes back Repair later. GPU is -1 for a whole-node failure.
type Fault struct {
	At     Time
	Node   int
	GPU    int // -1: the whole node
	Repair Time
}

// End is when the failed hardware is back in service.
func (f Fault) End() Time { return f.At + f.Repair }

// String writes f in the form ParseFault reads, with the node's index in
// place of its name ("#12@3h+30m"); use Format for names.
func (f Fault) String() string {
	return fmt.Sprintf("#%d%s@%ss+%ss", f.Node, gpuSuffix(f.GPU),
		strconv.FormatFloat(f.At.Seconds(), 'f', -1, 64), strconv.FormatFloat(f.Repair.Seconds(), 'f', -1, 64))
}

// Format writes f as ParseFault reads it, naming the node as c does.
func (f Fault) Format(c *Cluster) string {
	return fmt.Sprintf("%s%s@%ss+%ss", c.Node(f.Node).Name, gpuSuffix(f.GPU),
		strconv.FormatFloat(f.At.Seconds(), 'f', -1, 64), strconv.FormatFloat(f.Repair.Seconds(), 'f', -1, 64))
}

func gpuSuffix(g int) string {
	if g < 0 {
		return ""
	}
	return "/gpu" + strconv.Itoa(g)
}

// Validate checks f against c: a node that exists, a GPU of that node or
// -1, a start time >= 0 and a repair time > 0.
func (f Fault) Validate(c *Cluster) error {
	switch {
	case f.Node < 0 || f.Node >= c.NumNodes():
		return fmt.Errorf("node index %d: the cluster has nodes 0..%d", f.Node, c.NumNodes()-1)
	case f.GPU < -1 || f.GPU >= c.NodeGPUs(f.Node):
		return fmt.Errorf("node %q has GPUs 0..%d, got gpu %d", c.Node(f.Node).Name, c.NodeGPUs(f.Node)-1, f.GPU)
	case f.At < 0:
		return fmt.Errorf("failure time must be >= 0, got %v s", f.At.Seconds())
	case f.Repair <= 0:
		return fmt.Errorf("repair time must be > 0, got %v s", f.Repair.Seconds())
	case f.At > math.MaxInt64-f.Repair:
		return errors.New("failure time plus repair time is out of range")
	}
	return nil
}

// SortFaults orders faults by (At, Node, GPU, Repair): the order every
// producer here returns and the engine expects.
func SortFaults(fs []Fault) {
	slices.SortStableFunc(fs, compareFaults)
}

func compareFaults(a, b Fault) int {
	switch {
	case a.At != b.At:
		return cmpInt64(int64(a.At), int64(b.At))
	case a.Node != b.Node:
		return cmpInt64(int64(a.Node), int64(b.Node))
	case a.GPU != b.GPU:
		return cmpInt64(int64(a.GPU), int64(b.GPU))
	}
	return cmpInt64(int64(a.Repair), int64(b.Repair))
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FailureStream is the second PCG word of the failure generator's random
// source. It differs from the workload's and the policy's streams, so the
// failures a run faces depend on the seed and the failure model only: never
// on the policy or the workload.
const FailureStream = 0x6661696c75726573 // "failures"

// RepairModel is the distribution of repair times.
type RepairModel struct {
	// Kind is "fixed" (always Mean), "exponential" (mean Mean) or
	// "lognormal" (mean Mean, log-space standard deviation Sigma). Empty
	// means fixed.
	Kind  string
	Mean  Time
	Sigma float64
}

// Validate checks the repair model.
func (r RepairModel) Validate() error {
	switch r.Kind {
	case "", "fixed", "exponential":
	case "lognormal":
		if !(r.Sigma > 0) || math.IsInf(r.Sigma, 0) {
			return fmt.Errorf("lognormal repair needs sigma > 0, got %v", r.Sigma)
		}
	default:
		return fmt.Errorf("repair kind %q: want fixed, exponential or lognormal", r.Kind)
	}
	if r.Mean <= 0 {
		return fmt.Errorf("mean repair time must be > 0, got %v s", r.Mean.Seconds())
	}
	return nil
}

// FailureModel describes random hardware failures: each node, and
// independently each GPU, fails after a time drawn with mean NodeMTBF
// (GPUMTBF), is repaired after a time drawn from NodeRepair (GPURepair),
// and starts afresh: a renewal process per node and per GPU. A zero MTBF
// turns that kind of failure off. A GPU failure may fall while its node is
// down; the engine treats overlapping faults as one outage. RackMTBF adds
// correlated failures: each rack (its switch) fails as a renewal process
// of its own, repaired after a time drawn from RackRepair, and takes every
// node of the rack down at the same instant for that long, as one node
// fault per node; nodes without a rack have none.
type FailureModel struct {
	NodeMTBF, GPUMTBF Time
	RackMTBF          Time
	RackRepair        RepairModel
	// Distribution of the time to failure: "exponential" (the default when
	// empty) or "weibull" with shape WeibullShape (< 1: infant mortality,
	// > 1: wear-out), scaled so that its mean is the MTBF.
	Distribution string
	WeibullShape float64
	NodeRepair   RepairModel
	GPURepair    RepairModel
}

// Enabled reports whether the model produces any failures.
func (m FailureModel) Enabled() bool { return m.NodeMTBF > 0 || m.GPUMTBF > 0 || m.RackMTBF > 0 }

// Validate checks the model.
func (m FailureModel) Validate() error {
	if m.NodeMTBF < 0 || m.GPUMTBF < 0 || m.RackMTBF < 0 {
		return errors.New("MTBF must be >= 0 (0 turns that kind of failure off)")
	}
	switch m.Distribution {
	case "", "exponential":
	case "weibull":
		if !(m.WeibullShape > 0) || math.IsInf(m.WeibullShape, 0) {
			return fmt.Errorf("weibull needs shape > 0, got %v", m.WeibullShape)
		}
	default:
		return fmt.Errorf("failure distribution %q: want exponential or weibull", m.Distribution)
	}
	if m.NodeMTBF > 0 {
		if err := m.NodeRepair.Validate(); err != nil {
			return fmt.Errorf("node repair: %w", err)
		}
	}
	if m.GPUMTBF > 0 {
		if err := m.GPURepair.Validate(); err != nil {
			return fmt.Errorf("GPU repair: %w", err)
		}
	}
	if m.RackMTBF > 0 {
		if err := m.RackRepair.Validate(); err != nil {
			return fmt.Errorf("rack repair: %w", err)
		}
	}
	return nil
}

// Schedule draws the failures of c's nodes and GPUs that start before
// horizon, sorted by (At, Node, GPU). The draws come from a PCG seeded with
// seed and FailureStream, one sub-stream per node and per GPU (so adding
// GPU failures does not move node failures, and a node's failures do not
// depend on the nodes after it). The same model, cluster, horizon and seed
// give the same schedule on every machine. Schedule panics if the model is
// invalid; call Validate first.
func (m FailureModel) Schedule(c *Cluster, horizon Time, seed uint64) []Fault {
	if err := m.Validate(); err != nil {
		panic(err)
	}
	var out []Fault
	if m.NodeMTBF > 0 {
		for i := 0; i < c.NumNodes(); i++ {
			out = m.renewal(out, i, -1, m.NodeMTBF, m.NodeRepair, horizon, seed)
		}
	}
	if m.GPUMTBF > 0 {
		for i := 0; i < c.NumNodes(); i++ {
			for g := 0; g < c.NodeGPUs(i); g++ {
				out = m.renewal(out, i, g, m.GPUMTBF, m.GPURepair, horizon, seed)
			}
		}
	}
	if m.RackMTBF > 0 && c.NumRacks() > 0 {
		nodes := make([][]int, c.NumRacks())
		for i := 0; i < c.NumNodes(); i++ {
			if r := c.NodeRack(i); r >= 0 {
				nodes[r] = append(nodes[r], i)
			}
		}
		for r := range nodes {
			// The rack's own key lies above every node's and GPU's.
			for _, f := range m.renewal(nil, 0, -1, m.RackMTBF, m.RackRepair, horizon, seed^rackStream(r)) {
				for _, i := range nodes[r] {
					out = append(out, Fault{At: f.At, Node: i, GPU: -1, Repair: f.Repair})
				}
			}
		}
	}
	SortFaults(out)
	return out
}

// rackStream separates rack r's failures from every node's and GPU's: a
// renewal keyed like node 0's, drawn from the seed mixed with this.
func rackStream(r int) uint64 { return subSeed(0x7261636b, uint64(r)) } // "rack"

// subSeed mixes seed with a unit's key (splitmix64), so each node and GPU
// draws from its own well-separated sequence.
func subSeed(seed uint64, key uint64) uint64 {
	z := seed ^ (key+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// renewal appends the failures of one unit (node i, GPU g or -1).
func (m FailureModel) renewal(out []Fault, i, g int, mtbf Time, rep RepairModel, horizon Time, seed uint64) []Fault {
	key := uint64(i)<<7 | uint64(g+1) // g+1 <= 64 fits 7 bits
	src := rand.NewPCG(subSeed(seed, key), FailureStream)
	ttf := m.ttf(mtbf, src)
	repair := repairDist(rep, src)
	t := Time(0)
	for {
		t += atLeastOne(FromSeconds(ttf.Rand()))
		if t >= horizon || t < 0 {
			return out
		}
		r := atLeastOne(FromSeconds(repair.Rand()))
		out = append(out, Fault{At: t, Node: i, GPU: g, Repair: r})
		t += r
	}
}

func atLeastOne(t Time) Time {
	if t < 1 {
		return 1
	}
	return t
}

type randomer interface{ Rand() float64 }

type fixed float64

func (f fixed) Rand() float64 { return float64(f) }

func (m FailureModel) ttf(mtbf Time, src rand.Source) randomer {
	mean := mtbf.Seconds()
	if m.Distribution == "weibull" {
		k := m.WeibullShape
		return distuv.Weibull{K: k, Lambda: mean / math.Gamma(1+1/k), Src: src}
	}
	return distuv.Exponential{Rate: 1 / mean, Src: src}
}

func repairDist(r RepairModel, src rand.Source) randomer {
	mean := r.Mean.Seconds()
	switch r.Kind {
	case "exponential":
		return distuv.Exponential{Rate: 1 / mean, Src: src}
	case "lognormal":
		// E[X] = exp(mu + sigma²/2) = mean.
		return distuv.LogNormal{Mu: math.Log(mean) - r.Sigma*r.Sigma/2, Sigma: r.Sigma, Src: src}
	}
	return fixed(mean)
}

// nodeIndex maps node names to indices.
func nodeIndex(c *Cluster) map[string]int {
	m := make(map[string]int, c.NumNodes())
	for i := 0; i < c.NumNodes(); i++ {
		m[c.Node(i).Name] = i
	}
	return m
}

// nodeRange names the cluster's first and last nodes, for errors.
func nodeRange(c *Cluster) string {
	switch n := c.NumNodes(); n {
	case 0:
		return " (it has no nodes)"
	case 1:
		return fmt.Sprintf(" (its node is %s)", c.Node(0).Name)
	default:
		return fmt.Sprintf(" (its nodes are %s … %s)", c.Node(0).Name, c.Node(n-1).Name)
	}
}

// ParseFault reads one named failure: "node-12@3h+30m" (node node-12 fails
// 3 hours in and is repaired 30 minutes later) or "node-12/gpu3@3h+30m"
// (only its GPU 3). Durations are as ParseDuration reads them.
func ParseFault(s string, c *Cluster) (Fault, error) {
	f, err := parseFault(s, c, nil)
	if err != nil {
		return Fault{}, fmt.Errorf("failure %q: %w", s, err)
	}
	return f, nil
}

func parseFault(s string, c *Cluster, names map[string]int) (Fault, error) {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return Fault{}, errors.New("want NODE@TIME+REPAIR or NODE/gpuN@TIME+REPAIR, e.g. node-12@3h+30m")
	}
	unit, when := s[:at], s[at+1:]
	plus := strings.IndexByte(when, '+')
	if plus < 0 {
		return Fault{}, errors.New("want TIME+REPAIR after @, e.g. 3h+30m")
	}
	start, err := ParseDuration(when[:plus])
	if err != nil {
		return Fault{}, fmt.Errorf("time: %w", err)
	}
	repair, err := ParseDuration(when[plus+1:])
	if err != nil {
		return Fault{}, fmt.Errorf("repair: %w", err)
	}
	name, gpu := unit, -1
	if k := strings.LastIndex(unit, "/gpu"); k >= 0 {
		g, err := strconv.Atoi(unit[k+len("/gpu"):])
		if err != nil || g < 0 {
			return Fault{}, fmt.Errorf("GPU %q: want /gpuN with N a GPU index", unit[k+1:])
		}
		name, gpu = unit[:k], g
	}
	f := Fault{At: start, GPU: gpu, Repair: repair}
	if names == nil {
		names = nodeIndex(c)
	}
	i, ok := names[name]
	if !ok {
		return Fault{}, fmt.Errorf("no node named %q in the cluster%s", name, nodeRange(c))
	}
	f.Node = i
	if err := f.Validate(c); err != nil {
		return Fault{}, err
	}
	return f, nil
}

// FaultTraceHeader is the header of a failure trace file.
var FaultTraceHeader = []string{"time_s", "node", "gpu", "duration_s"}

// ReadFaultTrace reads a failure trace: a CSV file with the header
// time_s,node,gpu,duration_s, one failure a line: the time it starts
// (seconds), the node's name, the GPU's index or empty for the whole node,
// and how long it lasts (seconds). Lines starting with # are comments.
// Errors name the file, the line and the field. The faults come back
// sorted by (At, Node, GPU).
func ReadFaultTrace(path string, c *Cluster) ([]Fault, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadFaults(f, path, c)
}

// ReadFaults reads a failure trace from r; name labels its errors.
func ReadFaults(r io.Reader, name string, c *Cluster) ([]Fault, error) {
	cr := csvlimit.NewReader(r, '#')
	cr.FieldsPerRecord = len(FaultTraceHeader)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	names := nodeIndex(c)
	var out []Fault
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var le *csvlimit.LimitError
			if errors.As(err, &le) {
				return nil, fmt.Errorf("%s:%d: %s", name, le.Line, le.Msg)
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			for i, h := range FaultTraceHeader {
				if strings.TrimSpace(rec[i]) != h {
					return nil, fmt.Errorf("%s:%d: header: column %d is %q, want %s", name, line, i+1, rec[i], strings.Join(FaultTraceHeader, ","))
				}
			}
			continue
		}
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s: %s", name, line, field, fmt.Sprintf(format, args...))
		}
		secs := func(field, s string) (Time, error) {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 9e12 {
				return 0, bad(field, "%q is not a number of seconds", s)
			}
			return FromSeconds(v), nil
		}
		at, err := secs("time_s", rec[0])
		if err != nil {
			return nil, err
		}
		if at < 0 {
			return nil, bad("time_s", "must be >= 0, got %s", rec[0])
		}
		node, ok := names[strings.TrimSpace(rec[1])]
		if !ok {
			return nil, bad("node", "no node named %q in the cluster", rec[1])
		}
		gpu := -1
		if g := strings.TrimSpace(rec[2]); g != "" {
			gpu, err = strconv.Atoi(g)
			if err != nil || gpu < 0 || gpu >= c.NodeGPUs(node) {
				return nil, bad("gpu", "%q: want empty (whole node) or a GPU index in 0..%d", rec[2], c.NodeGPUs(node)-1)
			}
		}
		d, err := secs("duration_s", rec[3])
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, bad("duration_s", "must be > 0, got %s", rec[3])
		}
		f := Fault{At: at, Node: node, GPU: gpu, Repair: d}
		if err := f.Validate(c); err != nil {
			return nil, bad("duration_s", "%v", err)
		}
		out = append(out, f)
	}
	if first {
		return nil, fmt.Errorf("%s: empty: want the header %s", name, strings.Join(FaultTraceHeader, ","))
	}
	SortFaults(out)
	return out, nil
}

// RetryBackoff is the delay before the k-th retry (k >= 1) of a job under
// exponential back-off: base·factor^(k−1), the formula brigade sim's
// --backoff and --backoff-factor and brigade live's share. It is clamped
// to 1e18 µs (about 31,700 years) so that adding it to a time cannot
// overflow (times stay below 1e18 µs); base <= 0 is no back-off.
func RetryBackoff(base Time, factor float64, k int) Time {
	if base <= 0 {
		return 0
	}
	return Time(min(float64(base)*math.Pow(factor, float64(k-1)), 1e18))
}

// DeadlineAttempts is the deadline-aware retry rule, shared by the
// simulator and live mode:
// min(max, max(1, floor(remaining / avgRun))) further attempts, where
// remaining is the time left until the deadline. avgRun <= 0 is treated as
// 1 µs.
func DeadlineAttempts(remaining, avgRun Time, max int) int {
	if avgRun <= 0 {
		avgRun = 1
	}
	n := int64(0)
	if remaining > 0 {
		n = int64(remaining / avgRun)
	}
	return int(min(int64(max), max64(1, n)))
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
