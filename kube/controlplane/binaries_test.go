package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeBuild writes three small executables in place of the real build.
func fakeBuild(calls *atomic.Int32, delay time.Duration) builder {
	return func(ctx context.Context, binDir string, log io.Writer) error {
		calls.Add(1)
		time.Sleep(delay)
		for _, t := range tools {
			if err := os.WriteFile(filepath.Join(binDir, t.name), []byte("#!/bin/sh\necho "+t.name+"\n"), 0o755); err != nil {
				return err
			}
		}
		fmt.Fprintln(log, "fake build done")
		return nil
	}
}

func TestBinariesBuildsOnceThenReuses(t *testing.T) {
	root := t.TempDir()
	var calls atomic.Int32
	dir, err := binaries(context.Background(), nil, root, "k1", fakeBuild(&calls, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "k1", "bin"); dir != want {
		t.Fatalf("dir = %s, want %s", dir, want)
	}
	if calls.Load() != 1 {
		t.Fatalf("first call: builder ran %d times, want 1", calls.Load())
	}
	blog, err := os.ReadFile(filepath.Join(root, "k1", "build.log"))
	if err != nil || !strings.Contains(string(blog), "fake build done") || !strings.Contains(string(blog), "built in") {
		t.Fatalf("build.log = %q, %v: want the build's output and its time", blog, err)
	}
	fi1, err := os.Stat(filepath.Join(dir, APIServerBinary))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a rebuild would show a later mtime
	var log strings.Builder
	dir2, err := binaries(context.Background(), &log, root, "k1", fakeBuild(&calls, 0))
	if err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(filepath.Join(dir2, APIServerBinary))
	if dir2 != dir || calls.Load() != 1 || !fi2.ModTime().Equal(fi1.ModTime()) || log.Len() != 0 {
		t.Fatalf("second call rebuilt: dir %s (was %s), builder ran %d times, mtime %v (was %v), log %q",
			dir2, dir, calls.Load(), fi2.ModTime(), fi1.ModTime(), log.String())
	}
	// Another key is another entry.
	if _, err := binaries(context.Background(), nil, root, "k2", fakeBuild(&calls, 0)); err != nil || calls.Load() != 2 {
		t.Fatalf("new key: err %v, builder ran %d times, want 2", err, calls.Load())
	}
}

func TestBinariesConcurrentCallsBuildOnce(t *testing.T) {
	root := t.TempDir()
	var calls atomic.Int32
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = binaries(context.Background(), nil, root, "k", fakeBuild(&calls, 300*time.Millisecond))
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("call %d: %s, %v (call 0: %s)", i, dirs[i], errs[i], dirs[0])
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("builder ran %d times under the lock, want 1", calls.Load())
	}
}

func TestBinariesFailedBuildLeavesNoEntry(t *testing.T) {
	root := t.TempDir()
	half := func(ctx context.Context, binDir string, log io.Writer) error {
		os.WriteFile(filepath.Join(binDir, APIServerBinary), []byte("half"), 0o755)
		return errors.New("compiler ran out of memory")
	}
	if _, err := binaries(context.Background(), nil, root, "k", half); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("err = %v, want the build's error", err)
	}
	short := func(ctx context.Context, binDir string, log io.Writer) error {
		return os.WriteFile(filepath.Join(binDir, EtcdBinary), []byte("x"), 0o755)
	}
	if _, err := binaries(context.Background(), nil, root, "k", short); err == nil || !strings.Contains(err.Error(), "without all") {
		t.Fatalf("err = %v, want a complaint about missing binaries", err)
	}
	assertOnly(t, root, "k.lock")
}

// assertOnly fails unless root holds exactly the names given.
func assertOnly(t *testing.T, root string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(root)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("cache root holds %q, want %q", got, names)
	}
}

// TestBinariesKilledBuildLeavesNoEntry kills (SIGKILL, so no cleanup runs)
// a process in the middle of a build, then checks that no entry appeared,
// that the lock died with it, and that the next build clears its leftovers.
func TestBinariesKilledBuildLeavesNoEntry(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHangingBuild$")
	cmd.Env = append(os.Environ(), "BRIGADE_TEST_HANGING_BUILD="+root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(root, "started")
	for i := 0; ; i++ {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if i > 300 {
			cmd.Process.Kill()
			t.Fatal("helper never started its build")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	os.Remove(started)

	if complete(filepath.Join(root, "k", "bin")) {
		t.Fatal("a killed build left a cache entry")
	}
	if _, err := os.Stat(filepath.Join(root, "k")); err == nil {
		t.Fatal("a killed build left folder k")
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, "k.tmp-*"))
	if len(leftovers) != 1 {
		t.Fatalf("want the killed build's one temporary folder, got %q", leftovers)
	}

	var calls atomic.Int32
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := binaries(ctx, &log, root, "k", fakeBuild(&calls, 0)); err != nil {
		t.Fatalf("build after the kill: %v (lock still held?)", err)
	}
	if calls.Load() != 1 || !strings.Contains(log.String(), "interrupted build") {
		t.Fatalf("builder ran %d times, log %q: want one build that removed the leftovers", calls.Load(), log.String())
	}
	assertOnly(t, root, "k", "k.lock")
}

// TestHelperHangingBuild is the process the test above kills.
func TestHelperHangingBuild(t *testing.T) {
	root := os.Getenv("BRIGADE_TEST_HANGING_BUILD")
	if root == "" {
		return // run only as the child process of the test above
	}
	hang := func(ctx context.Context, binDir string, log io.Writer) error {
		os.WriteFile(filepath.Join(binDir, APIServerBinary), []byte("half a binary"), 0o755)
		os.WriteFile(filepath.Join(root, "started"), nil, 0o644)
		time.Sleep(time.Minute)
		return errors.New("not killed")
	}
	binaries(context.Background(), nil, root, "k", hang)
}

func TestCacheKey(t *testing.T) {
	a, err := cacheKey("go1.26.8")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cacheKey("go1.26.8")
	c, _ := cacheKey("go1.27.0")
	if a != b || a == c || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(a) {
		t.Fatalf("keys %s %s %s: want 16 hex digits, stable, and changed by the Go version", a, b, c)
	}
	// The version stamped into the apiserver is the one the pins build.
	mod, err := toolFiles.ReadFile("tools/kube-apiserver.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^require k8s\.io/kubernetes ` + regexp.QuoteMeta(k8sVersion) + `$`).Match(mod) {
		t.Fatalf("tools/kube-apiserver.mod does not require k8s.io/kubernetes %s", k8sVersion)
	}
	if _, err := toolFiles.ReadFile("tools/kwok-stages.yaml"); err != nil {
		t.Fatal(err)
	}
}

func TestCacheRoot(t *testing.T) {
	t.Setenv("BRIGADE_K8S_CACHE", "/x/y")
	if d, _ := CacheRoot(); d != "/x/y" {
		t.Fatalf("CacheRoot = %s with BRIGADE_K8S_CACHE=/x/y", d)
	}
	t.Setenv("BRIGADE_K8S_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/c")
	if d, _ := CacheRoot(); d != "/c/brigade/k8s" {
		t.Fatalf("CacheRoot = %s with XDG_CACHE_HOME=/c, want /c/brigade/k8s", d)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/h")
	if d, _ := CacheRoot(); d != "/h/.cache/brigade/k8s" {
		t.Fatalf("CacheRoot = %s with HOME=/h, want /h/.cache/brigade/k8s", d)
	}
}
