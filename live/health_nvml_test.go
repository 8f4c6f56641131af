//go:build cgo

package live

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// healthMock is a dgxh200 mock machine with the reads NVMLHealth calls set:
// every device answers GetUtilizationRates with what answer[i] holds
// (SUCCESS by default; a negative value makes the call hang until release
// is closed), supports XID and double-bit ECC events, and the event set
// delivers what is sent on events.
type healthMock struct {
	s       *server.Server
	answer  []atomic.Int32
	release chan struct{}
	events  chan nvml.EventData
	reg     atomic.Uint64 // event types registered on device 0
	freed   atomic.Bool
}

func newHealthMock(t *testing.T) (*healthMock, []GPU) {
	t.Helper()
	s := dgxh200.New()
	fillReads(t, s)
	m := &healthMock{s: s, answer: make([]atomic.Int32, len(s.Devices)), release: make(chan struct{}),
		events: make(chan nvml.EventData, 8)}
	t.Cleanup(func() {
		select {
		case <-m.release:
		default:
			close(m.release)
		}
	})
	for i, d := range s.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			r := nvml.Return(m.answer[i].Load())
			if r < 0 {
				<-m.release
				r = nvml.SUCCESS
			}
			return nvml.Utilization{Gpu: 50}, r
		}
		dev.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError, nvml.SUCCESS
		}
		dev.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
			if i == 0 {
				m.reg.Store(types)
			}
			return nvml.SUCCESS
		}
	}
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
				select {
				case e := <-m.events:
					return e, nvml.SUCCESS
				case <-time.After(time.Duration(ms) * time.Millisecond):
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { m.freed.Store(true); return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	gpus, err := Discover(s)
	if err != nil {
		t.Fatal(err)
	}
	return m, gpus
}

func TestNVMLHealthLostGPU(t *testing.T) {
	m, gpus := newHealthMock(t)
	h, err := NewNVMLHealth(m.s, gpus, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got, want := m.reg.Load(), uint64(nvml.EventTypeXidCriticalError|nvml.EventTypeDoubleBitEccError); got != want {
		t.Errorf("registered event types %#x, want %#x (XID and double-bit ECC only)", got, want)
	}
	hs := h.Poll()
	if len(hs) != 8 {
		t.Fatalf("%d entries", len(hs))
	}
	for _, g := range hs {
		if g.Down {
			t.Errorf("GPU %d down on a healthy machine: %s", g.Index, g.Reason)
		}
	}
	m.answer[3].Store(int32(nvml.ERROR_GPU_IS_LOST))
	m.answer[5].Store(-1) // hangs
	t0 := time.Now()
	hs = h.Poll()
	if el := time.Since(t0); el > 500*time.Millisecond {
		t.Errorf("Poll took %v with a hung GPU (timeout 50ms)", el)
	}
	for _, g := range hs {
		switch g.Index {
		case 3:
			if !g.Down || !strings.Contains(g.Reason, nvml.ERROR_GPU_IS_LOST.Error()) || g.Critical {
				t.Errorf("GPU 3: %+v, want down with %q", g, nvml.ERROR_GPU_IS_LOST.Error())
			}
		case 5:
			if !g.Down || !strings.Contains(g.Reason, "did not answer within 50ms") {
				t.Errorf("GPU 5: %+v, want down for not answering", g)
			}
		default:
			if g.Down {
				t.Errorf("GPU %d: %+v", g.Index, g)
			}
		}
	}
	// Still hung: reported at once, no second query piles up.
	t0 = time.Now()
	hs = h.Poll()
	if !hs[5].Down || time.Since(t0) > 200*time.Millisecond {
		t.Errorf("second poll of the hung GPU: %+v after %v", hs[5], time.Since(t0))
	}
	// Both answer again.
	m.answer[3].Store(int32(nvml.SUCCESS))
	m.answer[5].Store(int32(nvml.SUCCESS))
	close(m.release)
	time.Sleep(10 * time.Millisecond)
	for _, g := range h.Poll() {
		if g.Down {
			t.Errorf("GPU %d still down after answering: %s", g.Index, g.Reason)
		}
	}
}

func TestNVMLHealthXIDEvents(t *testing.T) {
	m, gpus := newHealthMock(t)
	h, err := NewNVMLHealth(m.s, gpus, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := func() (GPUHealth, bool) {
		select {
		case e := <-h.Events():
			return e, true
		case <-time.After(300 * time.Millisecond):
			return GPUHealth{}, false
		}
	}
	// XID 13 (an application's graphics exception) is not critical.
	m.events <- nvml.EventData{Device: m.s.Devices[1], EventType: nvml.EventTypeXidCriticalError, EventData: 13}
	if e, ok := next(); ok {
		t.Errorf("XID 13 reported: %+v", e)
	}
	m.events <- nvml.EventData{Device: m.s.Devices[2], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	e, ok := next()
	if !ok || e.Index != 2 || !e.Down || !e.Critical || e.Reason != "XID 79 (GPU has fallen off the bus)" {
		t.Errorf("XID 79 on GPU 2: %+v %v", e, ok)
	}
	m.events <- nvml.EventData{Device: m.s.Devices[6], EventType: nvml.EventTypeDoubleBitEccError}
	if e, ok := next(); !ok || e.Index != 6 || !e.Critical || e.Reason != "double-bit ECC error" {
		t.Errorf("double-bit ECC on GPU 6: %+v %v", e, ok)
	}
	// An XID on a device NVML cannot name is reported on no GPU.
	m.events <- nvml.EventData{EventType: nvml.EventTypeXidCriticalError, EventData: 48}
	if e, ok := next(); !ok || e.Index != -1 {
		t.Errorf("XID 48 without a device: %+v %v", e, ok)
	}
	if err := h.Close(); err != nil || !m.freed.Load() {
		t.Errorf("Close: %v, event set freed %v", err, m.freed.Load())
	}
}

// TestNVMLHealthDriver runs the driver over the mock: an XID 79 on GPU 0
// kills the job there, which reruns on another GPU.
func TestNVMLHealthDriver(t *testing.T) {
	m, gpus := newHealthMock(t)
	h, err := NewNVMLHealth(m.s, gpus, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dir := t.TempDir()
	d := openHealthDriver(t, dir, gpus, h)
	d.Submit([]JobSpec{{Name: "a", Command: `[ "$BRIGADE_ATTEMPT" = 1 ] && exec sleep 30; exit 0`, Shell: true, GPUs: 1, Retries: 1}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	if g := d.recs[0].GPUs; len(g) != 1 || g[0] != 0 {
		t.Fatalf("a on %v, want GPU 0", g)
	}
	m.events <- nvml.EventData{Device: m.s.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	t0 := time.Now()
	run(t, d)
	if el := time.Since(t0); el > 3*time.Second {
		t.Errorf("took %v", el)
	}
	r := d.recs[0]
	if r.State != Succeeded || r.Runs != 2 || r.GPUs[0] == 0 {
		t.Errorf("a: %s runs %d GPUs %v", r.State, r.Runs, r.GPUs)
	}
	if dg := d.DownGPUs(); len(dg) != 1 || dg[0].Index != 0 || !dg[0].Critical {
		t.Errorf("down: %+v", dg)
	}
	d.Close()
}
