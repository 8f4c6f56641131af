package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/brigadesim/brigade/live"
)

const gpusUsage = `Usage: brigade gpus [flags]

Prints what NVML reports about this machine's NVIDIA GPUs: each GPU's index,
model (and the catalogue model it maps to), UUID, memory used/total,
utilisation, MIG mode and, when MIG is on, its GPU instances (profile and
profile id, instance id, MIG device UUID, placement start:size in memory
slices). It only reads: it never changes MIG mode, never creates or destroys
instances and never resets a GPU. Without an NVIDIA driver it exits 1 and
says so. brigade live runs jobs on the GPUs it lists.`

const gpusExamples = `  brigade gpus
  brigade gpus --json | jq '.[] | {index, uuid, mig_enabled}'
`

// discoverGPUs is live.DiscoverLocal; tests replace it.
var discoverGPUs = live.DiscoverLocal

func runGPUs(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gpus", gpusUsage, gpusExamples)
	asJSON := fs.Bool("json", false, "print the GPUs as a JSON array instead of a table")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	gpus, err := discoverGPUs()
	switch {
	case errors.Is(err, live.ErrNoDriver):
		return fmt.Errorf("%v; live mode needs one", err)
	case errors.Is(err, live.ErrNoCgo):
		return fmt.Errorf("this binary was %v; rebuild it with CGO_ENABLED=1 for live mode", err)
	case err != nil:
		return err
	}
	if *asJSON {
		if gpus == nil {
			gpus = []live.GPU{}
		}
		b, err := json.MarshalIndent(gpus, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return writeGPUTable(stdout, gpus)
}

func writeGPUTable(w io.Writer, gpus []live.GPU) error {
	if len(gpus) == 0 {
		_, err := fmt.Fprintln(w, "NVML reports no GPUs on this machine.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tMODEL\tUUID\tMEMORY USED/TOTAL\tUTIL\tMIG")
	for _, g := range gpus {
		model := g.Model
		if g.Catalogue != "" {
			model += " (" + g.Catalogue + ")"
		}
		util := "n/a"
		if g.UtilisationPct >= 0 {
			util = fmt.Sprintf("%d%%", g.UtilisationPct)
		}
		mig := "off"
		if g.MIGEnabled {
			mig = fmt.Sprintf("on, %d instance(s)", len(g.Instances))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d MiB\t%s\t%s\n", g.Index, model, g.UUID, g.MemoryUsedMiB, g.MemoryTotalMiB, util, mig)
		for _, gi := range g.Instances {
			uuid := gi.UUID
			if uuid == "" {
				uuid = "(no MIG device)"
			}
			fmt.Fprintf(tw, "  └ %s (profile %d, GI %d)\t\t%s\tplacement %d:%d\t\t\n", gi.Profile, gi.ProfileID, gi.ID, uuid, gi.Start, gi.Size)
		}
	}
	return tw.Flush()
}
