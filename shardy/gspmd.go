package shardy

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
)

// GSPMD forms. The alternative (GSPMD) partitioner reads shardings as
// `mhlo.sharding = "<HloSharding text>"`; these are the texts XLA's
// HloSharding::ToString prints.
const (
	// GSPMDReplicated is the fully replicated HloSharding text.
	GSPMDReplicated = "{replicated}"
	// GSPMDManual is the HloSharding text of a value inside a manual
	// (shard_map) region.
	GSPMDManual = "{manual}"
)

// GSPMDMaximal returns the HloSharding text placing a value on one device:
// `{maximal device=0}`.
func GSPMDMaximal(deviceID int) string {
	return fmt.Sprintf("{maximal device=%d}", deviceID)
}

// maxDevices bounds the meshes GSPMD converts, so that sizes never overflow.
const maxDevices = 1 << 31

// tiling describes a sharding in terms of mesh factors: the mesh's axes,
// split where sub-axes need it, in mesh order (major to minor).
type tiling struct {
	factors []int   // factor sizes, mesh order
	dims    [][]int // per tensor dimension, the factors sharding it, major to minor
	manual  []bool  // per factor: a manual axis (shard_map), if unused by dims
	ids     []int   // device ids in mesh order; nil for iota
}

// hloSharding returns the HloSharding of t, following JAX's
// named_sharding_to_xla_hlo_sharding and then XLA's HloSharding::Subgroup
// and iota canonicalisation:
//   - no factor used by a dimension and no manual factor: `{replicated}`;
//   - unused factors form trailing subgroup dimensions, one per kind
//     (manual, replicated);
//   - a single subgroup kind with no data tiling collapses to `{manual}` or
//     `{replicated}`; subgroup dimensions of size 1 are then dropped, manual
//     ones come before the replicated one, and a lone replicated subgroup
//     prints as `last_tile_dim_replicate`;
//   - the tile assignment is an iota over the factors, transposed, in
//     canonical form (or the mesh's device ids).
func (t tiling) hloSharding() (xlaproto.OpSharding, error) {
	used := make([]bool, len(t.factors))
	anyManual := false
	var perm []int
	tileDims := make([]int, len(t.dims), len(t.dims)+2)
	for d, fs := range t.dims {
		tileDims[d] = 1
		for _, f := range fs {
			tileDims[d] *= t.factors[f]
			perm = append(perm, f)
			used[f] = true
		}
	}
	var manual, replicated []int
	for f := range t.factors {
		isManual := t.manual != nil && t.manual[f]
		anyManual = anyManual || isManual
		switch {
		case used[f]:
		case isManual:
			manual = append(manual, f)
		default:
			replicated = append(replicated, f)
		}
	}
	if len(perm) == 0 && !anyManual {
		return xlaproto.NewReplicated(), nil
	}
	data := 1
	for _, d := range tileDims {
		data *= d
	}
	size := func(fs []int) int {
		n := 1
		for _, f := range fs {
			n *= t.factors[f]
		}
		return n
	}
	// A single subgroup kind and no data tiling (checked before size-1
	// subgroups are dropped).
	if data == 1 {
		switch {
		case len(manual) > 0 && len(replicated) == 0:
			return xlaproto.NewManual(), nil
		case len(replicated) > 0 && len(manual) == 0:
			return xlaproto.NewReplicated(), nil
		}
	}
	var kinds []xlaproto.ShardingType
	for _, g := range []struct {
		kind xlaproto.ShardingType
		fs   []int
	}{{xlaproto.Manual, manual}, {xlaproto.Replicated, replicated}} {
		if len(g.fs) == 0 {
			continue
		}
		perm = append(perm, g.fs...)
		if n := size(g.fs); n != 1 {
			tileDims = append(tileDims, n)
			kinds = append(kinds, g.kind)
		}
	}
	if data == 1 && len(kinds) == 1 {
		if kinds[0] == xlaproto.Manual {
			return xlaproto.NewManual(), nil
		}
		return xlaproto.NewReplicated(), nil
	}
	if t.ids == nil {
		return xlaproto.NewIotaTiled(tileDims, t.factors, perm, kinds...)
	}
	// XLA lists the devices of a mesh with device_ids explicitly, even
	// when they happen to form an iota, and sorts each replication group
	// (the last tile dimension) when it is replicated.
	flat, err := xlaproto.Iota(t.factors, perm)
	if err != nil {
		return xlaproto.OpSharding{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	for i, p := range flat {
		flat[i] = t.ids[p]
	}
	if n := len(kinds); n > 0 && kinds[n-1] == xlaproto.Replicated {
		g := tileDims[len(tileDims)-1]
		for i := 0; i+g <= len(flat); i += g {
			slices.Sort(flat[i : i+g])
		}
	}
	return xlaproto.NewTiled(tileDims, flat, kinds...)
}

// GSPMD returns the GSPMD `mhlo.sharding` text of s on mesh m (the mesh its
// symbol names; an inline mesh is used instead of m): the text XLA's own
// sdy-to-HloSharding export prints (checked against it in testdata). Device
// ids are the mesh's logical ids: without device_ids the tile assignment is
// an iota (`<=[4,2]T(1,0)`); with device_ids it is the explicit list, as XLA
// writes it even when the order happens to be an iota
// (`{devices=[4,2]0,2,4,6,1,3,5,7}`), with each replication group sorted.
// A maximal mesh gives `{maximal device=N}`, the empty mesh `{replicated}`;
// open and closed dimensions print alike; replicated axes are like unused
// ones. Sub-axes split their axis into factors. Errors: those of Mesh.Validate and
// Validate (rank unchecked), and ErrUnsupported for unreduced axes or
// sub-axes that do not split their axis into a chain of factors.
func (s TensorSharding) GSPMD(m Mesh) (string, error) {
	if s.inline {
		m = s.mesh
	}
	if err := m.Validate(); err != nil {
		return "", err
	}
	if err := s.Validate(m, -1); err != nil {
		return "", err
	}
	if m.IsMaximal() {
		return GSPMDMaximal(m.ids[0]), nil
	}
	if productCapped(m.AxisSizes()) > maxDevices {
		return "", fmt.Errorf("shardy: %w: mesh %s has more than %d devices", ErrUnsupported, m, maxDevices)
	}
	if len(s.unreduced) > 0 {
		return "", fmt.Errorf("shardy: %w: unreduced axes %s have no GSPMD form", ErrUnsupported, s)
	}
	// Split every axis at the boundaries its sub-axes need. Boundaries are
	// pre-sizes counted from the major end: sub-axis (m)k covers [m, m·k].
	refs := slices.Clone(s.replicated)
	for _, d := range s.dims {
		refs = append(refs, d.axes...)
	}
	var t tiling
	t.ids = m.ids
	bounds := make([][]int, len(m.axes))
	first := make([]int, len(m.axes)) // first factor of each axis
	for i, a := range m.axes {
		b := []int{1, a.Size}
		for _, r := range refs {
			if r.sub && r.name == a.Name {
				b = append(b, r.preSize, r.preSize*r.size)
			}
		}
		slices.Sort(b)
		b = slices.Compact(b)
		for j := 1; j < len(b); j++ {
			if b[j]%b[j-1] != 0 {
				return "", fmt.Errorf("shardy: %w: sub-axes of axis %s in %s do not split it into factors",
					ErrUnsupported, quoteName(a.Name), s)
			}
		}
		bounds[i] = b
		first[i] = len(t.factors)
		if a.Size == 1 {
			t.factors = append(t.factors, 1) // kept, as JAX keeps size-1 axes
			continue
		}
		for j := 1; j < len(b); j++ {
			t.factors = append(t.factors, b[j]/b[j-1])
		}
	}
	t.dims = make([][]int, len(s.dims))
	for d, dim := range s.dims {
		for _, r := range dim.axes {
			i := m.AxisIndex(r.name)
			lo, hi := 1, m.axes[i].Size
			if hi == 1 {
				t.dims[d] = append(t.dims[d], first[i])
				continue
			}
			if r.sub {
				lo, hi = r.preSize, r.preSize*r.size
			}
			for j := 1; j < len(bounds[i]); j++ {
				if bounds[i][j-1] >= lo && bounds[i][j] <= hi {
					t.dims[d] = append(t.dims[d], first[i]+j-1)
				}
			}
		}
	}
	h, err := t.hloSharding()
	if err != nil {
		return "", fmt.Errorf("shardy: mesh %s, sharding %s: %w", m, s, err)
	}
	return h.String(), nil
}
