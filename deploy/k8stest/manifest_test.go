// Package k8stest decodes deploy/kubernetes/sweep-job.yaml strictly against
// the real Kubernetes API types. It is its own Go module so that k8s.io/api
// stays out of brigade's build; run it with (cd deploy/k8stest && go test ./...).
package k8stest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const manifest = "../kubernetes/sweep-job.yaml"

// documents splits a multi-document YAML file on its "---" lines, dropping
// documents that hold only comments.
func documents(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(data), -1) {
		body := false
		for _, line := range strings.Split(d, "\n") {
			if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
				body = true
			}
		}
		if body {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

type decoded struct {
	job       *batchv1.Job
	configMap *corev1.ConfigMap
	pvc       *corev1.PersistentVolumeClaim
}

// decode reads every document strictly (unknown or duplicate fields are
// errors) into the type its apiVersion and kind name.
func decode(t *testing.T, data []byte) decoded {
	t.Helper()
	var out decoded
	for i, doc := range documents(t, data) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "batch/v1 Job":
			if out.job != nil {
				t.Fatalf("document %d: a second Job", i)
			}
			out.job = &batchv1.Job{}
			obj = out.job
		case "v1 ConfigMap":
			out.configMap = &corev1.ConfigMap{}
			obj = out.configMap
		case "v1 PersistentVolumeClaim":
			out.pvc = &corev1.PersistentVolumeClaim{}
			obj = out.pvc
		default:
			t.Fatalf("document %d: unexpected %q %q", i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("document %d (%s): strict decode: %v", i, tm.Kind, err)
		}
	}
	if out.job == nil || out.configMap == nil || out.pvc == nil {
		t.Fatalf("want a Job, a ConfigMap and a PersistentVolumeClaim; got job=%v configmap=%v pvc=%v",
			out.job != nil, out.configMap != nil, out.pvc != nil)
	}
	return out
}

func TestSweepJobManifest(t *testing.T) {
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, data)
	job := m.job.Spec

	if job.CompletionMode == nil || *job.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode = %v, want Indexed", job.CompletionMode)
	}
	if job.Completions == nil || job.Parallelism == nil {
		t.Fatal("completions and parallelism must both be set")
	}
	n := *job.Completions
	if n < 1 || *job.Parallelism != n {
		t.Errorf("completions = %d, parallelism = %d: want equal and positive", n, *job.Parallelism)
	}
	if job.Template.Spec.RestartPolicy != corev1.RestartPolicyNever && job.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy = %q", job.Template.Spec.RestartPolicy)
	}

	cs := job.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	c := cs[0]
	cmd := append(append([]string{}, c.Command...), c.Args...)
	line := strings.Join(cmd, " ")
	if len(cmd) < 3 || cmd[0] != "brigade" || cmd[1] != "sweep" {
		t.Fatalf("command %q: want brigade sweep GRID ...", line)
	}
	if !strings.Contains(line, "--out /results/shard-$(JOB_COMPLETION_INDEX)") {
		t.Errorf("command %q: want --out /results/shard-$(JOB_COMPLETION_INDEX)", line)
	}

	// The shard count the pods are told must be the Job's completions.
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	expand := func(s string) string {
		return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(v string) string {
			name := v[2 : len(v)-1]
			if val, ok := env[name]; ok {
				return val
			}
			return v // JOB_COMPLETION_INDEX: set by the Job controller
		})
	}
	shard := ""
	for i, a := range cmd {
		if a == "--shard" && i+1 < len(cmd) {
			shard = expand(cmd[i+1])
		} else if strings.HasPrefix(a, "--shard=") {
			shard = expand(strings.TrimPrefix(a, "--shard="))
		}
	}
	if want := "$(JOB_COMPLETION_INDEX)/" + strconv.Itoa(int(n)); shard != want {
		t.Errorf("--shard expands to %q, want %q (completions)", shard, want)
	}

	// The grid is the ConfigMap's key, mounted where the command reads it.
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.Name] = vm.MountPath
	}
	vols := map[string]corev1.Volume{}
	for _, v := range job.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	gridPath := cmd[2]
	found := false
	for name, path := range mounts {
		v, ok := vols[name]
		if !ok {
			t.Errorf("volumeMount %q has no volume", name)
			continue
		}
		if v.ConfigMap != nil && v.ConfigMap.Name == m.configMap.Name && filepath.Dir(gridPath) == path {
			if _, ok := m.configMap.Data[filepath.Base(gridPath)]; !ok {
				t.Errorf("ConfigMap %s has no key %s", m.configMap.Name, filepath.Base(gridPath))
			}
			found = true
		}
		if v.PersistentVolumeClaim != nil {
			if v.PersistentVolumeClaim.ClaimName != m.pvc.Name {
				t.Errorf("results claim %q, manifest's PVC is %q", v.PersistentVolumeClaim.ClaimName, m.pvc.Name)
			}
			if path != "/results" {
				t.Errorf("results mounted at %q, command writes /results", path)
			}
		}
	}
	if !found {
		t.Errorf("grid %s is not mounted from ConfigMap %s", gridPath, m.configMap.Name)
	}
	if c.Image == "" {
		t.Error("container has no image")
	}

	// The ConfigMap carries the repository's example grid and the files it
	// names (relative paths resolve in the grid's folder, /grid), kept in step
	// with examples/.
	grid := m.configMap.Data[filepath.Base(gridPath)]
	for key, got := range m.configMap.Data {
		want, err := os.ReadFile(filepath.Join("../../examples", key))
		if err != nil {
			t.Errorf("ConfigMap key %s: %v", key, err)
			continue
		}
		if got != string(want) {
			t.Errorf("ConfigMap %s: %s differs from examples/%s; paste it in again (indented 4 spaces)", m.configMap.Name, key, key)
		}
	}
	var g struct {
		Clusters []string `json:"clusters"`
		Traces   []struct {
			Path string `json:"path"`
		} `json:"traces"`
	}
	if err := yaml.Unmarshal([]byte(grid), &g); err != nil {
		t.Fatalf("grid in the ConfigMap: %v", err)
	}
	files := []string{}
	for _, c := range g.Clusters {
		if strings.ContainsAny(c, "/.") { // a spec file, not a preset name
			files = append(files, c)
		}
	}
	for _, tr := range g.Traces {
		files = append(files, tr.Path)
	}
	for _, f := range files {
		if filepath.IsAbs(f) {
			continue // the image's or a volume's business
		}
		if _, ok := m.configMap.Data[f]; !ok {
			t.Errorf("the grid names %s, which is not in ConfigMap %s (so not in /grid)", f, m.configMap.Name)
		}
	}
}

// TestStrictRejectsUnknownFields makes sure the strict decode above would
// catch a typo in the manifest.
func TestStrictRejectsUnknownFields(t *testing.T) {
	bad := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMode: Indexed\n  paralelism: 4\n"
	if err := yaml.UnmarshalStrict([]byte(bad), &batchv1.Job{}); err == nil {
		t.Fatal("UnmarshalStrict accepted an unknown field")
	}
	if got := len(documents(t, []byte("# c\n---\na: 1\n---\n# only\n"))); got != 1 {
		t.Fatalf("documents: got %d, want 1", got)
	}
}

// TestMergeJobManifest: the merge Job decodes strictly and merges exactly the
// shards the sweep Job writes, from the same claim, with the same image.
func TestMergeJobManifest(t *testing.T) {
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	sweep := decode(t, data)
	mdata, err := os.ReadFile("../kubernetes/merge-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t, mdata)
	if len(docs) != 1 {
		t.Fatalf("merge-job.yaml: want one document, got %d", len(docs))
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(docs[0], &job); err != nil {
		t.Fatalf("merge-job.yaml: strict decode: %v", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("merge-job.yaml: %s %s, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	cmd := append(append([]string{}, cs[0].Command...), cs[0].Args...)
	n := int(*sweep.job.Spec.Completions)
	want := []string{"brigade", "sweep", "merge", "--out", "/results/merged"}
	for i := 0; i < n; i++ {
		want = append(want, "/results/shard-"+strconv.Itoa(i))
	}
	if strings.Join(cmd, " ") != strings.Join(want, " ") {
		t.Errorf("merge command\n got %q\nwant %q", cmd, want)
	}
	if img := sweep.job.Spec.Template.Spec.Containers[0].Image; cs[0].Image != img {
		t.Errorf("merge image %q, sweep image %q", cs[0].Image, img)
	}
	claim := ""
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim != sweep.pvc.Name {
		t.Errorf("merge reads claim %q, sweep writes %q", claim, sweep.pvc.Name)
	}
}
