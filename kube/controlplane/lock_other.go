//go:build !unix

package controlplane

import (
	"context"
	"errors"
	"io"
)

func lockFile(ctx context.Context, path string, log io.Writer) (func(), error) {
	return nil, errors.New("controlplane: the test control plane runs on Unix only")
}
