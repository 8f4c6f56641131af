package controlplane

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests use stand-in programs, so they run without the real build.

func TestStartReportsAFailingProgramAndCleansUp(t *testing.T) {
	bin := t.TempDir()
	for name, body := range map[string]string{
		EtcdBinary:      "echo 'listen tcp 127.0.0.1: bind: address already in use' >&2; exit 3",
		APIServerBinary: "exit 0",
		KWOKBinary:      "exit 0",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(t.TempDir(), "state")
	cp, err := Start(context.Background(), Options{BinDir: bin, Dir: state, Timeout: 20 * time.Second})
	if err == nil || cp != nil {
		t.Fatalf("Start = %v, %v: want an error", cp, err)
	}
	for _, want := range []string{"etcd exited before it was healthy", "exit status 3", "address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state folder survives a failed Start: %v", err)
	}
}

func TestStartRefusesAFolderInUse(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o644)
	bin := t.TempDir()
	for _, tl := range tools {
		os.WriteFile(filepath.Join(bin, tl.name), []byte("#!/bin/sh\nexit 1\n"), 0o755)
	}
	_, err := Start(context.Background(), Options{BinDir: bin, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("Start removed a file of the folder it refused: %v", err)
	}
}

func TestStartRejectsAnIncompleteBinDir(t *testing.T) {
	_, err := Start(context.Background(), Options{BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "lacks kube-apiserver, etcd or kwok") {
		t.Fatalf("err = %v", err)
	}
}

// alive reports whether pid runs (a zombie, which nobody may reap in a
// container, counts as dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
