package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
)

// runData is a run the size of a real one: n jobs of 15 tenants under
// each policy, waits and run times spread over seconds to days (so the
// CDFs have nearly one step per job), and an hourly timeline over the
// arrival window and the drain.
func runData(n int, pols []string) *Data {
	var sums []results.Summary
	var jobs [][]results.JobRecord
	var tls []*results.Timeline
	var tenants []policies.Tenant
	for k := range 15 {
		tenants = append(tenants, policies.Tenant{Name: fmt.Sprintf("vc%02d", k), Weight: 1})
	}
	for p, pol := range pols {
		rng := rand.New(rand.NewPCG(uint64(p), 7))
		js := make([]results.JobRecord, n)
		window := hwmodel.Time(n) * 100 * hwmodel.Second
		for i := range js {
			submit := window * hwmodel.Time(i) / hwmodel.Time(n)
			wait := hwmodel.Time(math.Exp(rng.NormFloat64()*3+6) * 1e6)
			run := hwmodel.Time(math.Exp(rng.NormFloat64()*2+8)*1e6) + 1
			if rng.IntN(5) == 0 {
				wait = 0
			}
			js[i] = results.JobRecord{
				ID: int32(i), Tenant: tenants[rng.IntN(len(tenants))].Name, Priority: rng.IntN(3),
				Submit: submit, Ready: submit, Start: submit + wait, End: submit + wait + run,
				Wait: wait, Run: run, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: results.Succeeded,
			}
		}
		tl := results.NewTimeline(hwmodel.Hour, 512_000)
		tl.TrackTenants([]string{"vc00"}, []float64{1})
		end := hwmodel.Time(0)
		for i, j := range js {
			tl.Observe(j.Submit, results.State{Queued: i % 50, Running: i % 400, AllocatedMilli: int64(i%512) * 1000})
			end = max(end, j.End)
		}
		tl.Close(end)
		sums = append(sums, results.Summarize(results.RunInput{Policy: pol, TotalGPUs: 512, Tenants: tenants, Jobs: js, Timeline: tl}))
		jobs = append(jobs, js)
		tls = append(tls, tl)
	}
	return FromRecords(sums, jobs, tls)
}

// BenchmarkWritePlots draws and writes every figure of a run of one and
// of four policies (PNG and SVG).
func BenchmarkWritePlots(b *testing.B) {
	for _, c := range []struct {
		jobs int
		pols []string
	}{{20000, []string{"fcfs"}}, {82247, []string{"fcfs"}}, {82247, []string{"fcfs", "sjf", "priority", "fair"}}} {
		b.Run(fmt.Sprintf("jobs=%d/policies=%d", c.jobs, len(c.pols)), func(b *testing.B) {
			d := runData(c.jobs, c.pols)
			for b.Loop() {
				if err := WritePlots(b.TempDir(), d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A paddedLine draws and pads a plot exactly as the plotter.Line it
// wraps: the same PNG and SVG bytes, on lines with points outside the
// axes, repeated extremes and no points inside at all.
func TestPaddedLineSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 12 {
		var sets []plotter.XYs
		for range 1 + trial%3 {
			n := 2 + rng.IntN(400)
			xy := make(plotter.XYs, n)
			for i := range xy {
				xy[i] = plotter.XY{X: rng.Float64()*10 - 1, Y: math.Round(rng.Float64()*8) - 1}
				if trial%3 == 2 {
					xy[i].X = 0.5 + rng.Float64()*12 // log scale: positive
				}
			}
			if trial%4 == 3 { // a CDF: both coordinates rise
				slices.SortFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
				for i := range xy {
					xy[i].Y = float64(i) / float64(len(xy))
				}
			}
			sets = append(sets, xy)
		}
		// draw renders the plot; moved first renders it once with other
		// axes, so that what a paddedLine keeps between renders is stale.
		draw := func(padded, moved bool) ([]byte, []byte) {
			p := NewPlot("t", "x", "y")
			if trial%2 == 0 {
				p.X.Min, p.X.Max = 0, 5 // some points outside
			}
			if trial%3 == 2 {
				p.X.Scale = plot.LogScale{}
				p.X.Min, p.X.Max = 1, 9
			}
			for i, xy := range sets {
				l, err := plotter.NewLine(xy)
				if err != nil {
					t.Fatal(err)
				}
				StyleLine(l, i)
				if padded {
					p.Add(newPaddedLine(l))
				} else {
					p.Add(l)
				}
				p.Legend.Add(fmt.Sprint(i), l)
			}
			f := Figure{plot: p}
			if moved {
				x, y := p.X, p.Y
				p.X.Min, p.X.Max, p.Y.Max = 2, 3, 4
				if _, err := f.PNG(); err != nil {
					t.Fatal(err)
				}
				p.X, p.Y = x, y
			}
			png, err := f.PNG()
			if err != nil {
				t.Fatal(err)
			}
			svg, err := f.SVG()
			if err != nil {
				t.Fatal(err)
			}
			return png, svg
		}
		png1, svg1 := draw(false, false)
		for _, moved := range []bool{false, true} {
			png2, svg2 := draw(true, moved)
			if !bytes.Equal(png1, png2) || !bytes.Equal(svg1, svg2) {
				t.Fatalf("trial %d (axes moved before: %v): a paddedLine draws other bytes than its plotter.Line", trial, moved)
			}
		}
	}
}
