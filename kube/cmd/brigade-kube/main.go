// Command brigade-kube is Brigade's Kubernetes scheduler: it places the
// pods whose spec.schedulerName is its own with any policy brigade sim
// benchmarks (package scheduler), and exports a results folder that
// brigade sim --replay reads.
//
//	brigade-kube --policy sjf+bf/bestfit [--scheduler-name brigade] [--leader-elect] [--metrics 127.0.0.1:9401]
//	brigade-kube export --out DIR [--policy SPEC] [--scheduler-name brigade]
//	brigade-kube submit --jobs TRACE.csv [--namespace default] [--scheduler-name brigade] [--node-gpus 8]
//
// --node-selector k=v,... confines the scheduler (and the export) to the
// nodes carrying those labels: one scheduler per partition of a cluster.
package main

import (
	"context"
	"flag"
	"fmt"
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

// parseWeights reads tenant=weight,tenant=weight.
func parseWeights(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		w, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || k == "" {
			return nil, fmt.Errorf("--tenant-weights: %q is not tenant=weight", kv)
		}
		out[k] = w
	}
	return out, nil
}

// parseSelector reads key=value,key=value.
func parseSelector(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--node-selector: %q is not label=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

func run(args []string) error {
	export := len(args) > 0 && args[0] == "export"
	submit := len(args) > 0 && args[0] == "submit"
	if export || submit {
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
	selector := fs.String("node-selector", "", "schedule only on nodes with these labels, label=value,...")
	jobs := fs.String("jobs", "", "submit: a Brigade CSV trace whose jobs become pods")
	namespace := fs.String("namespace", workload.DefaultNamespace, "submit: the pods' namespace")
	nodeGPUs := fs.Int("node-gpus", workload.DefaultNodeGPUs, "submit: GPUs per node; a larger job is a gang of node-sized pods")
	image := fs.String("image", workload.DefaultImage, "submit: the image whose sleep runs each pod")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sel, err := parseSelector(*selector)
	if err != nil {
		return err
	}
	var built []workload.Job
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
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if submit {
		return workload.Submit(ctx, client, built)
	}
	if export {
		if *out == "" {
			return fmt.Errorf("export needs --out DIR")
		}
		return scheduler.Export(ctx, scheduler.APISource{Client: client, Ctx: ctx},
			scheduler.ExportOptions{Name: *name, Policy: *policy, Command: os.Args, NodeSelector: sel}, *out)
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
		LeaseNamespace: *leaseNS, LeaseName: *leaseName, Identity: host + "-" + strconv.Itoa(os.Getpid())})
}
