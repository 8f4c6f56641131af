package hwmodel

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/csvlimit"
)

// FileError locates a problem in a file hwmodel reads (an Alibaba openb
// node list, a speed table): the file, the 1-based line (0 when the problem
// is not on one line), the column, and what was expected. Its text reads
// like workloads.ParseError:
// "nodes.csv:12: field \"gpu\": want an integer in 0..64, found \"x\"".
type FileError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// openbNodeColumns are the columns of an openb node list, in file order.
var openbNodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

// IsOpenBNodeListHeader reports whether a CSV header line names the columns
// of an Alibaba openb node list (sn, cpu_milli, memory_mib, gpu, model, in
// any order, any case; other columns allowed). ResolveCluster uses it to
// tell a node list from a YAML or JSON spec.
func IsOpenBNodeListHeader(line string) bool {
	line = strings.TrimPrefix(line, "\ufeff")
	have := map[string]bool{}
	for _, h := range strings.Split(line, ",") {
		have[strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(h), `"`)))] = true
	}
	for _, c := range openbNodeColumns {
		if !have[c] {
			return false
		}
	}
	return true
}

// LoadOpenBNodeList reads an Alibaba GPU cluster trace v2023 ("openb") node
// list from a file; see ParseOpenBNodeList. The spec is named after the
// file, without its directory and its .csv suffix.
func LoadOpenBNodeList(path string) (*ClusterSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	if len(data) > maxSpecBytes {
		return nil, &FileError{File: path, Msg: fmt.Sprintf("file is larger than %d MiB; is it a node list?", maxSpecBytes>>20)}
	}
	name := strings.TrimSuffix(filepath.Base(path), ".csv")
	return ParseOpenBNodeList(bytes.NewReader(data), path, name)
}

// ParseOpenBNodeList reads an openb node list: a header naming the columns
// sn, cpu_milli, memory_mib, gpu and model (any order and case; other
// columns are ignored), then one node per line:
//
//   - sn: the node's name, unique, without spaces;
//   - cpu_milli, memory_mib: its CPU in milli-cores and memory in MiB,
//     whole numbers in 0..UnlimitedCapacity, kept exactly as given;
//   - gpu: its GPU count, 0..MaxGPUsPerNode;
//   - model: its GPU model, a catalogue name or alias (P100, T4, V100M16,
//     V100M32, A10, G2, G3, ...); it may be empty only when gpu is 0 (the
//     CPU-only nodes of openb_node_list_all_node.csv).
//
// The result lists the nodes individually, in file order, under the given
// name; it has passed Validate. Errors are *FileError values naming
// file, line, column and what was expected; file names the input in them.
func ParseOpenBNodeList(r io.Reader, file, name string) (*ClusterSpec, error) {
	cr := csvlimit.NewReader(r, 0)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	bad := func(line int, field, format string, args ...any) error {
		return &FileError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	readErr := func(err error, after int) error {
		var le *csvlimit.LimitError
		if errors.As(err, &le) {
			return bad(le.Line, "", "%s", le.Msg)
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return bad(pe.Line, "", "malformed CSV: %v", pe.Err)
		}
		return bad(0, "", "reading the input after line %d: %v", after, err)
	}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, bad(1, "", "want a header line naming the columns %s, found an empty file", strings.Join(openbNodeColumns, ","))
	}
	if err != nil {
		return nil, readErr(err, 0)
	}
	hline, _ := cr.FieldPos(0)
	col := make(map[string]int, len(header))
	width := len(header)
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		h = strings.ToLower(strings.TrimSpace(h))
		if j, dup := col[h]; dup {
			return nil, bad(hline, h, "column %q appears twice in the header (columns %d and %d)", h, j+1, i+1)
		}
		col[h] = i
	}
	for _, c := range openbNodeColumns {
		if _, ok := col[c]; !ok {
			return nil, bad(hline, c, "required column %q is missing from the header %q (want %s)", c, strings.Join(header, ","), strings.Join(openbNodeColumns, ","))
		}
	}

	spec := &ClusterSpec{Name: name, Source: file}
	seen := map[string]int{}
	totalGPUs, line := 0, hline
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(err, line)
		}
		line, _ = cr.FieldPos(0)
		if len(rec) != width {
			return nil, bad(line, "", "want %d fields as in the header on line %d, found %d", width, hline, len(rec))
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		integer := func(c string, hi int64) (int64, error) {
			s := get(c)
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 || n > hi {
				return 0, bad(line, c, "want a whole number in 0..%d, found %q", hi, s)
			}
			return n, nil
		}
		sn := get("sn")
		if msg := checkName(sn, maxNameLen); msg != "" {
			return nil, bad(line, "sn", "want a node name of printable characters without spaces, found %q: it %s", sn, msg)
		}
		if prev, dup := seen[sn]; dup {
			return nil, bad(line, "sn", "node name %q repeats line %d", sn, prev)
		}
		seen[sn] = line
		cpu, err := integer("cpu_milli", UnlimitedCapacity)
		if err != nil {
			return nil, err
		}
		mem, err := integer("memory_mib", UnlimitedCapacity)
		if err != nil {
			return nil, err
		}
		gpus, err := integer("gpu", MaxGPUsPerNode)
		if err != nil {
			return nil, err
		}
		model := get("model")
		switch {
		case model == "" && gpus > 0:
			return nil, bad(line, "model", "want the GPU model of a node with %d GPUs, found an empty cell (known: %s)", gpus, ModelNames())
		case model != "":
			m, ok := LookupModel(model)
			if !ok {
				return nil, bad(line, "model", "want a GPU model name, found %q (known: %s, or an alias, see docs/cluster.md)", model, ModelNames())
			}
			model = m.Name
		}
		if len(spec.Nodes) >= MaxSpecNodes {
			return nil, bad(line, "", "want at most %d nodes in a node list", MaxSpecNodes)
		}
		if totalGPUs += int(gpus); totalGPUs > MaxSpecGPUs {
			return nil, bad(line, "gpu", "want at most %d GPUs in a node list", MaxSpecGPUs)
		}
		spec.Nodes = append(spec.Nodes, NodeSpec{Name: sn, GPUModel: model, GPUs: int(gpus), CPUMilli: &cpu, MemoryMiB: &mem})
	}
	if len(spec.Nodes) == 0 {
		return nil, bad(0, "", "the node list has a header but no nodes")
	}
	if err := spec.Validate(); err != nil { // a backstop: every value was checked above
		return nil, bad(0, "", "%v", err)
	}
	return spec, nil
}

// sniffOpenBNodeList reports whether the file at path starts with an openb
// node list header (after blank lines).
func sniffOpenBNodeList(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			return IsOpenBNodeListHeader(line)
		}
	}
	return false
}
