package config

import (
	"strings"
	"testing"
	"time"
)

func TestReadSlurmConf(t *testing.T) {
	day := 24 * time.Hour
	defaults := SlurmPriority{DecayHalfLife: 7 * day, MaxAge: 7 * day, CalcPeriod: 5 * time.Minute}
	for _, tc := range []struct {
		name, conf string
		want       SlurmPriority
	}{
		{"empty", "", defaults},
		{"other keys only", "ClusterName=c\nSchedulerType=sched/backfill # comment\n", defaults},
		{"a full configuration", `# slurm.conf
ClusterName=gpu
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=500
PriorityWeightPartition=100
PriorityWeightQOS=2000
PriorityDecayHalfLife=14-0
PriorityMaxAge=1-12
PriorityFavorSmall=YES
PriorityCalcPeriod=10
PriorityFlags=NO_FAIR_TREE
PriorityUsageResetPeriod=NONE
NodeName=n[0-3] Gres=gpu:8 PriorityFoo=1
PartitionName=gpu Nodes=ALL PriorityJobFactor=5 PriorityTier=2
`, SlurmPriority{WeightAge: 1000, WeightFairshare: 10000, WeightJobSize: 500, WeightPartition: 100, WeightQOS: 2000,
			DecayHalfLife: 14 * day, MaxAge: 36 * time.Hour, CalcPeriod: 10 * time.Minute, FavorSmall: true}},
		// Keys in any case, several on a line, a quoted value, no decay.
		{"case and words", "priorityweightage=7 PRIORITYDECAYHALFLIFE=0\r\nPriorityMaxAge=\"2:30\"\n",
			SlurmPriority{WeightAge: 7, MaxAge: 150 * time.Second, CalcPeriod: 5 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadSlurmConf([]byte(tc.conf), "slurm.conf")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseSlurmTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration // -1: invalid
	}{
		{"5", 5 * time.Minute},
		{"90", 90 * time.Minute},
		{"2:30", 2*time.Minute + 30*time.Second},
		{"1:02:03", time.Hour + 2*time.Minute + 3*time.Second},
		{"7-0", 7 * 24 * time.Hour},
		{"1-12", 36 * time.Hour},
		{"1-0:30", 24*time.Hour + 30*time.Minute},
		{"1-0:0:5", 24*time.Hour + 5*time.Second},
		{"0", 0},
		{"", -1}, {"-", -1}, {"1-", -1}, {"1:2:3:4", -1}, {"1-2:3:4:5", -1}, {"x", -1}, {"1.5", -1},
		{"+5", -1}, {"5m", -1}, {"99999999999", -1}, {"40000-0", -1},
	} {
		got, ok := parseSlurmTime(tc.in)
		if !ok {
			got = -1
		}
		if got != tc.want {
			t.Errorf("%q: got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestReadSlurmConfErrors(t *testing.T) {
	conf := `PriorityType=priority/basic
PriorityWeightAge=-5
PriorityWeightAge=10
PriorityWeightFairShare=1.5
PriorityWeightTRES=CPU=1,GRES/gpu=10
PriorityDecayHalfLif=7-0
PriorityMaxAge=0
PriorityFavorSmall=maybe
PriorityFlags=FAIR_TREE,NO_FAIR_TREE
PriorityCalcPeriod
PriorityUsageResetPeriod=WEEKLY
PriorityWeightQOS=4294967296
`
	_, err := ReadSlurmConf([]byte(conf), "slurm.conf")
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`slurm.conf:1: PriorityType: only priority/multifactor is modelled, got "priority/basic"`,
		`slurm.conf:2: PriorityWeightAge: want a whole number from 0 to 4294967295, got "-5"`,
		`slurm.conf:4: PriorityWeightFairShare: want a whole number from 0 to 4294967295, got "1.5"`,
		`slurm.conf:5: PriorityWeightTRES: not a priority key Brigade models (known: PriorityType, `,
		`slurm.conf:6: PriorityDecayHalfLif: not a priority key Brigade models`,
		`did you mean "PriorityDecayHalfLife"?`,
		`slurm.conf:7: PriorityMaxAge: want a time > 0 as Slurm writes it`,
		`slurm.conf:8: PriorityFavorSmall: want YES or NO, got "maybe"`,
		`slurm.conf:9: PriorityFlags: flag "FAIR_TREE" is not modelled`,
		`slurm.conf:10: PriorityCalcPeriod: want KEY=VALUE`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	// The first ten problems in line order, then a count: line 3's key
	// given twice is the third.
	if !strings.Contains(msg, `slurm.conf:3: PriorityWeightAge: given twice (first on line 2)`) || !strings.Contains(msg, "and 2 more problems") {
		t.Errorf("error lacks the duplicate or the count:\n%s", msg)
	}
}

func TestReadSlurmConfTooLarge(t *testing.T) {
	big := strings.Repeat("# padding\n", MaxSlurmConfBytes/10+1)
	if _, err := ReadSlurmConf([]byte(big), "big.conf"); err == nil || !strings.Contains(err.Error(), "big.conf: file is larger than 4 MiB") {
		t.Fatalf("err = %v", err)
	}
}

// ReadSlurmConf never panics, and what it accepts is in range.
func FuzzReadSlurmConf(f *testing.F) {
	for _, s := range []string{
		"", "PriorityWeightAge=1000\nPriorityDecayHalfLife=7-0\n", "PriorityMaxAge=1-2:3:4 PriorityFavorSmall=no",
		"PartitionName=p PriorityJobFactor=3", "PriorityCalcPeriod=5#x", "priorityweightqos=4294967295", "PriorityWeightAge",
		"Include other.conf", "PriorityFlags=NO_FAIR_TREE,", "PriorityDecayHalfLife=0:0",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadSlurmConf(data, "f.conf")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.conf") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for _, w := range []float64{p.WeightAge, p.WeightFairshare, p.WeightJobSize, p.WeightPartition, p.WeightQOS} {
			if w < 0 || w > 4294967295 {
				t.Fatalf("weight %v out of range", w)
			}
		}
		if p.MaxAge <= 0 || p.CalcPeriod <= 0 || p.DecayHalfLife < 0 {
			t.Fatalf("times out of range: %+v", p)
		}
	})
}
