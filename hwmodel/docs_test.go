package hwmodel_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// thousands writes n with commas, as docs/cluster.md does.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// docRow returns the table row of docs/cluster.md that starts with the
// backquoted key, or "".
func docRow(doc, key string) string {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line
		}
	}
	return ""
}

// TestDocsCoverClusterSpecs keeps docs/cluster.md from drifting: every
// catalogue model (with its aliases and memory), every preset (with its
// size) and every schema field must appear in it.
func TestDocsCoverClusterSpecs(t *testing.T) {
	data, err := os.ReadFile("../docs/cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, m := range hwmodel.Models() {
		row := docRow(doc, m.Name)
		if row == "" {
			t.Errorf("docs/cluster.md: no catalogue row for %s", m.Name)
			continue
		}
		for _, a := range m.Aliases {
			if !strings.Contains(row, "`"+a+"`") {
				t.Errorf("docs/cluster.md: row for %s lacks alias %s: %s", m.Name, a, row)
			}
		}
		mem := fmt.Sprintf("| %d GiB |", m.MemoryMiB/1024)
		if m.MemoryMiB == 0 {
			mem = "| unknown"
		}
		if !strings.Contains(row, mem) {
			t.Errorf("docs/cluster.md: row for %s lacks memory %q: %s", m.Name, mem, row)
		}
	}
	for _, name := range hwmodel.Presets() {
		row := docRow(doc, name)
		if row == "" {
			t.Errorf("docs/cluster.md: no preset row for %s", name)
			continue
		}
		spec, _ := hwmodel.Preset(name)
		size := fmt.Sprintf("| %s | %s |", thousands(spec.NumNodes()), thousands(spec.NumGPUs()))
		if !strings.Contains(row, size) {
			t.Errorf("docs/cluster.md: preset row for %s lacks its size %q: %s", name, size, row)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[hwmodel.ClusterSpec](),
		reflect.TypeFor[hwmodel.NodeGroupSpec](),
		reflect.TypeFor[hwmodel.NodeSpec](),
	} {
		for f := range typ.Fields() {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if docRow(doc, tag) == "" {
				t.Errorf("docs/cluster.md: no schema row for %s.%s (%q)", typ.Name(), f.Name, tag)
			}
		}
	}
}
