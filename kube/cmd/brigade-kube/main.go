package main

import (
	"context"
	"fmt"
	flag "github.com/spf13/pflag"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brigadesim/brigade/kube/scheduler"
	"github.com/brigadesim/brigade/kube/workload"
	"github.com/brigadesim/brigade/live"
	"github.com/brigadesim/brigade/workloads"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "brigade-kube:", err)
		os.Exit(1)
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if c, err := rest.InClusterConfig(); err == nil {
			return c, nil
		}
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// parsePairs reads key=value,key=value for flag; shape names the pair
// in its error (tenant=weight, label=value).
func parsePairs(flag, shape, s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s: %q is not %s", flag, kv, shape)
		}
		out[k] = v
	}
	return out, nil
}

// parseWeights reads tenant=weight,tenant=weight.
func parseWeights(s string) (map[string]float64, error) {
	pairs, err := parsePairs("tenant-weights", "tenant=weight", s)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(pairs))
	for k, v := range pairs {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("--tenant-weights: %q is not tenant=weight", k+"="+v)
		}
		out[k] = w
	}
	return out, nil
}

func run(args []string) error {
	export := len(args) > 0 && args[0] == "export"
	bench := len(args) > 0 && args[0] == "bench"
	submit := len(args) > 0 && args[0] == "submit"
	if export || bench || submit {
		args = args[1:]
	}
	fs := flag.NewFlagSet("brigade-kube", flag.ContinueOnError)
	name := fs.String("scheduler-name", scheduler.DefaultName, "the spec.schedulerName of the pods to schedule")
	policy := fs.String("policy", "fcfs/bestfit", "a policy spec, as brigade sim takes it")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG)")
	out := fs.String("out", "", "export: the results folder to write")
	weights := fs.String("tenant-weights", "", "fair-share weights, tenant=weight,... (a tenant not named weighs 1)")
	metrics := fs.String("metrics", "127.0.0.1:9401", "serve /metrics here (empty: none)")
	public := fs.Bool("metrics-public", false, "allow a non-loopback --metrics address")
	leader := fs.Bool("leader-elect", false, "schedule only while holding the Lease")
	leaseNS := fs.String("lease-namespace", "kube-system", "the Lease's namespace")
	leaseName := fs.String("lease-name", "brigade-kube", "the Lease's name")
	tick := fs.Duration("tick", time.Second, "longest time between scheduling rounds")
	leaseDuration := fs.Duration("lease-duration", scheduler.DefaultLeaseDuration, "--leader-elect: how long a Lease not renewed keeps other replicas out")
	renewDeadline := fs.Duration("renew-deadline", scheduler.DefaultRenewDeadline, "--leader-elect: the leader gives up if it has not renewed for this long (less than --lease-duration)")
	retryPeriod := fs.Duration("retry-period", scheduler.DefaultRetryPeriod, "--leader-elect: how often replicas try to take or renew the Lease")
	qps := fs.Float64("kube-api-qps", scheduler.DefaultAPIQPS, "the API client's sustained requests per second")
	burst := fs.Int("kube-api-burst", scheduler.DefaultAPIBurst, "the API client's burst of requests")
	benchPods := fs.Int("pods", 1000, "bench: how many pending pods to create")
	selector := fs.String("node-selector", "", "schedule only on nodes with these labels, label=value,...")
	jobs := fs.String("jobs", "", "submit: a Brigade CSV trace whose jobs become pods")
	namespace := fs.String("namespace", workload.DefaultNamespace, "submit: the pods' namespace; bench: its pods' namespace (created if missing)")
	nodeGPUs := fs.Int("node-gpus", workload.DefaultNodeGPUs, "submit: GPUs per node; a larger job is a gang of node-sized pods")
	image := fs.String("image", workload.DefaultImage, "submit: the image whose sleep runs each pod")
	wait := fs.Bool("wait", false, "submit: return when every pod has ended and its end is booked (for brigade-kube export), acting meanwhile as the pods' controller (--evicted)")
	evictedFlag := fs.String("evicted", "restart", "submit --wait: what becomes of a pod evicted (deleted before it ended): created again to start over (restart), created again to run only what it had left (resume: a job that checkpoints), or left gone (leave)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if bench && !given["namespace"] {
		// It creates and deletes pods there: never a namespace by default.
		return fmt.Errorf("bench needs --namespace NS, a namespace of its own")
	}
	if *leader && !(*leaseDuration > *renewDeadline && *renewDeadline > *retryPeriod && *retryPeriod > 0) {
		return fmt.Errorf("--leader-elect needs --lease-duration > --renew-deadline > --retry-period > 0, got %s, %s, %s", *leaseDuration, *renewDeadline, *retryPeriod)
	}
	if *qps <= 0 || *burst <= 0 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst must be > 0, got %v and %d", *qps, *burst)
	}
	sel, err := parsePairs("node-selector", "label=value", *selector)
	if err != nil {
		return err
	}
	var built []workload.Job
	evicted, err := workload.ParseEvicted(*evictedFlag)
	if err != nil {
		return fmt.Errorf("--evicted: %w", err)
	}
	if submit {
		// The trace is read before any connection, so that bad input is
		// told without a cluster.
		if *jobs == "" {
			return fmt.Errorf("submit needs --jobs TRACE.csv")
		}
		w, err := workloads.ReadFile(*jobs, "brigade")
		if err != nil {
			return err
		}
		if built, err = workload.Build(w, workload.Options{SchedulerName: *name, Namespace: *namespace, Image: *image, NodeGPUs: *nodeGPUs}); err != nil {
			return err
		}
	}
	rc, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = float32(*qps), *burst
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if submit {
		if !*wait {
			return workload.Submit(ctx, client, built)
		}
		// The controller runs from the first pod on: a pod may be evicted
		// before the last one is submitted.
		kctx, cancel := context.WithCancel(ctx)
		defer cancel()
		kept := make(chan error, 1)
		go func() {
			n, err := workload.Keep(kctx, client, built, workload.KeepOptions{Evicted: evicted, Log: os.Stderr})
			if n > 0 {
				fmt.Fprintf(os.Stderr, "brigade-kube submit: %d evicted pods created again\n", n)
			}
			kept <- err
		}()
		if err := workload.Submit(ctx, client, built); err != nil {
			cancel()
			<-kept
			return err
		}
		return <-kept
	}
	if export {
		if *out == "" {
			return fmt.Errorf("export needs --out DIR")
		}
		return scheduler.Export(ctx, scheduler.APISource{Client: client, Ctx: ctx},
			scheduler.ExportOptions{Name: *name, Policy: *policy, Command: os.Args, NodeSelector: sel}, *out)
	}
	if bench {
		if !given["scheduler-name"] {
			*name = "brigade-bench"
		}
		res, err := scheduler.Bench(ctx, client, scheduler.BenchOptions{Namespace: *namespace, Pods: *benchPods, Policy: *policy,
			Name: *name, Run: scheduler.RunOptions{Tick: *tick}})
		if err != nil {
			return err
		}
		fmt.Printf("%s\nclient QPS %v, burst %d\n", res, rc.QPS, rc.Burst)
		return nil
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	tw, err := parseWeights(*weights)
	if err != nil {
		return err
	}
	cfg := scheduler.Config{Name: *name, Policy: *policy, TenantWeights: tw, NodeSelector: sel, Log: os.Stderr}
	if *metrics != "" {
		m := scheduler.NewMetrics()
		srv, err := live.ListenRegistry(m.Registry(), *metrics, *public)
		if err != nil {
			return err
		}
		defer srv.Close()
		go func() { _ = srv.Serve(ctx) }()
		cfg.Metrics = m
	}
	host, _ := os.Hostname()
	return scheduler.Run(ctx, cfg, client, dyn, scheduler.RunOptions{Tick: *tick, LeaderElect: *leader,
		LeaseNamespace: *leaseNS, LeaseName: *leaseName, Identity: host + "-" + strconv.Itoa(os.Getpid()),
		LeaseDuration: *leaseDuration, RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod})
}
