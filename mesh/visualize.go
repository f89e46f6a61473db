package mesh

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// VisualizeConfig sets the sizing of Visualize's table, as the keyword
// arguments of jax.debug.visualize_sharding do. Zero fields take the
// defaults: Scale 1, MinWidth 9, MaxWidth 80. Scale may be at most
// maxVisualScale (100) and the widths at most maxVisualWidth (10,000). Every
// line is at most MaxWidth columns (wider ones are cropped, as JAX crops
// them); a 2-D table has two lines or more per chunk row, as in JAX.
type VisualizeConfig struct {
	Scale    float64 // scales the base height (10 lines) of a 2-D table
	MinWidth int     // minimum width of a chunk, in columns
	MaxWidth int     // maximum width of a chunk, in columns
}

// Visualize writes the text table jax.debug.visualize_array_sharding prints
// (without colour) for an array of the given 1-D or 2-D shape: one box per
// distinct chunk, labelled with the upper-case platform and the sorted ids
// of the devices holding it, e.g. "CPU 0,2,4,6", and sized by JAX's rules.
// It returns an error wrapping ErrUnsupported for other ranks, a zero-size
// dimension or a nil w, ErrNoDevices for an abstract sharding, or CheckShape's error.
// A table wider than MaxWidth columns is shrunk as rich shrinks it: labels
// wrap between words, a line that still does not fit is cut to end in "…",
// and a label vanishes when the padding leaves it no room.
//
// A table that is still wider than MaxWidth (more chunks across than fit,
// e.g. a 1-D array over 512 devices) is cropped: every line is cut after
// MaxWidth columns, as JAX's rich console of width max_width crops it, so
// the right-hand border and chunks are missing and the output says nothing
// more about it, as JAX's says nothing. Down the page nothing is cropped: a
// 2-D table of R chunk rows has at least 2R+1 lines (2,049 for 1,024 rows),
// as in JAX. The output ends with the table's last line.
func Visualize(w io.Writer, s NamedSharding, shape []int) error {
	return VisualizeConfig{}.Fprint(w, s, shape)
}

// Bounds of VisualizeConfig.
const (
	maxVisualScale = 100
	maxVisualWidth = 10000
)

// Fprint writes the table of Visualize with c's sizing.
//
// The work is linear in the device count with a constant number of allocations
// per visible cell: chunks are grouped in flat arrays (every chunk of a dimension
// has the same length, so chunk (i, j) is at i*cols+j), a label is only built for a
// cell that can show (its length comes from its ids), and a line stops being
// written once it reaches the crop width.
func (c VisualizeConfig) Fprint(w io.Writer, s NamedSharding, shape []int) error {
	if w == nil {
		return fmt.Errorf("mesh: %w: visualize to a nil io.Writer", ErrUnsupported)
	}
	if c.Scale == 0 {
		c.Scale = 1
	}
	if c.MinWidth == 0 {
		c.MinWidth = 9
	}
	if c.MaxWidth == 0 {
		c.MaxWidth = 80
	}
	if !(c.Scale > 0 && c.Scale <= maxVisualScale) || c.MinWidth < 0 || c.MinWidth > maxVisualWidth || c.MaxWidth < 0 || c.MaxWidth > maxVisualWidth {
		return fmt.Errorf("mesh: %w: visualize with scale %v, min width %d, max width %d; want 0 < scale <= %d and widths in [0, %d]",
			ErrUnsupported, c.Scale, c.MinWidth, c.MaxWidth, maxVisualScale, maxVisualWidth)
	}
	if len(shape) < 1 || len(shape) > 2 {
		return fmt.Errorf("mesh: %w: visualization is only supported for 1-D and 2-D arrays, got shape %s", ErrUnsupported, pyIntTuple(shape))
	}
	if slices.Contains(shape, 0) {
		return fmt.Errorf("mesh: %w: cannot visualize an array with a zero-size dimension, got shape %s", ErrUnsupported, pyIntTuple(shape))
	}
	m, err := s.Mesh()
	if err != nil {
		return err
	}
	if err := s.CheckShape(shape); err != nil {
		return err
	}
	platform := strings.ToUpper(m.devices[0].Platform())

	// Chunks: each dimension is split into equal blocks (tileOf), so every
	// device's shard is chunk (i, j) of rows x cols, or chunk j of one row (1-D).
	rowLen, colLen := shape[0], shape[0]/s.tileOf(0)
	rows, cols := 1, s.tileOf(0)
	if len(shape) == 2 {
		rowLen, colLen = shape[0]/s.tileOf(0), shape[1]/s.tileOf(1)
		rows, cols = s.tileOf(0), s.tileOf(1)
	}
	chunk := make([]int, len(m.ids)) // each mesh position's chunk, i*cols+j
	s.forEachBlock(len(shape), func(p int, block []int) {
		chunk[p] = block[0]
		if len(block) == 2 {
			chunk[p] = block[0]*cols + block[1]
		}
	})
	// The ids of each chunk (CSR: start[k] to start[k+1] in ids), sorted.
	start := make([]int, rows*cols+1)
	for _, k := range chunk {
		start[k+1]++
	}
	for k := range rows * cols {
		start[k+1] += start[k]
	}
	ids := make([]int, len(chunk))
	fill := slices.Clone(start[:rows*cols])
	for p, k := range chunk {
		ids[fill[k]] = m.ids[p]
		fill[k]++
	}
	for k := range rows * cols {
		if start[k] == start[k+1] {
			return fmt.Errorf("mesh: %w: sharding %s leaves chunk (%d, %d) of shape %s without a device", ErrUnsupported, s, k/cols, k%cols, pyIntTuple(shape))
		}
		slices.Sort(ids[start[k]:start[k+1]])
	}

	baseH := int(10 * c.Scale)
	aspect := 1 / float64(shape[0])
	if len(shape) == 2 {
		aspect = float64(shape[1]) / float64(shape[0])
	}
	baseW := int(float64(baseH) * aspect)
	chunkW, chunkH := float64(colLen)/float64(shape[len(shape)-1]), -1.0
	if len(shape) == 2 {
		chunkH = float64(rowLen) / float64(shape[0])
	}
	width := int(chunkW * float64(baseW) * 2.5)
	height := 1
	if chunkH >= 0 {
		height = int(chunkH * float64(baseH))
	}
	width = min(max(width, c.MinWidth), c.MaxWidth)
	tp, r := floorDivMod(height-2, 2)
	bp := tp + r

	cells := make([]cell, rows*cols)
	for k := range cells {
		chunkIDs := ids[start[k]:start[k+1]]
		n := len(platform) + len(chunkIDs) // the space and the commas
		for _, id := range chunkIDs {
			n += intLen(id)
		}
		lp, r := floorDivMod(width-n-2, 2)
		rp := lp + r
		cells[k] = cell{platform: platform, ids: chunkIDs, labelLen: n,
			top: max(tp, 0), right: max(rp, 0), bot: max(bp, 0), left: max(lp, 0)}
	}
	colW := columnWidths(cells, rows, cols, c.MaxWidth-(cols+1))
	// Columns whose left border starts past the crop width never show.
	visible, at := 0, 1
	for visible < cols && at < c.MaxWidth {
		at += colW[visible] + 1
		visible++
	}

	bw := &cropWriter{w: bufio.NewWriter(w), width: c.MaxWidth}
	border := func(l, mid, r string) {
		bw.writeString(l)
		for j := range visible {
			if j > 0 {
				bw.writeString(mid)
			}
			bw.repeat("─", colW[j])
		}
		if visible < cols {
			r = mid // the border before the first hidden column, if it still fits
		}
		bw.writeString(r)
		bw.writeByte('\n')
	}
	border("┌", "┬", "┐")
	lines := make([][]string, visible)
	for i := range rows {
		if i > 0 {
			border("├", "┼", "┤")
		}
		row := cells[i*cols : i*cols+visible]
		height := 1 // a row of cells with no lines still takes one
		for j, ce := range row {
			lines[j] = ce.lines(colW[j])
			height = max(height, len(lines[j]))
		}
		for line := range height {
			bw.writeString("│")
			for j := range row {
				if j > 0 {
					bw.writeString("│")
				}
				if line < len(lines[j]) {
					bw.writeString(lines[j][line])
				} else {
					bw.repeat(" ", colW[j])
				}
			}
			bw.writeString("│")
			bw.writeByte('\n')
		}
	}
	border("└", "┴", "┘")
	return bw.w.Flush()
}

// intLen is the number of decimal digits of a non-negative int (a device id).
func intLen(v int) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// cropWriter writes lines cut after width runes, as rich's console crops what it prints to its
// width; the newline of a cut line is kept.
type cropWriter struct {
	w     *bufio.Writer
	width int
	col   int // runes written on the current line
}

// writeString writes s, dropping the runes of each line past width.
func (c *cropWriter) writeString(s string) {
	for s != "" {
		if c.col >= c.width {
			nl := strings.IndexByte(s, '\n')
			if nl < 0 {
				return
			}
			c.writeByte('\n')
			s = s[nl+1:]
			continue
		}
		// Runes up to the newline or the width, whichever comes first.
		i, n := 0, c.col
		for i < len(s) && s[i] != '\n' && n < c.width {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
		}
		c.w.WriteString(s[:i])
		c.col = n
		s = s[i:]
		if s != "" && s[0] == '\n' {
			c.writeByte('\n')
			s = s[1:]
		}
	}
}

// repeat writes s n times, stopping once the line is full.
func (c *cropWriter) repeat(s string, n int) {
	for ; n > 0 && c.col < c.width; n-- {
		c.writeString(s)
	}
}

// writeByte writes an ASCII byte: a newline starts a new line.
func (c *cropWriter) writeByte(b byte) {
	if b == '\n' {
		c.w.WriteByte(b)
		c.col = 0
		return
	}
	if c.col < c.width {
		c.w.WriteByte(b)
		c.col++
	}
}

// cell is one chunk's box: its label, the upper-case platform and the sorted
// ids of the devices holding the chunk (labelLen long; built by label only
// where it shows), and the padding around it (top, right, bottom, left), as JAX
// computes them.
type cell struct {
	platform              string
	ids                   []int
	labelLen              int
	top, right, bot, left int
}

// label returns the cell's text, e.g. "CPU 0,2,4,6".
func (ce cell) label() string {
	b := make([]byte, 0, ce.labelLen)
	b = append(b, ce.platform...)
	b = append(b, ' ')
	for k, id := range ce.ids {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return string(b)
}

// measure returns the width the cell asks for in a column of at most limit
// columns: rich's Measurement of Padding(Align(label)).
func (ce cell) measure(limit int) int {
	switch {
	case limit < 1:
		return 0
	case limit-ce.left-ce.right < 1:
		return limit
	}
	return min(min(ce.labelLen, limit)+ce.left+ce.right, limit)
}

// lines renders the cell in a column width columns wide, as rich renders
// Padding(Align(label, "center")) in a table cell: the padding is kept and
// the label gets what room is left, at most its own length, where it is
// wrapped and cut (cutLines); with no room left it has no lines at all, so
// the cell is only its top and bottom padding. Every line is width columns.
func (ce cell) lines(width int) []string {
	if width < 1 {
		return nil
	}
	inner := min(min(ce.labelLen, width)+ce.left+ce.right, width) - ce.left - ce.right
	var content []string
	if inner >= 1 {
		content = cutLines(ce.label(), inner) // inner <= len(label): no centring space
	}
	blank := strings.Repeat(" ", width)
	out := make([]string, 0, ce.top+len(content)+ce.bot)
	for range ce.top {
		out = append(out, blank)
	}
	for _, l := range content {
		out = append(out, fitCells(strings.Repeat(" ", ce.left)+l+strings.Repeat(" ", ce.right), width))
	}
	for range ce.bot {
		out = append(out, blank)
	}
	return out
}

// cutLines wraps text to width (>= 1) columns as rich's Text.wrap does in a
// table column (justify "left", overflow "ellipsis"): lines break between
// words only, a word longer than width stays whole on its line, and a line
// longer than width (after dropping trailing spaces past it) is cut to
// width-1 columns and "…". Lines are padded to width.
func cutLines(text string, width int) []string {
	var breaks []int // rich's divide_line(text, width, fold=False)
	offset := 0
	for start := 0; start < len(text); {
		end := start
		for end < len(text) && text[end] == ' ' {
			end++
		}
		if end == len(text) {
			break
		}
		for end < len(text) && text[end] != ' ' {
			end++
		}
		word := len(strings.TrimRight(text[start:end], " "))
		for end < len(text) && text[end] == ' ' {
			end++
		}
		switch {
		case width-offset >= word:
			offset += end - start
		case word > width, offset > 0:
			if start > 0 {
				breaks = append(breaks, start)
			}
			offset = end - start
		}
		start = end
	}
	var lines []string
	prev := 0
	for _, b := range append(breaks, len(text)) {
		line := text[prev:b]
		prev = b
		if excess := len(line) - width; excess > 0 { // rstrip_end
			line = line[:len(line)-min(excess, len(line)-len(strings.TrimRight(line, " ")))]
		}
		if len(line) > width { // truncate(width, "ellipsis", pad=True)
			line = line[:width-1] + "…"
		} else {
			line += strings.Repeat(" ", width-len(line))
		}
		lines = append(lines, line)
	}
	return lines
}

// fitCells pads s with spaces or cuts it to exactly width columns (runes).
func fitCells(s string, width int) string {
	n := utf8.RuneCountInString(s)
	if n < width {
		return s + strings.Repeat(" ", width-n)
	}
	for i := range s {
		if width == 0 {
			return s[:i]
		}
		width--
	}
	return s
}

// columnWidths returns the widths rich gives the table's columns (cells holds
// rows x cols cells, row-major) when at most limit columns are free for them:
// each column as wide as its widest cell asks (at least 1); when they do not
// fit, shrunk by fitWidths and measured again at the new widths.
func columnWidths(cells []cell, rows, cols, limit int) []int {
	measure := func(j, w int) int {
		out := 0
		for i := range rows {
			out = max(out, cells[i*cols+j].measure(w))
		}
		return out
	}
	widths := make([]int, cols)
	total := 0
	for j := range widths {
		widths[j] = max(measure(j, limit), 1)
		total += widths[j]
	}
	if total <= limit {
		return widths
	}
	widths = fitWidths(widths, limit)
	for j, w := range widths {
		widths[j] = measure(j, w)
	}
	return widths
}

// fitWidths shrinks column widths to fit max the way rich's Table does
// (_collapse_widths, then an even reduction as a last resort).
func fitWidths(widths []int, limit int) []int {
	total := 0
	for _, w := range widths {
		total += w
	}
	if total <= limit {
		return widths
	}
	widths = slices.Clone(widths)
	excess := total - limit
	for total > 0 && excess > 0 {
		maxW := slices.Max(widths)
		second := 0
		for _, w := range widths {
			if w != maxW {
				second = max(second, w)
			}
		}
		diff := maxW - second
		if diff == 0 {
			break
		}
		ratios := make([]int, len(widths))
		maxima := make([]int, len(widths))
		for i, w := range widths {
			if w == maxW {
				ratios[i] = 1
			}
			maxima[i] = min(excess, diff)
		}
		widths = ratioReduce(excess, ratios, maxima, widths)
		total = 0
		for _, w := range widths {
			total += w
		}
		excess = total - limit
	}
	if excess > 0 {
		ones := make([]int, len(widths))
		for i := range ones {
			ones[i] = 1
		}
		widths = ratioReduce(excess, ones, slices.Clone(widths), widths)
	}
	return widths
}

// ratioReduce is rich's ratio_reduce: take total from values in proportion
// to ratios, at most maxima[i] from each, rounding half to even as Python
// does.
func ratioReduce(total int, ratios, maxima, values []int) []int {
	ratios = slices.Clone(ratios)
	totalRatio := 0
	for i := range ratios {
		if maxima[i] == 0 {
			ratios[i] = 0
		}
		totalRatio += ratios[i]
	}
	out := slices.Clone(values)
	if totalRatio == 0 {
		return out
	}
	remaining := total
	for i, r := range ratios {
		if r == 0 || totalRatio <= 0 {
			continue
		}
		d := min(maxima[i], int(math.RoundToEven(float64(r)*float64(remaining)/float64(totalRatio))))
		out[i] = values[i] - d
		remaining -= d
		totalRatio -= r
	}
	return out
}

// floorDivMod is Python's divmod for a positive divisor.
func floorDivMod(a, b int) (int, int) {
	q, r := a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}
