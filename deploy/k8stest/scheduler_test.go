package k8stest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/policies"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const schedulerDir = "../kubernetes/scheduler"

// schedulerManifests holds every object in deploy/kubernetes/scheduler.
type schedulerManifests struct {
	namespace  *corev1.Namespace
	account    *corev1.ServiceAccount
	role       *rbacv1.ClusterRole
	binding    *rbacv1.ClusterRoleBinding
	configMap  *corev1.ConfigMap
	deployment *appsv1.Deployment
}

// decodeScheduler reads every document of every file strictly into the
// type its apiVersion and kind name; each kind must appear exactly once.
func decodeScheduler(t *testing.T) schedulerManifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(schedulerDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", schedulerDir, err)
	}
	var m schedulerManifests
	seen := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(t, data) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			kind := tm.APIVersion + " " + tm.Kind
			if prev, ok := seen[kind]; ok {
				t.Fatalf("%s document %d: a second %s (first in %s)", f, i, kind, prev)
			}
			seen[kind] = f
			var obj any
			switch kind {
			case "v1 Namespace":
				m.namespace = &corev1.Namespace{}
				obj = m.namespace
			case "v1 ServiceAccount":
				m.account = &corev1.ServiceAccount{}
				obj = m.account
			case "rbac.authorization.k8s.io/v1 ClusterRole":
				m.role = &rbacv1.ClusterRole{}
				obj = m.role
			case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
				m.binding = &rbacv1.ClusterRoleBinding{}
				obj = m.binding
			case "v1 ConfigMap":
				m.configMap = &corev1.ConfigMap{}
				obj = m.configMap
			case "apps/v1 Deployment":
				m.deployment = &appsv1.Deployment{}
				obj = m.deployment
			default:
				t.Fatalf("%s document %d: unexpected %q", f, i, kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s document %d (%s): strict decode: %v", f, i, tm.Kind, err)
			}
		}
	}
	if m.namespace == nil || m.account == nil || m.role == nil || m.binding == nil || m.configMap == nil || m.deployment == nil {
		t.Fatalf("want a Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMap and Deployment; found %v", seen)
	}
	return m
}

// schedulerPermissions is everything the scheduler may do, as
// "group/resource verb" ("" is the core group). The ClusterRole must grant
// exactly these: a new permission is a decision to make here, on purpose.
var schedulerPermissions = []string{
	"/pods get", "/pods list", "/pods watch", "/pods update", "/pods patch",
	"/pods/status update",
	"/pods/binding create",
	"/pods/eviction create",
	"/nodes get", "/nodes list", "/nodes watch",
	"/events create",
	"coordination.k8s.io/leases get", "coordination.k8s.io/leases create", "coordination.k8s.io/leases update",
	"scheduling.k8s.io/podgroups get",
	"scheduling.x-k8s.io/podgroups get",
}

// rbacProblems lists how rules differ from schedulerPermissions: wildcards,
// named resources or URLs (which a flat list cannot express), and any
// permission granted but not listed, or listed but not granted.
func rbacProblems(rules []rbacv1.PolicyRule) []string {
	var problems []string
	granted := map[string]bool{}
	for i, r := range rules {
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			for _, v := range field {
				if strings.Contains(v, "*") {
					problems = append(problems, "rule "+strconv.Itoa(i)+": wildcard "+v)
				}
			}
		}
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			problems = append(problems, "rule "+strconv.Itoa(i)+": resourceNames or nonResourceURLs")
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					granted[g+"/"+res+" "+v] = true
				}
			}
		}
	}
	want := map[string]bool{}
	for _, p := range schedulerPermissions {
		want[p] = true
		if !granted[p] {
			problems = append(problems, "missing: "+p)
		}
	}
	var extra []string
	for p := range granted {
		if !want[p] {
			extra = append(extra, "not allowed: "+p)
		}
	}
	sort.Strings(extra)
	return append(problems, extra...)
}

func TestSchedulerRBACIsExactlyTheList(t *testing.T) {
	m := decodeScheduler(t)
	if p := rbacProblems(m.role.Rules); len(p) > 0 {
		t.Fatalf("ClusterRole %s:\n  %s", m.role.Name, strings.Join(p, "\n  "))
	}
	b := m.binding
	if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: m.role.Name}) {
		t.Errorf("ClusterRoleBinding roleRef = %+v, want ClusterRole %s", b.RoleRef, m.role.Name)
	}
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: m.account.Name, Namespace: m.account.Namespace}
	if len(b.Subjects) != 1 || b.Subjects[0] != want {
		t.Errorf("ClusterRoleBinding subjects = %+v, want only %+v", b.Subjects, want)
	}
}

// TestRBACCheckCatchesWidening makes sure the check above fails for the
// ways a role usually grows.
func TestRBACCheckCatchesWidening(t *testing.T) {
	m := decodeScheduler(t)
	widen := map[string]func([]rbacv1.PolicyRule) []rbacv1.PolicyRule{
		"a * verb": func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[0].Verbs = []string{"*"}; return r },
		"delete pods": func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			r[0].Verbs = append(r[0].Verbs, "delete")
			return r
		},
		"all resources": func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { r[4].Resources = []string{"*"}; return r },
		"secrets": func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			return append(r, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}})
		},
		"a lost permission": func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule { return r[1:] },
		"a URL": func(r []rbacv1.PolicyRule) []rbacv1.PolicyRule {
			return append(r, rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
		},
	}
	for name, f := range widen {
		rules := make([]rbacv1.PolicyRule, len(m.role.Rules))
		for i := range rules {
			m.role.Rules[i].DeepCopyInto(&rules[i])
		}
		if p := rbacProblems(f(rules)); len(p) == 0 {
			t.Errorf("%s: the RBAC check passed it", name)
		}
	}
}

func TestSchedulerDeployment(t *testing.T) {
	m := decodeScheduler(t)
	d := m.deployment
	ns := m.namespace.Name
	for what, got := range map[string]string{"ServiceAccount": m.account.Namespace, "ConfigMap": m.configMap.Namespace, "Deployment": d.Namespace} {
		if got != ns {
			t.Errorf("%s in namespace %q, want %q", what, got, ns)
		}
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2 (one leader, one standby)", d.Spec.Replicas)
	}
	if sel := d.Spec.Selector; sel == nil || len(sel.MatchLabels) == 0 {
		t.Error("Deployment has no selector")
	} else {
		for k, v := range sel.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("selector %s=%s does not match the pod template", k, v)
			}
		}
	}
	ps := d.Spec.Template.Spec
	if ps.ServiceAccountName != m.account.Name {
		t.Errorf("serviceAccountName = %q, want %q (the one the ClusterRoleBinding names)", ps.ServiceAccountName, m.account.Name)
	}
	if ps.SchedulerName != "" && ps.SchedulerName != "default-scheduler" {
		t.Errorf("the scheduler's own pods use scheduler %q; they must not wait for themselves", ps.SchedulerName)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Image == "" {
		t.Error("container has no image")
	}
	args := append(append([]string{}, c.Command...), c.Args...)
	flags := map[string]string{}
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			t.Errorf("argument %q: write flags as --name=value", a)
			continue
		}
		k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[k] = v
	}
	for k, want := range map[string]string{"scheduler-name": "brigade", "leader-elect": "", "metrics": "127.0.0.1:9401",
		"lease-namespace": "$(POD_NAMESPACE)", "lease-name": "brigade-scheduler"} {
		if got, ok := flags[k]; !ok || got != want {
			t.Errorf("--%s = %q (given: %v), want %q", k, got, ok, want)
		}
	}
	// The Lease lives in the scheduler's own namespace: the variable must
	// be the pod's namespace, not a fixed one.
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_NAMESPACE" }); i < 0 ||
		c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Error("POD_NAMESPACE is not the pod's metadata.namespace")
	}

	// The policy reaches the scheduler from the ConfigMap, as --policy=$(VAR)
	// with VAR from the ConfigMap, or as --policy-file=PATH in a ConfigMap
	// volume; either way the text must be a policy spec brigade knows.
	key := ""
	if v, ok := flags["policy"]; ok {
		ref := regexp.MustCompile(`^\$\(([A-Za-z_][A-Za-z0-9_]*)\)$`).FindStringSubmatch(v)
		if ref == nil {
			t.Fatalf("--policy=%q: want $(VAR) with VAR from ConfigMap %s", v, m.configMap.Name)
		}
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == ref[1] })
		if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.ConfigMapKeyRef == nil ||
			c.Env[i].ValueFrom.ConfigMapKeyRef.Name != m.configMap.Name {
			t.Fatalf("--policy reads $(%s), which is not a key of ConfigMap %s", ref[1], m.configMap.Name)
		}
		key = c.Env[i].ValueFrom.ConfigMapKeyRef.Key
	} else if path, ok := flags["policy-file"]; ok {
		for _, vm := range c.VolumeMounts {
			i := slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
			if i >= 0 && ps.Volumes[i].ConfigMap != nil && ps.Volumes[i].ConfigMap.Name == m.configMap.Name && filepath.Dir(path) == vm.MountPath {
				key = filepath.Base(path)
			}
		}
		if key == "" {
			t.Fatalf("--policy-file=%s is not in a volume of ConfigMap %s", path, m.configMap.Name)
		}
	} else {
		t.Fatal("no --policy or --policy-file flag")
	}
	spec, ok := m.configMap.Data[key]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %q", m.configMap.Name, key)
	}
	if _, err := policies.ParseSpec(spec); err != nil {
		t.Errorf("ConfigMap %s key %s: %v", m.configMap.Name, key, err)
	}
}
