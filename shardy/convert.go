package shardy

import (
	"fmt"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/mesh"
)

// MeshFromAbstract returns the Shardy mesh of an abstract mesh: its axes in
// order, with deviceIDs (the logical ids in mesh order) kept only when they
// are not iota. Pass nil for the default order. Lowering depends only on the
// abstract mesh; device ids only change the printed device_ids.
func MeshFromAbstract(a mesh.Abstract, deviceIDs []int) Mesh {
	names, sizes := a.AxisNames(), a.AxisSizes()
	axes := make([]MeshAxis, len(names))
	for i := range names {
		axes[i] = MeshAxis{Name: names[i], Size: sizes[i]}
	}
	return NewMesh(axes, deviceIDs)
}

// FromNamedSharding returns the Shardy sharding of s for a tensor of the
// given rank on the mesh symbol @meshName, with JAX's mapping of
// PartitionSpec entries: None -> `{}`, "x" -> `{"x"}`, ("x", "y") ->
// `{"x", "y"}`, Unconstrained -> `{?}`; dimensions past the spec's length
// are `{}`. A spec longer than rank returns an error wrapping ErrRank; the
// zero NamedSharding or an invalid spec returns an error wrapping ErrSpec.
//
//	#sdy.sharding<@mesh, [{"x"}, {}]>   // P("x") on a rank-2 tensor
func FromNamedSharding(s mesh.NamedSharding, meshName string, rank int) (TensorSharding, error) {
	spec := s.Spec()
	if s.Key() == "" {
		return TensorSharding{}, fmt.Errorf("shardy: %w: zero mesh.NamedSharding", ErrSpec)
	}
	if err := spec.Err(); err != nil {
		return TensorSharding{}, fmt.Errorf("shardy: %w: %w", ErrSpec, err)
	}
	if rank < 0 {
		return TensorSharding{}, fmt.Errorf("shardy: %w: negative rank %d", ErrRank, rank)
	}
	if spec.Len() > rank {
		return TensorSharding{}, fmt.Errorf("shardy: %w: spec %s has %d entries, more than the tensor rank %d",
			ErrRank, spec, spec.Len(), rank)
	}
	dims := make([]DimSharding, rank)
	for i := range spec.Len() {
		d := spec.Dim(i)
		switch {
		case d.IsUnconstrained():
			dims[i] = Open()
		default:
			dims[i] = Closed(AxisRefs(d.Axes()...)...)
		}
	}
	return TensorSharding{meshName: meshName, dims: dims}, nil
}

// AdjustForAxisTypes applies JAX's modify_sdy_sharding_wrt_axis_types,
// used for sharding constraints and shard_map shardings on meshes that mix
// Auto axes with others: when a has an Auto axis, every dimension of s
// becomes open (`{"x", ?}`, `{?}`), the Explicit axes no dimension uses
// become `replicated={...}` in mesh order, and (as in JAX) unreduced axes are
// dropped. On meshes without Auto axes s is returned unchanged.
func AdjustForAxisTypes(s TensorSharding, a mesh.Abstract) TensorSharding {
	types := a.AxisTypes()
	anyAuto := false
	for _, t := range types {
		anyAuto = anyAuto || t == mesh.Auto
	}
	s = s.clone()
	if !anyAuto {
		return s
	}
	used := map[string]bool{}
	for i, d := range s.dims {
		for _, r := range d.axes {
			used[r.name] = true
		}
		s.dims[i].open = true
	}
	var rep []AxisRef
	for i, n := range a.AxisNames() {
		if types[i] == mesh.Explicit && !used[n] {
			rep = append(rep, Axis(n))
		}
	}
	s.replicated, s.unreduced, s.reduction = rep, nil, 0
	return s
}

// GSPMD returns the GSPMD `mhlo.sharding` text of s for a tensor of the
// given rank, as JAX's named_sharding_to_xla_hlo_sharding builds it and
// XLA prints it: mesh axes of size 1 are dropped; unused axes form the
// trailing replication dimension (`last_tile_dim_replicate`) or, for Manual
// axes, a manual one (`last_tile_dims={manual}`); the tile assignment is an
// iota over the mesh in canonical form; on a mesh of one device every
// sharding is `{replicated}`, as from JAX 0.12 (0.8.1 printed
// `{devices=[1]<=[1]}` and the like). Device positions are mesh positions
// (the compile device assignment maps them to devices). Examples on a mesh
// x=4, y=2:
//
//	P("x", "y")  {devices=[4,2]<=[8]}
//	P("y", "x")  {devices=[2,4]<=[4,2]T(1,0)}
//	P("x")       {devices=[4,1,2]<=[8] last_tile_dim_replicate}   (rank 2)
//	P()          {replicated}
//
// Errors are those of FromNamedSharding.
func GSPMD(s mesh.NamedSharding, rank int) (string, error) {
	h, err := gspmdSharding(s, rank)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// gspmdSharding is GSPMD as an HloSharding value.
func gspmdSharding(s mesh.NamedSharding, rank int) (xlaproto.OpSharding, error) {
	if _, err := FromNamedSharding(s, "", rank); err != nil {
		return xlaproto.OpSharding{}, err
	}
	a := s.Abstract()
	if a.Size() == 1 {
		return xlaproto.NewReplicated(), nil
	}
	names, sizes, types := a.AxisNames(), a.AxisSizes(), a.AxisTypes()
	t := tiling{factors: sizes, dims: make([][]int, rank), manual: make([]bool, len(names))}
	for i := range names {
		t.manual[i] = types[i] == mesh.Manual
	}
	spec := s.Spec()
	for d := range spec.Len() {
		for _, n := range spec.Dim(d).Axes() {
			t.dims[d] = append(t.dims[d], a.AxisIndex(n))
		}
	}
	h, err := t.hloSharding()
	if err != nil {
		return xlaproto.OpSharding{}, fmt.Errorf("shardy: %s: %w", s, err)
	}
	return h, nil
}
