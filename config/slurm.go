package config

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SlurmPriority is the priority configuration of a slurm.conf: Slurm's
// priority/multifactor keys, with Slurm's defaults for those the file
// leaves out. brigade sim --slurm-conf turns it into a multifactor
// policy spec (cmd/brigade, slurmSpec), since config imports nothing of
// Brigade's.
type SlurmPriority struct {
	// WeightAge, WeightFairshare, WeightJobSize, WeightPartition and
	// WeightQOS are the PriorityWeight* keys: whole numbers from 0 to
	// 4294967295 (Slurm's range), default 0.
	WeightAge, WeightFairshare, WeightJobSize, WeightPartition, WeightQOS float64
	// DecayHalfLife (PriorityDecayHalfLife, default 7 days; 0: no
	// decay), MaxAge (PriorityMaxAge, default 7 days) and CalcPeriod
	// (PriorityCalcPeriod, default 5 minutes).
	DecayHalfLife, MaxAge, CalcPeriod time.Duration
	// FavorSmall is PriorityFavorSmall=YES.
	FavorSmall bool
}

// slurmKey is one priority key ReadSlurmConf reads: its name as Slurm
// spells it and how it sets its field from the value ("" for a problem).
type slurmKey struct {
	name string
	set  func(p *SlurmPriority, v string) string
}

var slurmKeys = []slurmKey{
	{"PriorityType", func(_ *SlurmPriority, v string) string {
		if !strings.EqualFold(v, "priority/multifactor") {
			return fmt.Sprintf("only priority/multifactor is modelled, got %q", v)
		}
		return ""
	}},
	{"PriorityWeightAge", slurmWeight(func(p *SlurmPriority) *float64 { return &p.WeightAge })},
	{"PriorityWeightFairshare", slurmWeight(func(p *SlurmPriority) *float64 { return &p.WeightFairshare })},
	{"PriorityWeightJobSize", slurmWeight(func(p *SlurmPriority) *float64 { return &p.WeightJobSize })},
	{"PriorityWeightPartition", slurmWeight(func(p *SlurmPriority) *float64 { return &p.WeightPartition })},
	{"PriorityWeightQOS", slurmWeight(func(p *SlurmPriority) *float64 { return &p.WeightQOS })},
	{"PriorityDecayHalfLife", slurmTime(func(p *SlurmPriority) *time.Duration { return &p.DecayHalfLife }, true)},
	{"PriorityMaxAge", slurmTime(func(p *SlurmPriority) *time.Duration { return &p.MaxAge }, false)},
	{"PriorityCalcPeriod", slurmTime(func(p *SlurmPriority) *time.Duration { return &p.CalcPeriod }, false)},
	{"PriorityFavorSmall", func(p *SlurmPriority, v string) string {
		switch strings.ToUpper(v) {
		case "YES":
			p.FavorSmall = true
		case "NO":
			p.FavorSmall = false
		default:
			return fmt.Sprintf("want YES or NO, got %q", v)
		}
		return ""
	}},
	{"PriorityFlags", func(_ *SlurmPriority, v string) string {
		for _, f := range strings.Split(v, ",") {
			if f != "" && !strings.EqualFold(f, "NO_FAIR_TREE") {
				return fmt.Sprintf("flag %q is not modelled (the fair-share factor is the classic one, NO_FAIR_TREE)", f)
			}
		}
		return ""
	}},
	{"PriorityUsageResetPeriod", func(_ *SlurmPriority, v string) string {
		if !strings.EqualFold(v, "NONE") {
			return fmt.Sprintf("only NONE is modelled (usage decays by PriorityDecayHalfLife), got %q", v)
		}
		return ""
	}},
}

func slurmWeight(field func(*SlurmPriority) *float64) func(*SlurmPriority, string) string {
	return func(p *SlurmPriority, v string) string {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return fmt.Sprintf("want a whole number from 0 to %d, got %q", uint32(math.MaxUint32), v)
		}
		*field(p) = float64(n)
		return ""
	}
}

func slurmTime(field func(*SlurmPriority) *time.Duration, zero bool) func(*SlurmPriority, string) string {
	return func(p *SlurmPriority, v string) string {
		d, ok := parseSlurmTime(v)
		if !ok || (d == 0 && !zero) {
			want := "> 0"
			if zero {
				want = ">= 0"
			}
			return fmt.Sprintf("want a time %s as Slurm writes it (minutes, min:sec, hr:min:sec, days-hr, days-hr:min or days-hr:min:sec), got %q", want, v)
		}
		*field(p) = d
		return ""
	}
}

// parseSlurmTime reads a Slurm time string: "M", "M:S", "H:M:S", "D-H",
// "D-H:M" or "D-H:M:S", each part a whole number; at most 100 years.
func parseSlurmTime(s string) (time.Duration, bool) {
	days := int64(0)
	rest := s
	hasDays := false
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, ok := slurmPart(d)
		if !ok {
			return 0, false
		}
		days, rest, hasDays = n, r, true
	}
	parts := strings.Split(rest, ":")
	var nums []int64
	for _, p := range parts {
		n, ok := slurmPart(p)
		if !ok {
			return 0, false
		}
		nums = append(nums, n)
	}
	var h, m, sec int64
	switch {
	case hasDays && len(nums) <= 3:
		h = nums[0]
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			sec = nums[2]
		}
	case len(nums) == 1:
		m = nums[0]
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	case len(nums) == 3:
		h, m, sec = nums[0], nums[1], nums[2]
	default:
		return 0, false
	}
	total := ((days*24+h)*60+m)*60 + sec
	if total > 100*365*86400 {
		return 0, false
	}
	return time.Duration(total) * time.Second, true
}

// slurmPart is one whole-number part of a time string, up to ten digits.
func slurmPart(s string) (int64, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// slurmObjects are the slurm.conf lines that describe an object (a node,
// a partition) rather than set keys; ReadSlurmConf skips them whole, so
// a partition's PriorityJobFactor or PriorityTier is not read.
var slurmObjects = []string{"NodeName", "PartitionName", "NodeSet", "DownNodes", "FrontendName", "SwitchName"}

// MaxSlurmConfBytes bounds a slurm.conf ReadSlurmConf reads.
const MaxSlurmConfBytes = 4 << 20

// ReadSlurmConf reads the priority keys of a slurm.conf. A line is one or
// more KEY=VALUE words separated by spaces, "#" starts a comment, keys
// are matched without regard to case (as Slurm does). The keys of
// SlurmPriority are read; any other key starting with "Priority" is an
// error, since the model would silently differ from the file (with the
// closest known key); every other key, object lines (NodeName,
// PartitionName, ...) and Include lines are ignored. A key given twice is
// an error. Every problem is reported at once as file:line: KEY: what was
// expected.
func ReadSlurmConf(data []byte, file string) (SlurmPriority, error) {
	p := SlurmPriority{DecayHalfLife: 7 * 24 * time.Hour, MaxAge: 7 * 24 * time.Hour, CalcPeriod: 5 * time.Minute}
	e := NewErrors(file)
	if len(data) > MaxSlurmConfBytes {
		e.r.add(0, "", fmt.Sprintf("file is larger than %d MiB; is it a slurm.conf?", MaxSlurmConfBytes>>20))
		return p, e.Err()
	}
	names := make([]string, len(slurmKeys))
	lower := make([]string, len(slurmKeys)) // as Suggest compares them
	for i, k := range slurmKeys {
		names[i], lower[i] = k.name, strings.ToLower(k.name)
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxSlurmConfBytes+1)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		words := strings.Fields(text)
		if len(words) == 0 {
			continue
		}
		first, _, _ := strings.Cut(words[0], "=")
		if strings.EqualFold(first, "Include") || slices.ContainsFunc(slurmObjects, func(o string) bool { return strings.EqualFold(o, first) }) {
			continue
		}
		for _, w := range words {
			key, value, ok := strings.Cut(w, "=")
			if !strings.HasPrefix(strings.ToLower(key), "priority") {
				continue
			}
			k := slices.IndexFunc(slurmKeys, func(s slurmKey) bool { return strings.EqualFold(s.name, key) })
			switch {
			case k < 0:
				msg := "not a priority key Brigade models (known: " + strings.Join(names, ", ") + ")"
				if s := Suggest(key, lower); s != "" {
					msg += "; did you mean " + strconv.Quote(names[slices.Index(lower, s)]) + "?"
				}
				e.r.add(line, key, msg)
				continue
			case !ok:
				e.r.add(line, key, "want KEY=VALUE, got no \"=\"")
				continue
			}
			name := slurmKeys[k].name
			if prev, dup := seen[name]; dup {
				e.r.add(line, key, fmt.Sprintf("given twice (first on line %d)", prev))
				continue
			}
			seen[name] = line
			if msg := slurmKeys[k].set(&p, strings.Trim(value, `"`)); msg != "" {
				e.r.add(line, key, msg)
			}
		}
	}
	if err := sc.Err(); err != nil {
		e.r.add(0, "", err.Error())
	}
	return p, e.Err()
}
