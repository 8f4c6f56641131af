package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// brigadeFolder writes a results folder as a run with the given seed
// would: run.json listing summary.json, summary.json, and plots/ unless
// noPlots.
func brigadeFolder(t *testing.T, dir string, seed uint64, noPlots bool) error {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"seed":`+strconv.FormatUint(seed, 10)+`}`), 0o644); err != nil {
		return err
	}
	if !noPlots {
		if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "plots", "wait-cdf.svg"), []byte("<svg/>"), 0o644); err != nil {
			return err
		}
	}
	return WriteRunJSON(filepath.Join(dir, "run.json"), RunInfo{Seed: seed, Files: []string{"summary.json"}})
}

// tree lists every path under dir (relative, slash-separated) with the
// content of files, so that two trees compare as values.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out = append(out, filepath.ToSlash(rel)+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		out = append(out, filepath.ToSlash(rel)+"="+string(b))
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteFolder: a folder is written whole or not at all. A write that
// fails or panics leaves the earlier folder exactly as it was and no
// temporary folder; a write that succeeds replaces the earlier folder as
// a whole, so files the new run does not write (plots under --no-plots)
// do not survive from the old one.
func TestWriteFolder(t *testing.T) {
	diskFull := errors.New("no space left on device")
	tests := []struct {
		name     string
		before   func(t *testing.T, out string) // nil: out does not exist
		write    func(t *testing.T, tmp string) error
		wantErr  string
		wantSeed string // summary.json afterwards; "" when out must not exist
		plots    bool   // whether plots/ exists afterwards
	}{
		{"fresh", nil, func(t *testing.T, tmp string) error { return brigadeFolder(t, tmp, 2, false) }, "", "2", true},
		{"replaces an earlier run", func(t *testing.T, out string) { brigadeFolder(t, out, 1, false) },
			func(t *testing.T, tmp string) error { return brigadeFolder(t, tmp, 2, false) }, "", "2", true},
		{"no plots leaves no old plots", func(t *testing.T, out string) { brigadeFolder(t, out, 1, false) },
			func(t *testing.T, tmp string) error { return brigadeFolder(t, tmp, 2, true) }, "", "2", false},
		{"replaces an empty folder", func(t *testing.T, out string) {},
			func(t *testing.T, tmp string) error { return brigadeFolder(t, tmp, 2, true) }, "", "2", false},
		{"failed write keeps the old run", func(t *testing.T, out string) { brigadeFolder(t, out, 1, false) },
			func(t *testing.T, tmp string) error {
				// Half the new run is written, then the disk fills.
				os.WriteFile(filepath.Join(tmp, "summary.json"), []byte(`{"seed":2}`), 0o644)
				return diskFull
			}, "no space left", "1", true},
		{"failed first write leaves nothing", nil, func(t *testing.T, tmp string) error { return diskFull }, "no space left", "", false},
		{"user folder is refused", func(t *testing.T, out string) { os.WriteFile(filepath.Join(out, "thesis.tex"), []byte("mine"), 0o644) },
			func(t *testing.T, tmp string) error {
				t.Error("write called for a folder that may not be replaced")
				return nil
			},
			"it holds thesis.tex and no run.json", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			if tc.before != nil {
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
				tc.before(t, out)
			}
			was := tree(t, out)
			err := WriteFolder(out, func(tmp string) error { return tc.write(t, tmp) })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if got := tree(t, out); !slices.Equal(got, was) {
					t.Errorf("a failed write changed %s:\nbefore %q\nafter  %q", out, was, got)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) > 1 || len(ents) == 1 && ents[0].Name() != "out" {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("beside out: %v; want nothing but out", names)
			}
			if tc.wantErr != "" {
				return
			}
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil || string(b) != `{"seed":`+tc.wantSeed+`}` {
				t.Errorf("summary.json %q, %v; want seed %s", b, err, tc.wantSeed)
			}
			if _, err := os.Stat(filepath.Join(out, "plots")); (err == nil) != tc.plots {
				t.Errorf("plots/ exists: %v, want %v", err == nil, tc.plots)
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("out: %v, %v; want a folder of mode 0755", fi.Mode(), err)
			}
		})
	}
}

// TestWriteFolderPanic: a writer that panics leaves the old folder and no
// temporary one; the panic goes on up.
func TestWriteFolderPanic(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	os.Mkdir(out, 0o755)
	brigadeFolder(t, out, 1, false)
	was := tree(t, out)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		WriteFolder(out, func(tmp string) error { panic("boom") })
	}()
	if got := tree(t, out); !slices.Equal(got, was) {
		t.Errorf("changed: %q", got)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("%d entries beside out, want none", len(ents)-1)
	}
}

// TestWriteFolderDropsLeftovers: the temporary folders a killed write
// left beside out (its own name pattern) go at the next write; other
// hidden folders stay.
func TestWriteFolderDropsLeftovers(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	for _, d := range []string{".out.tmp-123", ".out.tmp-123.old", ".other.tmp-9", ".outx"} {
		os.MkdirAll(filepath.Join(parent, d, "x"), 0o755)
	}
	if err := WriteFolder(out, func(tmp string) error { return brigadeFolder(t, tmp, 1, true) }); err != nil {
		t.Fatal(err)
	}
	var names []string
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{".other.tmp-9", ".outx", "out"}; !slices.Equal(names, want) {
		t.Errorf("left %v, want %v", names, want)
	}
}

// TestCheckOut: the refusals come before any work and name the folder and
// what is in the way.
func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	earlier := filepath.Join(dir, "earlier")
	os.Mkdir(earlier, 0o755)
	brigadeFolder(t, earlier, 1, false)
	os.WriteFile(filepath.Join(earlier, "replay-jobs.csv"), []byte("name\n"), 0o644)
	wd, _ := os.Getwd()
	tests := []struct {
		out    string
		inputs []string
		want   string // "" accepts
	}{
		{filepath.Join(dir, "new"), nil, ""},
		{filepath.Join(dir, "a", "b", "c"), nil, ""},
		{earlier, []string{filepath.Join(dir, "file")}, ""},
		{filepath.Join(file, "out"), nil, file + " is a file, not a folder"},
		{filepath.Join(file, "a", "b"), nil, file + " is a file, not a folder"},
		{file, nil, "it is a file, not a folder"},
		{dir, nil, "it holds earlier and no run.json"},
		{earlier, []string{filepath.Join(earlier, "replay-jobs.csv")}, "the run reads " + filepath.Join(earlier, "replay-jobs.csv") + ", which is inside it"},
		{".", nil, "it is the working folder, or holds it"},
		{filepath.Dir(wd), nil, "it is the working folder, or holds it"},
		{"", nil, "no results folder"},
	}
	for _, tc := range tests {
		err := CheckOut(tc.out, tc.inputs...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.out, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.out)):
			t.Errorf("%s: %v; want a refusal naming it and %q", tc.out, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CheckOut created folders: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("CheckOut left %d entries in %s, want the 2 there before", len(ents), dir)
	}
}
