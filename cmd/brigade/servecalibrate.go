package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/serving"
	"github.com/brigadesim/brigade/serving/iteration"
)

// serveCalibrate is brigade serve --calibrate: fit an iteration-level
// service's latency coefficients to measured requests. A mode of serve,
// as --plan is, because the replica it fits is the one the experiment
// file describes (model, GPU, TP, engine settings, starting
// coefficients). It prints the statistics before and after and writes
// the fitted coefficients to --calibrate-out, a new file, in the format
// replica.iteration.coefficients reads.
func serveCalibrate(exp *serving.Experiment, f serveFlags, stdout, stderr io.Writer) error {
	svc, err := pickService(exp, f.calibrateService, "--calibrate-service")
	if err != nil {
		return err
	}
	im := svc.Replica.Iteration
	if im == nil {
		return usageError{fmt.Errorf("--calibrate: service %s has no replica.iteration section (calibration fits the iteration-level latency model)", svc.Name)}
	}
	if f.calibrateOut != "" {
		if _, err := os.Stat(f.calibrateOut); !errors.Is(err, fs.ErrNotExist) {
			return usageError{fmt.Errorf("--calibrate-out %s exists; give a new file (Brigade overwrites nothing outside its results folder)", f.calibrateOut)}
		}
	}
	measured, err := iteration.ReadBLISTrace(f.calibrate)
	if err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade serve: calibrating %s's latency coefficients on %d requests from %s\n", svc.Name, len(measured), f.calibrate)
	}
	cal, err := im.Calibrate(svc.GPUsPerReplica, measured)
	if err != nil {
		return fmt.Errorf("%s: %w", f.calibrate, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "statistic (ms)\tmeasured\tstart\tfitted\t\n")
	want, before, after := cal.Measured.Slice(), cal.Before.Slice(), cal.After.Slice()
	for k, name := range iteration.StatNames {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t\n", name, want[k], before[k], after[k])
	}
	fmt.Fprintf(tw, "RMS relative error\t\t%.4f\t%.4f\t\n", cal.ErrBefore, cal.ErrAfter)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d measured requests, %d replays\n", cal.Used, cal.Replays)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Fitted by brigade serve --calibrate %s (RMS relative error %.4f, from %.4f)\n", f.calibrate, cal.ErrAfter, cal.ErrBefore)
	if err := iteration.WriteCoeffs(&buf, cal.Fitted); err != nil {
		return err
	}
	if f.calibrateOut == "" {
		_, err := io.Copy(stdout, &buf)
		return err
	}
	return os.WriteFile(f.calibrateOut, buf.Bytes(), 0o644)
}

// pickService is the service named by flag, or the only one.
func pickService(exp *serving.Experiment, name, flag string) (*serving.Service, error) {
	var names []string
	for k := range exp.Spec.Services {
		s := &exp.Spec.Services[k]
		if s.Name == name || (name == "" && len(exp.Spec.Services) == 1) {
			return s, nil
		}
		names = append(names, s.Name)
	}
	if name == "" {
		return nil, usageError{fmt.Errorf("the file has %d services (%s): name one with %s", len(names), strings.Join(names, ", "), flag)}
	}
	return nil, usageError{fmt.Errorf("%s %q: no such service (the file has %s)", flag, name, strings.Join(names, ", "))}
}
