package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// goBuild is the real builder: for each tool it writes the pinned go.mod and
// go.sum into a scratch module and runs go build there. GOFLAGS=-mod=mod
// lets go fill in what the pinned files leave implicit without touching the
// repository's copies; GOMODCACHE and GOCACHE are the user's, so a second
// build (another cache key) reuses compiled packages.
func goBuild(ctx context.Context, binDir string, log io.Writer) error {
	src, err := os.MkdirTemp("", "brigade-k8s-src-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	for _, t := range tools {
		dir := filepath.Join(src, t.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		for ext, name := range map[string]string{".mod": "go.mod", ".sum": "go.sum"} {
			b, err := toolFiles.ReadFile("tools/" + t.name + ext)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		// Keeps the pinned requirement in use should someone run go mod
		// tidy in the scratch module to refresh the pins (tools/README.md).
		stub := "//go:build tools\n\npackage tools\n\nimport _ \"" + t.pkg + "\"\n"
		if err := os.WriteFile(filepath.Join(dir, "tools.go"), []byte(stub), 0o644); err != nil {
			return err
		}
		out := filepath.Join(binDir, t.name)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags="+t.ldflags, "-o", out, t.pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
		cmd.Stdout, cmd.Stderr = log, log
		setProcAttr(cmd)
		cmd.Cancel = func() error { return killGroup(cmd.Process) }
		cmd.WaitDelay = 10 * time.Second
		t0 := time.Now()
		fmt.Fprintf(log, "controlplane: go build %s\n", t.pkg)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", t.pkg, err)
		}
		ps := cmd.ProcessState
		fmt.Fprintf(log, "controlplane: %s: wall %.0fs, CPU %.0fs (user %.0fs, sys %.0fs)\n", t.name,
			time.Since(t0).Seconds(), (ps.UserTime() + ps.SystemTime()).Seconds(), ps.UserTime().Seconds(), ps.SystemTime().Seconds())
	}
	return nil
}
