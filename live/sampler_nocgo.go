//go:build !cgo

package live

// OpenLocalSampler would read per-GPU utilisation and memory through NVML;
// go-nvml needs cgo, so a binary built with CGO_ENABLED=0 reports ErrNoCgo.
func OpenLocalSampler(gpus []GPU) (s GPUSampler, close func(), err error) {
	return nil, nil, ErrNoCgo
}
