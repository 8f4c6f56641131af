package workloads

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ReadFile reads a trace file in the named format (a registered Format's
// name, see FormatNames), or, with AutoFormat or "", in the format its
// header tells (DetectFormat). A path ending in ".gz" is decompressed on
// the fly. Problems with the file's content are *ParseError values naming
// the path; failing to open the file returns the operating system's error
// (a *fs.PathError).
func ReadFile(path, format string) (*Workload, error) {
	if format == AutoFormat || format == "" {
		var err error
		if format, err = DetectFormat(path); err != nil {
			return nil, err
		}
	}
	fm, ok := LookupFormat(format)
	if !ok {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("unknown trace format %q; want %s", format, orList(FormatNames()))}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(f, path)
	if err != nil {
		return nil, err
	}
	return fm.Read(r, path)
}

// maybeGunzip wraps f in a gzip reader when path ends in ".gz".
func maybeGunzip(f io.Reader, path string) (io.Reader, error) {
	br := bufio.NewReaderSize(f, 1<<16)
	if !strings.HasSuffix(path, ".gz") {
		return br, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, &ParseError{File: path, Msg: "want a gzip-compressed file (the name ends in .gz): " + err.Error()}
	}
	return z, nil
}

var tenantColumns = []column{{"tenant", true}, {"weight", true}}

// ReadTenantWeights reads fair-share weights from a CSV file with the
// header "tenant,weight" (see ReadTenants). Apply them with
// Workload.ApplyTenantWeights, or pass them to Build.
func ReadTenantWeights(path string) ([]Tenant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(f, path)
	if err != nil {
		return nil, err
	}
	return ReadTenants(r, path)
}

// ReadTenants reads tenant weights as CSV: a header with the columns tenant
// and weight (in either order), then one tenant per line with a finite
// weight > 0. Lines starting with '#' are comments; a tenant may appear
// once only.
func ReadTenants(r io.Reader, file string) ([]Tenant, error) {
	t, err := openTable(r, file, tenantColumns, true, true)
	if err != nil {
		return nil, err
	}
	var out []Tenant
	line := make(map[string]int)
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		name := t.get("tenant")
		if name == "" {
			return nil, t.errorf("tenant", "want a tenant name, found an empty cell")
		}
		if l, dup := line[name]; dup {
			return nil, t.errorf("tenant", "tenant %q already has a weight on line %d", name, l)
		}
		line[name] = t.line
		s := t.get("weight")
		wt, err := strconv.ParseFloat(s, 64)
		if err != nil || !(wt > 0) || math.IsInf(wt, 0) {
			return nil, t.errorf("weight", "want a finite number > 0, found %q", s)
		}
		out = append(out, Tenant{Name: name, Weight: wt})
	}
}
