//go:build !cgo

package live

import "time"

// DiscoverLocal would open this machine's NVML library; go-nvml needs cgo,
// so a binary built with CGO_ENABLED=0 reports ErrNoCgo.
func DiscoverLocal() ([]GPU, error) { return nil, ErrNoCgo }

// NewLocalHealth would watch this machine's GPUs through NVML; go-nvml
// needs cgo, so a binary built with CGO_ENABLED=0 reports ErrNoCgo.
func NewLocalHealth(gpus []GPU, timeout time.Duration, log func(string)) (HealthSource, error) {
	return nil, ErrNoCgo
}
