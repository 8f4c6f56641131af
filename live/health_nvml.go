//go:build cgo

package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVMLHealth is the HealthSource over NVML. It calls read-only queries only
// (see the package doc): the heartbeat is GetUtilizationRates on each
// GPU's handle; events are critical XIDs and double-bit ECC errors from an
// NVML event set.
type NVMLHealth struct {
	lib     nvml.Interface
	timeout time.Duration
	devs    []*nvmlDev
	byUUID  map[string]int
	set     nvml.EventSet
	ev      chan GPUHealth
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	// Log receives what the event loop cannot report as a GPUHealth
	// (registration and wait errors); nil discards.
	log func(string)
}

type nvmlDev struct {
	index   int
	uuid    string
	dev     nvml.Device // nil when the handle could not be had
	err     string      // why not
	pending chan nvml.Return
}

// NewLocalHealth opens this machine's NVML library and watches gpus.
func NewLocalHealth(gpus []GPU, timeout time.Duration, log func(string)) (HealthSource, error) {
	h, err := NewNVMLHealth(nvml.New(), gpus, timeout, log)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// NewNVMLHealth initialises lib and watches gpus (by UUID). timeout bounds
// one heartbeat query: a GPU whose query has not returned by then is
// reported down (and no second query is sent to it until the first
// returns). Events are registered for the types each GPU supports among
// XID critical errors and double-bit ECC errors; a GPU that supports
// neither is watched by the heartbeat only.
func NewNVMLHealth(lib nvml.Interface, gpus []GPU, timeout time.Duration, log func(string)) (*NVMLHealth, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML Init: %v", ret)
	}
	if log == nil {
		log = func(string) {}
	}
	h := &NVMLHealth{lib: lib, timeout: timeout, byUUID: map[string]int{}, ev: make(chan GPUHealth, 64),
		stop: make(chan struct{}), log: log}
	for i, g := range gpus {
		d := &nvmlDev{index: i, uuid: g.UUID}
		h.byUUID[g.UUID] = i
		dev, ret := lib.DeviceGetHandleByUUID(g.UUID)
		if ret != nvml.SUCCESS {
			d.err = "NVML DeviceGetHandleByUUID: " + ret.Error()
		} else {
			d.dev = dev
		}
		h.devs = append(h.devs, d)
	}
	set, ret := lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		log(fmt.Sprintf("live: NVML EventSetCreate: %v; XID/ECC events not watched, heartbeat only", ret))
		return h, nil
	}
	h.set = set
	registered := 0
	for _, d := range h.devs {
		if d.dev == nil {
			continue
		}
		sup, ret := d.dev.GetSupportedEventTypes()
		if ret != nvml.SUCCESS {
			log(fmt.Sprintf("live: GPU %d %s GetSupportedEventTypes: %v; heartbeat only", d.index, d.uuid, ret))
			continue
		}
		want := sup & uint64(nvml.EventTypeXidCriticalError|nvml.EventTypeDoubleBitEccError)
		if want == 0 {
			continue
		}
		if ret := d.dev.RegisterEvents(want, set); ret != nvml.SUCCESS {
			log(fmt.Sprintf("live: GPU %d %s RegisterEvents: %v; heartbeat only", d.index, d.uuid, ret))
			continue
		}
		registered++
	}
	if registered > 0 {
		h.wg.Add(1)
		go h.events()
	}
	return h, nil
}

// eventWaitMs is how long one EventSetWait blocks, so Close returns soon.
const eventWaitMs = 500

func (h *NVMLHealth) events() {
	defer h.wg.Done()
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		data, ret := h.set.Wait(eventWaitMs)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_TIMEOUT:
			continue
		default:
			// A lost GPU can make the wait fail; the heartbeat reports
			// it. Do not spin.
			h.log(fmt.Sprintf("live: NVML EventSetWait: %v", ret))
			select {
			case <-h.stop:
				return
			case <-time.After(eventWaitMs * time.Millisecond):
			}
			continue
		}
		if e, ok := h.judgeEvent(data); ok {
			select {
			case h.ev <- e:
			case <-h.stop:
				return
			}
		}
	}
}

// judgeEvent turns an NVML event into a down report when it is critical.
func (h *NVMLHealth) judgeEvent(data nvml.EventData) (GPUHealth, bool) {
	var reason string
	switch {
	case data.EventType&nvml.EventTypeXidCriticalError != 0:
		r, ok := CriticalXID(data.EventData)
		if !ok {
			return GPUHealth{}, false // application-caused: the job's exit reports it
		}
		reason = r
	case data.EventType&nvml.EventTypeDoubleBitEccError != 0:
		reason = "double-bit ECC error"
	default:
		return GPUHealth{}, false
	}
	idx := -1
	if data.Device != nil {
		if u, ret := data.Device.GetUUID(); ret == nvml.SUCCESS {
			if i, ok := h.byUUID[u]; ok {
				idx = i
			}
		}
	}
	return GPUHealth{Index: idx, Down: true, Reason: reason, Critical: true}, true
}

// heartbeat is the one read-only query a heartbeat sends to a GPU.
func heartbeat(dev nvml.Device) nvml.Return {
	_, ret := dev.GetUtilizationRates()
	if ret == nvml.ERROR_NOT_SUPPORTED { // a GPU in MIG mode answers this way
		return nvml.SUCCESS
	}
	return ret
}

// Poll implements HealthSource: one query per GPU, in parallel, waited for
// at most the timeout.
func (h *NVMLHealth) Poll() []GPUHealth {
	out := make([]GPUHealth, len(h.devs))
	stale := make([]bool, len(h.devs))
	for i, d := range h.devs {
		stale[i] = d.pending != nil // still unanswered from an earlier heartbeat
		if d.dev != nil && d.pending == nil {
			ch := make(chan nvml.Return, 1)
			d.pending = ch
			go func(dev nvml.Device) { ch <- heartbeat(dev) }(d.dev)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	for i, d := range h.devs {
		out[i] = GPUHealth{Index: d.index}
		if d.dev == nil {
			out[i].Down, out[i].Reason = true, d.err
			continue
		}
		var ret nvml.Return
		answered := true
		select {
		case ret = <-d.pending:
		default:
			if stale[i] {
				answered = false // hung since an earlier heartbeat: do not wait again
				break
			}
			select {
			case ret = <-d.pending:
			case <-ctx.Done():
				answered = false
			}
		}
		switch {
		case !answered:
			out[i].Down, out[i].Reason = true, fmt.Sprintf("NVML did not answer within %v", h.timeout)
		case ret != nvml.SUCCESS:
			d.pending = nil
			out[i].Down, out[i].Reason = true, "NVML GetUtilizationRates: "+ret.Error()
		default:
			d.pending = nil
		}
	}
	return out
}

// Events implements HealthSource.
func (h *NVMLHealth) Events() <-chan GPUHealth { return h.ev }

// Close stops the event loop, frees the event set and shuts NVML down.
func (h *NVMLHealth) Close() error {
	h.once.Do(func() {
		close(h.stop)
		h.wg.Wait()
		if h.set != nil {
			h.set.Free()
		}
		h.lib.Shutdown()
	})
	return nil
}
