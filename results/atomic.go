package results

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// AtomicWriteFile writes path through write so that readers see either the
// old file or the complete new one, never a partial one. It writes to a
// temporary file in path's directory (buffered), flushes, fsyncs, closes,
// sets mode 0644 and renames it over path, then fsyncs the directory (best
// effort: some filesystems refuse). If write or any step fails — or write
// panics — the temporary file is removed, path is left as it was, and the
// first error is returned.
func AtomicWriteFile(path string, write func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			_ = f.Close() // may already be closed; the first error is what matters
			_ = os.Remove(tmp)
		}
	}()

	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the platform allows it.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync() // best effort: the file itself is already synced
	_ = d.Close()
}
