package mesh

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// VisualizeConfig sets the sizing of Visualize's table, as the keyword
// arguments of jax.debug.visualize_sharding do. Zero fields take the
// defaults: Scale 1, MinWidth 9, MaxWidth 80. Scale may be at most
// maxVisualScale (100) and the widths at most maxVisualWidth (10,000), so
// a table stays at most about a thousand lines and ten thousand columns.
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
// A table wider than MaxWidth columns is shrunk as rich shrinks it (labels
// wrap, or vanish when the padding leaves no room). The output ends with the
// table's last line.
func Visualize(w io.Writer, s NamedSharding, shape []int) error {
	return VisualizeConfig{}.Fprint(w, s, shape)
}

// Bounds of VisualizeConfig.
const (
	maxVisualScale = 100
	maxVisualWidth = 10000
)

type chunk struct {
	ids    []int
	width  float64 // fraction of the columns
	height float64 // fraction of the rows; < 0 for 1-D
}

// Fprint writes the table of Visualize with c's sizing.
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
	idx, err := s.DevicesIndicesMap(shape)
	if err != nil {
		return err
	}
	platform := strings.ToUpper(m.devices[0].Platform())

	// Group devices by chunk (row, column).
	chunks := map[[2]int]*chunk{}
	rows, cols := 0, 0
	for p, ix := range idx {
		var key [2]int
		ch := chunk{height: -1}
		if len(shape) == 2 {
			key = [2]int{chunkIndex(ix[0]), chunkIndex(ix[1])}
			ch.height = float64(ix[0].Len()) / float64(shape[0])
			ch.width = float64(ix[1].Len()) / float64(shape[1])
		} else {
			key = [2]int{0, chunkIndex(ix[0])}
			ch.width = float64(ix[0].Len()) / float64(shape[0])
		}
		if chunks[key] == nil {
			chunks[key] = &ch
		}
		chunks[key].ids = append(chunks[key].ids, m.ids[p])
		rows, cols = max(rows, key[0]+1), max(cols, key[1]+1)
	}

	baseH := int(10 * c.Scale)
	aspect := 1 / float64(shape[0])
	if len(shape) == 2 {
		aspect = float64(shape[1]) / float64(shape[0])
	}
	baseW := int(float64(baseH) * aspect)

	type cell struct {
		label                 string
		top, right, bot, left int
	}
	cells := make([][]cell, rows)
	colW := make([]int, cols)
	for i := range rows {
		cells[i] = make([]cell, cols)
		for j := range cols {
			ch := chunks[[2]int{i, j}]
			if ch == nil {
				return fmt.Errorf("mesh: %w: sharding %s leaves chunk (%d, %d) of shape %s without a device", ErrUnsupported, s, i, j, pyIntTuple(shape))
			}
			ids := slices.Clone(ch.ids)
			slices.Sort(ids)
			strs := make([]string, len(ids))
			for k, id := range ids {
				strs[k] = strconv.Itoa(id)
			}
			label := platform + " " + strings.Join(strs, ",")
			width := int(ch.width * float64(baseW) * 2.5)
			height := 1
			if ch.height >= 0 {
				height = int(ch.height * float64(baseH))
			}
			width = min(max(width, c.MinWidth), c.MaxWidth)
			lp, r := floorDivMod(width-len(label)-2, 2)
			rp := lp + r
			tp, r := floorDivMod(height-2, 2)
			bp := tp + r
			ce := cell{label: label, top: max(tp, 0), right: max(rp, 0), bot: max(bp, 0), left: max(lp, 0)}
			cells[i][j] = ce
			colW[j] = max(colW[j], ce.left+len(label)+ce.right)
		}
	}

	// Like rich, shrink the widest columns when the table (columns plus
	// borders) is wider than the console, which is MaxWidth columns wide.
	colW = fitWidths(colW, c.MaxWidth-(cols+1))

	bw := bufio.NewWriter(w)
	border := func(l, mid, r string) {
		bw.WriteString(l)
		for j, cw := range colW {
			if j > 0 {
				bw.WriteString(mid)
			}
			bw.WriteString(strings.Repeat("─", cw))
		}
		bw.WriteString(r)
		bw.WriteByte('\n')
	}
	border("┌", "┬", "┐")
	for i, row := range cells {
		if i > 0 {
			border("├", "┼", "┤")
		}
		lines := make([][]string, len(row))
		height := 0
		for j, ce := range row {
			lines[j] = cellLines(ce.label, colW[j], ce.top, ce.right, ce.bot, ce.left)
			height = max(height, len(lines[j]))
		}
		for line := range height {
			bw.WriteString("│")
			for j := range row {
				if j > 0 {
					bw.WriteString("│")
				}
				if line < len(lines[j]) {
					bw.WriteString(lines[j][line])
				} else {
					bw.WriteString(strings.Repeat(" ", colW[j]))
				}
			}
			bw.WriteString("│\n")
		}
	}
	border("└", "┴", "┘")
	return bw.Flush()
}

// cellLines renders one padded, centred label into lines of exactly width
// columns, as rich's Padding(Align(label, "center")) does: the label is
// wrapped at spaces (folding longer words) to the inner width, the block is
// centred with the extra space on the right, and lines are cropped to the
// column width.
func cellLines(label string, width, top, right, bot, left int) []string {
	blank := strings.Repeat(" ", width)
	inner := width - left - right
	var content []string
	if inner <= 0 {
		content = []string{""}
	} else {
		content = wrapWords(label, inner)
	}
	block := 0
	for _, l := range content {
		block = max(block, len(l))
	}
	out := make([]string, 0, top+len(content)+bot)
	for range top {
		out = append(out, blank)
	}
	for _, l := range content {
		excess := max(inner, 0) - block
		line := strings.Repeat(" ", left+excess/2) + l + strings.Repeat(" ", block-len(l)+excess-excess/2+right)
		if len(line) > width {
			line = line[:width]
		}
		out = append(out, line+strings.Repeat(" ", width-len(line)))
	}
	for range bot {
		out = append(out, blank)
	}
	return out
}

// wrapWords wraps text at spaces into lines of at most width bytes, folding
// words longer than width.
func wrapWords(text string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(text) {
		for len(w) > width {
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			lines = append(lines, w[:width])
			w = w[width:]
		}
		switch {
		case cur == "":
			cur = w
		case len(cur)+1+len(w) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
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

// chunkIndex is the index of a range among equal chunks (JAX's
// _slice_to_chunk_idx): 0 for a full range.
func chunkIndex(r Range) int {
	if r.Len() == 0 {
		return 0
	}
	return r.Start / r.Len()
}

// floorDivMod is Python's divmod for a positive divisor.
func floorDivMod(a, b int) (int, int) {
	q, r := a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}
