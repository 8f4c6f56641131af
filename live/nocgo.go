//go:build !cgo

package live

// DiscoverLocal would open this machine's NVML library; go-nvml needs cgo,
// so a binary built with CGO_ENABLED=0 reports ErrNoCgo.
func DiscoverLocal() ([]GPU, error) { return nil, ErrNoCgo }
