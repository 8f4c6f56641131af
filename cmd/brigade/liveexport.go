package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/brigadesim/brigade/live"
)

const liveExportUsage = `Usage: brigade live export --state FILE --out DIR [flags]

Writes the results folder of the live run a state file holds, as brigade
live writes it when a run ends (docs/live.md): for a run that crashed or
was killed, or to look at a run in progress from a copy of its state file.
Jobs still queued or running are cut at the present time (state queued or
running in jobs.csv). The policy and GPUs come from the state file (state
files of older versions record neither: give --policy, and --gpus-fake N
with the number of GPUs; their model is then taken as an H100). The state
file must not be in use by a running brigade live (bbolt allows one
process).`

const liveExportExamples = `  brigade live export --state brigade-state.db --out brigade-live-out
  brigade sim --replay brigade-live-out --out replay-out
`

func runLiveExport(args []string, stdout io.Writer) error {
	fs := newFlagSet("live export", liveExportUsage, liveExportExamples)
	state := fs.String("state", "brigade-state.db", "the state `file` of the run")
	out := fs.String("out", "brigade-live-out", "`folder` for the results (replaced atomically, but only when empty or an earlier Brigade results folder, and never one holding the state file or the run's logs)")
	policy := fs.String("policy", "", "the run's policy (default: as the state file records)")
	fake := fs.Int("gpus-fake", 0, "the run used N made-up GPUs (only for state files that do not record their GPUs)")
	jobs := fs.String("jobs", "", "the run's job `file`, listed in run.json's inputs (optional)")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *out == "" {
		return usageError{errors.New("--out is required")}
	}
	opt := live.ExportOptions{Policy: *policy, JobsFile: *jobs, Command: append([]string{"brigade", "live", "export"}, args...)}
	if *fake > 0 {
		opt.GPUs = live.FakeGPUs(*fake)
	}
	if err := live.ExportState(*state, opt, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "results: %s\n", *out)
	return nil
}
