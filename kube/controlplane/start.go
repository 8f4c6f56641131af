package controlplane

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options configure Start. The zero value is a full control plane built
// (or found) by Binaries, in a new temporary folder.
type Options struct {
	// BinDir holds kube-apiserver, etcd and kwok; empty means Binaries.
	BinDir string
	// Dir is the state folder (certificates, etcd data, logs, kubeconfig);
	// empty means a new temporary folder. Stop removes it either way.
	Dir string
	// Log receives progress lines; nil discards them. The programs' own
	// output goes to etcd.log, apiserver.log and kwok.log in Dir.
	Log io.Writer
	// NoKWOK starts etcd and kube-apiserver only: Nodes stay NotReady and
	// bound pods stay Pending.
	NoKWOK bool
	// Stages replaces the KWOK stages (a multi-document YAML of
	// kwok.x-k8s.io/v1alpha1 Stage); nil means tools/kwok-stages.yaml.
	Stages []byte
	// APIServerArgs are appended to kube-apiserver's flags.
	APIServerArgs []string
	// Authorization is kube-apiserver's --authorization-mode; empty means
	// AlwaysAllow. (Not an APIServerArgs entry: the flag is a list, and a
	// second one would add a mode after AlwaysAllow, not replace it.) With
	// RBAC, the admin user still may do anything, through system:masters.
	Authorization string
	// Timeout bounds the wait for each program to be healthy; 0 means 60 s.
	Timeout time.Duration
}

// Token is the bearer token of the control plane's one user, admin, in
// group system:masters, which may do anything under any authorization
// mode.
const Token = "brigade-test-token"

// ControlPlane is a running etcd, kube-apiserver and KWOK on 127.0.0.1.
type ControlPlane struct {
	// Dir is the state folder; Kubeconfig is the kubeconfig in it.
	Dir, Kubeconfig string
	// Config reaches the apiserver as admin; Clientset is built on it. Both
	// allow 1000 requests/s (burst 2000), so that tests creating hundreds of
	// objects are not slowed by client-side throttling.
	Config    *rest.Config
	Clientset *kubernetes.Clientset
	// APIServerURL is https://127.0.0.1:PORT; EtcdURL is http://127.0.0.1:PORT.
	APIServerURL, EtcdURL string

	log      io.Writer
	procs    []*proc // in start order; Stop goes backwards
	stopOnce sync.Once
	stopErr  error
}

type proc struct {
	name, logPath string
	cmd           *exec.Cmd
	done          chan struct{} // closed when the process has been waited for
}

// Start launches etcd, then kube-apiserver, then KWOK, each on free
// loopback ports, and returns once each answers its health check. ctx
// bounds the start only; the programs run until Stop. On error nothing is
// left running and the state folder is gone; the error carries the end of
// the failing program's log.
func Start(ctx context.Context, o Options) (cp *ControlPlane, err error) {
	t0 := time.Now()
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.BinDir == "" {
		if o.BinDir, err = Binaries(ctx, log); err != nil {
			return nil, err
		}
	}
	if !complete(o.BinDir) {
		return nil, fmt.Errorf("controlplane: %s lacks kube-apiserver, etcd or kwok", o.BinDir)
	}
	stages := o.Stages
	if stages == nil {
		if stages, err = toolFiles.ReadFile("tools/kwok-stages.yaml"); err != nil {
			return nil, err
		}
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "brigade-k8s-"); err != nil {
			return nil, fmt.Errorf("controlplane: %w", err)
		}
	} else {
		// Stop removes the folder, so it must hold nothing of anyone's.
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			return nil, fmt.Errorf("controlplane: state folder %s is not empty (Stop would remove it); give an empty or new one", dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("controlplane: %w", err)
		}
	}
	cp = &ControlPlane{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), log: log}
	defer func() {
		if err != nil {
			cp.Stop()
			cp = nil
		}
	}()

	ports, err := freePorts(4)
	if err != nil {
		return cp, err
	}
	etcdPort, peerPort, apiPort, kwokPort := ports[0], ports[1], ports[2], ports[3]
	cp.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	cp.APIServerURL = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	if err := writeState(dir, cp.APIServerURL, stages); err != nil {
		return cp, err
	}

	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	etcd, err := cp.spawn(o.BinDir, EtcdBinary, "etcd.log",
		"--name=brigade", "--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls="+cp.EtcdURL, "--advertise-client-urls="+cp.EtcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=brigade="+peerURL, "--unsafe-no-fsync")
	if err != nil {
		return cp, err
	}
	if err := waitHealthy(ctx, etcd, o.Timeout, cp.EtcdURL+"/health", "", `"health":"true"`); err != nil {
		return cp, err
	}

	args := append([]string{
		"--etcd-servers=" + cp.EtcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(apiPort),
		// With a loopback advertise address the endpoint reconciler would
		// publish an unusable "kubernetes" Service endpoint; there is none.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"), "--authorization-mode=" + cmp.Or(o.Authorization, "AlwaysAllow"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// No controller-manager runs: ServiceAccount admission would reject
		// every pod (no "default" account), TaintNodesByCondition would taint
		// every new Node not-ready for ever.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--profiling=false",
	}, o.APIServerArgs...)
	api, err := cp.spawn(o.BinDir, APIServerBinary, "apiserver.log", args...)
	if err != nil {
		return cp, err
	}
	if err := waitHealthy(ctx, api, o.Timeout, cp.APIServerURL+"/readyz", Token, "ok"); err != nil {
		return cp, err
	}

	if !o.NoKWOK {
		kwokURL := "127.0.0.1:" + strconv.Itoa(kwokPort)
		kwok, err := cp.spawn(o.BinDir, KWOKBinary, "kwok.log",
			"--kubeconfig="+cp.Kubeconfig, "--config="+filepath.Join(dir, "kwok-stages.yaml"),
			"--manage-nodes-with-label-selector=type=kwok",
			"--cidr=10.244.0.0/16", "--node-ip=10.1.0.1", "--server-address="+kwokURL)
		if err != nil {
			return cp, err
		}
		if err := waitHealthy(ctx, kwok, o.Timeout, "http://"+kwokURL+"/healthz", "", "ok"); err != nil {
			return cp, err
		}
	}

	cp.Config = &rest.Config{
		Host:            cp.APIServerURL,
		BearerToken:     Token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             1000,
		Burst:           2000,
		UserAgent:       "brigade-controlplane",
	}
	if cp.Clientset, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return cp, fmt.Errorf("controlplane: %w", err)
	}
	fmt.Fprintf(log, "controlplane: ready in %s at %s (state %s)\n", time.Since(t0).Round(time.Millisecond), cp.APIServerURL, dir)
	return cp, nil
}

// writeState writes the files the programs read: the service-account key
// pair, the token file, the kubeconfig and KWOK's stages.
func writeState(dir, server string, stages []byte) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: brigade, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: brigade, context: {cluster: brigade, user: admin}}]
current-context: brigade
`, server, Token)
	files := map[string][]byte{
		"sa.key":           pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub":           pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"tokens.csv":       []byte(Token + ",admin,admin-uid,system:masters\n"),
		"kubeconfig":       []byte(kubeconfig),
		"kwok-stages.yaml": stages,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("controlplane: %w", err)
		}
	}
	return os.MkdirAll(filepath.Join(dir, "certs"), 0o700)
}

// freePorts asks the kernel for n distinct free loopback ports, holding all
// n open at once so that none is handed out twice. Another process may
// still take one before our program binds it; Start then fails with the
// program's "address in use" in its error.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("controlplane: free port: %w", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// spawn starts one program with its output in dir/logName.
func (cp *ControlPlane) spawn(binDir, name, logName string, args ...string) (*proc, error) {
	logPath := filepath.Join(cp.Dir, logName)
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	defer f.Close() // the child has its own copy
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Dir = cp.Dir
	cmd.Stdout, cmd.Stderr = f, f
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("controlplane: start %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	cp.procs = append(cp.procs, p)
	return p, nil
}

// waitHealthy polls url until it answers 200 with a body containing want,
// failing early if the program exits.
func waitHealthy(ctx context.Context, p *proc, timeout time.Duration, url, token, want string) error {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(want)) {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("controlplane: %s exited before it was healthy (%s); end of %s:\n%s",
				p.name, p.cmd.ProcessState, p.logPath, tail(p.logPath, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("controlplane: %s not healthy at %s after %s; end of %s:\n%s",
				p.name, url, timeout, p.logPath, tail(p.logPath, 20))
		}
	}
}

// tail returns the last n lines of a log, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stopGrace is how long a program may take to exit after SIGTERM before it
// is killed.
const stopGrace = 10 * time.Second

// Stop stops KWOK, kube-apiserver and etcd, in that order (each its whole
// process group: SIGTERM, then SIGKILL after a grace period), and removes
// the state folder. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		var errs []error
		for i := len(cp.procs) - 1; i >= 0; i-- {
			p := cp.procs[i]
			signalGroup(p.cmd.Process, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(stopGrace):
				fmt.Fprintf(cp.log, "controlplane: %s ignored SIGTERM for %s; killing it\n", p.name, stopGrace)
			}
			// Also reaps anything the program started in its group.
			killGroup(p.cmd.Process)
			select {
			case <-p.done:
			case <-time.After(stopGrace):
				errs = append(errs, fmt.Errorf("controlplane: %s (pid %d) survived SIGKILL", p.name, p.cmd.Process.Pid))
			}
		}
		if err := os.RemoveAll(cp.Dir); err != nil {
			errs = append(errs, err)
		}
		cp.stopErr = errors.Join(errs...)
	})
	return cp.stopErr
}
