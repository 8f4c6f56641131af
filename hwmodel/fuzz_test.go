package hwmodel_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// FuzzParseClusterSpec checks that no input makes the parser panic, that
// every error names its source, and that every accepted spec builds a
// cluster that passes CheckInvariants, matches the spec's counts, and
// renders to YAML that reads back to the same spec.
func FuzzParseClusterSpec(f *testing.F) {
	files, _ := filepath.Glob("testdata/spec/*.*")
	bad, _ := filepath.Glob("testdata/spec/bad/*")
	for _, file := range append(append(files, bad...), "../examples/cluster.yaml", "../examples/mig-cluster.yaml") {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range hwmodel.Presets() {
		spec, _ := hwmodel.Preset(name)
		y, err := spec.YAML()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(y)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := hwmodel.ParseClusterSpec(data, "fuzz.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error does not name the file: %q", err)
			}
			return
		}
		c, err := spec.Build()
		if err != nil {
			t.Fatalf("accepted spec does not build: %v", err)
		}
		if err := c.CheckInvariants(); err != nil {
			t.Fatalf("built cluster fails CheckInvariants: %v", err)
		}
		if c.NumNodes() != spec.NumNodes() || c.TotalGPUs() != spec.NumGPUs() {
			t.Fatalf("built %d nodes / %d GPUs, spec says %d / %d", c.NumNodes(), c.TotalGPUs(), spec.NumNodes(), spec.NumGPUs())
		}
		y, err := spec.YAML()
		if err != nil {
			t.Fatalf("accepted spec does not render: %v", err)
		}
		back, err := hwmodel.ParseClusterSpec(y, "rendered.yaml")
		if err != nil {
			t.Fatalf("rendering does not parse: %v\n%s", err, y)
		}
		if !reflect.DeepEqual(withoutSource(back), withoutSource(spec)) {
			t.Fatalf("round trip changed the spec:\n got %+v\nwant %+v\n%s", withoutSource(back), withoutSource(spec), y)
		}
	})
}
