package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/brigadesim/brigade/kube/controlplane"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "brigade-k8s-env:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: brigade-k8s-env build | up [-dir D] [-nodes N]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "build":
		t0 := time.Now()
		dir, err := controlplane.Binaries(ctx, os.Stderr)
		if err != nil {
			return err
		}
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		fmt.Fprintf(os.Stderr, "brigade-k8s-env: binaries ready in %s (wall %.0fs, CPU of builds %.0fs)\n", dir, time.Since(t0).Seconds(), cpu.Seconds())
		fmt.Println(dir)
		return nil
	case "up":
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		dir := fs.String("dir", "", "state folder (default: a new temporary folder); removed on exit")
		nodes := fs.Int("nodes", 0, "GPU nodes to add (8 x nvidia.com/gpu each, Ready through KWOK)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *nodes < 0 {
			return fmt.Errorf("-nodes %d: want 0 or more", *nodes)
		}
		cp, err := controlplane.Start(ctx, controlplane.Options{Dir: *dir, Log: os.Stderr})
		if err != nil {
			return err
		}
		defer cp.Stop()
		if *nodes > 0 {
			names, err := controlplane.AddGPUNodes(ctx, cp.Clientset, *nodes, controlplane.NodeSpec{})
			if err == nil {
				err = controlplane.WaitNodesReady(ctx, cp.Clientset, names)
			}
			if err != nil {
				return err
			}
		}
		fmt.Printf("export KUBECONFIG=%s\n", cp.Kubeconfig)
		if err := os.WriteFile(filepath.Join(cp.Dir, "ready"), nil, 0o644); err != nil {
			return err
		}
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "brigade-k8s-env: stopping")
		return cp.Stop()
	}
	return fmt.Errorf("unknown command %q: want build or up", args[0])
}
