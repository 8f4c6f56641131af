package hwmodel_test

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// sharedThroughputs finds the folder holding throughputs/ (the measured
// data the default speed table is derived from), or "".
func sharedThroughputs() string {
	for _, dir := range []string{"../../shared", "/work/shared"} {
		if st, err := os.Stat(filepath.Join(dir, "throughputs")); err == nil && st.IsDir() {
			return dir
		}
	}
	return ""
}

// TestSpeedsCSVIsGenerated regenerates the default speed table from the
// shared data and requires it to equal the committed hwmodel/speeds.csv
// byte for byte.
func TestSpeedsCSVIsGenerated(t *testing.T) {
	shared := sharedThroughputs()
	if shared == "" {
		t.Skip("shared/throughputs not found beside the checkout (../shared) or at /work/shared: cannot regenerate hwmodel/speeds.csv")
	}
	if testing.Short() {
		t.Skip("-short: regenerating hwmodel/speeds.csv builds the generator")
	}
	out := filepath.Join(t.TempDir(), "speeds.csv")
	cmd := exec.Command("go", "run", "./internal/speedgen", "-shared", shared, "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./hwmodel/internal/speedgen: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("speeds.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		abs, _ := filepath.Abs(shared)
		t.Errorf("hwmodel/speeds.csv is not what the generator writes from %s; run, from the module root,\n\tgo run ./hwmodel/internal/speedgen -shared %s -out hwmodel/speeds.csv", abs, abs)
	}
}

// speed is class's speed on the named model in the default table.
func speed(t *testing.T, tab *hwmodel.SpeedTable, class, model string) float64 {
	t.Helper()
	m, ok := hwmodel.LookupModel(model)
	if !ok {
		t.Fatalf("no catalogue model %s", model)
	}
	v, ok := tab.Speed(class, m.ID)
	if !ok {
		t.Fatalf("the default speed table has no row %s,%s", class, model)
	}
	return v
}

// near reports whether got is want within the table's four significant
// digits.
func near(got, want float64) bool { return math.Abs(got/want-1) < 6e-4 }

func TestDefaultSpeeds(t *testing.T) {
	tab := hwmodel.DefaultSpeeds()

	// A generic row for every catalogue model but the anonymised G2, G3,
	// each saying whether it is measured or estimated.
	notes := map[string]string{}
	for _, r := range tab.Rows() {
		if r.Class == hwmodel.AnyClass {
			notes[hwmodel.Model(r.Model).Name] = r.Source
		}
	}
	for _, m := range hwmodel.Models() {
		src, ok := notes[m.Name]
		switch {
		case m.Name == "G2" || m.Name == "G3":
			if ok {
				t.Errorf("generic row for %s, which has no data", m.Name)
			}
		case !ok:
			t.Errorf("no generic row for %s", m.Name)
		case m.Name != "A100-80GB" && !strings.HasPrefix(src, "measured") && !strings.HasPrefix(src, "estimated"):
			t.Errorf("generic row for %s does not say measured or estimated: %q", m.Name, src)
		}
	}
	if got := speed(t, tab, hwmodel.AnyClass, "A100-80GB"); got != 1 {
		t.Errorf("generic A100-80GB = %g, want 1 (the common scale)", got)
	}

	// Gavel ResNet-50, one GPU, steps/s from
	// shared/throughputs/gavel/simulation_throughputs_isolated.csv, rows
	// "ResNet-50 (batch size N),1,k80" and "...,1,v100", N = 16, 32, 64, 128.
	k80 := []float64{2.3005199880283542, 1.236568777004088, 0.6190282202246573, 0.3472236920519382}
	v100 := []float64{11.396129065315943, 7.787264918596293, 4.394774823323071, 2.4967655780898292}
	logSum := 0.0
	for i := range k80 {
		logSum += math.Log(k80[i] / v100[i])
	}
	want := math.Exp(logSum / float64(len(k80)))
	if got := speed(t, tab, "resnet50", "K80") / speed(t, tab, "resnet50", "V100-16GB"); !near(got, want) {
		t.Errorf("resnet50 K80/V100 = %.4f, want %.4f (geomean over batch sizes)", got, want)
	}
	if a, b := speed(t, tab, "resnet50", "V100-16GB"), speed(t, tab, "resnet50", "V100-32GB"); a != b {
		t.Errorf("resnet50 V100-16GB %g and V100-32GB %g differ", a, b)
	}
	// Recommendation comes from the physical-cluster file, where V100 is
	// the fastest of the three (the simulation file has it slowest).
	if k, v := speed(t, tab, "recommendation", "K80"), speed(t, tab, "recommendation", "V100-16GB"); !(k < 0.3*v) {
		t.Errorf("recommendation K80 %g, V100 %g: want K80 well under V100", k, v)
	}

	// MLPerf BERT, 8 GPUs, v3.0: A100-80GB 15.7520 min, H100-80GB 5.3492 min
	// (shared/throughputs/mlperf/mlperf_relative_speed.csv, the selected
	// bert H100-SXM-80GB/A100-SXM-80GB row): 2.945.
	if got := speed(t, tab, "bert", "H100-80GB") / speed(t, tab, "bert", "A100-80GB"); math.Abs(got-2.945) > 1e-3 {
		t.Errorf("bert H100/A100 = %.4f, want 2.945", got)
	}
	if got, want := speed(t, tab, "bert", "H100-80GB"), 15.7520/5.3492; !near(got, want) {
		t.Errorf("bert H100 = %.4f, want %.4f", got, want)
	}

	// The lookup rule: a class's own ratio where it has both models, else
	// the generic ratio.
	h100, _ := hwmodel.LookupModel("H100-80GB")
	a100, _ := hwmodel.LookupModel("A100-80GB")
	k80m, _ := hwmodel.LookupModel("K80")
	rates := tab.Compile([]string{"bert", "no-such-class"})
	if got := rates.Rate(1, a100.ID, h100.ID); math.Abs(got-2.945) > 1e-3 {
		t.Errorf("bert rate H100 vs A100 = %.4f, want 2.945", got)
	}
	gen := speed(t, tab, hwmodel.AnyClass, "H100-80GB") / speed(t, tab, hwmodel.AnyClass, "A100-80GB")
	if got := rates.Rate(2, a100.ID, h100.ID); got != gen {
		t.Errorf("unknown class rate H100 vs A100 = %g, want the generic %g", got, gen)
	}
	gen = speed(t, tab, hwmodel.AnyClass, "K80") / speed(t, tab, hwmodel.AnyClass, "A100-80GB")
	if got := rates.Rate(1, a100.ID, k80m.ID); got != gen {
		t.Errorf("bert on K80 (no bert row) = %g, want the generic %g", got, gen)
	}

	// The generic order of the generations the data measure.
	order := []string{"K80", "P100", "V100-16GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200-180GB"}
	for i := 1; i < len(order); i++ {
		if a, b := speed(t, tab, hwmodel.AnyClass, order[i-1]), speed(t, tab, hwmodel.AnyClass, order[i]); !(a < b) {
			t.Errorf("generic %s %g is not below %s %g", order[i-1], a, order[i], b)
		}
	}
	if n := len(defaultSpeedsCSV(t)); n > 100<<10 {
		t.Errorf("hwmodel/speeds.csv is %d bytes; keep it well under 100 KB", n)
	}
}

func defaultSpeedsCSV(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("speeds.csv")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
