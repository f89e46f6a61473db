package mesh

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// VisualizeConfig sets the sizing of Visualize's table, as the keyword
// arguments of jax.debug.visualize_sharding do. Zero fields take the
// defaults: Scale 1, MinWidth 9, MaxWidth 80.
type VisualizeConfig struct {
	Scale    float64 // scales the base height (10 lines) of a 2-D table
	MinWidth int     // minimum width of a chunk, in columns
	MaxWidth int     // maximum width of a chunk, in columns
}

// Visualize writes the text table jax.debug.visualize_array_sharding prints
// (without colour) for an array of the given 1-D or 2-D shape: one box per
// distinct chunk, labelled with the upper-case platform and the sorted ids
// of the devices holding it, e.g. "CPU 0,2,4,6", and sized by JAX's rules.
// It returns an error wrapping ErrUnsupported for other ranks or a zero-size
// dimension, ErrNoDevices for an abstract sharding, or CheckShape's error.
// The output ends with the table's last line; rich's shrinking of tables
// wider than the console (80 columns) is not modelled.
func Visualize(w io.Writer, s NamedSharding, shape []int) error {
	return VisualizeConfig{}.Fprint(w, s, shape)
}

type chunk struct {
	ids    []int
	width  float64 // fraction of the columns
	height float64 // fraction of the rows; < 0 for 1-D
}

// Fprint writes the table of Visualize with c's sizing.
func (c VisualizeConfig) Fprint(w io.Writer, s NamedSharding, shape []int) error {
	if c.Scale == 0 {
		c.Scale = 1
	}
	if c.MinWidth == 0 {
		c.MinWidth = 9
	}
	if c.MaxWidth == 0 {
		c.MaxWidth = 80
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
		height := 0
		for _, ce := range row {
			height = max(height, ce.top+1+ce.bot)
		}
		for line := range height {
			bw.WriteString("│")
			for j, ce := range row {
				if j > 0 {
					bw.WriteString("│")
				}
				if line != ce.top {
					bw.WriteString(strings.Repeat(" ", colW[j]))
					continue
				}
				inner := colW[j] - ce.left - ce.right
				excess := inner - len(ce.label)
				bw.WriteString(strings.Repeat(" ", ce.left+excess/2))
				bw.WriteString(ce.label)
				bw.WriteString(strings.Repeat(" ", excess-excess/2+ce.right))
			}
			bw.WriteString("│\n")
		}
	}
	border("└", "┴", "┘")
	return bw.Flush()
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
