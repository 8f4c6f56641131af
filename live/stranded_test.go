package live

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With --exit-when-done, a queue that only a critically failed GPU could
// serve ends the run (its jobs stay queued for a restart with --gpu-up)
// instead of waiting for ever; a GPU down for not answering keeps it
// waiting, since it may come back by itself.
func TestLiveExitsWhenOnlyDownGPUsCouldServe(t *testing.T) {
	for _, critical := range []bool{true, false} {
		dir := t.TempDir()
		var log bytes.Buffer
		d, err := Open(Config{GPUs: FakeGPUs(2), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
			LogDir: filepath.Join(dir, "logs"), Clock: &fakeClock{time.Unix(1000, 0)}, Tick: 5 * time.Millisecond,
			ExitWhenDone: true, Health: NewFakeHealth(2), HeartbeatInterval: time.Hour, Log: &log, Backoff: -1})
		if err != nil {
			t.Fatal(err)
		}
		d.pushHealth(GPUHealth{Index: 0, Down: true, Critical: critical, Reason: "XID 79"})
		if err := d.healthRound(); err != nil {
			t.Fatal(err)
		}
		d.Submit([]JobSpec{{Name: "small", Command: "true", GPUs: 1}, {Name: "both", Command: "true", GPUs: 2}})
		if critical {
			run(t, d)
			if d.recs[0].State != Succeeded || d.recs[1].State != Queued {
				t.Errorf("critical: small %s, both %s; want succeeded and still queued", d.recs[0].State, d.recs[1].State)
			}
			if !strings.Contains(log.String(), "1 queued jobs cannot start") {
				t.Errorf("log does not say why the run ended: %q", log.String())
			}
		} else {
			for k := 0; k < 20; k++ {
				if err := d.round(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if d.stranded() != 0 {
				t.Errorf("a GPU down for not answering strands the queue")
			}
		}
		d.Close()
	}
}
