package wrap

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shardy"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Re-sharding a module with manual computations (shard_map) onto a mesh whose non-manual axes
// have other sizes: the collectives in the bodies carry replica groups (and collective_permute
// source-target pairs) written as partition ids, row-major positions in the old mesh. Each is
// read back as the groups of a list of axes (JAX's order: the first axis major within a group,
// groups ordered by the other axes in mesh order) and written again as the groups of the same
// axes on the new mesh. The device assignment maps partition ids to devices separately.

// readDenseI64 reads a rank-2 i64 dense attribute, `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`
// (also a splat or a hex string), into its rows.
func readDenseI64(src string) ([][]int, error) {
	s := mlir.NewScanner(src)
	if !s.Next().Is(mlir.Ident, "dense") || !s.Next().Is(mlir.Punct, "<") {
		return nil, fmt.Errorf("%s is not a dense attribute", src)
	}
	var flat []int
	var hexData string
	splat := false
	for t := s.Next(); s.Depth() > 0; t = s.Next() {
		switch {
		case t.Kind == mlir.EOF:
			return nil, fmt.Errorf("unterminated dense attribute %s", src)
		case t.Kind == mlir.Int:
			v, err := strconv.ParseInt(t.Text, 0, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("partition id %s in %s", t.Text, src)
			}
			flat = append(flat, int(v))
			splat = s.Depth() == 1
		case t.Kind == mlir.String:
			v, err := mlir.Unquote(t.Text)
			if err != nil {
				return nil, err
			}
			hexData = v
		case t.Is(mlir.Punct, "[") || t.Is(mlir.Punct, "]") || t.Is(mlir.Punct, ","):
		default:
			return nil, fmt.Errorf("unexpected %q in %s", t.Text, src)
		}
	}
	if !s.Next().Is(mlir.Punct, ":") || !s.Next().Is(mlir.Ident, "tensor") || !s.Next().Is(mlir.Punct, "<") {
		return nil, fmt.Errorf("%s has no tensor type", src)
	}
	var typ strings.Builder
	for t := s.Next(); s.Depth() > 0; t = s.Next() {
		if t.Kind == mlir.EOF {
			return nil, fmt.Errorf("unterminated type in %s", src)
		}
		typ.WriteString(t.Text)
	}
	dims := strings.Split(typ.String(), "x")
	if len(dims) != 3 || dims[2] != "i64" {
		return nil, fmt.Errorf("%s is not a rank-2 i64 tensor", src)
	}
	rows, err1 := strconv.Atoi(dims[0])
	cols, err2 := strconv.Atoi(dims[1])
	if err1 != nil || err2 != nil || rows < 1 || cols < 1 || rows > 1<<20 || cols > 1<<20 {
		return nil, fmt.Errorf("%s: unsupported shape %s", src, typ.String())
	}
	n := rows * cols
	switch {
	case hexData != "":
		b, err := hex.DecodeString(strings.TrimPrefix(hexData, "0x"))
		if err != nil || !strings.HasPrefix(hexData, "0x") || (len(b) != 8*n && len(b) != 8) {
			return nil, fmt.Errorf("%s: bad hex data", src)
		}
		for i := 0; i < len(b); i += 8 {
			v := int64(binary.LittleEndian.Uint64(b[i:]))
			if v < 0 {
				return nil, fmt.Errorf("%s: partition id %d", src, v)
			}
			flat = append(flat, int(v))
		}
		if len(flat) == 1 {
			splat = true
		}
	case len(flat) == 1 && splat:
	default:
		splat = false
	}
	if splat && len(flat) == 1 {
		flat = slices.Repeat(flat, n)
	}
	if len(flat) != n {
		return nil, fmt.Errorf("%s has %d values for shape %dx%d", src, len(flat), rows, cols)
	}
	out := make([][]int, rows)
	for i := range out {
		out[i] = flat[i*cols : (i+1)*cols]
	}
	return out, nil
}

// groupAxes returns the axes (indices into sizes, in JAX's order) whose groups are exactly
// groups; axes of size 1 are left out. ok is false when no list of axes gives them.
func groupAxes(sizes []int, groups [][]int) ([]int, bool) {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	if len(groups) == 0 || len(groups[0]) == 0 || len(groups)*len(groups[0]) != n {
		return nil, false
	}
	// The axes along which the first group's members differ from its first member.
	var span []int
	for k := range sizes {
		if sizes[k] == 1 {
			continue
		}
		stride := 1
		for _, s := range sizes[k+1:] {
			stride *= s
		}
		for _, id := range groups[0] {
			if id < 0 || id >= n {
				return nil, false
			}
			if id/stride%sizes[k] != groups[0][0]/stride%sizes[k] {
				span = append(span, k)
				break
			}
		}
	}
	var found []int
	permute(span, func(order []int) bool {
		if eqGroups(lower.MeshGroups(sizes, order), groups) {
			found = slices.Clone(order)
			return true
		}
		return false
	})
	return found, found != nil || (len(span) == 0 && eqGroups(lower.MeshGroups(sizes, nil), groups))
}

func eqGroups(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// permute calls f with each ordering of xs until f returns true.
func permute(xs []int, f func([]int) bool) bool {
	if len(xs) > 6 {
		return false
	}
	var rec func(k int) bool
	xs = slices.Clone(xs)
	rec = func(k int) bool {
		if k == len(xs) {
			return f(xs)
		}
		for i := k; i < len(xs); i++ {
			xs[k], xs[i] = xs[i], xs[k]
			if rec(k + 1) {
				return true
			}
			xs[k], xs[i] = xs[i], xs[k]
		}
		return false
	}
	return rec(0)
}

// regroupSite rewrites the replica groups (or, for source_target_pairs, the pairs) src of op,
// written on mesh old, for mesh new: same axis names, and the same sizes for the axes it spans.
func regroupSite(op, key, src string, old, new shardy.Mesh) (string, error) {
	rows, err := readDenseI64(src)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", op, key, err)
	}
	oldSizes, newSizes, names := old.AxisSizes(), new.AxisSizes(), old.AxisNames()
	checkAxes := func(axes []int) error {
		for _, k := range axes {
			if oldSizes[k] != newSizes[k] {
				return fmt.Errorf("%w: %s: %s spans mesh axis %q, whose size changes from %d to %d", lower.ErrMeshMismatch, op, key, names[k], oldSizes[k], newSizes[k])
			}
		}
		return nil
	}
	if key == "replica_groups" {
		axes, ok := groupAxes(oldSizes, rows)
		if !ok {
			return "", fmt.Errorf("%w: %s: replica_groups %s are not the groups of any mesh axes of %s", lower.ErrMeshMismatch, op, src, old)
		}
		if err := checkAxes(axes); err != nil {
			return "", err
		}
		return stablehlo.DenseI64(lower.MeshGroups(newSizes, axes)), nil
	}
	// source_target_pairs: the axes along which pairs move, and the pairs of the first group
	// (the one holding partition 0) as positions within it, applied to every new group.
	if len(rows) == 0 || len(rows[0]) != 2 {
		return "", fmt.Errorf("%w: %s: %s %s are not pairs", lower.ErrMeshMismatch, op, key, src)
	}
	var span []int
	for k := range oldSizes {
		stride := 1
		for _, s := range oldSizes[k+1:] {
			stride *= s
		}
		for _, r := range rows {
			if r[0]/stride%oldSizes[k] != r[1]/stride%oldSizes[k] {
				span = append(span, k)
				break
			}
		}
	}
	if err := checkAxes(span); err != nil {
		return "", err
	}
	// Partition ids are positions: a pair (a, b) in the group of a's other coordinates. On the
	// new mesh the same pair applies in every group of the other axes: rebuild from the pairs
	// whose other coordinates are all 0, and check the old pairs are exactly their copies.
	oldGroups, newGroups := lower.MeshGroups(oldSizes, span), lower.MeshGroups(newSizes, span)
	var local [][2]int
	for _, r := range rows {
		i, j := slices.Index(oldGroups[0], r[0]), slices.Index(oldGroups[0], r[1])
		if i >= 0 && j >= 0 {
			local = append(local, [2]int{i, j})
		}
	}
	var want [][]int
	for _, g := range oldGroups {
		for _, l := range local {
			want = append(want, []int{g[l[0]], g[l[1]]})
		}
	}
	sortRows := func(x [][]int) [][]int {
		x = slices.Clone(x)
		slices.SortFunc(x, slices.Compare)
		return x
	}
	if len(local) == 0 || !eqGroups(sortRows(want), sortRows(rows)) {
		return "", fmt.Errorf("%w: %s: source_target_pairs %s do not repeat one permutation in every group of mesh axes %v of %s", lower.ErrMeshMismatch, op, src, axisNames(names, span), old)
	}
	var pairs [][]int
	for _, g := range newGroups {
		for _, l := range local {
			pairs = append(pairs, []int{g[l[0]], g[l[1]]})
		}
	}
	return stablehlo.DenseI64(pairs), nil
}

func axisNames(names []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = names[k]
	}
	return out
}

// manualMesh checks that a module with manual computations (shard_map) can move to the new
// mesh: every mesh it defines has the new mesh's axis names, in the same order, and each
// manual axis keeps its size. It returns the old mesh when the collectives' groups must be
// rewritten (a non-manual axis changes size), or the empty mesh when nothing changes.
func (r *resharder) manualMesh(text string) (shardy.Mesh, error) {
	if !r.ex.manual || r.ex.form == formGSPMD {
		return shardy.EmptyMesh(), nil
	}
	manual, err := manualAxisNames(text, r.ex.sites)
	if err != nil {
		return shardy.Mesh{}, err
	}
	old := shardy.EmptyMesh()
	var oldName string
	for _, op := range r.ex.meshes {
		m := op.Mesh()
		if m.IsMaximal() || slices.Equal(m.Axes(), r.mesh.Axes()) {
			continue
		}
		if !slices.Equal(m.AxisNames(), r.mesh.AxisNames()) {
			return shardy.Mesh{}, fmt.Errorf("wrap: %w: %w: the module has manual computations (shard_map) written for mesh @%s = %s; they move only to a mesh with the same axis names, not %s",
				ErrModule, lower.ErrMeshMismatch, op.Name(), m, r.mesh)
		}
		for _, a := range manual {
			was, _ := m.AxisSize(a)
			now, _ := r.mesh.AxisSize(a)
			if was != now {
				return shardy.Mesh{}, fmt.Errorf("wrap: %w: %w: manual axis %q of the module's manual computations (shard_map) has size %d in mesh @%s = %s and %d in the new mesh %s; their bodies' shapes are written for it",
					ErrModule, lower.ErrMeshMismatch, a, was, op.Name(), m, now, r.mesh)
			}
		}
		if !old.IsEmpty() && !slices.Equal(old.Axes(), m.Axes()) {
			return shardy.Mesh{}, fmt.Errorf("wrap: %w: %w: the module's manual computations use meshes @%s = %s and @%s = %s; its collectives cannot be moved to %s",
				ErrModule, lower.ErrMeshMismatch, oldName, old, op.Name(), m, r.mesh)
		}
		old, oldName = m, op.Name()
	}
	if !old.IsEmpty() {
		for _, op := range r.ex.meshes {
			if m := op.Mesh(); !m.IsMaximal() && !slices.Equal(m.Axes(), old.Axes()) {
				return shardy.Mesh{}, fmt.Errorf("wrap: %w: %w: the module's manual computations use meshes @%s = %s and @%s = %s; its collectives cannot be moved to %s",
					ErrModule, lower.ErrMeshMismatch, oldName, old, op.Name(), m, r.mesh)
			}
		}
	}
	return old, nil
}

// manualAxisNames returns the names in the manual axis lists of sites (manual_axes={...}, also
// inside xla.sdy.* strings).
func manualAxisNames(text string, sites []site) ([]string, error) {
	var names []string
	add := func(src string) error {
		axes, err := shardy.ParseManualAxes(src)
		if err != nil {
			return err
		}
		for _, a := range axes.Names() {
			if !slices.Contains(names, a) {
				names = append(names, a)
			}
		}
		return nil
	}
	for _, s := range sites {
		switch s.kind {
		case siteManual:
			if err := add(text[s.at:s.end]); err != nil {
				return nil, wrapErrorAt(text, s.at, "%w", err)
			}
		case siteSdyString:
			v, err := mlir.Unquote(text[s.at:s.end])
			if err != nil {
				return nil, wrapErrorAt(text, s.at, "%w", err)
			}
			inner, err := scanSites(v, nil, [2]int{-1, -1}, false, &existing{rtMeshes: [2]int{-1, -1}})
			if err != nil {
				return nil, err
			}
			for _, in := range inner {
				if in.kind == siteManual {
					if err := add(v[in.at:in.end]); err != nil {
						return nil, wrapErrorAt(text, s.at, "%s: %w", s.key, err)
					}
				}
			}
		}
	}
	return names, nil
}
