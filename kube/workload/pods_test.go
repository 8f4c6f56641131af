package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/kube/scheduler"
	"github.com/brigadesim/brigade/workloads"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func readTrace(t *testing.T, csv string) (*workloads.Workload, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workloads.ReadFile(path, "brigade")
	if err != nil {
		t.Fatal(err)
	}
	return w, path
}

// describe is what the scheduler reads of a pod, on one line.
func describe(p *corev1.Pod) string {
	c := p.Spec.Containers[0]
	var res []string
	for _, name := range []corev1.ResourceName{scheduler.ResourceGPU, "nvidia.com/mig-1g.10gb"} {
		if q, ok := c.Resources.Limits[name]; ok {
			res = append(res, string(name)+"="+q.String())
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[name]; ok {
			res = append(res, string(name)+"="+q.String())
		}
	}
	return strings.Join([]string{p.Namespace + "/" + p.Name, p.Spec.SchedulerName, p.Spec.PriorityClassName,
		"tenant=" + p.Labels[scheduler.LabelTenant], "gang=" + p.Labels[scheduler.LabelGang] + "/" + p.Labels[scheduler.LabelGangSize],
		"dur=" + p.Annotations[scheduler.AnnoDuration], "est=" + p.Annotations[scheduler.AnnoEstimate],
		strings.Join(c.Command, " "), strings.Join(res, ",")}, " ")
}

func TestBuild(t *testing.T) {
	w, _ := readTrace(t, `name,submit_s,duration_s,gpus,tenant,priority,estimate_s,cpu_milli,memory_mib,mig_profile
Train_Big,100,90,16,alice,2,60,8001,3,
small,100.5,1.5,1,bob,-1,,500,1024,
cpu-only,130,2,0,,0,4,2000,,
mig,130,3,1,bob,0,,,,1g.10gb
`)
	jobs, err := Build(w, Options{SchedulerName: "brigade-x", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name+" at "+j.At.String())
		for _, p := range j.Pods {
			got = append(got, "  "+describe(p))
		}
	}
	want := []string{
		"Train_Big at 0s",
		// One pod per node-sized member; the odd milli-CPU and MiB go to
		// the first.
		"  ns/train-big-0 brigade-x brigade-priority-2 tenant=alice gang=train-big/2 dur=1m30s est=1m0s sleep 90 nvidia.com/gpu=8,cpu=4001m,memory=2Mi",
		"  ns/train-big-1 brigade-x brigade-priority-2 tenant=alice gang=train-big/2 dur=1m30s est=1m0s sleep 90 nvidia.com/gpu=8,cpu=4,memory=1Mi",
		"small at 500ms",
		"  ns/small brigade-x brigade-priority-minus-1 tenant=bob gang=/ dur=1.5s est= sleep 1.5 nvidia.com/gpu=1,cpu=500m,memory=1Gi",
		"cpu-only at 30s",
		"  ns/cpu-only brigade-x brigade-priority-0 tenant=default gang=/ dur=2s est=4s sleep 2 cpu=2",
		"mig at 30s",
		"  ns/mig brigade-x brigade-priority-0 tenant=bob gang=/ dur=3s est= sleep 3 nvidia.com/mig-1g.10gb=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pods:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// What a pod cannot carry is an error naming the file, the line and the
// column.
func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name, row, want string
	}{
		{"share", "j,0,1,1,,,,,,,500,,", `:2: field "gpu_milli": the scheduler places whole GPUs or MIG instances, found a share of 500`},
		{"gang not of nodes", "j,0,1,12,,,,,,,,,", `:2: field "gpus": want at most 8 (a node) or a multiple of 8 (a gang of node-sized pods), found 12`},
		{"retries", "j,0,1,1,,,,,,,,2,", `:2: field "retries": a bare pod is never retried`},
		{"deadline", "j,0,1,1,,,,,,,,,30", `:2: field "deadline_s": the scheduler reads no deadline from a pod`},
		{"tenant", "j,0,1,1,a b,,,,,,,,", `:2: field "tenant": want a label value`},
		{"name", "---,0,1,1,,,,,,,,,", `:2: field "name": want a name that makes a pod name`},
		{"priority", "j,0,1,1,,2000000000,,,,,,,", `:2: field "priority": want a PriorityClass value in -1000000000..1000000000, found 2000000000`},
		{"models", "j,0,1,1,,,,,,A100-80GB,,,", `:2: field "gpu_models": the scheduler reads no GPU model constraint from a pod`},
	} {
		w, path := readTrace(t, "name,submit_s,duration_s,gpus,tenant,priority,estimate_s,cpu_milli,memory_mib,gpu_models,gpu_milli,retries,deadline_s\n"+tc.row+"\n")
		_, err := Build(w, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), path+tc.want[:strings.IndexByte(tc.want[1:], ':')+1]) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %s%s", tc.name, err, path, tc.want)
		}
	}
	w, path := readTrace(t, "name,submit_s,duration_s,gpus\nJob.A,0,1,1\njob-a,0,1,1\n")
	if _, err := Build(w, Options{}); err == nil || err.Error() != path+`:3: field "name": "Job.A" and "job-a" both make the pod name "job-a"` {
		t.Errorf("names that meet: %v", err)
	}
}

// Submit creates the namespace and the PriorityClasses the pods name,
// stamps every pod of one instant with it, and refuses a PriorityClass
// of the same name and another value.
func TestSubmit(t *testing.T) {
	w, _ := readTrace(t, "name,submit_s,duration_s,gpus,priority\na,0,1,16,3\nb,0,1,1,0\n")
	jobs, err := Build(w, Options{Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	if err := Submit(t.Context(), cs, jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(t.Context(), "team", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	for name, v := range map[string]int32{"brigade-priority-3": 3, "brigade-priority-0": 0} {
		pc, err := cs.SchedulingV1().PriorityClasses().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil || pc.Value != v {
			t.Errorf("PriorityClass %s: %v %v", name, pc, err)
		}
	}
	pods, err := cs.CoreV1().Pods("team").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 3 {
		t.Fatalf("pods %v %v, want a's two members and b", pods, err)
	}
	stamp := pods.Items[0].Annotations[scheduler.AnnoSubmittedAt]
	for _, p := range pods.Items {
		if s := p.Annotations[scheduler.AnnoSubmittedAt]; s == "" || s != stamp {
			t.Errorf("%s: submitted-at %q, want %q on every pod of the instant", p.Name, s, stamp)
		}
	}
	if jobs[0].Pods[0].Annotations[scheduler.AnnoSubmittedAt] != "" {
		t.Error("Submit stamped the caller's pods")
	}
	cs = fake.NewClientset(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "brigade-priority-3"}, Value: 7})
	if err := Submit(t.Context(), cs, jobs); err == nil || !strings.Contains(err.Error(), "PriorityClass brigade-priority-3 exists with value 7; the pods need 3") {
		t.Errorf("a PriorityClass of another value: %v", err)
	}
}

func TestPodName(t *testing.T) {
	for in, want := range map[string]string{"Train_Big": "train-big", "a..b": "a-b", "-x-": "x", "job 7": "job-7", "__": ""} {
		if got := podName(in); got != want {
			t.Errorf("podName(%q) = %q, want %q", in, got, want)
		}
	}
}
