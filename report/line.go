package report

import (
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ownedLine is plotter.NewLine(xy) without its copy of xy, which the
// caller hands over: a CDF's points are two per job.
func ownedLine(xy plotter.XYs) (*plotter.Line, error) {
	for _, p := range xy {
		if err := plotter.CheckFloats(p.X, p.Y); err != nil {
			return nil, err
		}
	}
	return &plotter.Line{XYs: xy, LineStyle: plotter.DefaultLineStyle}, nil
}

// paddedLine is a plotter.Line that offers the plot only the glyph boxes
// that can decide its padding. plotter.Line gives one box per point, all
// of one size, and the plot keeps, of those inside the axes, the first
// left-most, right-most, top-most and bottom-most on the canvas (plot.padX
// and padY). The canvas position is a monotone function of the box's
// normalised one, so the first extreme box on a side is a box beyond
// every box before it on that side (a record); and it lies within
// paddingSlack of the extreme normalised position, since a box further
// in maps to a smaller canvas position than the extreme box does on any
// canvas wider than a billionth of its coordinates. The first box, which
// wins on a canvas of no width, is kept too. Those boxes alone, in their
// order, pad the plot exactly as all of them do, and a CDF of 100,000
// jobs (one record per point, as it rises) hands over a few boxes instead
// of 200,000, which the plot would copy four times a render.
//
// The boxes depend only on the line and on the axes' ranges and scales,
// and a figure asks for them four times with the same axes (padX and padY,
// for the PNG and again for the SVG), so the last answer is kept with the
// axes it was computed for.
type paddedLine struct {
	*plotter.Line
	memo *glyphMemo
}

// glyphMemo is a paddedLine's last set of boxes and the axes they are
// for, and its points on the last canvas it was drawn on: the PNG and the
// SVG of a figure have the same plot area, in points, so its second render
// reuses the first's.
type glyphMemo struct {
	axes  axesKey
	boxes []plot.GlyphBox
	ok    bool

	canvas   canvasKey
	points   []vg.Point
	pointsOK bool
}

// canvasKey is what a line's canvas points depend on besides the line.
type canvasKey struct {
	axes axesKey
	area vg.Rectangle
}

func axesOf(p *plot.Plot) axesKey {
	return axesKey{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, p.X.Scale, p.Y.Scale}
}

// memoable is whether l can keep what it computed for p's axes: it has a
// memory, and the scales are comparable values.
func (l paddedLine) memoable(p *plot.Plot) bool {
	return l.memo != nil && comparableScale(p.X.Scale) && comparableScale(p.Y.Scale)
}

// axesKey is what a line's glyph boxes depend on besides the line.
type axesKey struct {
	xMin, xMax, yMin, yMax float64
	xScale, yScale         plot.Normalizer
}

func newPaddedLine(l *plotter.Line) paddedLine {
	return paddedLine{Line: l, memo: new(glyphMemo)}
}

// comparableScale reports whether s can be a map-free memo key: the
// scales Brigade sets are comparable values; anything else is recomputed.
func comparableScale(s plot.Normalizer) bool {
	switch s.(type) {
	case plot.LinearScale, plot.LogScale:
		return true
	}
	return false
}

// Plot implements plot.Plotter: the line as plotter.Line draws it, or,
// when it has more than maxDrawnPoints points and rises in both
// coordinates (a CDF), its envelope. A line without fill or steps draws
// plotter.Line's path through draw.Canvas.StrokeLines, which sizes each
// path once instead of growing it a point at a time.
func (l paddedLine) Plot(c draw.Canvas, p *plot.Plot) {
	if len(l.XYs) > maxDrawnPoints && rising(l.XYs) {
		trX, _ := p.Transforms(&c)
		reduced := *l.Line
		reduced.XYs = envelope(l.XYs, func(x float64) int64 { return int64(math.Floor(float64(trX(x) / envelopeColumn))) })
		reduced.Plot(c, p)
		return
	}
	if l.FillColor != nil || l.StepStyle != plotter.NoStep || l.LineStyle.Width == 0 {
		l.Line.Plot(c, p)
		return
	}
	key := canvasKey{axes: axesOf(p), area: c.Rectangle}
	memoOK := l.memoable(p)
	var ps []vg.Point
	if memoOK && l.memo.pointsOK && l.memo.canvas == key {
		ps = l.memo.points
	} else {
		trX, trY := p.Transforms(&c)
		ps = make([]vg.Point, len(l.XYs))
		for i, xy := range l.XYs {
			ps[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		}
		if memoOK {
			l.memo.canvas, l.memo.points, l.memo.pointsOK = key, ps, true
		}
	}
	c.StrokeLines(l.LineStyle, c.ClipLinesXY(ps)...)
}

// paddingSlack is how close, in normalised axis units, to the extreme
// position a box must be to be kept.
const paddingSlack = 1e-6

// GlyphBoxes implements plot.GlyphBoxer.
func (l paddedLine) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	key := axesOf(p)
	memoOK := l.memoable(p)
	if memoOK && l.memo.ok && l.memo.axes == key {
		return slices.Clone(l.memo.boxes)
	}
	out := l.glyphBoxes(p)
	if memoOK {
		l.memo.axes, l.memo.boxes, l.memo.ok = key, slices.Clone(out), true
	}
	return out
}

func (l paddedLine) glyphBoxes(p *plot.Plot) []plot.GlyphBox {
	r := 0.5 * l.LineStyle.Width
	rect := vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}}
	size := rect.Size()
	kept := func(b plot.GlyphBox) bool { // plot.GlyphBoxes drops the others
		return !(size.X > 0 && (b.X < 0 || b.X > 1) || size.Y > 0 && (b.Y < 0 || b.Y > 1))
	}
	// The extremes first, then the records near them.
	// Each point's box is computed in both passes rather than kept
	// between them: the same arithmetic gives the same box, and a CDF has
	// two points per job.
	box := func(xy plotter.XY) plot.GlyphBox {
		return plot.GlyphBox{X: p.X.Norm(xy.X), Y: p.Y.Norm(xy.Y), Rectangle: rect}
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	minY, maxY := minX, maxX
	for _, xy := range l.XYs {
		if b := box(xy); kept(b) {
			minX, maxX = min(minX, b.X), max(maxX, b.X)
			minY, maxY = min(minY, b.Y), max(maxY, b.Y)
		}
	}
	var out []plot.GlyphBox
	lowX, highX := math.Inf(1), math.Inf(-1)
	lowY, highY := lowX, highX
	for _, xy := range l.XYs {
		b := box(xy)
		if !kept(b) {
			continue
		}
		keep := len(out) == 0
		if b.X < lowX {
			lowX, keep = b.X, keep || b.X <= minX+paddingSlack
		}
		if b.X > highX {
			highX, keep = b.X, keep || b.X >= maxX-paddingSlack
		}
		if b.Y < lowY {
			lowY, keep = b.Y, keep || b.Y <= minY+paddingSlack
		}
		if b.Y > highY {
			highY, keep = b.Y, keep || b.Y >= maxY-paddingSlack
		}
		if keep {
			out = append(out, b)
		}
	}
	return out
}

// maxDrawnPoints is the most points a line hands gonum as they are. A
// longer line (a CDF of more than a million jobs: two points per distinct
// value) costs about 1.5 KB a point inside gonum (canvas points, clipped
// copies, the path and the rasteriser's), so paddedLine.Plot draws it
// through its envelope (envelope) instead. Lines up to this size, every
// run of up to a million jobs, are drawn byte for byte as before.
var maxDrawnPoints = 2_000_000

// envelopeColumn is the width, on the canvas, of the columns that
// envelope reduces a long line to: a thirtieth of a PNG pixel at plotDPI,
// a fiftieth of a point of the SVG's 648 (32,400 columns, three points
// each at most, whatever the number of jobs).
const envelopeColumn = vg.Length(0.02)

// rising is whether both coordinates of xy never fall.
func rising(xy plotter.XYs) bool {
	for k := 1; k < len(xy); k++ {
		if xy[k].X < xy[k-1].X || xy[k].Y < xy[k-1].Y {
			return false
		}
	}
	return true
}

// envelope reduces a rising line to three points per canvas column (column
// gives a point's): its first point in the column, the corner (last x,
// first y) and its last point. Between them the full line is a staircase
// whose length is its width plus its height, for a CDF's line (every move
// horizontal or vertical); so the reduced line has the full one's length,
// and its dash pattern, and lies within one column's width of it. From
// one column to the next it takes the full line's own segment.
func envelope(xy plotter.XYs, column func(x float64) int64) plotter.XYs {
	var out plotter.XYs
	for k := 0; k < len(xy); {
		first, col := xy[k], column(xy[k].X)
		last := first
		for k++; k < len(xy); k++ {
			if column(xy[k].X) != col {
				break
			}
			last = xy[k]
		}
		out = append(out, first)
		if last != first {
			if corner := (plotter.XY{X: last.X, Y: first.Y}); corner != first && corner != last {
				out = append(out, corner)
			}
			out = append(out, last)
		}
	}
	return out
}
