package live

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// DetectMachine reads this machine's CPU (runtime.NumCPU, in milli-CPU)
// and memory (MemTotal of /proc/meminfo, in MiB): what the live node
// books jobs' cpu_milli and memory_mib against unless told otherwise.
func DetectMachine() (Machine, error) {
	m := Machine{CPUMilli: int64(runtime.NumCPU()) * 1000}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return m, fmt.Errorf("live: reading the machine's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kib <= 0 {
				return m, fmt.Errorf("live: /proc/meminfo: MemTotal: want a positive number of kB, got %q", fields[1])
			}
			m.MemoryMiB = kib / 1024
			return m, nil
		}
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("live: reading /proc/meminfo: %w", err)
	}
	return m, fmt.Errorf("live: /proc/meminfo has no MemTotal line")
}
