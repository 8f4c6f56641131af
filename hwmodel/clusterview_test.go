package hwmodel_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// clusterMutators are the Cluster's methods that change its books, read
// from cluster.go and cluster_mig.go: a ClusterView must have none of
// them. TestClusterViewLeavesTheClusterAlone catches a mutator this list
// misses, as long as it changes what migSnapshot reports (every one
// today bumps a node's Generation).
var clusterMutators = map[string]bool{
	"Allocate":    true,
	"Release":     true,
	"Reconfigure": true,
	"UnblockMIG":  true,
}

// viewAliasOK names the view's methods whose result holds a reference
// type on purpose, with the test that shows it aliases nothing.
var viewAliasOK = map[string]string{
	"Node": "TestClusterViewNodeCopiesMIG",
}

// holdsReference reports whether a value of type t can reach memory
// another value shares: pointers, slices, maps, channels, functions and
// interfaces, directly or in a field or array element. Strings are
// immutable and do not count, nor does an error (the Cluster's errors are
// fresh values that describe, never hold, its state).
func holdsReference(t reflect.Type) bool {
	if t == reflect.TypeFor[error]() {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface:
		return true
	case reflect.Array:
		return holdsReference(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if holdsReference(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// TestClusterViewMethodSet: the view has no mutator, every method is a
// Cluster method of the same signature (a view forwards, it adds
// nothing), and no result can alias the cluster's state.
func TestClusterViewMethodSet(t *testing.T) {
	vt := reflect.TypeFor[hwmodel.ClusterView]()
	if reflect.PointerTo(vt).NumMethod() != vt.NumMethod() {
		t.Errorf("ClusterView has pointer-receiver methods; a view is used by value")
	}
	ct := reflect.TypeFor[*hwmodel.Cluster]()
	if vt.NumMethod() == 0 {
		t.Fatal("ClusterView has no methods")
	}
	for i := 0; i < vt.NumMethod(); i++ {
		m := vt.Method(i)
		if clusterMutators[m.Name] {
			t.Errorf("ClusterView.%s: a mutator of Cluster must not be on the read-only view", m.Name)
		}
		cm, ok := ct.MethodByName(m.Name)
		if !ok {
			t.Errorf("ClusterView.%s: Cluster has no such method; a view only forwards Cluster's queries", m.Name)
			continue
		}
		// Compare signatures without the receivers.
		if got, want := sig(m.Type), sig(cm.Type); got != want {
			t.Errorf("ClusterView.%s is %s, Cluster.%s is %s", m.Name, got, m.Name, want)
		}
		for o := 0; o < m.Type.NumOut(); o++ {
			if out := m.Type.Out(o); holdsReference(out) && viewAliasOK[m.Name] == "" {
				t.Errorf("ClusterView.%s returns %s, which could alias the cluster's state", m.Name, out)
			}
		}
	}
	for name := range clusterMutators {
		if _, ok := ct.MethodByName(name); !ok {
			t.Errorf("Cluster has no method %s: update clusterMutators", name)
		}
	}
}

// sig writes a method type without its receiver.
func sig(f reflect.Type) string {
	s := "func("
	for i := 1; i < f.NumIn(); i++ {
		if i > 1 {
			s += ", "
		}
		s += f.In(i).String()
	}
	s += ") ("
	for i := 0; i < f.NumOut(); i++ {
		if i > 0 {
			s += ", "
		}
		s += f.Out(i).String()
	}
	return s + ")"
}

// viewTestCluster is migTestCluster with some of everything in use: a
// MIG instance, a shared GPU, whole GPUs, and a reconfigured GPU whose
// new instances are still blocked.
func viewTestCluster(t *testing.T) *hwmodel.Cluster {
	t.Helper()
	c := migTestCluster(t)
	h := modelID(t, "H200")
	for _, p := range []hwmodel.Placement{
		{{Node: 0, GPUs: 1, Milli: 429, Instance: 1, CPUMilli: 1000, MemoryMiB: 1024}},
		{{Node: 2, GPUs: 0b01, Milli: 300, CPUMilli: 500, MemoryMiB: 512}},
		{{Node: 0, GPUs: 0b100, Milli: 1000, CPUMilli: 2000, MemoryMiB: 2048}},
	} {
		if err := c.Allocate(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Reconfigure(0, 3, mustLayout(t, h, "balanced")); err != nil {
		t.Fatal(err)
	}
	return c
}

// argGrid lists, per parameter type, the arguments every method is
// called with: valid indices and out-of-range ones (both sides must then
// panic alike), model sets and MIG requests that match and that do not.
func argGrid(t *testing.T, typ reflect.Type) []reflect.Value {
	var vs []any
	switch typ {
	case reflect.TypeFor[int]():
		vs = []any{0, 1, 3, 6}
	case reflect.TypeFor[int64]():
		vs = []any{int64(0), int64(700)}
	case reflect.TypeFor[hwmodel.ModelSet]():
		vs = []any{hwmodel.AnyModel, hwmodel.Of(modelID(t, "T4")), hwmodel.Of(modelID(t, "H200"), modelID(t, "A100-40GB"))}
	case reflect.TypeFor[hwmodel.ModelID]():
		vs = []any{modelID(t, "H200"), modelID(t, "T4"), modelID(t, "V100")}
	case reflect.TypeFor[hwmodel.Time]():
		vs = []any{hwmodel.Time(0), hwmodel.Hour}
	case reflect.TypeFor[hwmodel.Placement]():
		vs = []any{hwmodel.Placement(nil), hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000}}, hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000}, {Node: 3, GPUs: 1, Milli: 1000}}}
	case reflect.TypeFor[hwmodel.MIGRequest]():
		vs = []any{hwmodel.MIGRequest{}, hwmodel.MIGRequest{Profile: "1g.18gb"}, hwmodel.MIGRequest{MinSlices: 3}}
	default:
		t.Fatalf("no arguments for a parameter of type %s: add them to argGrid", typ)
	}
	out := make([]reflect.Value, len(vs))
	for i, v := range vs {
		out[i] = reflect.ValueOf(v)
	}
	return out
}

// call calls f with args and returns its results, or the panic's value.
func call(f reflect.Value, args []reflect.Value) (out []any, panicked any) {
	defer func() { panicked = recover() }()
	for _, r := range f.Call(args) {
		out = append(out, r.Interface())
	}
	return out, nil
}

// forEachCall calls fn with every method of the view and every
// combination of arguments from argGrid.
func forEachCall(t *testing.T, fn func(name string, args []reflect.Value)) {
	vt := reflect.TypeFor[hwmodel.ClusterView]()
	for i := 0; i < vt.NumMethod(); i++ {
		m := vt.Method(i)
		grids := make([][]reflect.Value, m.Type.NumIn()-1)
		for p := range grids {
			grids[p] = argGrid(t, m.Type.In(p+1))
		}
		args := make([]reflect.Value, len(grids))
		var rec func(p int)
		rec = func(p int) {
			if p == len(grids) {
				fn(m.Name, args)
				return
			}
			for _, a := range grids[p] {
				args[p] = a
				rec(p + 1)
			}
		}
		rec(0)
	}
}

// TestClusterViewForwards: every view method answers what the Cluster's
// method of the same name answers, panics included.
func TestClusterViewForwards(t *testing.T) {
	c := viewTestCluster(t)
	v := reflect.ValueOf(c.View())
	cv := reflect.ValueOf(c)
	calls := 0
	forEachCall(t, func(name string, args []reflect.Value) {
		calls++
		got, gotPanic := call(v.MethodByName(name), args)
		want, wantPanic := call(cv.MethodByName(name), args)
		if (gotPanic != nil) != (wantPanic != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s%v: view gives %v (panic %v), cluster %v (panic %v)", name, args, got, gotPanic, want, wantPanic)
		}
	})
	if calls < 100 {
		t.Errorf("only %d calls made", calls)
	}
}

// TestClusterViewLeavesTheClusterAlone: calling every view method with
// every argument changes nothing the cluster reports, generations
// included.
func TestClusterViewLeavesTheClusterAlone(t *testing.T) {
	c := viewTestCluster(t)
	before := migSnapshot(c)
	v := reflect.ValueOf(c.View())
	forEachCall(t, func(name string, args []reflect.Value) {
		call(v.MethodByName(name), args)
	})
	if after := migSnapshot(c); !reflect.DeepEqual(before, after) {
		t.Errorf("view calls changed the cluster:\nbefore %+v\nafter  %+v", before, after)
	}
	checkRedLine(t, c)
}

// TestClusterViewNodeCopiesMIG: the node a view returns owns its MIG
// layouts; writing into them changes neither the cluster's description
// nor its books.
func TestClusterViewNodeCopiesMIG(t *testing.T) {
	c := viewTestCluster(t)
	v := c.View()
	before := migSnapshot(c)
	want := fmt.Sprint(c.Node(0).MIG)
	n := v.Node(0)
	if n.MIG == nil || len(n.MIG[0]) == 0 {
		t.Fatalf("node 0 should have MIG layouts: %v", n.MIG)
	}
	n.MIG[0][0].Profile += 1
	n.MIG[0] = nil
	n.MIG[1] = append(n.MIG[1][:0], hwmodel.MIGInstance{Profile: 5, Start: 5})
	if got := fmt.Sprint(c.Node(0).MIG); got != want {
		t.Errorf("writing into a view's Node changed the cluster's node: %s, was %s", got, want)
	}
	if got := fmt.Sprint(v.Node(0).MIG); got != want {
		t.Errorf("view's Node now gives %s, was %s", got, want)
	}
	if after := migSnapshot(c); !reflect.DeepEqual(before, after) {
		t.Errorf("writing into a view's Node changed the books:\nbefore %+v\nafter  %+v", before, after)
	}
	// A node without MIG stays without.
	if n := v.Node(2); n.MIG != nil {
		t.Errorf("node 2 has no MIG GPUs, view gives %v", n.MIG)
	}
}

// TestClusterViewSeesChanges: a view is a window, not a snapshot, and
// views of one cluster are equal.
func TestClusterViewSeesChanges(t *testing.T) {
	c := migTestCluster(t)
	v := c.View()
	if v != c.View() {
		t.Error("two views of one cluster differ")
	}
	if other := migTestCluster(t); other.View() == v {
		t.Error("views of two clusters are equal")
	}
	free := v.FreeWholeGPUs(2)
	if err := c.Allocate(hwmodel.Placement{{Node: 2, GPUs: 1, Milli: 1000}}); err != nil {
		t.Fatal(err)
	}
	if got := v.FreeWholeGPUs(2); got != free-1 {
		t.Errorf("after allocating a GPU the view sees %d idle GPUs on node 2, want %d", got, free-1)
	}
}
