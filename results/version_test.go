package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestVersionFromBuildInfo: run.json carries the version and revision the
// binary's build information records, not a number typed into the source.
func TestVersionFromBuildInfo(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in this test binary")
	}
	want := bi.Main.Version
	if want == "" {
		want = "(devel)"
	}
	if Version != want {
		t.Errorf("Version %q, want the build's %q", Version, want)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := WriteRunJSON(path, RunInfo{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var info RunInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	if info.BrigadeVersion != Version || info.VCSRevision != Revision {
		t.Errorf("run.json has %q %q, want %q %q", info.BrigadeVersion, info.VCSRevision, Version, Revision)
	}
	if info.SchemaVersion != SchemaVersion {
		t.Errorf("schema_version %d", info.SchemaVersion)
	}
}
