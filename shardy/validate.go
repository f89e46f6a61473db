package shardy

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Validate checks m against Shardy's mesh rules, in the order Shardy's
// verifier checks them: axis sizes at least 1 (ErrAxisSize); device ids
// non-negative; no axes with more than one device id (a maximal mesh has
// exactly one); no duplicate axis names (ErrDuplicateAxisName); device_ids,
// when given, a permutation of 0..N-1 where N is the product of the axis
// sizes (ErrDeviceIDs). Device ids equal to iota never reach Validate: like
// Shardy's MeshAttr builder, NewMesh and the parser drop them.
func (m Mesh) Validate() error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("shardy: mesh %s: %w", m, err)
	}
	return nil
}

func (m Mesh) validate() error {
	total := 1
	for _, a := range m.axes {
		if a.Size < 1 {
			return fmt.Errorf("axis %s: %w, got: %d", quoteName(a.Name), ErrAxisSize, a.Size)
		}
		if total > math.MaxInt32/a.Size { // XLA numbers devices with 32-bit ints
			return fmt.Errorf("axis %s: %w: the axis sizes multiply to more than %d devices", quoteName(a.Name), ErrAxisSize, math.MaxInt32)
		}
		total *= a.Size
	}
	for _, id := range m.ids {
		if id < 0 {
			return errorf([]error{ErrDeviceIDs}, "device id must be non-negative, got: %d", id)
		}
	}
	if len(m.axes) == 0 {
		if len(m.ids) > 1 {
			return errorf([]error{ErrDeviceIDs}, "axes is empty and device_ids has more than one element")
		}
		return nil // the empty mesh, or a maximal one
	}
	for i, a := range m.axes {
		for _, b := range m.axes[:i] {
			if b.Name == a.Name {
				return fmt.Errorf("%w: %s", ErrDuplicateAxisName, quoteName(a.Name))
			}
		}
	}
	if len(m.ids) == 0 {
		return nil
	}
	if n := productCapped(m.AxisSizes()); n != len(m.ids) {
		return errorf([]error{ErrDeviceIDs}, "total product of axis sizes must match total number of device ids, got: %d != %d",
			n, len(m.ids))
	}
	sorted := slices.Clone(m.ids)
	slices.Sort(sorted)
	if !isIota(sorted) {
		var b strings.Builder
		writeInts(&b, sorted, ", ")
		return errorf([]error{ErrDeviceIDs}, "sorted device ids must be iota(product(axes)), got: %s", b.String())
	}
	return nil
}

// productCapped multiplies sizes, saturating at a value no device list reaches.
func productCapped(sizes []int) int {
	const limit = 1 << 40
	n := 1
	for _, s := range sizes {
		if s <= 0 {
			return 0
		}
		if n > limit/s {
			return limit
		}
		n *= s
	}
	return n
}

// ValidateMeshOps checks the mesh symbol ops of one module: each mesh is valid
// (Mesh.Validate) and no symbol is defined twice (ErrDuplicateMesh).
func ValidateMeshOps(ops []MeshOp) error {
	for i, op := range ops {
		for _, o := range ops[:i] {
			if o.name == op.name {
				var b strings.Builder
				writeSymbol(&b, op.name)
				return fmt.Errorf("shardy: %w: %s", ErrDuplicateMesh, b.String())
			}
		}
		if err := op.mesh.validate(); err != nil {
			var b strings.Builder
			writeSymbol(&b, op.name)
			return fmt.Errorf("shardy: mesh %s: %w", b.String(), err)
		}
	}
	return nil
}

// Validate checks s against mesh m (the mesh its symbol names; an inline
// mesh is used instead of m, and validated too) for a tensor of the given
// rank (a negative rank skips the rank check), with Shardy's verifier rules:
//   - rank: "sharding doesn't match tensor rank: 2 != 1" (ErrRank); on a
//     maximal mesh no dimension shardings at all (ErrMaximal);
//   - priorities: not negative, not on an empty closed dimension (ErrPriority);
//   - axis refs: known axes (ErrUnknownAxis), each axis used once across
//     dimensions, replicated and unreduced (ErrDuplicateAxisRef), sub-axis
//     rules (ErrSubAxis);
//   - replicated and unreduced sorted in mesh order (ErrUnordered).
func (s TensorSharding) Validate(m Mesh, rank int) error {
	if s.inline {
		m = s.mesh
		if err := m.validate(); err != nil {
			return fmt.Errorf("shardy: inline mesh %s: %w", m, err)
		}
	}
	if err := s.validate(m, rank); err != nil {
		return fmt.Errorf("shardy: %w", err)
	}
	return nil
}

// ValidateIn is Validate with the mesh looked up by symbol among a module's
// mesh ops; an unknown symbol gives "unknown mesh: @m" (ErrUnknownMesh).
func (s TensorSharding) ValidateIn(meshes []MeshOp, rank int) error {
	if s.inline {
		return s.Validate(Mesh{}, rank)
	}
	m, ok := lookupMesh(meshes, s.meshName)
	if !ok {
		var b strings.Builder
		writeSymbol(&b, s.meshName)
		return fmt.Errorf("shardy: %w: %s", ErrUnknownMesh, b.String())
	}
	return s.Validate(m, rank)
}

// ValidateIn checks each sharding of p against its mesh among meshes, for
// values of the given ranks (one per op result; nil skips the rank and
// count checks). The count must match ("shardings don't match number of
// values: 2 shardings vs 1 values", ErrCount), except that an op with no results may carry
// exactly one sharding that is maximal or fully replicated.
func (p TensorShardingPerValue) ValidateIn(meshes []MeshOp, ranks []int) error {
	if ranks != nil && len(ranks) == 0 && len(p.shardings) == 1 {
		s := p.shardings[0]
		if err := s.ValidateIn(meshes, -1); err != nil {
			return fmt.Errorf("shardy: value 0: %w", unprefix(err))
		}
		m, _ := lookupMesh(meshes, s.meshName)
		if s.inline {
			m = s.mesh
		}
		if !m.IsMaximal() && !s.IsFullyReplicated() {
			return fmt.Errorf("shardy: %w: an op with no results may only have a maximal or fully replicated sharding, got %s",
				ErrCount, s.Stripped())
		}
		return nil
	}
	if ranks != nil && len(ranks) != len(p.shardings) {
		return fmt.Errorf("shardy: %w: %d shardings vs %d values", ErrCount, len(p.shardings), len(ranks))
	}
	for i, s := range p.shardings {
		rank := -1
		if ranks != nil {
			rank = ranks[i]
		}
		if err := s.ValidateIn(meshes, rank); err != nil {
			return fmt.Errorf("shardy: value %d: %w", i, unprefix(err))
		}
	}
	return nil
}

// Validate checks that every manual axis is a mesh axis (ErrUnknownAxis:
// "unknown manual axis") used once (ErrDuplicateAxisRef).
func (a ManualAxes) Validate(m Mesh) error {
	for i, n := range a.names {
		if m.AxisIndex(n) < 0 {
			return errorf([]error{ErrUnknownAxis}, "shardy: unknown manual axis: %s", quoteName(n))
		}
		if slices.Contains(a.names[:i], n) {
			return fmt.Errorf("shardy: manual axes: %w: %s", ErrDuplicateAxisRef, quoteName(n))
		}
	}
	return nil
}

// unprefixed wraps an error, dropping the leading "shardy: " from its text.
type unprefixed struct{ err error }

func (u unprefixed) Error() string { return strings.TrimPrefix(u.err.Error(), "shardy: ") }
func (u unprefixed) Unwrap() error { return u.err }

func unprefix(err error) error { return unprefixed{err} }

// refUse is one axis reference and where it appears.
type refUse struct {
	ref   AxisRef
	where string
}

// validate checks s on m in the order Shardy's verifier does, so that the
// first error reported is the same (checked against Shardy in testdata):
// rank; each dimension's priority and axes (unknown axes, exact duplicates,
// mergeable neighbours); the replicated and unreduced lists, each for mesh
// order and then like a dimension; last, axis by axis, a full axis mixed
// with its sub-axes, each sub-axis's sizes, and overlapping sub-axes.
func (s TensorSharding) validate(m Mesh, rank int) error {
	if m.IsMaximal() {
		if len(s.dims) > 0 || len(s.replicated) > 0 || len(s.unreduced) > 0 {
			return ErrMaximal
		}
	} else if rank >= 0 && rank != len(s.dims) {
		return fmt.Errorf("%w: %d != %d", ErrRank, len(s.dims), rank)
	}
	var uses []refUse
	seen := map[AxisRef]bool{}
	check := func(refs []AxisRef, where string) error {
		for i, r := range refs {
			if m.AxisIndex(r.name) < 0 {
				return fmt.Errorf("%s: %w: %s", where, ErrUnknownAxis, quoteName(r.name))
			}
			if seen[r] {
				return fmt.Errorf("%s: %w: %s", where, ErrDuplicateAxisRef, r)
			}
			seen[r] = true
			uses = append(uses, refUse{r, where})
			if p := refs[max(i-1, 0)]; i > 0 && p.sub && r.sub && p.name == r.name && p.preSize*p.size == r.preSize {
				return errorf([]error{ErrSubAxis}, "%s: two consecutive sub-axes can be merged: %s, %s", where, p, r)
			}
		}
		return nil
	}
	for i, d := range s.dims {
		if d.hasPriority && d.priority < 0 {
			return errorf([]error{ErrPriority}, "dim %d has a negative priority", i)
		}
		if d.hasPriority && !d.open && len(d.axes) == 0 {
			return errorf([]error{ErrPriority}, "dim %d is empty and closed but has a priority", i)
		}
		if err := check(d.axes, fmt.Sprintf("dim %d", i)); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		where string
		refs  []AxisRef
	}{{"replicated", s.replicated}, {"unreduced", s.unreduced}} {
		for i := 1; i < len(list.refs); i++ {
			if meshLess(list.refs[i], list.refs[i-1], m) {
				return fmt.Errorf("%s %w", list.where, ErrUnordered)
			}
		}
		if err := check(list.refs, list.where); err != nil {
			return err
		}
	}
	// Shardy visits axes in hash-table order here; mesh order is as good.
	for _, a := range m.axes {
		if err := checkAxisUses(uses, a); err != nil {
			return err
		}
	}
	return nil
}

// meshLess is Shardy's mesh order of axis refs: by axis position (unknown
// axes after all others), then pre-size, then size, where a whole axis
// counts as pre-size 1 and the axis size.
func meshLess(a, b AxisRef, m Mesh) bool {
	ia, ib := m.AxisIndex(a.name), m.AxisIndex(b.name)
	if ia < 0 {
		ia = len(m.axes)
	}
	if ib < 0 {
		ib = len(m.axes)
	}
	if ia != ib {
		return ia < ib
	}
	pa, sa := a.preSize, a.size
	if !a.sub {
		pa, sa = 1, a.Size(m)
	}
	pb, sb := b.preSize, b.size
	if !b.sub {
		pb, sb = 1, b.Size(m)
	}
	if pa != pb {
		return pa < pb
	}
	return sa < sb
}

// checkAxisUses checks the uses of one mesh axis: not both whole and as
// sub-axes, every sub-axis valid, no two sub-axes overlapping. Errors about
// two uses name the place of the later one.
func checkAxisUses(uses []refUse, axis MeshAxis) error {
	type use struct {
		refUse
		pos int
	}
	var subs []use
	fullPos := -1
	for i, u := range uses {
		if u.ref.name != axis.Name {
			continue
		}
		if u.ref.sub {
			subs = append(subs, use{u, i})
		} else if fullPos < 0 {
			fullPos = i
		}
	}
	if len(subs) == 0 {
		return nil
	}
	if fullPos >= 0 {
		where := uses[max(fullPos, subs[0].pos)].where
		return errorf([]error{ErrDuplicateAxisRef, ErrSubAxis},
			"%s: both sub-axis and full-axis are used for axis name: %s", where, quoteName(axis.Name))
	}
	slices.SortStableFunc(subs, func(a, b use) int { return compareRefs(a.ref, b.ref, Mesh{}) })
	for i, u := range subs {
		if err := checkSubAxis(u.ref, axis.Size); err != nil {
			return fmt.Errorf("%s: %w", u.where, err)
		}
		if i > 0 {
			p := subs[i-1]
			if u.ref.preSize < p.ref.preSize*p.ref.size {
				where := uses[max(p.pos, u.pos)].where
				return errorf([]error{ErrDuplicateAxisRef, ErrSubAxis}, "%s: overlapping sub-axes: %s, %s", where, p.ref, u.ref)
			}
		}
	}
	return nil
}

func checkSubAxis(r AxisRef, axisSize int) error {
	if r.preSize < 1 {
		return errorf([]error{ErrSubAxis}, "sub-axis pre-size must be at least 1: %s", r)
	}
	if r.size <= 1 {
		return errorf([]error{ErrSubAxis}, "sub-axis sizes must be greater than 1: %s", r)
	}
	next := productCapped([]int{r.preSize, r.size})
	if axisSize%next != 0 {
		return errorf([]error{ErrSubAxis}, "sub-axis next pre-size %d doesn't divide the size of the full axis %d: %s", next, axisSize, r)
	}
	if r.size == axisSize {
		return errorf([]error{ErrSubAxis}, "sub-axis size is equal to the full axis size: %s", r)
	}
	return nil
}
