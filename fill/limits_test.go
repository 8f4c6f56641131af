package fill

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/brigadesim/brigade/csvlimit/csvlimittest"
)

// TestLoadPublishedLimits: a line of either published table over
// csvlimit's bounds, its header or a row, is an error at the file and
// line, after a few MiB at most. 16 MiB of commas would cost a plain
// encoding/csv reader a 16-byte string header per field (256 MiB).
func TestLoadPublishedLimits(t *testing.T) {
	const table = "workload,sc_policy,tune,seed,0,1\nopenb,06-FGD,1.3,42,0,1\n"
	type limitCase struct {
		csvlimittest.OverLimit
		head string // what comes before the line
		line int
	}
	cases := []limitCase{{csvlimittest.HeaderOverLimit, "", 1}}
	for _, c := range csvlimittest.OverLimits {
		cases = append(cases, limitCase{c, table, 3})
	}
	for _, file := range []string{"analysis_allo_discrete.csv", "analysis_frag_ratio_discrete.csv"} {
		for _, c := range cases {
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				dir := t.TempDir()
				for _, f := range []string{"analysis_allo_discrete.csv", "analysis_frag_ratio_discrete.csv"} {
					if err := os.WriteFile(filepath.Join(dir, f), []byte(table), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				path := filepath.Join(dir, file)
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				csvlimittest.WriteLine(t, path, c.head, c.Fill, c.N)
				csvlimittest.Refused(t, fmt.Sprintf("%s:%d: %s", path, c.line, c.Msg), func() error {
					p, err := LoadPublished(dir)
					if p != nil {
						t.Errorf("LoadPublished returned a result with its error")
					}
					return err
				})
			})
		}
	}
}
