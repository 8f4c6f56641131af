package report

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// envelope keeps, per column, the first point, the corner and the last
// point, and from column to column the line's own segments.
func TestEnvelope(t *testing.T) {
	floor := func(x float64) int64 { return int64(math.Floor(x)) }
	for _, c := range []struct {
		name     string
		in, want plotter.XYs
	}{
		{"empty", nil, nil},
		{"one point", plotter.XYs{{X: 0.5, Y: 0}}, plotter.XYs{{X: 0.5, Y: 0}}},
		{"one point a column", plotter.XYs{{X: 0.5, Y: 0}, {X: 1.5, Y: 1}, {X: 2.5, Y: 2}},
			plotter.XYs{{X: 0.5, Y: 0}, {X: 1.5, Y: 1}, {X: 2.5, Y: 2}}},
		{"a staircase in one column", plotter.XYs{{X: 0.1, Y: 0}, {X: 0.1, Y: 1}, {X: 0.2, Y: 1}, {X: 0.2, Y: 2}, {X: 0.3, Y: 2}, {X: 0.3, Y: 3}},
			plotter.XYs{{X: 0.1, Y: 0}, {X: 0.3, Y: 0}, {X: 0.3, Y: 3}}},
		{"a vertical step alone", plotter.XYs{{X: 0.1, Y: 0}, {X: 0.1, Y: 1}},
			plotter.XYs{{X: 0.1, Y: 0}, {X: 0.1, Y: 1}}},
		{"a flat run alone", plotter.XYs{{X: 0.1, Y: 1}, {X: 0.4, Y: 1}},
			plotter.XYs{{X: 0.1, Y: 1}, {X: 0.4, Y: 1}}},
		{"two columns", plotter.XYs{{X: 0.1, Y: 0}, {X: 0.1, Y: 1}, {X: 0.9, Y: 1}, {X: 0.9, Y: 2}, {X: 1.2, Y: 2}, {X: 1.2, Y: 3}, {X: 1.7, Y: 3}, {X: 1.7, Y: 4}},
			plotter.XYs{{X: 0.1, Y: 0}, {X: 0.9, Y: 0}, {X: 0.9, Y: 2}, {X: 1.2, Y: 2}, {X: 1.7, Y: 2}, {X: 1.7, Y: 4}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := envelope(c.in, floor); !slices.Equal(got, c.want) {
				t.Errorf("envelope(%v) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

// rising is whether a line never falls in either coordinate.
func TestRising(t *testing.T) {
	for _, c := range []struct {
		xy   plotter.XYs
		want bool
	}{
		{nil, true},
		{plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 0.5}, {X: 2, Y: 0.5}}, true},
		{plotter.XYs{{X: 2, Y: 0}, {X: 1, Y: 0.5}}, false},
		{plotter.XYs{{X: 1, Y: 0.5}, {X: 2, Y: 0}}, false},
	} {
		if got := rising(c.xy); got != c.want {
			t.Errorf("rising(%v) = %v, want %v", c.xy, got, c.want)
		}
	}
}

// A CDF of more points than maxDrawnPoints is drawn through its envelope,
// and looks as the full line does: in the PNG, the pixels the two differ
// on are few, and by little. The policies' dashed lines keep their
// pattern (the envelope has the line's length). Lines up to
// maxDrawnPoints are drawn as they are (TestPaddedLineSameBytes, and the
// goldens).
func TestLongCDFLooksTheSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	pol := func(name string, scale float64) Policy {
		p := Policy{Name: name}
		for range 40_000 {
			w := math.Exp(rng.NormFloat64()*2) * scale
			p.Jobs = append(p.Jobs, Job{Ran: true, WaitS: w, JCT: w + 100})
		}
		return p
	}
	d := &Data{Policies: []Policy{pol("a", 300), pol("b", 1000), pol("c", 3000)}}
	render := func(limit int) ([]byte, []byte) {
		t.Helper()
		defer func(was int) { maxDrawnPoints = was }(maxDrawnPoints)
		maxDrawnPoints = limit
		f, err := cdf(d, "wait-cdf", "Wait", func(j Job) float64 { return j.WaitS })
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.PNG()
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		return p, s
	}
	fullPNG, fullSVG := render(math.MaxInt)
	envPNG, envSVG := render(1000)
	if bytes.Equal(fullSVG, envSVG) {
		t.Fatal("the envelope was not drawn: the SVGs are the same")
	}
	if len(envSVG) >= len(fullSVG) {
		t.Errorf("the envelope's SVG is %d bytes, the full line's %d: not reduced", len(envSVG), len(fullSVG))
	}
	a, b := decode(t, fullPNG), decode(t, envPNG)
	if a.Bounds() != b.Bounds() {
		t.Fatalf("sizes %v and %v", a.Bounds(), b.Bounds())
	}
	differ, far, worst := 0, 0, 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			d := channelDiff(a.At(x, y), b.At(x, y))
			if d > 0 {
				differ++
			}
			if d > 0x40 {
				far++
			}
			worst = max(worst, d)
		}
	}
	pixels := a.Bounds().Dx() * a.Bounds().Dy()
	t.Logf("%d of %d pixels differ, %d by more than 0x40 (worst %#x)", differ, pixels, far, worst)
	if far > pixels/1000 {
		t.Errorf("%d of %d pixels differ by more than 0x40 between the full line and its envelope", far, pixels)
	}
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// channelDiff is the largest difference of one 8-bit channel.
func channelDiff(a, b interface{ RGBA() (r, g, b, a uint32) }) int {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	d := 0
	for _, p := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
		d = max(d, int(max(p[0], p[1])-min(p[0], p[1]))>>8)
	}
	return d
}
