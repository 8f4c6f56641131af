package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// smallGrid: 2 workloads × 2 clusters × 2 loads × 3 seeds = 24 runs of 2
// policies with different options (two runner.Run groups), fast.
const smallGrid = `synthetic:
  - jobs: 40
  - jobs: 60
    load: 0.8
clusters: [h200x8, mixed-small]
policies:
  - name: fcfs
  - name: sjf
    backfill: true
loads: [0.6, 1.2]
seeds: "1-3"
`

func loadSmall(t *testing.T) *Grid {
	t.Helper()
	g, err := LoadGrid(writeGridFile(t, smallGrid))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range append([]string{GridFile}, Files...) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func sameFiles(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	for f := range a {
		if !bytes.Equal(a[f], b[f]) {
			t.Errorf("%s: %s differs", what, f)
		}
	}
}

func TestRunOrder(t *testing.T) {
	g := loadSmall(t)
	runs := g.Runs()
	if len(runs) != 24 {
		t.Fatalf("%d runs, want 24", len(runs))
	}
	var keys []string
	for i, r := range runs {
		if r.Index != i {
			t.Fatalf("run %d has index %d", i, r.Index)
		}
		keys = append(keys, r.Key)
	}
	// Seeds vary fastest, then loads, clusters, workloads.
	want := "w0-c0-l0-s1 w0-c0-l0-s2 w0-c0-l0-s3 w0-c0-l1-s1"
	if got := strings.Join(keys[:4], " "); got != want {
		t.Errorf("first runs %s, want %s", got, want)
	}
	if r := runs[23]; r.Key != "w1-c1-l1-s3" || r.Workload != "synthetic:60" || r.Cluster != "mixed-small" || r.Load != 1.2 || r.Seed != 3 {
		t.Errorf("last run %+v", r)
	}
	for n := 1; n <= 5; n++ {
		count := 0
		for i := range n {
			for _, r := range runs {
				if (Shard{i, n}).Has(r.Index) {
					count++
					if r.Index%n != i {
						t.Errorf("shard %d/%d has run %d", i, n, r.Index)
					}
				}
			}
		}
		if count != len(runs) {
			t.Errorf("%d shards hold %d runs, want each of %d once", n, count, len(runs))
		}
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

func TestSweepDeterministicShardsResume(t *testing.T) {
	g := loadSmall(t)
	root := t.TempDir()
	one := filepath.Join(root, "one")
	recs, err := Sweep(g, one, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 24 {
		t.Fatalf("%d records", len(recs))
	}
	want := readAll(t, one)
	if lines := bytes.Count(want["runs.csv"], []byte("\n")); lines != 1+24*2 {
		t.Errorf("runs.csv has %d lines, want 49", lines)
	}
	if lines := bytes.Count(want["summary.csv"], []byte("\n")); lines != 1+8*2*6 {
		t.Errorf("summary.csv has %d lines, want %d", lines, 1+8*2*6)
	}

	t.Run("determinism", func(t *testing.T) {
		g2 := loadSmall(t)
		dir := filepath.Join(root, "again")
		if _, err := Sweep(g2, dir, Options{Workers: 1}); err != nil {
			t.Fatal(err)
		}
		sameFiles(t, "workers 1 vs 2", want, readAll(t, dir))
	})

	t.Run("shards merge byte for byte", func(t *testing.T) {
		for _, n := range []int{1, 3, 5} {
			var dirs []string
			for i := range n {
				dir := filepath.Join(root, "shards", string(rune('0'+n)), string(rune('0'+i)))
				if _, err := Sweep(g, dir, Options{Workers: 2, Shard: Shard{i, n}}); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, dir)
			}
			merged := filepath.Join(root, "merged", string(rune('0'+n)))
			// Shard folders in any order, one given twice: same tables.
			args := append([]string{dirs[len(dirs)-1]}, dirs...)
			if _, _, err := Merge(merged, args, false); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, "merged shards", want, readAll(t, merged))
		}
		if _, _, err := Merge(filepath.Join(root, "partial"), []string{filepath.Join(root, "shards", "3", "0")}, false); err == nil || !strings.Contains(err.Error(), "16 of 24 runs are in no shard") {
			t.Errorf("merging one of three shards: %v", err)
		}
	})

	t.Run("resume skips recorded runs", func(t *testing.T) {
		dir := filepath.Join(root, "resume")
		if err := os.MkdirAll(filepath.Join(dir, RecordsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		// Pre-seed 10 records, as if killed after 10 runs, plus a temporary
		// file an interrupted atomic write leaves behind.
		for _, r := range recs[:10] {
			if err := writeRecord(dir, r); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(dir, RecordsDir, ".w0-c0-l0-s1.json.tmp-123"), []byte("{"), 0o644)
		var first = -1
		_, err := Sweep(g, dir, Options{Workers: 2, Progress: func(done, total int) {
			if first < 0 {
				first = done
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if first != 10 {
			t.Errorf("progress started at %d, want the 10 recorded runs", first)
		}
		sameFiles(t, "resumed", want, readAll(t, dir))

		// A recorded run is not run again: doctor one record and rerun.
		path := filepath.Join(dir, RecordsDir, recs[0].Key+".json")
		var rec Record
		b, _ := os.ReadFile(path)
		json.Unmarshal(b, &rec)
		x := 12345.5
		rec.Policies[0].Metrics[0] = &x
		if err := writeRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := Sweep(g, dir, Options{Workers: 2}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "runs.csv"))
		if !bytes.Contains(got, []byte(",fcfs,12345.5,")) {
			t.Errorf("the recorded run was run again:\n%s", got[:200])
		}
	})

	t.Run("another grid's folder is refused", func(t *testing.T) {
		other, err := LoadGrid(writeGridFile(t, strings.Replace(smallGrid, "1-3", "1-4", 1)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Sweep(other, one, Options{}); err == nil || !strings.Contains(err.Error(), "another grid") {
			t.Errorf("sweep into another grid's folder: %v", err)
		}
	})
}

func TestPrintSummary(t *testing.T) {
	g := loadSmall(t)
	g.Seeds = g.Seeds[:1]
	dir := t.TempDir()
	recs, err := Sweep(g, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := PrintSummary(&buf, g, recs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "significance: n/a (fewer than 2 seeds)") {
		t.Errorf("one seed: no n/a:\n%s", buf.String())
	}
	pairs, _ := os.ReadFile(filepath.Join(dir, "pairs.csv"))
	if !bytes.Contains(pairs, []byte(",1,")) || !bytes.Contains(pairs, []byte(",n/a,n/a,n/a\n")) {
		t.Errorf("pairs.csv with one seed:\n%s", pairs)
	}
}

func TestRunsParquetMatchesCSV(t *testing.T) {
	g := loadSmall(t)
	g.Seeds = g.Seeds[:2]
	dir := t.TempDir()
	if _, err := Sweep(g, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "runs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range pf.Schema().Fields() {
		names = append(names, c.Name())
	}
	csvBytes, _ := os.ReadFile(filepath.Join(dir, "runs.csv"))
	rows, err := csv.NewReader(bytes.NewReader(csvBytes)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(names, ","), strings.Join(rows[0], ","); got != want {
		t.Errorf("parquet columns %s\nwant runs.csv's %s", got, want)
	}
	if pf.NumRows() != int64(len(rows)-1) {
		t.Errorf("parquet has %d rows, runs.csv %d", pf.NumRows(), len(rows)-1)
	}
	// Every value equals the CSV's.
	r := parquet.NewReader(pf)
	for i := 1; i < len(rows); i++ {
		row := map[string]any{}
		if err := r.Read(&row); err != nil {
			t.Fatal(err)
		}
		for k, name := range rows[0] {
			got := fmt.Sprint(row[name])
			if v, ok := row[name].(float64); ok {
				got = num(v)
			}
			if row[name] == nil {
				got = ""
			}
			if got != rows[i][k] {
				t.Errorf("row %d %s: parquet %q, csv %q", i, name, got, rows[i][k])
			}
		}
	}
}

// Policies split over several runner.Run calls (different options) are
// summarised against one shared starvation threshold, as if run together.
func TestOptionGroupsShareThreshold(t *testing.T) {
	grid := func(extra string) *Grid {
		g, err := LoadGrid(writeGridFile(t, "synthetic: [{jobs: 300, load: 0.7}]\nclusters: [mixed-small]\npolicies:\n  - name: fcfs\n  - name: sjf\n"+extra+"seeds: [1, 2]\n"))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	together, split := grid(""), grid("    backfill_depth: 999\n") // sjf without backfill ignores the depth
	for _, r := range together.Runs() {
		a, err := RunOne(together, r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RunOne(split, r)
		if err != nil {
			t.Fatal(err)
		}
		a.Grid, b.Grid = "", ""
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("run %s: one runner.Run\n%s\ntwo\n%s", r.Key, ja, jb)
		}
		starved := 0.0
		for _, p := range a.Policies {
			starved += *p.Metrics[4]
		}
		if starved == 0 {
			t.Errorf("run %s: no starved job, so the threshold is not tested", r.Key)
		}
	}
}
