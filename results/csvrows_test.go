package results

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"testing"
)

// csvRows writes what encoding/csv's Writer writes, on cells that need
// quoting in every way and on those that do not.
func TestCSVRowsLikeEncodingCSV(t *testing.T) {
	cells := []string{"", "a", `\.`, `\`, ".", "a,b", `a"b`, `"`, `""`, "a\nb", "a\rb", "a\r\nb", " a", "a ", "\ta",
		"\u00a0a", "\u2028", "é", "x\u00a0", "-1.500000", "NaN", "+Inf", "p100-001+p100-002"}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		var rows [][]string
		for range 1 + rng.IntN(5) {
			row := make([]string, 1+rng.IntN(6))
			for i := range row {
				row[i] = cells[rng.IntN(len(cells))]
				if rng.IntN(4) == 0 {
					row[i] += cells[rng.IntN(len(cells))]
				}
			}
			rows = append(rows, row)
		}
		var want, got bytes.Buffer
		cw := csv.NewWriter(&want)
		if err := cw.WriteAll(rows); err != nil {
			t.Fatal(err)
		}
		c := newCSVRows(&got)
		for _, row := range rows {
			for _, s := range row {
				c.str(s)
			}
			c.end()
		}
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("trial %d: %q\nencoding/csv: %q\ncsvRows:      %q", trial, rows, want.Bytes(), got.Bytes())
		}
	}
}
