package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotSweep draws the ranked sweep (drawSweep) into an SVG file.
func plotSweep(r *sweepReport, path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".svg" {
		return fmt.Errorf("-plot %s: the chart is an SVG file; name it .svg", path)
	}
	p, height, err := drawSweep(r)
	if err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	if err := p.Save(8*vg.Inch, height, path); err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	return nil
}

// drawSweep draws the ranked sweep as a horizontal bar chart of the achieved rate, fastest at
// the top, one bar per configuration labelled with its rank, mesh, strategy and speed-up, and
// returns it with the height it needs.
func drawSweep(r *sweepReport) (*plot.Plot, vg.Length, error) {
	n := len(r.Rows)
	values := make(plotter.Values, n)
	labels := make([]string, n)
	ends := plotter.XYLabels{XYs: make(plotter.XYs, n), Labels: make([]string, n)}
	top := 0.0
	for i, row := range r.Rows {
		// NominalY counts from the bottom: the fastest row goes last, to the top.
		j := n - 1 - i
		values[j] = row.Rate
		ends.XYs[j] = plotter.XY{X: row.Rate, Y: float64(j)}
		ends.Labels[j] = fmt.Sprintf(" %.1f", row.Rate)
		top = max(top, row.Rate)
		labels[j] = fmt.Sprintf("%d. %s %s", row.Rank, row.Mesh, row.Strategy)
		if row.Speedup != nil {
			labels[j] += fmt.Sprintf(" (%.2fx)", *row.Speedup)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %d %s devices", r.Program, r.Devices, r.Platform)
	p.X.Label.Text = r.Unit + " (higher is faster)"
	p.X.Min, p.X.Max = 0, 1.15*top // room for the numbers at the bars' ends
	bars, err := plotter.NewBarChart(values, vg.Points(14))
	if err != nil {
		return nil, 0, err
	}
	bars.Horizontal = true
	bars.Color = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	bars.LineStyle.Width = 0
	numbers, err := plotter.NewLabels(ends)
	if err != nil {
		return nil, 0, err
	}
	for i := range numbers.TextStyle {
		numbers.TextStyle[i].YAlign = -0.5 // centred on the bar
	}
	p.Add(plotter.NewGrid(), bars, numbers)
	p.NominalY(labels...)
	return p, vg.Points(float64(70 + 22*n)), nil
}

// plotFileFits reports whether path can be written, before minutes of timing: a missing
// directory is a usage mistake.
func plotFileFits(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("-plot %s: no directory %s", path, dir)
	}
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".svg" {
		return fmt.Errorf("-plot %s: the chart is an SVG file; name it .svg", path)
	}
	return nil
}
