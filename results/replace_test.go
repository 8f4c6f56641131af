package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckReplaceable(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	os.MkdirAll(filepath.Join(sim, "plots"), 0o755)
	if err := WriteRunJSON(filepath.Join(sim, "run.json"), RunInfo{Files: []string{"summary.json", "jobs.csv"}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sim, "summary.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(sim, "report.html"), []byte("<html>"), 0o644)
	for _, ok := range []string{filepath.Join(dir, "missing"), sim} {
		if err := CheckReplaceable(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	os.WriteFile(filepath.Join(sim, "notes.txt"), []byte("mine"), 0o644)
	os.Symlink(sim, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for path, want := range map[string]string{sim: "notes.txt", filepath.Join(dir, "link"): "symbolic link",
		filepath.Join(dir, "file"): "not a folder", dir: "no run.json"} {
		err := CheckReplaceable(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want a refusal naming it and %q", path, err, want)
		}
	}
}
