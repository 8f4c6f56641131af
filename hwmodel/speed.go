package hwmodel

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
)

// AnyClass is the class name of a speed table's generic rows: the speed of
// a model for work the table has no row of its own for.
const AnyClass = "*"

// SpeedTable maps (job class, GPU model) to relative throughput. Only
// ratios within one class mean anything: a job of class c measured on model
// r runs on model m at Speed(c, m) / Speed(c, r) of its measured pace. The
// generic rows (class AnyClass) give each model one speed for classes
// without rows of their own, on the table's common scale.
//
// The rule for a lookup (Rates.Rate): a class's own rows are used when they
// hold both models; otherwise the generic rows' ratio is used, so a class
// the table lacks, or a model its rows lack, runs at the generic speeds.
// Check refuses a table whose generic rows lack a model the cluster has.
type SpeedTable struct {
	// Source names where the table came from, for error messages.
	Source  string
	classes []string             // class names in first-seen order; [0] is AnyClass
	byClass map[string]int       // lower-cased class name -> index in classes
	speed   [][MaxModels]float64 // per class, per model; 0 = no row
	line    [][MaxModels]int     // the line each row came from; 0 = not from a file
	note    [][MaxModels]string  // each row's source column
	// pairs[{a, b}][m] is class a's co-location factor beside class b on
	// model m (0 = no row), with its line and source.
	pairs     map[[2]int]*[MaxModels]float64
	pairLine  map[[2]int]*[MaxModels]int
	pairNote  map[[2]int]*[MaxModels]string
	pairOrder [][2]int // the pairs in first-seen order
	// spread[c][s] is class c's factor for spread s (0 = no row), with its
	// line and source.
	spread     [][3]float64
	spreadLine [][3]int
	spreadNote [][3]string
}

// SpeedRow is one row of a speed table: a speed on a model, or (Spread
// set) the factor a gang's speed takes when spread.
type SpeedRow struct {
	Class  string
	Model  ModelID // when Spread is OneNode
	Spread Spread
	Speed  float64
	Source string // where the number comes from
}

// Where is the row's gpu_model cell: its model's name, or its spread.
func (r SpeedRow) Where() string {
	if r.Spread != OneNode {
		return r.Spread.String()
	}
	return Model(r.Model).Name
}

// Spread says how a placement is spread: on one node, over several nodes
// of one rack (or nodes without racks), or over several racks.
type Spread uint8

const (
	OneNode Spread = iota
	AcrossNodes
	AcrossRacks
)

// spreadNames are the words a speed table's gpu_model column takes for a
// spread factor's row.
var spreadNames = [...]string{OneNode: "", AcrossNodes: "across-nodes", AcrossRacks: "across-racks"}

func (s Spread) String() string {
	if s == OneNode {
		return "one-node"
	}
	return spreadNames[s]
}

// SpeedTableHeader is a speed table file's first line.
var SpeedTableHeader = []string{"class", "gpu_model", "speed", "source"}

//go:embed speeds.csv
var defaultSpeeds []byte

// DefaultSpeeds is the speed table Brigade ships, derived from measured
// throughputs (docs/speeds.md gives its provenance). Each call returns a
// fresh copy.
func DefaultSpeeds() *SpeedTable {
	t, err := ReadSpeedTable(bytes.NewReader(defaultSpeeds), "the default speed table")
	if err != nil {
		panic("hwmodel: the embedded speed table is invalid: " + err.Error())
	}
	return t
}

// LoadSpeedTable reads a speed table file (ReadSpeedTable's format).
func LoadSpeedTable(path string) (*SpeedTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSpeedTable(f, path)
}

// ReadSpeedTable reads a speed table: a header (class,gpu_model,speed,
// source; source may be left out), then one row per (class, model):
//
//   - class: a job class name (letters, digits, '.', '_', '-', '/', at
//     most 64 bytes; compared ignoring case), or * for the generic row;
//   - gpu_model: a catalogue name or alias, or across-nodes or
//     across-racks for a spread factor: a gang of the class spread over
//     several nodes of one rack, or over several racks, runs at speed
//     times its speed on one node (0 < speed <= 1);
//   - speed: relative throughput, a finite number > 0;
//   - a class written A+B makes a co-location row: class A progresses at
//     speed (0 < speed <= 1) times its pace alone when it shares a GPU of
//     gpu_model with one job of class B (processor sharing);
//   - source: free text saying where the number comes from.
//
// Lines starting with # are comments. A (class, model) pair given twice is
// an error. Errors are *FileError values naming name, line and field.
func ReadSpeedTable(r io.Reader, name string) (*SpeedTable, error) {
	cr := csvlimitReader(r)
	t := newSpeedTable(name)
	bad := func(line int, field, format string, args ...any) error {
		return &FileError{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	header := true
	withSource := false
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, locateCSVError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if header {
			header = false
			withSource = len(rec) == 4
			if (len(rec) != 3 && len(rec) != 4) || !slices.Equal(trimAll(rec), SpeedTableHeader[:len(rec)]) {
				return nil, bad(line, "header", "want %s (source may be left out), found %s", strings.Join(SpeedTableHeader, ","), strings.Join(rec, ","))
			}
			continue
		}
		want := 3
		if withSource {
			want = 4
		}
		if len(rec) != want {
			return nil, bad(line, "", "want %d fields as the header has, found %d", want, len(rec))
		}
		class := strings.TrimSpace(rec[0])
		if a, b, isPair := strings.Cut(class, "+"); isPair {
			if err := t.readPair(a, b, rec, line, withSource, bad); err != nil {
				return nil, err
			}
			continue
		}
		if err := checkClassName(class); err != nil {
			return nil, bad(line, "class", "%v", err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, bad(line, "speed", "want a finite number > 0, found %q", rec[2])
		}
		note := ""
		if withSource {
			note = strings.TrimSpace(rec[3])
		}
		if sp := spreadOf(rec[1]); sp != OneNode {
			if v > 1 {
				return nil, bad(line, "speed", "a spread factor is at most 1 (a gang is not faster spread than on one node), found %q", rec[2])
			}
			c := t.classIndex(class, true)
			if prev := t.spreadLine[c][sp]; prev > 0 {
				return nil, bad(line, "gpu_model", "class %s %s is given twice (first on line %d)", t.classes[c], sp, prev)
			}
			t.spread[c][sp], t.spreadLine[c][sp], t.spreadNote[c][sp] = v, line, note
			continue
		}
		m, ok := LookupModel(rec[1])
		if !ok {
			return nil, bad(line, "gpu_model", "unknown GPU model %q (known: %s; or across-nodes, across-racks)", strings.TrimSpace(rec[1]), ModelNames())
		}
		c := t.classIndex(class, true)
		if prev := t.line[c][m.ID]; prev > 0 {
			return nil, bad(line, "gpu_model", "class %s on %s is given twice (first on line %d)", t.classes[c], m.Name, prev)
		}
		t.speed[c][m.ID], t.line[c][m.ID], t.note[c][m.ID] = v, line, note
	}
	if header {
		return nil, bad(0, "", "the file is empty; want the header %s", strings.Join(SpeedTableHeader, ","))
	}
	return t, nil
}

func trimAll(rec []string) []string {
	out := make([]string, len(rec))
	for i, s := range rec {
		out[i] = strings.ToLower(strings.TrimSpace(s))
	}
	return out
}

// checkClassName says what is wrong with a class name, if anything.
func checkClassName(s string) error {
	if s == AnyClass {
		return nil
	}
	if s == "" || len(s) > 64 {
		return fmt.Errorf("want a class name of 1 to 64 bytes, or * for every class, found %q", s)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r)) {
			return fmt.Errorf("want letters, digits and . _ - / in a class name, found %q", s)
		}
	}
	return nil
}

// CheckClassName reports what is wrong with a job class name, for the
// readers of traces and generators that carry one.
func CheckClassName(s string) error {
	if s == AnyClass {
		return fmt.Errorf("* is the speed table's generic class, not a job class")
	}
	return checkClassName(s)
}

func newSpeedTable(source string) *SpeedTable {
	t := &SpeedTable{Source: source, pairs: map[[2]int]*[MaxModels]float64{}, pairLine: map[[2]int]*[MaxModels]int{}, pairNote: map[[2]int]*[MaxModels]string{}}
	t.classIndex(AnyClass, true)
	return t
}

// classIndex is the row set of class name, added when add is set; -1 when
// the table has none.
func (t *SpeedTable) classIndex(name string, add bool) int {
	key := strings.ToLower(name)
	if i, ok := t.byClass[key]; ok {
		return i
	}
	if !add {
		return -1
	}
	if t.byClass == nil {
		t.byClass = map[string]int{}
	}
	t.byClass[key] = len(t.classes)
	t.classes = append(t.classes, name)
	t.spread = append(t.spread, [3]float64{})
	t.spreadLine = append(t.spreadLine, [3]int{})
	t.spreadNote = append(t.spreadNote, [3]string{})
	t.speed = append(t.speed, [MaxModels]float64{})
	t.line = append(t.line, [MaxModels]int{})
	t.note = append(t.note, [MaxModels]string{})
	return len(t.classes) - 1
}

// Clone returns a copy that can be changed without changing t.
func (t *SpeedTable) Clone() *SpeedTable {
	c := *t
	c.classes = slices.Clone(t.classes)
	c.byClass = maps.Clone(t.byClass)
	c.speed = slices.Clone(t.speed)
	c.line = slices.Clone(t.line)
	c.note = slices.Clone(t.note)
	c.spread = slices.Clone(t.spread)
	c.pairs, c.pairLine, c.pairNote = map[[2]int]*[MaxModels]float64{}, map[[2]int]*[MaxModels]int{}, map[[2]int]*[MaxModels]string{}
	for k := range t.pairs {
		v, l, n := *t.pairs[k], *t.pairLine[k], *t.pairNote[k]
		c.pairs[k], c.pairLine[k], c.pairNote[k] = &v, &l, &n
	}
	c.pairOrder = slices.Clone(t.pairOrder)
	c.spreadLine = slices.Clone(t.spreadLine)
	c.spreadNote = slices.Clone(t.spreadNote)
	return &c
}

// Set gives class on model m the speed v (v > 0), replacing any row; the
// way a cluster spec's custom model adds its speeds.
func (t *SpeedTable) Set(class string, m ModelID, v float64, source string) error {
	if err := checkClassName(class); err != nil {
		return err
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("speed of %s on %s: want a finite number > 0, got %v", class, Model(m).Name, v)
	}
	c := t.classIndex(class, true)
	t.speed[c][m], t.line[c][m], t.note[c][m] = v, 0, source
	return nil
}

// Speed is class's speed on model m, and whether the table has that row
// (the class's own; the generic row is class AnyClass).
func (t *SpeedTable) Speed(class string, m ModelID) (float64, bool) {
	c := t.classIndex(class, false)
	if c < 0 || t.speed[c][m] == 0 {
		return 0, false
	}
	return t.speed[c][m], true
}

// Classes lists the table's classes in the order first seen, the generic
// class first.
func (t *SpeedTable) Classes() []string { return slices.Clone(t.classes) }

// Rows lists every row, class by class in Classes order, models in
// catalogue order.
func (t *SpeedTable) Rows() []SpeedRow {
	var out []SpeedRow
	for c, name := range t.classes {
		for m := range MaxModels {
			if v := t.speed[c][m]; v > 0 {
				out = append(out, SpeedRow{Class: name, Model: ModelID(m), Speed: v, Source: t.note[c][m]})
			}
		}
		for sp := AcrossNodes; sp <= AcrossRacks; sp++ {
			if v := t.spread[c][sp]; v > 0 {
				out = append(out, SpeedRow{Class: name, Spread: sp, Speed: v, Source: t.spreadNote[c][sp]})
			}
		}
	}
	for _, k := range t.pairOrder {
		for m := range MaxModels {
			if v := t.pairs[k][m]; v > 0 {
				out = append(out, SpeedRow{Class: t.classes[k[0]] + "+" + t.classes[k[1]], Model: ModelID(m), Speed: v, Source: t.pairNote[k][m]})
			}
		}
	}
	return out
}

// readPair reads a co-location row of classes a and b.
func (t *SpeedTable) readPair(a, b string, rec []string, line int, withSource bool, bad func(int, string, string, ...any) error) error {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	for _, c := range []string{a, b} {
		if err := CheckClassName(c); err != nil {
			return bad(line, "class", "a co-location row is CLASS+CLASS, two job classes: %v", err)
		}
	}
	m, ok := LookupModel(rec[1])
	if !ok {
		return bad(line, "gpu_model", "unknown GPU model %q (known: %s)", strings.TrimSpace(rec[1]), ModelNames())
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
	if err != nil || !(v > 0) || v > 1 {
		return bad(line, "speed", "a co-location factor is a number in (0, 1], found %q", rec[2])
	}
	key := [2]int{t.classIndex(a, true), t.classIndex(b, true)}
	if t.pairs[key] == nil {
		t.pairs[key], t.pairLine[key], t.pairNote[key] = new([MaxModels]float64), new([MaxModels]int), new([MaxModels]string)
		t.pairOrder = append(t.pairOrder, key)
	}
	if prev := t.pairLine[key][m.ID]; prev > 0 {
		return bad(line, "gpu_model", "class %s+%s on %s is given twice (first on line %d)", t.classes[key[0]], t.classes[key[1]], m.Name, prev)
	}
	note := ""
	if withSource {
		note = strings.TrimSpace(rec[3])
	}
	t.pairs[key][m.ID], t.pairLine[key][m.ID], t.pairNote[key][m.ID] = v, line, note
	return nil
}

// spreadOf is the spread a gpu_model cell names, OneNode for a model.
func spreadOf(cell string) Spread {
	cell = strings.ToLower(strings.TrimSpace(cell))
	for sp := AcrossNodes; sp <= AcrossRacks; sp++ {
		if cell == spreadNames[sp] {
			return sp
		}
	}
	return OneNode
}

// Check refuses a table whose generic rows lack one of models (the models
// a cluster has, and every reference model the run names): a job of a
// class the table lacks would have no speed there.
func (t *SpeedTable) Check(models ModelSet) error {
	var missing []string
	for m := range NumModels() {
		if models&(1<<m) != 0 && t.speed[0][m] == 0 {
			missing = append(missing, Model(ModelID(m)).Name)
		}
	}
	if len(missing) > 0 {
		return &FileError{File: t.Source, Field: "gpu_model", Msg: fmt.Sprintf("the generic rows (class *) lack %s, which the cluster has or the run measures durations on; add a row * for each", strings.Join(missing, ", "))}
	}
	return nil
}

// Rates is a speed table compiled for one workload: its class names
// resolved to the table's rows once, so that a rate is two loads and a
// division.
type Rates struct {
	// speed[k] is the speed row of the workload's class k (0: no class,
	// the generic row), by model.
	speed [][MaxModels]float64
	// own[k] tells whether class k has rows of its own.
	own []bool
	// spread[k][s] is class k's factor for spread s, the rule of
	// SpeedTable.spreadFactor applied.
	spread [][3]float64
	// pairs holds the co-location factors by workload classes (a<<16 | b).
	pairs map[uint32]*[MaxModels]float64
	// Unknown lists the workload's classes that the table has no rows
	// for; their jobs run at the generic speeds.
	Unknown []string
}

// Compile resolves a workload's class names (class k+1 is classes[k];
// class 0 is "none") against t.
func (t *SpeedTable) Compile(classes []string) *Rates {
	r := &Rates{speed: make([][MaxModels]float64, len(classes)+1), own: make([]bool, len(classes)+1), spread: make([][3]float64, len(classes)+1)}
	r.speed[0] = t.speed[0]
	r.spread[0] = t.spreadFactors(0)
	rowOf := make([]int, len(classes)+1) // the table's class of each workload class; -1 none
	rowOf[0] = -1
	for k, name := range classes {
		c := t.classIndex(name, false)
		rowOf[k+1] = c
		if c <= 0 {
			r.speed[k+1], r.spread[k+1] = t.speed[0], r.spread[0]
			r.Unknown = append(r.Unknown, name)
			continue
		}
		r.speed[k+1], r.own[k+1], r.spread[k+1] = t.speed[c], true, t.spreadFactors(c)
	}
	if len(t.pairs) > 0 {
		// The workload classes of each table class (several spellings
		// may name one), then every table pair over them.
		of := map[int][]uint32{}
		for k, c := range rowOf {
			if c > 0 {
				of[c] = append(of[c], uint32(k))
			}
		}
		r.pairs = map[uint32]*[MaxModels]float64{}
		for _, key := range t.pairOrder {
			for _, a := range of[key[0]] {
				for _, b := range of[key[1]] {
					r.pairs[a<<16|b] = t.pairs[key]
				}
			}
		}
	}
	return r
}

// Pair is the co-location factors of classes a and b sharing a GPU of
// model m (a's, then b's) when the table has both rows; ok is false
// otherwise, and the GPU is shared in proportion to demand.
func (r *Rates) Pair(a, b uint16, m ModelID) (fa, fb float64, ok bool) {
	if r.pairs == nil || a == 0 || b == 0 {
		return 0, 0, false
	}
	x, y := r.pairs[uint32(a)<<16|uint32(b)], r.pairs[uint32(b)<<16|uint32(a)]
	if x == nil || y == nil || x[m] == 0 || y[m] == 0 {
		return 0, 0, false
	}
	return x[m], y[m], true
}

// spreadFactors are class c's factors by spread. Across nodes: the class's
// row, else the generic row, else 1 (no slow-down where nothing says so).
// Across racks: the class's row, else its across-nodes factor when it has
// one of its own, else the generic across-racks row, else the generic
// across-nodes one, else 1; never more than across nodes.
func (t *SpeedTable) spreadFactors(c int) [3]float64 {
	pick := func(vs ...float64) float64 {
		for _, v := range vs {
			if v > 0 {
				return v
			}
		}
		return 1
	}
	own, gen := t.spread[c], t.spread[0]
	nodes := pick(own[AcrossNodes], gen[AcrossNodes])
	racks := pick(own[AcrossRacks], own[AcrossNodes], gen[AcrossRacks], gen[AcrossNodes])
	return [3]float64{OneNode: 1, AcrossNodes: nodes, AcrossRacks: min(racks, nodes)}
}

// Spread is the factor a gang of class k takes, spread as sp.
func (r *Rates) Spread(k uint16, sp Spread) float64 { return r.spread[k][sp] }

// Rate is how fast a job of class k whose durations were measured on model
// ref progresses on model on, relative to its measured pace: the class's
// own speed ratio when its rows hold both models, else the generic rows'.
// Check has made sure the generic rows hold every model a run uses.
func (r *Rates) Rate(k uint16, ref, on ModelID) float64 {
	if ref == on {
		return 1
	}
	s := &r.speed[k]
	if a, b := s[on], s[ref]; r.own[k] && a > 0 && b > 0 {
		return a / b
	}
	g := &r.speed[0]
	return g[on] / g[ref]
}

// csvlimitReader is the reader of a speed table: within csvlimit's
// bounds, # comments, fields counted by the reader.
func csvlimitReader(r io.Reader) *csv.Reader {
	cr := csvlimit.NewReader(r, '#')
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return cr
}

// locateCSVError turns a CSV reader's error into a *FileError at its line.
func locateCSVError(name string, err error) error {
	var le *csvlimit.LimitError
	if errors.As(err, &le) {
		return &FileError{File: name, Line: le.Line, Msg: le.Msg}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{File: name, Line: pe.Line, Msg: fmt.Sprintf("malformed CSV: %v", pe.Err)}
	}
	return &FileError{File: name, Msg: fmt.Sprintf("reading: %v", err)}
}
