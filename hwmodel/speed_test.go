package hwmodel_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"math/big"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// readSpeeds reads a speed table from text, failing the test on an error.
func readSpeeds(t testing.TB, text string) *hwmodel.SpeedTable {
	t.Helper()
	tab, err := hwmodel.ReadSpeedTable(strings.NewReader(text), "speeds.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestReadSpeedTableErrors: every bad input is a *FileError at the line
// and field at fault, saying what was expected. Bugs it catches: a line
// counted by records rather than by lines (the comment and blank lines
// below shift it), a field left unnamed, a check that lets 0, a negative,
// NaN or an infinity through (a NaN speed makes every rate NaN and a job
// never end), a duplicate row that silently replaces the first, and a
// class compared with its case (bert and BERT are one class).
func TestReadSpeedTableErrors(t *testing.T) {
	const h3, h4 = "class,gpu_model,speed\n", "class,gpu_model,speed,source\n"
	models := strings.Split(hwmodel.ModelNames(), ", ")
	tests := []struct {
		name, in string
		line     int
		field    string
		want     []string // substrings of the message
	}{
		{"no header", "*,A100-80GB,1\n", 1, "header", []string{"want class,gpu_model,speed,source", "found *,A100-80GB,1"}},
		{"wrong header", "class,model,speed\n*,A100-80GB,1\n", 1, "header", []string{"want class,gpu_model,speed,source", "found class,model,speed"}},
		{"header out of order", "gpu_model,class,speed\n", 1, "header", []string{"want class,gpu_model,speed,source"}},
		{"header too short", "class,gpu_model\n", 1, "header", []string{"want class,gpu_model,speed,source"}},
		{"header after comments", "# a table\n\n# more\nclass,gpu,speed\n", 4, "header", []string{"want class,gpu_model,speed,source"}},
		{"empty file", "", 0, "", []string{"empty", "class,gpu_model,speed,source"}},
		{"only comments", "# nothing here\n# at all\n", 0, "", []string{"empty"}},
		{"unknown model", h3 + "*,A100-80GB,1\n*,Z900,2\n", 3, "gpu_model", append([]string{`unknown GPU model "Z900"`}, models...)},
		{"empty model", h3 + "*,,1\n", 2, "gpu_model", []string{`unknown GPU model ""`}},
		{"speed 0", h3 + "*,A100-80GB,0\n", 2, "speed", []string{"finite number > 0", `found "0"`}},
		{"speed -0", h3 + "*,A100-80GB,-0\n", 2, "speed", []string{"finite number > 0", `found "-0"`}},
		{"negative speed", h3 + "*,A100-80GB,-1.5\n", 2, "speed", []string{"finite number > 0", `found "-1.5"`}},
		{"NaN", h3 + "*,A100-80GB,NaN\n", 2, "speed", []string{"finite number > 0", `found "NaN"`}},
		{"nan lower case", h3 + "*,A100-80GB,nan\n", 2, "speed", []string{"finite number > 0"}},
		{"Inf", h3 + "*,A100-80GB,Inf\n", 2, "speed", []string{"finite number > 0", `found "Inf"`}},
		{"+Inf", h3 + "*,A100-80GB,+Inf\n", 2, "speed", []string{"finite number > 0"}},
		{"overflows to Inf", h3 + "*,A100-80GB,1e400\n", 2, "speed", []string{"finite number > 0", `found "1e400"`}},
		{"not a number", h3 + "*,A100-80GB,fast\n", 2, "speed", []string{"finite number > 0", `found "fast"`}},
		{"empty speed", h3 + "*,A100-80GB,\n", 2, "speed", []string{"finite number > 0", `found ""`}},
		{"pair twice", h3 + "*,A100-80GB,1\n*,H100,2\n# between\n\n*,A100-80GB,1\n", 6, "gpu_model", []string{"class * on A100-80GB is given twice", "first on line 2"}},
		{"pair twice by alias", h3 + "bert,H100-80GB,2\nbert,h100,3\n", 3, "gpu_model", []string{"class bert on H100-80GB is given twice", "first on line 2"}},
		{"pair twice by case", h4 + "bert,H100-80GB,2,a\nBERT,H100-80GB,3,b\n", 3, "gpu_model", []string{"class bert on H100-80GB is given twice", "first on line 2"}},
		{"class with a space", h3 + "res net,A100-80GB,1\n", 2, "class", []string{"want letters, digits", `"res net"`}},
		{"class with a symbol", h3 + "bert!,A100-80GB,1\n", 2, "class", []string{"want letters, digits", `"bert!"`}},
		{"empty class", h3 + ",A100-80GB,1\n", 2, "class", []string{"1 to 64 bytes"}},
		{"class too long", h3 + strings.Repeat("c", 65) + ",A100-80GB,1\n", 2, "class", []string{"1 to 64 bytes"}},
		{"too many fields", h3 + "*,A100-80GB,1\n*,H100-80GB,2,measured\n", 3, "", []string{"want 3 fields as the header has, found 4"}},
		{"too few fields", h4 + "*,A100-80GB,1,ref\n*,H100-80GB,2\n", 3, "", []string{"want 4 fields as the header has, found 3"}},
		{"one field", h3 + "*\n", 2, "", []string{"want 3 fields"}},
		{"bare quote", h3 + "*,A100-80GB,1\n*,H100\"x,2\n", 3, "", []string{"malformed CSV"}},
		{"unclosed quote", h4 + "*,A100-80GB,1,\"never closed\n", 2, "", []string{"malformed CSV"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := hwmodel.ReadSpeedTable(strings.NewReader(tc.in), "speeds.csv")
			if err == nil {
				t.Fatalf("accepted, rows %+v", tab.Rows())
			}
			if tab != nil {
				t.Errorf("a table came back with the error %v", err)
			}
			var fe *hwmodel.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *hwmodel.FileError", err, err)
			}
			if fe.File != "speeds.csv" || fe.Line != tc.line || fe.Field != tc.field {
				t.Errorf("error at %s:%d field %q, want speeds.csv:%d field %q (%v)", fe.File, fe.Line, fe.Field, tc.line, tc.field, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(fe.Msg, w) {
					t.Errorf("message %q lacks %q", fe.Msg, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "speeds.csv") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}

	// A good table: comments, blank lines, spaces around fields, aliases,
	// the source column; Rows gives the generic rows first, then each
	// class in the order first seen, models in catalogue order.
	tab := readSpeeds(t, "# speeds\n"+h4+
		"bert, H100 ,3.5,mlperf\n"+
		"\n"+
		"*,A100-80GB,1,reference\n"+
		"*, h100-80gb,2.016,\"measured, geomean\"\n"+
		"# a comment between rows\n"+
		"resnet50,V100,1,\n"+
		"bert,A100-80GB, 1.25 ,mlperf\n"+
		"*,T4,0.09356,  estimated\n")
	a100, h100 := mustModel(t, "A100-80GB"), mustModel(t, "H100-80GB")
	t4, v100 := mustModel(t, "T4"), mustModel(t, "V100-16GB")
	want := []hwmodel.SpeedRow{
		{Class: "*", Model: t4, Speed: 0.09356, Source: "estimated"}, // T4 comes before A100-80GB in the catalogue
		{Class: "*", Model: a100, Speed: 1, Source: "reference"},
		{Class: "*", Model: h100, Speed: 2.016, Source: "measured, geomean"},
		{Class: "bert", Model: a100, Speed: 1.25, Source: "mlperf"},
		{Class: "bert", Model: h100, Speed: 3.5, Source: "mlperf"},
		{Class: "resnet50", Model: v100, Speed: 1, Source: ""},
	}
	if got := tab.Rows(); !reflect.DeepEqual(got, want) {
		t.Errorf("Rows:\n got %+v\nwant %+v", got, want)
	}
	if got := tab.Classes(); !reflect.DeepEqual(got, []string{"*", "bert", "resnet50"}) {
		t.Errorf("Classes = %q, want [* bert resnet50]", got)
	}
	if v, ok := tab.Speed("BERT", h100); !ok || v != 3.5 {
		t.Errorf("Speed(BERT, H100) = %v, %v; want 3.5, true (classes compare ignoring case)", v, ok)
	}
	if _, ok := tab.Speed("bert", t4); ok {
		t.Error("Speed(bert, T4) found a row the table lacks (the generic row is not the class's)")
	}
	if _, ok := tab.Speed("gpt", a100); ok {
		t.Error("Speed(gpt, A100) found a row for a class the table lacks")
	}
	if tab.Source != "speeds.csv" {
		t.Errorf("Source = %q, want speeds.csv", tab.Source)
	}
	// Only the header: a valid table without rows.
	if rows := readSpeeds(t, h3).Rows(); len(rows) != 0 {
		t.Errorf("a header-only table has rows %+v", rows)
	}
}

// TestRateRule: a class's own rows decide a rate only when they hold both
// models; otherwise the generic rows' ratio does. Bugs it catches: mixing
// a class's speed with a generic one (bert on V100 against bert's A100
// row), the ratio upside down, 0/0 = NaN for a model the table lacks when
// ref == on, a class name compared with its case, and a class missing from
// Rates.Unknown.
func TestRateRule(t *testing.T) {
	tab := readSpeeds(t, `class,gpu_model,speed
*,A100-80GB,1
*,H100-80GB,2
*,V100-16GB,0.5
bert,A100-80GB,1
bert,H100-80GB,3
resnet50,V100-16GB,1
resnet50,A100-80GB,4
`)
	a100, h100 := mustModel(t, "A100-80GB"), mustModel(t, "H100-80GB")
	v100, t4 := mustModel(t, "V100-16GB"), mustModel(t, "T4")
	rates := tab.Compile([]string{"bert", "resnet50", "gpt", "BERT", "vit"})
	if want := []string{"gpt", "vit"}; !reflect.DeepEqual(rates.Unknown, want) {
		t.Errorf("Unknown = %q, want %q", rates.Unknown, want)
	}
	const none, bert, resnet, gpt, bertUpper = 0, 1, 2, 3, 4
	tests := []struct {
		name    string
		class   uint16
		ref, on hwmodel.ModelID
		want    float64
	}{
		{"bert's own rows hold both", bert, a100, h100, 3},
		{"bert's own rows, the other way", bert, h100, a100, 1.0 / 3},
		{"BERT is bert", bertUpper, a100, h100, 3},
		{"bert lacks V100: generic", bert, a100, v100, 0.5},
		{"bert lacks V100 as ref: generic", bert, v100, h100, 4},
		{"resnet50's own rows", resnet, v100, a100, 4},
		{"resnet50 lacks H100: generic", resnet, a100, h100, 2},
		{"resnet50 lacks H100 as ref: generic", resnet, h100, v100, 0.25},
		{"unknown class: generic", gpt, a100, h100, 2},
		{"unknown class: generic, down", gpt, h100, v100, 0.25},
		{"no class: generic", none, v100, h100, 4},
	}
	for _, tc := range tests {
		if got := rates.Rate(tc.class, tc.ref, tc.on); got != tc.want {
			t.Errorf("%s: Rate(%d, %s, %s) = %v, want %v", tc.name, tc.class, hwmodel.Model(tc.ref).Name, hwmodel.Model(tc.on).Name, got, tc.want)
		}
	}
	// ref == on is exactly 1 for every class and model, T4 (no row at
	// all) included.
	for k := uint16(0); k <= bertUpper; k++ {
		for _, m := range []hwmodel.ModelID{a100, h100, v100, t4} {
			if got := rates.Rate(k, m, m); got != 1 {
				t.Errorf("Rate(%d, %s, %s) = %v, want exactly 1", k, hwmodel.Model(m).Name, hwmodel.Model(m).Name, got)
			}
		}
	}
	// A workload without classes compiles to the generic rows alone.
	if r := tab.Compile(nil); len(r.Unknown) != 0 || r.Rate(0, a100, h100) != 2 {
		t.Errorf("Compile(nil): Unknown %q, Rate %v; want none and 2", r.Unknown, r.Rate(0, a100, h100))
	}
	// Compile reads the table as it is then: a later Set does not reach
	// rates already compiled from a clone.
	c := tab.Clone()
	if err := c.Set("bert", v100, 0.25, "test"); err != nil {
		t.Fatal(err)
	}
	if got := c.Compile([]string{"bert"}).Rate(1, a100, v100); got != 0.25 {
		t.Errorf("after Set(bert, V100, 0.25): Rate(bert, A100, V100) = %v, want 0.25", got)
	}
	if got := tab.Compile([]string{"bert"}).Rate(1, a100, v100); got != 0.5 {
		t.Errorf("Set on a clone changed the original: Rate(bert, A100, V100) = %v, want 0.5", got)
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := c.Set("bert", v100, bad, "test"); err == nil {
			t.Errorf("Set(bert, V100, %v) accepted", bad)
		}
	}
	if err := c.Set("no spaces", v100, 1, "test"); err == nil {
		t.Error(`Set("no spaces", ...) accepted a bad class name`)
	}
}

// TestScaleDuration: exactly d at rate 1, d/rate rounded up otherwise (a
// job never ends before its work is done, nor a whole microsecond after),
// monotone in d and in rate, and never 0 for work left. Bugs it catches:
// rounding to nearest or truncating (ends early), float64 conversion at
// rate 1 (2^53+1 is not a float64), and a 0-µs end for tiny work on a
// fast model (an event at the same instant, work done in no time).
func TestScaleDuration(t *testing.T) {
	for _, d := range []hwmodel.Time{0, 1, 999, hwmodel.Hour, 1 << 53, 1<<53 + 1, 1<<62 + 12345, math.MaxInt64} {
		if got := hwmodel.ScaleDuration(d, 1); got != d {
			t.Errorf("ScaleDuration(%d, 1) = %d, want exactly %d", d, got, d)
		}
	}
	for _, d := range []hwmodel.Time{0, -1, -hwmodel.Hour} {
		if got := hwmodel.ScaleDuration(d, 2.5); got != d {
			t.Errorf("ScaleDuration(%d, 2.5) = %d, want %d (no work, no time)", d, got, d)
		}
	}
	exact := []struct {
		d    hwmodel.Time
		rate float64
		want hwmodel.Time
	}{
		{3, 2, 2},           // 1.5 rounds up, not down to 1
		{10, 4, 3},          // 2.5
		{11, 4, 3},          // 2.75
		{12, 4, 3},          // exact
		{10, 0.5, 20},       // slower: twice the time
		{7, 0.25, 28},       // exact at a power of two
		{1, 1e9, 1},         // never 0
		{1, math.Inf(1), 1}, // never 0, even infinitely fast
		{hwmodel.Hour, 2, hwmodel.Hour / 2},
		{hwmodel.Hour + 1, 2, hwmodel.Hour/2 + 1},
		{1 << 50, 2, 1 << 49},
		{1<<50 + 1, 2, 1<<49 + 1},
	}
	for _, tc := range exact {
		if got := hwmodel.ScaleDuration(tc.d, tc.rate); got != tc.want {
			t.Errorf("ScaleDuration(%d, %v) = %d, want %d", tc.d, tc.rate, got, tc.want)
		}
	}

	rates := []float64{1e-3, 0.08502, 0.1, 0.25, 0.3, 1.0 / 3, 0.5, 0.924, 0.999999, 1 - 1e-15, 1, 1 + 1e-15, 1.000001, 1.5, 2, 2.016, 2.293, 3, 4.093, 10, 1e6}
	var ds []hwmodel.Time
	for d := hwmodel.Time(1); d <= 2000; d++ {
		ds = append(ds, d)
	}
	for _, d := range []hwmodel.Time{hwmodel.Minute - 1, hwmodel.Minute, hwmodel.Hour - 1, hwmodel.Hour, hwmodel.Hour + 1, 7 * hwmodel.Day, 365*hwmodel.Day + 17, 1 << 40} {
		ds = append(ds, d)
	}
	q, tol := new(big.Float).SetPrec(200), new(big.Float).SetPrec(200)
	for ri, rate := range rates {
		prev := hwmodel.Time(0)
		for di, d := range ds {
			got := hwmodel.ScaleDuration(d, rate)
			if got <= 0 {
				t.Fatalf("ScaleDuration(%d, %v) = %d; want > 0 for work left", d, rate, got)
			}
			// Monotone in d.
			if di > 0 && ds[di-1] < d && got < prev {
				t.Errorf("ScaleDuration(%d, %v) = %d < ScaleDuration(%d, %v) = %d: more work, less time", d, rate, got, ds[di-1], rate, prev)
			}
			prev = got
			// Non-increasing in rate.
			if ri > 0 {
				if slower := hwmodel.ScaleDuration(d, rates[ri-1]); slower < got {
					t.Errorf("ScaleDuration(%d, %v) = %d < ScaleDuration(%d, %v) = %d: slower, yet sooner", d, rates[ri-1], slower, d, rate, got)
				}
			}
			// Rounded up: d/rate (exactly, in big floats) <= got, within
			// the float64 division's error, and got < d/rate + 1.
			q.Quo(new(big.Float).SetInt64(int64(d)), new(big.Float).SetFloat64(rate))
			qf, _ := q.Float64()
			tol.SetFloat64(1e-6 + qf*1e-15)
			lo := new(big.Float).Sub(q, tol)
			g := new(big.Float).SetInt64(int64(got))
			if g.Cmp(lo) < 0 {
				t.Errorf("ScaleDuration(%d, %v) = %d, below d/rate = %s: the work ends early", d, rate, got, q.Text('g', 20))
			}
			hi := new(big.Float).Add(q, big.NewFloat(1))
			if g.Cmp(hi) >= 0 && got > 1 {
				t.Errorf("ScaleDuration(%d, %v) = %d, a whole microsecond or more after d/rate = %s", d, rate, got, q.Text('g', 20))
			}
		}
	}
}

// TestCheckNamesMissingModels: Check names every model the generic rows
// lack and the file, and only those. Bugs it catches: reporting only the
// first missing model (the user fixes one, runs again, hits the next), a
// class row counted as a generic one, and an error without the file.
func TestCheckNamesMissingModels(t *testing.T) {
	tab := readSpeeds(t, "class,gpu_model,speed\n*,A100-80GB,1\nbert,H100-80GB,3\nbert,T4,0.2\n")
	a100, h100 := mustModel(t, "A100-80GB"), mustModel(t, "H100-80GB")
	t4, l4 := mustModel(t, "T4"), mustModel(t, "L4")
	if err := tab.Check(hwmodel.Of(a100)); err != nil {
		t.Errorf("Check(A100) = %v, want nil", err)
	}
	if err := tab.Check(0); err != nil {
		t.Errorf("Check of no models = %v, want nil", err)
	}
	err := tab.Check(hwmodel.Of(a100, h100, t4, l4))
	if err == nil {
		t.Fatal("Check accepted a table whose generic rows lack H100-80GB, T4 and L4")
	}
	var fe *hwmodel.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("error %T %v is not a *hwmodel.FileError", err, err)
	}
	if fe.File != "speeds.csv" || fe.Field != "gpu_model" {
		t.Errorf("error at file %q field %q, want speeds.csv and gpu_model", fe.File, fe.Field)
	}
	msg := err.Error()
	for _, m := range []string{"speeds.csv", "H100-80GB", "T4", "L4", "class *"} {
		if !strings.Contains(msg, m) {
			t.Errorf("error %q does not name %s", msg, m)
		}
	}
	if strings.Contains(fe.Msg, "A100-80GB") {
		t.Errorf("error %q names A100-80GB, which the generic rows have", msg)
	}
	// The default table covers every built-in model with data.
	var all hwmodel.ModelSet
	for _, m := range hwmodel.Models() {
		if !hwmodel.IsCustom(m.ID) && m.Name != "G2" && m.Name != "G3" {
			all |= hwmodel.Of(m.ID)
		}
	}
	if err := hwmodel.DefaultSpeeds().Check(all); err != nil {
		t.Errorf("the default table: %v", err)
	}
}

// withoutCR is rows with carriage returns dropped from their sources: a
// quoted CSV field keeps a lone \r but turns \r\n into \n (encoding/csv),
// so a source holding "\r\r\n" reads as "\r\n", then as "\n": the CSV
// format's loss, not the table's.
func withoutCR(rows []hwmodel.SpeedRow) []hwmodel.SpeedRow {
	out := make([]hwmodel.SpeedRow, len(rows))
	for i, r := range rows {
		r.Source = strings.ReplaceAll(r.Source, "\r", "")
		out[i] = r
	}
	return out
}

// FuzzReadSpeedTable: no input panics the reader; every error is a
// *FileError naming the file; every table read writes back, through its
// Rows, as CSV that reads to the same rows.
func FuzzReadSpeedTable(f *testing.F) {
	def, err := os.ReadFile("speeds.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(def)
	for _, s := range []string{
		"",
		"class,gpu_model,speed\n",
		"class,gpu_model,speed\n*,A100-80GB,1\nbert,h100,2.5\n",
		"# c\nclass,gpu_model,speed,source\n*,A100-80GB,1,\"a, b\"\nBERT,H100,3,x\nbert,a100-80gb,1,\n",
		"class,gpu_model,speed\n*,A100-80GB,NaN\n",
		"class,gpu_model,speed\n*,A100-80GB,1\n*,A100-80GB,2\n",
		"class,gpu_model,speed,source\n*,T4,0x1p-3,\"line\r\nbreak\"\n",
		"class,gpu_model,speed\nres net,T4,1\n",
		"class,gpu_model,speed\n*,T4,1,2\n",
		"class,gpu_model,speed\n*,T4\"\n",
		"ClAss,gpu_model,speed,sourCe\n0,T4,1,\"0\r\r\n0\"",
		"class,gpu_model,speed\n*,H100,1\nlm,across-nodes,0.25\nlm,Across-Racks,0.2\n*,across-racks,1\n",
		"class,gpu_model,speed\nlm,across-nodes,1.5\n",
		"class,gpu_model,speed\nlm,across-nodes,0.5\nlm,across-nodes,0.4\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := hwmodel.ReadSpeedTable(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var fe *hwmodel.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *hwmodel.FileError", err, err)
			}
			if fe.File != "fuzz.csv" || fe.Line < 0 {
				t.Fatalf("error names file %q line %d: %v", fe.File, fe.Line, err)
			}
			return
		}
		rows := tab.Rows()
		for _, r := range rows {
			if !(r.Speed > 0) || math.IsInf(r.Speed, 0) {
				t.Fatalf("row %+v: speed not finite and > 0", r)
			}
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		_ = w.Write(hwmodel.SpeedTableHeader)
		for _, r := range rows {
			_ = w.Write([]string{r.Class, r.Where(), strconv.FormatFloat(r.Speed, 'g', -1, 64), r.Source})
		}
		w.Flush()
		if err := w.Error(); err != nil {
			t.Fatal(err)
		}
		back, err := hwmodel.ReadSpeedTable(&b, "written.csv")
		if err != nil {
			t.Fatalf("the rows written back do not read: %v\n%s", err, b.String())
		}
		if got := back.Rows(); !reflect.DeepEqual(withoutCR(got), withoutCR(rows)) {
			t.Fatalf("round trip changed the rows:\n got %+v\nwant %+v", got, rows)
		}
	})
}

// Spread rows: a factor in (0, 1] per class and spread, the lookup rule
// of SpeedTable's doc (class row, then the class's across-nodes factor for
// racks, then the generic rows, then 1), and their errors.
func TestSpreadFactors(t *testing.T) {
	tab, err := hwmodel.ReadSpeedTable(strings.NewReader(`class,gpu_model,speed
*,H100,1
*,across-nodes,0.9
lm,across-nodes,0.25
lm,across-racks,0.2
transformer,across-nodes,0.5
bert,across-racks,0.95
`), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := tab.Compile([]string{"lm", "transformer", "bert", "other"})
	tests := []struct {
		class uint16
		sp    hwmodel.Spread
		want  float64
	}{
		{1, hwmodel.OneNode, 1},
		{1, hwmodel.AcrossNodes, 0.25},
		{1, hwmodel.AcrossRacks, 0.2},
		{2, hwmodel.AcrossRacks, 0.5}, // its own across-nodes factor
		{3, hwmodel.AcrossNodes, 0.9}, // the generic row
		{3, hwmodel.AcrossRacks, 0.9}, // never more than across nodes
		{4, hwmodel.AcrossRacks, 0.9}, // an unknown class: the generic rows
		{0, hwmodel.AcrossNodes, 0.9},
	}
	for _, tc := range tests {
		if got := r.Spread(tc.class, tc.sp); got != tc.want {
			t.Errorf("class %d %s: %v, want %v", tc.class, tc.sp, got, tc.want)
		}
	}
	for _, bad := range []struct{ in, msg string }{
		{"class,gpu_model,speed\nlm,across-nodes,1.5\n", "at most 1"},
		{"class,gpu_model,speed\nlm,across-nodes,0.5\nlm,across-nodes,0.4\n", "given twice (first on line 2)"},
	} {
		_, err := hwmodel.ReadSpeedTable(strings.NewReader(bad.in), "s.csv")
		if err == nil || !strings.Contains(err.Error(), "s.csv:3") && !strings.Contains(err.Error(), "s.csv:2") || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q: error %v, want one at its line saying %q", bad.in, err, bad.msg)
		}
	}
}
