package report

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/brigadesim/brigade/csvlimit/csvlimittest"
)

// TestLoadLimits: a line of jobs.csv or timeseries.csv over csvlimit's
// bounds is an error at the file and line, after a few MiB at most. 16 MiB
// of commas would cost a plain encoding/csv reader a 16-byte string
// header per field (256 MiB).
func TestLoadLimits(t *testing.T) {
	for _, file := range []string{"jobs.csv", "timeseries.csv"} {
		for _, c := range csvlimittest.OverLimits {
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte("[]\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, file)
				csvlimittest.WriteLine(t, path, "policy,submit_s\nfcfs,0\n", c.Fill, c.N)
				csvlimittest.Refused(t, fmt.Sprintf("%s:3: %s", path, c.Msg), func() error {
					d, err := Load(dir)
					if d != nil {
						t.Errorf("Load returned data with its error")
					}
					return err
				})
			})
		}
	}
}
