package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// serveMetrics starts m's server on 127.0.0.1:0 and returns its base URL;
// the server stops when the test ends.
func serveMetrics(t *testing.T, m *Metrics) string {
	t.Helper()
	srv, err := m.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + srv.Addr().String()
}

// scrape GETs url and returns every sample line of the text format keyed
// by series (name{labels}).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkSeries(t *testing.T, when string, got map[string]float64, want map[string]float64) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := got[k]
		switch {
		case want[k] < 0 && ok:
			t.Errorf("%s: %s = %v, want absent", when, k, v)
		case want[k] >= 0 && !ok:
			t.Errorf("%s: %s absent, want %v", when, k, want[k])
		case want[k] >= 0 && v != want[k]:
			t.Errorf("%s: %s = %v, want %v", when, k, v, want[k])
		}
	}
}

func openWithMetrics(t *testing.T, dir string, gpus int, m *Metrics) *Driver {
	t.Helper()
	d, err := Open(Config{GPUs: FakeGPUs(gpus), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Clock: &fakeClock{time.Unix(1000, 0)}, Tick: 5 * time.Millisecond,
		ExitWhenDone: true, Metrics: m, Backoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var fakeSamples = FakeSampler{
	{Index: 0, UUID: "GPU-fake-0000", Model: "fake H100", Utilisation: 0.25, MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30},
	{Index: 1, UUID: "GPU-fake-0001", Model: "fake H100", Utilisation: -1, MemoryUsedBytes: 0, MemoryTotalBytes: 80 << 30},
}

// TestMetricsScrape runs real short processes (true, true, false with one
// retry) on 2 fake GPUs and scrapes /metrics over HTTP before, during and
// after.
func TestMetricsScrape(t *testing.T) {
	dir := t.TempDir()
	m := NewMetrics(fakeSamples)
	url := serveMetrics(t, m) + "/metrics"
	d := openWithMetrics(t, dir, 2, m)
	defer d.Close()
	gpu0 := `{gpu="0",model="fake H100",uuid="GPU-fake-0000"}`
	gpu1 := `{gpu="1",model="fake H100",uuid="GPU-fake-0001"}`
	checkSeries(t, "at open", scrape(t, url), map[string]float64{
		"brigade_live_queue_length":                         0,
		"brigade_live_running_jobs":                         0,
		"brigade_live_gpus_up":                              2,
		"brigade_live_gpus_down":                            0,
		"brigade_live_gpu_utilisation_ratio" + gpu0:         0.25,
		"brigade_live_gpu_utilisation_ratio" + gpu1:         -1, // absent: not reported (MIG)
		"brigade_live_gpu_memory_used_bytes" + gpu0:         1 << 30,
		"brigade_live_gpu_memory_used_bytes" + gpu1:         0,
		"brigade_live_gpu_memory_total_bytes" + gpu0:        80 << 30,
		"brigade_live_gpu_memory_total_bytes" + gpu1:        80 << 30,
		"brigade_live_gpu_sample_errors_total":              0,
		`brigade_live_wait_seconds_count{tenant="default"}`: -1,
	})
	if _, err := d.Submit([]JobSpec{
		{Name: "ok1", Command: "true", GPUs: 1},
		{Name: "ok2", Command: "true", GPUs: 1},
		{Name: "bad", Command: "false", GPUs: 1, Retries: 1},
	}); err != nil {
		t.Fatal(err)
	}
	checkSeries(t, "after submit", scrape(t, url), map[string]float64{
		"brigade_live_queue_length": 3,
		"brigade_live_running_jobs": 0,
	})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	checkSeries(t, "after the first round", scrape(t, url), map[string]float64{
		"brigade_live_queue_length":                             1,
		"brigade_live_running_jobs":                             2,
		`brigade_live_attempts_started_total{tenant="default"}`: 2,
	})
	run(t, d)
	checkSeries(t, "at the end", scrape(t, url), map[string]float64{
		"brigade_live_queue_length": 0,
		"brigade_live_running_jobs": 0,
		`brigade_live_jobs_completed_total{result="succeeded",tenant="default"}`: 2,
		`brigade_live_jobs_completed_total{result="failed",tenant="default"}`:    1,
		`brigade_live_attempts_started_total{tenant="default"}`:                  4,
		`brigade_live_attempts_failed_total{tenant="default"}`:                   2,
		`brigade_live_wait_seconds_count{tenant="default"}`:                      3,
		`brigade_live_wait_seconds_bucket{tenant="default",le="1"}`:              3, // the fake clock stands still
		`brigade_live_wait_seconds_sum{tenant="default"}`:                        0,
		`brigade_live_jct_seconds_count{tenant="default"}`:                       3,
		`brigade_live_jct_seconds_bucket{tenant="default",le="+Inf"}`:            3,
	})
}

// TestMetricsTransitions feeds hand-made transitions to the hooks and
// checks counters, gauges and histogram sums, tenant by tenant.
func TestMetricsTransitions(t *testing.T) {
	sec := int64(time.Second / time.Microsecond)
	rec := func(tenant string, st State, attempt int, submit, start, end int64) *Record {
		return &Record{Spec: JobSpec{Tenant: tenant}, State: st, Attempt: attempt, Submit: submit * sec, Start: start * sec, End: end * sec}
	}
	m := NewMetrics(nil)
	steps := []struct {
		r    *Record
		from State
	}{
		{rec("", Queued, 0, 0, 0, 0), ""},            // submitted
		{rec("", Running, 1, 0, 10, 0), Queued},      // first start: waited 10 s
		{rec("", Queued, 1, 0, 10, 0), Running},      // failed, retried
		{rec("", Running, 2, 0, 50, 0), Queued},      // a retry: no wait observed
		{rec("", Succeeded, 2, 0, 50, 100), Running}, // JCT 100 s
		{rec("bob", Failed, 0, 7, 0, 7), ""},         // never fits: failed at submission, JCT 0
		{rec("bob", Queued, 0, 0, 0, 0), ""},         // submitted
		{rec("bob", Running, 1, 0, 3, 0), Queued},    // waited 3 s
		{rec("bob", Failed, 1, 0, 3, 1000), Running}, // JCT 1000 s
		{rec("bob", Queued, 0, 0, 0, 0), ""},         // still queued at the end
		{rec("carol", Running, 1, 0, 4, 0), ""},      // only via recovered below
	}
	for _, s := range steps[:len(steps)-1] {
		m.moved(s.r, s.from)
	}
	m.recovered(steps[len(steps)-1].r)
	m.recovered(rec("carol", Succeeded, 1, 0, 4, 9)) // ended before the restart: not counted
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"queue", testutil.ToFloat64(m.queued), 1},
		{"running", testutil.ToFloat64(m.running), 1},
		{"default succeeded", testutil.ToFloat64(m.completed.WithLabelValues("default", "succeeded")), 1},
		{"default failed", testutil.ToFloat64(m.completed.WithLabelValues("default", "failed")), 0},
		{"bob failed", testutil.ToFloat64(m.completed.WithLabelValues("bob", "failed")), 2},
		{"carol succeeded", testutil.ToFloat64(m.completed.WithLabelValues("carol", "succeeded")), 0},
		{"default started", testutil.ToFloat64(m.started.WithLabelValues("default")), 2},
		{"default attempts failed", testutil.ToFloat64(m.failed.WithLabelValues("default")), 1},
		{"bob started", testutil.ToFloat64(m.started.WithLabelValues("bob")), 1},
		{"bob attempts failed", testutil.ToFloat64(m.failed.WithLabelValues("bob")), 1},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	got := scrapeRegistry(t, m)
	checkSeries(t, "histograms", got, map[string]float64{
		`brigade_live_wait_seconds_count{tenant="default"}`:          1,
		`brigade_live_wait_seconds_sum{tenant="default"}`:            10,
		`brigade_live_wait_seconds_bucket{tenant="default",le="8"}`:  0,
		`brigade_live_wait_seconds_bucket{tenant="default",le="16"}`: 1,
		`brigade_live_wait_seconds_count{tenant="bob"}`:              1,
		`brigade_live_wait_seconds_sum{tenant="bob"}`:                3,
		`brigade_live_jct_seconds_count{tenant="default"}`:           1,
		`brigade_live_jct_seconds_sum{tenant="default"}`:             100,
		`brigade_live_jct_seconds_count{tenant="bob"}`:               2,
		`brigade_live_jct_seconds_sum{tenant="bob"}`:                 1000,
		`brigade_live_jct_seconds_bucket{tenant="bob",le="1"}`:       1,
		`brigade_live_jct_seconds_bucket{tenant="bob",le="1024"}`:    2,
		`brigade_live_wait_seconds_count{tenant="carol"}`:            -1,
	})
}

// scrapeRegistry serves m on loopback for one scrape.
func scrapeRegistry(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	return scrape(t, serveMetrics(t, m)+"/metrics")
}

// TestMetricsNil checks that a driver without metrics pays for a nil
// check only.
func TestMetricsNil(t *testing.T) {
	var m *Metrics
	r := &Record{State: Running, Attempt: 1}
	if n := testing.AllocsPerRun(100, func() {
		m.moved(r, Queued)
		m.recovered(r)
		m.SetGPUs(1, 0)
	}); n != 0 {
		t.Errorf("%v allocations per nil call", n)
	}
}

// TestMetricsRecovered abandons a driver with one job running and one
// queued, reopens the state with fresh metrics: the gauges show the
// recovered state, the counters start from zero.
func TestMetricsRecovered(t *testing.T) {
	dir := t.TempDir()
	d := openWithMetrics(t, dir, 1, NewMetrics(nil))
	d.Submit([]JobSpec{{Name: "long", Command: "sleep", Args: []string{"0.3"}, GPUs: 1}, {Name: "after", Command: "true", GPUs: 1}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	d.Close() // abandoned: "long" keeps running
	m := NewMetrics(nil)
	d2 := openWithMetrics(t, dir, 1, m)
	defer d2.Close()
	url := serveMetrics(t, m) + "/metrics"
	checkSeries(t, "after the restart", scrape(t, url), map[string]float64{
		"brigade_live_queue_length":                                              1,
		"brigade_live_running_jobs":                                              1,
		`brigade_live_attempts_started_total{tenant="default"}`:                  -1,
		`brigade_live_jobs_completed_total{result="succeeded",tenant="default"}`: -1,
	})
	run(t, d2)
	// long was re-adopted; its wrapper's exit file says it succeeded.
	checkSeries(t, "at the end", scrape(t, url), map[string]float64{
		"brigade_live_queue_length":                                              0,
		"brigade_live_running_jobs":                                              0,
		`brigade_live_attempts_started_total{tenant="default"}`:                  1,
		`brigade_live_attempts_failed_total{tenant="default"}`:                   -1,
		`brigade_live_jobs_completed_total{result="succeeded",tenant="default"}`: 2,
		`brigade_live_jobs_completed_total{result="failed",tenant="default"}`:    -1,
		`brigade_live_wait_seconds_count{tenant="default"}`:                      1,
		`brigade_live_jct_seconds_count{tenant="default"}`:                       2,
	})
}

func TestMetricsListen(t *testing.T) {
	tests := []struct {
		addr    string
		public  bool
		refused bool
	}{
		{":0", false, true},
		{"0.0.0.0:0", false, true},
		{"[::]:0", false, true},
		{"192.0.2.1:9400", false, true},
		{"127.0.0.1:0", false, false},
		{"127.0.0.2:0", false, false},
		{"[::1]:0", false, false},
		{"localhost:0", false, false},
		{"127.0.0.1:0", true, false},
		{"127.0.0.1", false, true}, // no port
	}
	m := NewMetrics(nil)
	for _, tc := range tests {
		t.Run(tc.addr+map[bool]string{true: " public"}[tc.public], func(t *testing.T) {
			srv, err := m.Listen(tc.addr, tc.public)
			if tc.refused {
				if err == nil {
					srv.Close()
					t.Fatalf("Listen(%q) served, want refused", tc.addr)
				}
				if tc.addr != "127.0.0.1" && !strings.Contains(err.Error(), "--metrics-public") {
					t.Errorf("error %q does not name --metrics-public", err)
				}
				return
			}
			if err != nil {
				if strings.Contains(err.Error(), "--metrics-public") {
					t.Fatalf("Listen(%q) refused: %v", tc.addr, err)
				}
				t.Skipf("cannot bind here: %v", err) // e.g. no IPv6 loopback
			}
			srv.Close()
		})
	}
	// A public address is served with the flag (port 0 on every interface).
	srv, err := m.Listen(":0", true)
	if err != nil {
		t.Fatalf("Listen(:0, public): %v", err)
	}
	srv.Close()
}

func TestMetricsBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if srv, err := NewMetrics(nil).Listen(ln.Addr().String(), false); err == nil {
		srv.Close()
		t.Fatalf("Listen on a busy port succeeded")
	} else if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("busy port: %v", err)
	}
}

// TestMetricsOnlyMetrics: nothing but GET /metrics is served.
func TestMetricsOnlyMetrics(t *testing.T) {
	base := serveMetrics(t, NewMetrics(nil))
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/metrics", 200},
		{"HEAD", "/metrics", 200},
		{"GET", "/", 404},
		{"GET", "/other", 404},
		{"GET", "/metrics/", 404},
		{"GET", "/debug/pprof/", 404},
		{"POST", "/metrics", 405},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

// TestMetricsLoopbackOnly: bound to 127.0.0.1, the endpoint does not
// answer on this machine's other addresses.
func TestMetricsLoopbackOnly(t *testing.T) {
	srv, err := NewMetrics(nil).Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		c, err := net.DialTimeout("tcp", net.JoinHostPort(n.IP.String(), port), time.Second)
		if err == nil {
			c.Close()
			t.Errorf("metrics bound to 127.0.0.1 answered on %s", n.IP)
		}
	}
	if tried == 0 {
		t.Skip("no non-loopback address on this machine")
	}
	if c, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second); err != nil {
		t.Errorf("not reachable on its own address: %v", err)
	} else {
		c.Close()
	}
}

// metricNames returns the names of every metric family m exports once
// each labelled series has a value.
func metricNames(t *testing.T) map[string]bool {
	t.Helper()
	m := NewMetrics(fakeSamples)
	r := &Record{State: Running, Attempt: 1}
	m.moved(r, Queued)
	r.State = Succeeded
	m.moved(r, Running)
	r.State = Queued
	m.moved(r, Running)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	if len(fams) != 13 {
		t.Errorf("%d metric families, want 13 (a new metric? add it to the docs, the dashboard and this count)", len(fams))
	}
	return names
}

var metricRE = regexp.MustCompile(`brigade_live_[a-z_]+`)

// TestMetricsDashboard: every metric the Grafana dashboard queries exists,
// and every metric is named in docs/live.md.
func TestMetricsDashboard(t *testing.T) {
	names := metricNames(t)
	b, err := os.ReadFile("../deploy/grafana/brigade-live.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if v, _ := dash["schemaVersion"].(float64); v < 36 {
		t.Errorf("schemaVersion %v", dash["schemaVersion"])
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(dash["panels"])
	walk(dash["templating"])
	used := map[string]bool{}
	for _, e := range exprs {
		for _, n := range metricRE.FindAllString(e, -1) {
			used[n] = true
			if !names[n] {
				t.Errorf("dashboard queries %s, which the registry does not have (in %q)", n, e)
			}
		}
	}
	if len(exprs) < 8 || len(used) < 8 {
		t.Errorf("only %d expressions using %d metrics found in the dashboard", len(exprs), len(used))
	}
	doc, err := os.ReadFile("../docs/live.md")
	if err != nil {
		t.Fatal(err)
	}
	for n := range names {
		if !strings.Contains(string(doc), n) && !strings.HasSuffix(n, "_bucket") && !strings.HasSuffix(n, "_sum") && !strings.HasSuffix(n, "_count") {
			t.Errorf("docs/live.md does not mention %s", n)
		}
	}
}

// TestMetricsGPUsDown: a GPU that stops answering the heartbeat moves from
// up to down, the attempt it killed counts as failed, and a restart shows
// the down GPU again until the operator clears it.
func TestMetricsGPUsDown(t *testing.T) {
	dir := t.TempDir()
	open := func(m *Metrics, h HealthSource, up ...string) *Driver {
		t.Helper()
		d, err := Open(Config{GPUs: FakeGPUs(2), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
			LogDir: filepath.Join(dir, "logs"), Clock: &fakeClock{time.Unix(1000, 0)}, Tick: 5 * time.Millisecond,
			ExitWhenDone: true, Health: h, HeartbeatInterval: 10 * time.Millisecond, GPUsUp: up, Metrics: m, Backoff: -1})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	gauges := func(when string, m *Metrics, up, down float64) {
		t.Helper()
		if u, d := testutil.ToFloat64(m.gpusUp), testutil.ToFloat64(m.gpusDown); u != up || d != down {
			t.Errorf("%s: gpus up %v down %v, want %v %v", when, u, d, up, down)
		}
	}
	fh := NewFakeHealth(2)
	m := NewMetrics(nil)
	d := open(m, fh)
	gauges("at open", m, 2, 0)
	d.Submit([]JobSpec{{Name: "both", Command: "sleep", Args: []string{"30"}, GPUs: 2}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	fh.Lose(1, "GPU is lost")
	run(t, d)
	d.Close()
	gauges("after the loss", m, 1, 1)
	if f := testutil.ToFloat64(m.completed.WithLabelValues("default", "failed")); f != 1 {
		t.Errorf("completed failed %v, want 1", f)
	}
	if r := testutil.ToFloat64(m.running); r != 0 {
		t.Errorf("running %v, want 0", r)
	}
	m2 := NewMetrics(nil)
	open(m2, nil).Close()
	gauges("after a restart", m2, 1, 1)
	m3 := NewMetrics(nil)
	open(m3, nil, "1").Close()
	gauges("after the operator cleared GPU 1", m3, 2, 0)
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}

// Connections that local users open to the endpoint and leave open must
// not use up the driver's file descriptors: the server holds a bounded
// number, whatever the clients do.
func TestMetricsBoundsConnections(t *testing.T) {
	url := serveMetrics(t, NewMetrics(nil))
	addr := strings.TrimPrefix(url, "http://")
	base := openFDs(t)
	const clients = 200
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range clients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		// A keep-alive request; the client never reads the answer nor
		// closes.
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	time.Sleep(500 * time.Millisecond)
	held := openFDs(t) - base - clients
	if held > 64 {
		t.Errorf("the server holds %d descriptors for %d idle clients; want a bound (<= 64)", held, clients)
	}
	// Scrapes still get through.
	if got := scrape(t, url+"/metrics"); len(got) == 0 {
		t.Error("empty scrape")
	}
}
