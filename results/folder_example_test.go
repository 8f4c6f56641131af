package results_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brigadesim/brigade/results"
)

// A results folder is written whole: a run that fails while writing
// leaves the folder of the run before it, not a mix of the two.
func ExampleWriteFolder() {
	parent, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(parent)
	out := filepath.Join(parent, "out")
	write := func(seed uint64, fail bool) error {
		return results.WriteFolder(out, func(dir string) error {
			if err := results.WriteRunJSON(filepath.Join(dir, "run.json"), results.RunInfo{Seed: seed}); err != nil {
				return err
			}
			if fail {
				return errors.New("no space left on device")
			}
			return nil
		})
	}
	fmt.Println(write(1, false))
	fmt.Println(write(2, true))
	var info results.RunInfo
	b, _ := os.ReadFile(filepath.Join(out, "run.json"))
	_ = json.Unmarshal(b, &info)
	fmt.Println("seed in", filepath.Base(out), info.Seed)
	// Output:
	// <nil>
	// no space left on device
	// seed in out 1
}
