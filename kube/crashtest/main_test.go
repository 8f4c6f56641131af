//go:build linux

package crashtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	"github.com/brigadesim/brigade/kube/scheduler"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// What the test tells a child, one scheduler process, through its
// environment.
const (
	envKubeconfig = "BRIGADE_KUBE_CRASHTEST_KUBECONFIG" // set: this process is a scheduler
	envName       = "BRIGADE_KUBE_CRASHTEST_NAME"       // its user agent's tail and Lease identity
	envCrash      = "BRIGADE_KUBE_CRASHTEST_CRASH"      // point:n, where it kills itself
	envLease      = "BRIGADE_KUBE_CRASHTEST_LEASE"      // a lease duration: run with leader election
	envPolicy     = "BRIGADE_KUBE_CRASHTEST_POLICY"     // a policy spec other than policy
)

// agentPrefix starts every child's user agent, so that the audit log
// names the process that sent each Binding.
const agentPrefix = "brigade-crashtest/"

// policy is what every child runs: backfill lets small pods pass a gang
// that waits for whole nodes, so gangs wait while work goes on.
const policy = "fcfs+bf/bestfit"

// leaseName and leaseNamespace name the replicas' Lease.
const leaseName, leaseNamespace = "brigade-kube", "kube-system"

func TestMain(m *testing.M) {
	if os.Getenv(envKubeconfig) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child is one life of the scheduler, as brigade-kube runs it, until it
// is killed (by the test, or by itself at its crash point) or told to
// stop with SIGTERM.
func child() int {
	name := os.Getenv(envName)
	if point, n, ok := strings.Cut(os.Getenv(envCrash), ":"); ok {
		nth, err := strconv.Atoi(n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crashtest: %s=%q: want point:n\n", envCrash, os.Getenv(envCrash))
			return 2
		}
		seen := 0
		crashpoint.Hook = func(p string) {
			if p != point {
				return
			}
			if seen++; seen == nth {
				fmt.Fprintf(os.Stderr, "crashtest: %s kills itself at %s #%d\n", name, p, nth)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
	}
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv(envKubeconfig))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 2
	}
	rc.QPS, rc.Burst, rc.UserAgent = 1000, 2000, agentPrefix+name
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 2
	}
	opt := scheduler.RunOptions{Tick: 200 * time.Millisecond}
	if v := os.Getenv(envLease); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crashtest: %s=%q: want a duration\n", envLease, v)
			return 2
		}
		opt.LeaderElect, opt.LeaseNamespace, opt.LeaseName, opt.Identity = true, leaseNamespace, leaseName, name
		opt.LeaseDuration, opt.RenewDeadline, opt.RetryPeriod = d, d*3/4, d/8
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	spec := policy
	if v := os.Getenv(envPolicy); v != "" {
		spec = v
	}
	err = scheduler.Run(ctx, scheduler.Config{Policy: spec, Log: os.Stderr}, client, nil, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest: run:", err)
		return 1
	}
	return 0
}

// life is one scheduler process.
type life struct {
	name       string
	crash      string // point:n, or "" for none
	cmd        *exec.Cmd
	logPath    string
	start, end time.Time
	done       chan struct{}
	killedBy   string // how it ended: a kind of kill, or "stopped"
}

// startLife starts a scheduler process named name against the control
// plane of kubeconfig; crash and lease may be empty.
func startLife(t *testing.T, dir, kubeconfig, name, crash string, lease time.Duration, env ...string) *life {
	t.Helper()
	l := &life{name: name, crash: crash, logPath: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(l.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l.cmd = exec.Command(os.Args[0], "-test.run=^$")
	l.cmd.Env = append(os.Environ(), envKubeconfig+"="+kubeconfig, envName+"="+name, envCrash+"="+crash)
	if lease > 0 {
		l.cmd.Env = append(l.cmd.Env, envLease+"="+lease.String())
	}
	l.cmd.Env = append(l.cmd.Env, env...)
	l.cmd.Stdout, l.cmd.Stderr = f, f
	// A test binary that dies takes its schedulers with it.
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	l.start = time.Now()
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = l.cmd.Wait()
		l.end = time.Now()
		close(l.done)
	}()
	return l
}

// kill sends SIGKILL and waits for the process to be gone.
func (l *life) kill(kind string) {
	_ = l.cmd.Process.Signal(syscall.SIGKILL)
	<-l.done
	if l.killedBy == "" {
		l.killedBy = kind
	}
}

// stop asks the process to end (SIGTERM) and waits for it.
func (l *life) stop() {
	_ = l.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		l.kill("stopped")
	}
	if l.killedBy == "" {
		l.killedBy = "stopped"
	}
}

// diedAtPoint reports whether the process killed itself at its crash
// point (its log says so).
func (l *life) diedAtPoint() bool {
	b, _ := os.ReadFile(l.logPath)
	return strings.Contains(string(b), "kills itself at")
}

// tail is the end of the life's log, for a failure's message.
func (l *life) tail(n int) string {
	b, _ := os.ReadFile(l.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
