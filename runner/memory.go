package runner

import (
	"bufio"
	"fmt"
	"github.com/brigadesim/brigade/hwmodel"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The memory a simulated job costs, as an upper bound: JobBytes for the
// job in the workload and PolicyJobBytes more for each policy that runs it
// (the engine's per-job state and outcome, the JobStats a run keeps, the
// plots' share). Measured as peak resident memory of brigade sim on
// synthetic workloads (docs/speed.md, "Memory"): about 1.0 KB per job
// with one policy at 1,000,000 jobs and 2.4 KB with four at 200,000,
// plots included; the bounds keep a margin of 1.5 to 2 over both.
const (
	JobBytes       = 512
	PolicyJobBytes = 1 << 10
)

// MaxJobs caps a workload's job count whatever the memory: job IDs are
// 32-bit in every results file.
const MaxJobs = 1 << 30

// availableMemory is the memory a run may use, in bytes, and whether it is
// known; tests replace it.
var availableMemory = systemMemory

// CheckJobCount refuses a workload of jobs jobs run under policies
// policies before any of it is made: a count <= 0, one above MaxJobs, or
// one whose bound jobs × (JobBytes + policies × PolicyJobBytes) exceeds
// the memory available (the smallest of MemAvailable, the cgroup's limit
// and GOMEMLIMIT, where the platform tells them). Its error says how much
// the count needs, how much there is, and the largest count that fits.
func CheckJobCount(jobs, policies int) error {
	if jobs <= 0 {
		return fmt.Errorf("want a positive number of jobs, got %d", jobs)
	}
	if jobs > MaxJobs {
		return fmt.Errorf("%d jobs is more than Brigade runs (at most %d)", jobs, MaxJobs)
	}
	per := uint64(JobBytes + max(1, policies)*PolicyJobBytes)
	need := uint64(jobs) * per
	have, known := availableMemory()
	if known && need > have {
		return fmt.Errorf("%d jobs under %s need about %s of memory (%s per job) and %s is available; at most %d jobs fit, or run fewer policies at once",
			jobs, hwmodel.Plural(max(1, policies), "policy", "policies"), bytesText(need), bytesText(per), bytesText(have), have/per)
	}
	return nil
}

// bytesText writes n bytes for a person: 3.1 GiB, 512 MiB, 800 KiB.
func bytesText(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 || f >= 100 {
		return fmt.Sprintf("%.0f %s", f, units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// systemMemory is the smallest of what /proc/meminfo calls MemAvailable,
// the cgroup v2 memory.max less memory.current, and a GOMEMLIMIT below
// both; unknown on systems that have none of them.
func systemMemory() (uint64, bool) {
	var have uint64
	known := false
	take := func(v uint64) {
		if !known || v < have {
			have, known = v, true
		}
	}
	if v, ok := memInfoAvailable(); ok {
		take(v)
	}
	if limit, ok := readUint("/sys/fs/cgroup/memory.max"); ok {
		used, _ := readUint("/sys/fs/cgroup/memory.current")
		if limit > used {
			take(limit - used)
		} else {
			take(0)
		}
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < 1<<62 {
		take(uint64(l))
	}
	return have, known
}

func memInfoAvailable() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// readUint reads a file holding one number ("max" and errors: false).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}
