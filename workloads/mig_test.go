package workloads

import (
	"math"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestReadBrigadeMIG(t *testing.T) {
	const p = "testdata/brigade/good-mig.csv"
	w := mustRead(t, p, "brigade")
	h200, _ := hwmodel.ParseModelSet("H200")
	a100h200, _ := hwmodel.ParseModelSet("A100-80GB|H200")
	mig := func(r hwmodel.MIGRequest, models hwmodel.ModelSet) hwmodel.Request {
		return hwmodel.Request{GPUs: 1, MIG: r, Models: models}
	}
	compareJobs(t, w, []brief{
		{Name: "train", Tenant: "default", Duration: 3600, Req: whole(8), Source: p + ":3"},
		{Name: "chat-small", Tenant: "default", Submit: 10, Duration: 120, Req: mig(hwmodel.MIGRequest{Profile: "1g.18gb"}, 0), Source: p + ":4"},
		{Name: "chat-large", Tenant: "default", Submit: 20, Duration: 300, Req: mig(hwmodel.MIGRequest{Profile: "3g.71gb"}, h200), Source: p + ":5"},
		{Name: "embed", Tenant: "default", Submit: 30, Duration: 60, Req: mig(hwmodel.MIGRequest{MinSlices: 2}, 0), Source: p + ":6"},
		// 32.5 GiB = 33280 MiB: exactly a 2g.35gb or 1g.35gb on an H200.
		{Name: "rerank", Tenant: "default", Submit: 40, Duration: 90, Req: mig(hwmodel.MIGRequest{MinMemoryMiB: 33280}, 0), Source: p + ":7"},
		{Name: "summarise", Tenant: "default", Submit: 50, Duration: 600, Req: mig(hwmodel.MIGRequest{MinSlices: 3, MinMemoryMiB: 40960}, a100h200), Source: p + ":8"},
		{Name: "share", Tenant: "default", Submit: 60, Duration: 30, Req: hwmodel.Request{GPUs: 1, GPUMilli: 500}, Source: p + ":9"},
	}, []Tenant{{"default", 1}})
	for _, j := range w.Jobs {
		if err := j.Req.Validate(); err != nil {
			t.Errorf("%s: %v", j.Name, err)
		}
	}
}

func TestReadBrigadeMIGErrors(t *testing.T) {
	const head = "name,submit_s,duration_s,gpus,gpu_milli,gpu_models,mig_profile,mig_min_slices,mig_min_memory_gb\n"
	for _, c := range []struct {
		row, field string
		msg        []string
	}{
		{"a,0,10,2,,,3g.71gb,,", "gpus", []string{"want 1 for a MIG job", "mig_profile is set", "found 2"}},
		{"a,0,10,0,,,,1,", "gpus", []string{"want 1 for a MIG job", "mig_min_slices", "found 0"}},
		{"a,0,10,1,500,,,,16", "gpu_milli", []string{"empty cell for a MIG job", `"500"`}},
		{"a,0,10,1,,,3g.71gb,3,", "mig_min_slices", []string{"empty when mig_profile is set", `"3"`}},
		{"a,0,10,1,,,3g.71gb,,10", "mig_min_memory_gb", []string{"empty when mig_profile is set"}},
		{"a,0,10,1,,,5g.50gb,,", "mig_profile", []string{"want a MIG profile of any MIG-capable GPU model", "1g.18gb", `"5g.50gb"`}},
		{"a,0,10,1,,H200,1g.10gb,,", "mig_profile", []string{"want a MIG profile of H200-141GB", "7g.141gb", `"1g.10gb"`}},
		{"a,0,10,1,,V100-32GB,1g.10gb,,", "mig_profile", []string{"none: no accepted model supports MIG"}},
		{"a,0,10,1,,,,8,", "mig_min_slices", []string{"1..7", "found 8"}},
		{"a,0,10,1,,,,0,", "mig_min_slices", []string{"1..7", "found 0"}},
		{"a,0,10,1,,,,two,", "mig_min_slices", []string{"want an integer", `"two"`}},
		{"a,0,10,1,,,,,-4", "mig_min_memory_gb", []string{"GiB > 0", `"-4"`}},
		{"a,0,10,1,,,,,NaN", "mig_min_memory_gb", []string{"GiB > 0"}},
		{"a,0,10,1,,,,,200", "mig_min_memory_gb", []string{"no MIG profile of any MIG-capable GPU model has 204800 MiB or more memory"}},
		{"a,0,10,1,,A100-40GB,,4,40", "mig_min_slices", []string{"no MIG profile of A100-40GB has 4 or more compute slices and 40960 MiB"}},
	} {
		t.Run(c.row, func(t *testing.T) {
			w, err := ReadBrigade(strings.NewReader(head+c.row+"\n"), "mig.csv")
			if w != nil {
				t.Fatalf("got a workload, want an error")
			}
			checkParseError(t, err, "mig.csv", badCase{line: 2, field: c.field, msg: c.msg})
		})
	}
}

func TestMIGSlicesOf(t *testing.T) {
	for _, c := range []struct {
		r    hwmodel.MIGRequest
		want int
	}{
		{hwmodel.MIGRequest{Profile: "3g.71gb"}, 3},
		{hwmodel.MIGRequest{Profile: "1g.18gb+me"}, 1},
		{hwmodel.MIGRequest{MinSlices: 2}, 2},
		{hwmodel.MIGRequest{MinMemoryMiB: 40000}, 1},
		{hwmodel.MIGRequest{Profile: "7g.141gb", MinSlices: 3}, 7},
	} {
		if got := MIGSlicesOf(c.r); got != c.want {
			t.Errorf("MIGSlicesOf(%v) = %d, want %d", c.r, got, c.want)
		}
	}
}

func TestOfferedLoadCountsMIGBySlices(t *testing.T) {
	// Over a 100 s window on 1 GPU: a whole GPU for 50 s (50 GPU-s) and a
	// 2-slice MIG job for 70 s (2/7 × 70 = 20 GPU-s): load 0.7.
	w := &Workload{Jobs: []Job{
		{Name: "a", Submit: 0, Duration: 50 * hwmodel.Second, Req: whole(1)},
		{Name: "b", Submit: 100 * hwmodel.Second, Duration: 70 * hwmodel.Second, Req: hwmodel.Request{GPUs: 1, MIG: hwmodel.MIGRequest{MinSlices: 2}}},
	}}
	if got := w.OfferedLoad(1); math.Abs(got-0.7) > 1e-12 {
		t.Errorf("offered load %v, want 0.7", got)
	}
}

func TestGenerateMIG(t *testing.T) {
	cfg := DefaultSyntheticConfig()
	cfg.Jobs = 20000
	inference := DurationConfig{Dist: "lognormal", Median: 2 * hwmodel.Minute, Sigma: 1, Min: hwmodel.Second, Max: hwmodel.Hour}
	cfg.MIG = MIGConfig{Fraction: 0.6, Classes: DefaultMIGClasses(), Duration: &inference}
	cfg.CPUMilliPerGPU = 7000
	w, err := Generate(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	var mig int
	counts := map[int]int{}
	for _, j := range w.Jobs {
		if !j.Req.WantsMIG() {
			if j.Duration > 0 && j.Req.GPUMilli == 0 && j.Req.GPUs > 0 {
				t.Fatalf("job %s: GPU job without milli", j.Name)
			}
			continue
		}
		mig++
		counts[j.Req.MIG.MinSlices]++
		if j.Req.GPUs != 1 || j.Req.GPUMilli != 0 || j.Duration > hwmodel.Hour {
			t.Fatalf("job %s: MIG job with %+v, duration %v", j.Name, j.Req, j.Duration)
		}
		if want := 7000 * (int64(j.Req.MIG.MinSlices) * 1000 / 7) / 1000; j.Req.CPUMilli != want {
			t.Fatalf("job %s: %d milli-CPU, want %d (7000 per GPU × %d/7)", j.Name, j.Req.CPUMilli, want, j.Req.MIG.MinSlices)
		}
		if !MIGRequestServable(j.Req.MIG, hwmodel.AnyModel) {
			t.Fatalf("job %s: no model serves %v", j.Name, j.Req.MIG)
		}
	}
	if f := float64(mig) / float64(len(w.Jobs)); math.Abs(f-0.6) > 0.02 {
		t.Errorf("MIG fraction %.3f, want 0.6", f)
	}
	for k, want := range map[int]float64{1: 0.5, 2: 0.3, 3: 0.15, 4: 0.05} {
		if f := float64(counts[k]) / float64(mig); math.Abs(f-want) > 0.02 {
			t.Errorf("%d-slice share %.3f, want %.2f", k, f, want)
		}
	}
	// MeanGPUDemand weighs MIG jobs by slices/7 over their own durations.
	plain := cfg
	plain.MIG = MIGConfig{}
	share := (0.5*1 + 0.3*2 + 0.15*3 + 0.05*4) / 7
	want := cfg.MeanArrivalsPerHour() / 3600 * (0.4*plain.MeanGPUDemand()/(plain.MeanArrivalsPerHour()/3600) + 0.6*share*inference.mean())
	if got := cfg.MeanGPUDemand(); math.Abs(got-want) > 1e-9*want {
		t.Errorf("MeanGPUDemand %v, want %v", got, want)
	}
}

func TestGenerateWithoutMIGUnchanged(t *testing.T) {
	// Fraction 0 draws nothing more: the workload is the one of a config
	// that has never heard of MIG, even with classes given.
	cfg := DefaultSyntheticConfig()
	cfg.Jobs = 500
	a, err := Generate(cfg, 9)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MIG.Classes = DefaultMIGClasses()
	b, err := Generate(cfg, 9)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Jobs {
		if a.Jobs[i].Submit != b.Jobs[i].Submit || a.Jobs[i].Duration != b.Jobs[i].Duration || a.Jobs[i].Req != b.Jobs[i].Req {
			t.Fatalf("job %d differs", i)
		}
	}
}

func TestGenerateMIGConfigErrors(t *testing.T) {
	for _, c := range []struct {
		mig  MIGConfig
		want string
	}{
		{MIGConfig{Fraction: 1.5}, "MIG.Fraction: want 0..1"},
		{MIGConfig{Fraction: 0.5}, "MIG.Classes: want at least one class"},
		{MIGConfig{Fraction: 0.5, Classes: []MIGClass{{MinSlices: 8, Weight: 1}}}, "MinSlices in 0..7"},
		{MIGConfig{Fraction: 0.5, Classes: []MIGClass{{Weight: 1}}}, "want MinSlices or MinMemoryMiB > 0"},
		{MIGConfig{Fraction: 0.5, Classes: []MIGClass{{MinSlices: 1, Weight: 0}}}, "positive finite sum"},
		{MIGConfig{Fraction: 0.5, Classes: []MIGClass{{MinSlices: 1, Weight: 1}}, Duration: &DurationConfig{Dist: "lognormal", Min: 0}}, "MIG.Duration.Min and Max"},
	} {
		cfg := DefaultSyntheticConfig()
		cfg.Jobs = 10
		cfg.MIG = c.mig
		if _, err := Generate(cfg, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.mig, err, c.want)
		}
	}
}
