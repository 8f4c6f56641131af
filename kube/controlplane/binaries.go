package controlplane

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// toolFiles holds the pinned module files of the three programs. They are
// stored as NAME.mod and NAME.sum, not go.mod, because a folder with a go.mod
// would be a module of its own and go:embed cannot reach into it.
//
//go:embed tools/*.mod tools/*.sum tools/kwok-stages.yaml
var toolFiles embed.FS

// Binary names in the directory Binaries returns.
const (
	APIServerBinary = "kube-apiserver"
	EtcdBinary      = "etcd"
	KWOKBinary      = "kwok"
)

// k8sVersion is what the apiserver reports; it must agree with the
// k8s.io/kubernetes version in tools/apiserver.mod (a test checks).
const k8sVersion = "v1.37.2"

// tool is one program of the control plane: the module files it is built
// from and the package and flags of its build.
type tool struct {
	name    string // binary name and the stem of tools/NAME.mod
	pkg     string
	ldflags string
}

var tools = []tool{
	{APIServerBinary, "k8s.io/kubernetes/cmd/kube-apiserver", "-s -w" +
		" -X k8s.io/component-base/version.gitVersion=" + k8sVersion +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" +
		" -X k8s.io/component-base/version.gitTreeState=clean" +
		" -X k8s.io/client-go/pkg/version.gitVersion=" + k8sVersion},
	{EtcdBinary, "go.etcd.io/etcd/server/v3", "-s -w"},
	{KWOKBinary, "sigs.k8s.io/kwok/cmd/kwok", "-s -w"},
}

// builder builds every tool into binDir (which exists and is empty). Tests
// replace it so that the cache's rules can be checked without the
// quarter-hour apiserver build.
type builder func(ctx context.Context, binDir string, log io.Writer) error

// CacheRoot is the folder that holds one entry per cache key:
// $BRIGADE_K8S_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/brigade/k8s.
func CacheRoot() (string, error) {
	if d := os.Getenv("BRIGADE_K8S_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("controlplane: no cache folder (set BRIGADE_K8S_CACHE): %w", err)
	}
	return filepath.Join(d, "brigade", "k8s"), nil
}

// cacheKey names the cache entry: anything that changes the binaries
// (pinned modules, flags, Go toolchain, platform) changes the key, so a
// stale entry is never reused and an old one is simply left behind.
func cacheKey(goVersion string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "go %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	for _, t := range tools {
		fmt.Fprintf(h, "tool %s %s -trimpath -ldflags=%q\n", t.name, t.pkg, t.ldflags)
		for _, ext := range []string{".mod", ".sum"} {
			b, err := toolFiles.ReadFile("tools/" + t.name + ext)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s%s %d\n", t.name, ext, len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// goVersion asks the go command on PATH, which does the build, for its
// version; the test binary's own runtime.Version may differ.
func goVersion(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("controlplane: go env GOVERSION: %w (the binaries are built with the go command)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Binaries returns a folder holding kube-apiserver, etcd and kwok, built
// from the pinned modules in tools/ on the first call on this machine and
// reused after. Progress of a build goes to log (nil discards it).
func Binaries(ctx context.Context, log io.Writer) (string, error) {
	root, err := CacheRoot()
	if err != nil {
		return "", err
	}
	gv, err := goVersion(ctx)
	if err != nil {
		return "", err
	}
	key, err := cacheKey(gv)
	if err != nil {
		return "", err
	}
	return binaries(ctx, log, root, key, goBuild)
}

// Cached reports whether Binaries would return at once, without building.
func Cached(ctx context.Context) (dir string, ok bool, err error) {
	root, err := CacheRoot()
	if err != nil {
		return "", false, err
	}
	gv, err := goVersion(ctx)
	if err != nil {
		return "", false, err
	}
	key, err := cacheKey(gv)
	if err != nil {
		return "", false, err
	}
	dir = filepath.Join(root, key, "bin")
	return dir, complete(dir), nil
}

// complete reports whether dir holds every binary. An entry appears only by
// rename once all three are built, so this never sees half an entry; the
// check of each file guards against someone deleting files by hand.
func complete(dir string) bool {
	for _, t := range tools {
		if fi, err := os.Stat(filepath.Join(dir, t.name)); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
			return false
		}
	}
	return true
}

// binaries is Binaries with the cache root, key and build step given.
func binaries(ctx context.Context, log io.Writer, root, key string, build builder) (string, error) {
	if log == nil {
		log = io.Discard
	}
	entry := filepath.Join(root, key)
	bin := filepath.Join(entry, "bin")
	if complete(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("controlplane: cache folder: %w", err)
	}
	// One builder per machine: the others wait here, then find the entry.
	unlock, err := lockFile(ctx, filepath.Join(root, key+".lock"), log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(bin) {
		return bin, nil
	}
	// A build that was killed left its temporary folder (and perhaps an
	// entry someone emptied by hand); we hold the lock, so nobody is using
	// either.
	stale, _ := filepath.Glob(filepath.Join(root, key+".tmp-*"))
	for _, s := range stale {
		fmt.Fprintf(log, "controlplane: removing %s, left by an interrupted build\n", s)
		os.RemoveAll(s)
	}
	if _, err := os.Stat(entry); err == nil {
		if err := os.RemoveAll(entry); err != nil {
			return "", fmt.Errorf("controlplane: incomplete cache entry %s: %w", entry, err)
		}
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return "", fmt.Errorf("controlplane: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	tmpBin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(tmpBin, 0o755); err != nil {
		return "", fmt.Errorf("controlplane: %w", err)
	}
	// The entry keeps its build log: how long the one cold build took.
	blog, err := os.Create(filepath.Join(tmp, "build.log"))
	if err != nil {
		return "", fmt.Errorf("controlplane: %w", err)
	}
	defer blog.Close()
	log = io.MultiWriter(log, blog)
	fmt.Fprintf(log, "controlplane: building kube-apiserver, etcd and kwok into %s (cold: about 15 min on 2 cores)\n", entry)
	t0 := time.Now()
	if err := build(ctx, tmpBin, log); err != nil {
		return "", fmt.Errorf("controlplane: build: %w", err)
	}
	if !complete(tmpBin) {
		return "", errors.New("controlplane: build finished without all of kube-apiserver, etcd and kwok")
	}
	fmt.Fprintf(log, "controlplane: built in %s\n", time.Since(t0).Round(time.Second))
	if err := os.Rename(tmp, entry); err != nil {
		return "", fmt.Errorf("controlplane: %w", err)
	}
	ok = true
	return bin, nil
}
