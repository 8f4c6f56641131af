package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Derived are the names other brigade commands add to a results folder
// after it was written (brigade report's page and plots, brigade sim
// --replay's trace): a folder holding them is still Brigade's own.
var Derived = []string{"report.html", "plots", "replay-jobs.csv"}

// CheckReplaceable reports whether a command may replace dir as a whole
// with a new results folder (removing what dir holds). It may when dir does
// not exist, when it is an empty folder, or when it is a results folder
// Brigade wrote and nobody added to: its run.json carries Brigade's
// schema_version and brigade_version, and every other entry is a file
// run.json lists or one of Derived. Anything else (a folder of the user's,
// ".", a run.json of another program) is refused with an error naming dir
// and what it holds. A symbolic link is refused too: the link, not its
// target, would be replaced.
func CheckReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	refuse := func(why string, a ...any) error {
		return fmt.Errorf("refusing to replace %s: %s; a results folder replaces only an empty folder or an earlier Brigade results folder (one whose run.json Brigade wrote, holding nothing else but the files run.json lists and %s): give another folder", dir, fmt.Sprintf(why, a...), strings.Join(Derived, ", "))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return refuse("it is a symbolic link")
	}
	if !fi.IsDir() {
		return refuse("it is a file, not a folder")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return refuse("it holds %s and no run.json", ents[0].Name())
	}
	var info RunInfo
	if err := json.Unmarshal(b, &info); err != nil || info.SchemaVersion < 1 || info.BrigadeVersion == "" {
		return refuse("its run.json was not written by Brigade (no schema_version and brigade_version)")
	}
	for _, e := range ents {
		n := e.Name()
		if n == "run.json" || slices.Contains(Derived, n) || slices.ContainsFunc(info.Files, func(f string) bool {
			return strings.SplitN(filepath.ToSlash(f), "/", 2)[0] == n
		}) {
			continue
		}
		return refuse("it holds %s, which Brigade did not write there", n)
	}
	return nil
}
