package live

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStart returns field 22 (starttime) of /proc/<pid>/stat and whether the
// process is alive (exists and is not a zombie).
func procStart(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	st, err := strconv.ParseUint(f[19], 10, 64)
	return st, err == nil
}

// findMarked scans /proc for a live process whose environment holds marker
// (the driver sets BRIGADE_LIVE_JOB in every child). It finds a child that
// was launched just before a crash, before its PID reached the store.
func findMarked(marker string) (int, uint64, bool) {
	ents, _ := filepath.Glob("/proc/[0-9]*/environ")
	want := []byte(marker)
	for _, e := range ents {
		b, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, want) {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
				if st, ok := procStart(pid); ok {
					return pid, st, true
				}
			}
		}
	}
	return 0, 0, false
}
