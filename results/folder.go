package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// CheckOut reports, before a run spends any time, whether WriteFolder
// could write a results folder to dir: dir may be replaced
// (CheckReplaceable), it is not the working folder or one holding it, none
// of inputs (the files the run reads; "" is skipped) lies inside it, and
// its nearest existing ancestor is a folder in which entries can be
// created. Each refusal names dir and what is in the way.
func CheckOut(dir string, inputs ...string) error {
	if dir == "" {
		return errors.New("no results folder given")
	}
	abs, err := resolved(dir)
	if err != nil {
		return err
	}
	if wd, err := os.Getwd(); err == nil {
		if w, err := resolved(wd); err == nil && within(abs, w) {
			return fmt.Errorf("refusing to replace %s: it is the working folder, or holds it; give a folder of its own", dir)
		}
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		p, err := resolved(in)
		if err != nil {
			return err
		}
		if within(abs, p) {
			return fmt.Errorf("refusing to replace %s: the run reads %s, which is inside it; give another folder", dir, in)
		}
	}
	// The nearest existing ancestor must be a folder we can write in:
	// WriteFolder creates what is missing below it, then the temporary
	// folder beside dir. (Checked first: below a file, CheckReplaceable
	// would only say "not a directory".)
	for cur := filepath.Dir(abs); ; cur = filepath.Dir(cur) {
		fi, err := os.Stat(cur)
		if (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) && cur != filepath.Dir(cur) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot write results to %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("cannot write results to %s: %s is a file, not a folder", dir, cur)
		}
		probe, err := os.MkdirTemp(cur, ".brigade-probe-*")
		if err != nil {
			return fmt.Errorf("cannot write results to %s: %s does not let us create anything in it (%v)", dir, cur, errors.Unwrap(err))
		}
		if err := os.Remove(probe); err != nil {
			return err
		}
		return CheckReplaceable(dir)
	}
}

// resolved is p made absolute with its symbolic links resolved as far as
// it exists, so that a folder reached through a link is recognised.
func resolved(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		if cur == filepath.Dir(cur) {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// within reports whether p is dir or lies inside it (both clean and
// absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// tmpPrefix is how the temporary folders of a WriteFolder to base begin.
func tmpPrefix(base string) string { return "." + base + ".tmp-" }

// WriteFolder writes a results folder whole: write fills tmp, a fresh
// folder beside dir, and only when it returns nil is tmp renamed to dir,
// replacing the folder there (which CheckReplaceable must allow, checked
// before write starts and again before the swap). If write fails or
// panics, dir is left exactly as it was and tmp is removed. The swap is
// two renames (dir aside, tmp in) and the removal of the old folder, so
// that at every moment dir is either the old folder, the new one, or (a
// crash between the renames) absent, never a mix. Temporary folders that
// a killed WriteFolder to the same dir left behind are removed first.
func WriteFolder(dir string, write func(tmp string) error) error {
	if err := CheckReplaceable(dir); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	parent, base := filepath.Dir(abs), filepath.Base(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	dropLeftovers(parent, base)
	tmp, err := os.MkdirTemp(parent, tmpPrefix(base)+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	syncDir(tmp)
	// The run took a while: the folder may have changed meanwhile.
	if err := CheckReplaceable(dir); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(abs); err == nil {
		old = tmp + ".old"
		if err := os.Rename(abs, old); err != nil {
			return fmt.Errorf("write %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, abs); err != nil {
		if old != "" {
			_ = os.Rename(old, abs)
		}
		return fmt.Errorf("write %s: %w", dir, err)
	}
	done = true
	syncDir(parent)
	if old != "" {
		_ = os.RemoveAll(old) // the old results; a failure leaves a hidden leftover, removed next time
	}
	return nil
}

// dropLeftovers removes the temporary folders that a WriteFolder to base
// killed midway left in parent (named by tmpPrefix, so they are ours).
func dropLeftovers(parent, base string) {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), tmpPrefix(base)) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
