package scheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API keeps whole seconds; the scheduler's own times are what a
// replay needs. Every Binding of one round carries that round's clock
// (jobs started together share a start), and the round that books a
// job's end writes its clock on the job's pods.
func TestBoundAndReleasedAt(t *testing.T) {
	now := t0.Add(time.Minute + 250*time.Millisecond)
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("a", 2, 0), gpuPod("g-0", 4, 0, gang("g", 2)), gpuPod("g-1", 2, 0, gang("g", 2)))
	s, err := New(Config{Policy: "fcfs", Now: func() time.Time { return now }}, c.cs, nil, APISource{Client: c.cs, Ctx: t.Context()})
	if err != nil {
		t.Fatal(err)
	}
	round(t, s)
	ann := bindingAnnotations(c)
	want := now.UTC().Format(time.RFC3339Nano)
	for _, p := range []string{"a", "g-0", "g-1"} {
		if got := ann[p][AnnoBoundAt]; got != want {
			t.Errorf("binding of %s: %s = %q, want the round's %q", p, AnnoBoundAt, got, want)
		}
	}
	now = now.Add(1500 * time.Millisecond)
	c.finish(t, "team-a", "a")
	c.finish(t, "team-a", "g-0")
	round(t, s)
	released := now.UTC().Format(time.RFC3339Nano)
	for p, want := range map[string]string{"a": released, "g-0": "", "g-1": ""} {
		if got := c.pod(t, "team-a", p).Annotations[AnnoReleasedAt]; got != want {
			t.Errorf("%s: %s = %q, want %q (a gang ends with its last pod)", p, AnnoReleasedAt, got, want)
		}
	}
	now = now.Add(time.Second)
	c.finish(t, "team-a", "g-1")
	round(t, s)
	for _, p := range []string{"g-0", "g-1"} {
		if got := c.pod(t, "team-a", p).Annotations[AnnoReleasedAt]; got != now.UTC().Format(time.RFC3339Nano) {
			t.Errorf("%s: %s = %q after the gang's end", p, AnnoReleasedAt, got)
		}
	}
}

func TestSubmittedAt(t *testing.T) {
	created := t0.Add(10 * time.Second) // whole seconds, as the API keeps it
	for _, tc := range []struct {
		name, ann string
		want      time.Time
	}{
		{"none", "", created},
		{"within the second", created.Add(400 * time.Millisecond).Format(time.RFC3339Nano), created.Add(400 * time.Millisecond)},
		{"a late submitter", created.Add(-3 * time.Second).Format(time.RFC3339Nano), created.Add(-3 * time.Second)},
		{"too early to believe", created.Add(-time.Minute).Format(time.RFC3339Nano), created},
		{"after its creation", created.Add(2 * time.Second).Format(time.RFC3339Nano), created},
		{"unreadable", "yesterday", created},
	} {
		p := gpuPod("p", 1, 10*time.Second)
		if tc.ann != "" {
			p.Annotations[AnnoSubmittedAt] = tc.ann
		}
		if got := submittedAt(p); !got.Equal(tc.want) {
			t.Errorf("%s: submittedAt = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The export reads the scheduler's times to the microsecond and falls
// back to the API's seconds; jobs submitted in one second are numbered
// by the name the export gives them (a gang by its gang's name), by the
// scheduler and the export alike.
func TestExportTimes(t *testing.T) {
	sub := t0.Add(200 * time.Millisecond).Format(time.RFC3339Nano)
	withTimes := func(bound, released string) podOpt {
		return func(p *corev1.Pod) {
			p.Annotations[AnnoSubmittedAt] = sub
			p.Spec.NodeName = "n0"
			p.Status.Phase = corev1.PodSucceeded
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(2 * time.Second))}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t0.Add(5 * time.Second))}}}}
			if bound != "" {
				p.Annotations[AnnoBoundAt] = bound
			}
			if released != "" {
				p.Annotations[AnnoReleasedAt] = released
			}
		}
	}
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("c", 1, 0, withTimes(at(1250*time.Millisecond), at(3750*time.Millisecond))),
		gpuPod("z-0", 1, 0, gang("b", 2), withTimes(at(1250*time.Millisecond), at(4*time.Second))),
		gpuPod("z-1", 1, 0, gang("b", 2), withTimes(at(1250*time.Millisecond), at(4*time.Second))),
		gpuPod("a", 1, 0, withTimes("", "")))
	dir := filepath.Join(t.TempDir(), "out")
	if err := Export(t.Context(), APISource{Client: c.cs, Ctx: t.Context()}, ExportOptions{Policy: "fcfs", Now: t0.Add(time.Minute)}, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := strings.Split(lines[0], ",")
	var got []string
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		row := map[string]string{}
		for i, h := range header {
			row[h] = f[i]
		}
		got = append(got, row["id"]+" "+row["name"]+" "+row["submit_s"]+" "+row["start_s"]+" "+row["end_s"])
	}
	want := []string{
		// Times count from the submission stamp, 0.2 s after t0; a pod
		// without the scheduler's stamps keeps the API's seconds.
		"0 team-a/a 0.000000 1.800000 4.800000",
		"1 team-a/b 0.000000 1.050000 3.800000",
		"2 team-a/c 0.000000 1.050000 3.550000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("jobs.csv (id name submit start end):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := newSched(t, newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("c", 1, 0), gpuPod("z-0", 1, 0, gang("b", 2)), gpuPod("z-1", 1, 0, gang("b", 2)), gpuPod("a", 1, 0)), "fcfs")
	round(t, s)
	var keys []string
	for _, j := range s.jobs {
		keys = append(keys, j.key[:strings.LastIndexByte(j.key, '/')+1])
	}
	if strings.Join(keys, " ") != "pod/team-a/a/ team-a/ pod/team-a/c/" {
		t.Errorf("the scheduler numbers the jobs %v, want a, the gang b, c", keys)
	}
}
