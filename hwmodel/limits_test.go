package hwmodel

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/csvlimit"
	"github.com/brigadesim/brigade/csvlimit/csvlimittest"
)

// TestOpenBNodeListLimits: a node list line over csvlimit's bounds is a
// *FileError at the file and line, after a few MiB at most.
func TestOpenBNodeListLimits(t *testing.T) {
	const head = "sn,cpu_milli,memory_mib,gpu,model\na,1,1,1,T4\n"
	for _, c := range csvlimittest.OverLimits {
		t.Run(c.Name, func(t *testing.T) {
			csvlimittest.Refused(t, "nodes.csv:3: "+c.Msg, func() error {
				_, err := ParseOpenBNodeList(csvlimittest.Line(head, c.Fill, c.N), "nodes.csv", "x")
				if ne, ok := err.(*FileError); !ok || ne.File != "nodes.csv" || ne.Line != 3 {
					t.Errorf("got %v (%T), want a *FileError at nodes.csv:3", err, err)
				}
				return err
			})
		})
	}
}

// TestReadFaultTraceLimits: a failure trace line over csvlimit's bounds,
// after a comment and a failure, is an error at the file and line, after
// a few MiB at most; a comment line is held to the byte bound too.
func TestReadFaultTraceLimits(t *testing.T) {
	c := faultCluster(t, 3, 8)
	const head = "time_s,node,gpu,duration_s\n# a comment\n60,node-0,5,30\n"
	cases := append(slices.Clip(csvlimittest.OverLimits), csvlimittest.OverLimit{Name: "a comment over 1 MiB", Fill: '#', N: csvlimit.MaxLineBytes + 1, Msg: csvlimittest.CommentMsg})
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "faults.csv")
			csvlimittest.WriteLine(t, p, head, tc.Fill, tc.N)
			csvlimittest.Refused(t, fmt.Sprintf("%s:4: %s", p, tc.Msg), func() error {
				_, err := ReadFaultTrace(p, c)
				return err
			})
		})
	}
}
