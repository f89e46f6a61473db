package shardy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mesh"
)

func abstract(t *testing.T, sizes []int, names []string, types ...mesh.AxisType) mesh.Abstract {
	t.Helper()
	a, err := mesh.NewAbstract(sizes, names, types...)
	require.NoError(t, err)
	return a
}

func named(t *testing.T, a mesh.Abstract, spec mesh.PartitionSpec) mesh.NamedSharding {
	t.Helper()
	s, err := mesh.NewAbstractSharding(a, spec)
	require.NoError(t, err)
	return s
}

func TestFromNamedSharding(t *testing.T) {
	a := abstract(t, []int{4, 2}, []string{"x", "y"})
	tests := []struct {
		spec mesh.PartitionSpec
		rank int
		want string
	}{
		{mesh.P("x", "y"), 2, `#sdy.sharding<@mesh, [{"x"}, {"y"}]>`},
		{mesh.P("x"), 2, `#sdy.sharding<@mesh, [{"x"}, {}]>`},
		{mesh.P(nil, "y"), 3, `#sdy.sharding<@mesh, [{}, {"y"}, {}]>`},
		{mesh.P([]string{"x", "y"}), 2, `#sdy.sharding<@mesh, [{"x", "y"}, {}]>`},
		{mesh.P([]string{"y", "x"}, nil), 2, `#sdy.sharding<@mesh, [{"y", "x"}, {}]>`},
		{mesh.P(mesh.Unconstrained, "x"), 2, `#sdy.sharding<@mesh, [{?}, {"x"}]>`},
		{mesh.P(), 0, `#sdy.sharding<@mesh, []>`},
		{mesh.P(), 2, `#sdy.sharding<@mesh, [{}, {}]>`},
	}
	for _, tt := range tests {
		t.Run(tt.spec.String(), func(t *testing.T) {
			s, err := FromNamedSharding(named(t, a, tt.spec), "mesh", tt.rank)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.String())
			require.NoError(t, s.Validate(MeshFromAbstract(a, nil), tt.rank))
		})
	}
}

func TestFromNamedShardingErrors(t *testing.T) {
	a := abstract(t, []int{4, 2}, []string{"x", "y"})
	_, err := FromNamedSharding(named(t, a, mesh.P("x", "y")), "mesh", 1)
	require.ErrorIs(t, err, ErrRank)
	assert.Equal(t, "shardy: sharding doesn't match tensor rank: spec P('x', 'y') has 2 entries, more than the tensor rank 1", err.Error())
	_, err = FromNamedSharding(mesh.NamedSharding{}, "mesh", 1)
	require.ErrorIs(t, err, ErrSpec)
	_, err = GSPMD(named(t, a, mesh.P("x", "y")), 1)
	require.ErrorIs(t, err, ErrRank)
}

func TestMeshFromAbstract(t *testing.T) {
	a := abstract(t, []int{2, 4}, []string{"x", "y"})
	assert.Equal(t, `<["x"=2, "y"=4]>`, MeshFromAbstract(a, nil).String())
	assert.Equal(t, `<["x"=2, "y"=4]>`, MeshFromAbstract(a, []int{0, 1, 2, 3, 4, 5, 6, 7}).String())
	m := MeshFromAbstract(a, []int{0, 2, 4, 6, 1, 3, 5, 7})
	assert.Equal(t, `<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`, m.String())
	assert.Equal(t, `sdy.mesh @mesh_0 = <["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`, NewMeshOp("mesh_0", m).String())
	require.NoError(t, m.Validate())
}

func TestAdjustForAxisTypes(t *testing.T) {
	a := abstract(t, []int{2, 2, 2}, []string{"x", "y", "z"}, mesh.Explicit, mesh.Auto, mesh.Explicit)
	s, err := FromNamedSharding(named(t, a, mesh.P("z")), "mesh", 2)
	require.NoError(t, err)
	assert.Equal(t, `#sdy.sharding<@mesh, [{"z", ?}, {?}], replicated={"x"}>`, AdjustForAxisTypes(s, a).String())
	assert.Equal(t, `#sdy.sharding<@mesh, [{"z"}, {}]>`, s.String())
	all := abstract(t, []int{2, 2}, []string{"x", "y"}, mesh.Explicit, mesh.Explicit)
	s2, err := FromNamedSharding(named(t, all, mesh.P("x")), "mesh", 2)
	require.NoError(t, err)
	assert.Equal(t, `#sdy.sharding<@mesh, [{"x"}, {}]>`, AdjustForAxisTypes(s2, all).String())
}

func TestGSPMDNamed(t *testing.T) {
	m42 := abstract(t, []int{4, 2}, []string{"x", "y"})
	m22 := abstract(t, []int{2, 2}, []string{"x", "y"})
	m2 := abstract(t, []int{2}, []string{"x"})
	m1x8 := abstract(t, []int{1, 8}, []string{"a", "b"})
	m222 := abstract(t, []int{2, 2, 2}, []string{"x", "y", "z"})
	manual := abstract(t, []int{4, 2}, []string{"x", "y"}, mesh.Manual, mesh.Auto)
	allManual := abstract(t, []int{4, 2}, []string{"x", "y"}, mesh.Manual, mesh.Manual)
	tests := []struct {
		name string
		a    mesh.Abstract
		spec mesh.PartitionSpec
		rank int
		want string
	}{
		{"xy", m42, mesh.P("x", "y"), 2, "{devices=[4,2]<=[8]}"},
		{"yx", m42, mesh.P("y", "x"), 2, "{devices=[2,4]<=[4,2]T(1,0)}"},
		{"x_", m42, mesh.P("x"), 2, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"},
		{"y_", m42, mesh.P("y"), 2, "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"},
		{"__", m42, mesh.P(), 2, "{replicated}"},
		{"scalar", m42, mesh.P(), 0, "{replicated}"},
		{"(xy)_", m42, mesh.P([]string{"x", "y"}), 2, "{devices=[8,1]<=[8]}"},
		{"(yx)_", m42, mesh.P([]string{"y", "x"}), 2, "{devices=[8,1]<=[4,2]T(1,0)}"},
		{"_x", m42, mesh.P(nil, "x"), 2, "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"},
		{"unconstrained", m42, mesh.P(mesh.Unconstrained, "y"), 2, "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"},
		{"2 on 2", m2, mesh.P("x"), 2, "{devices=[2,1]<=[2]}"},
		{"2x2 x", m22, mesh.P("x"), 1, "{devices=[2,2]<=[4] last_tile_dim_replicate}"},
		{"size-1 dropped", m1x8, mesh.P("a", "b"), 2, "{devices=[1,8]<=[8]}"},
		{"size-1 only", m1x8, mesh.P("a"), 1, "{replicated}"},
		{"size-1 unused", m1x8, mesh.P("b"), 1, "{devices=[8]<=[8]}"},
		{"z x", m222, mesh.P("z", "x"), 2, "{devices=[2,2,2]<=[4,2]T(1,0) last_tile_dim_replicate}"},
		{"y", m222, mesh.P(nil, "y"), 2, "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"},
		{"manual x, y used", manual, mesh.P("y"), 1, "{devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}"},
		{"manual x, unused y", manual, mesh.P(), 1, "{devices=[1,4,2]<=[8] last_tile_dims={manual, replicated}}"},
		{"all manual", allManual, mesh.P(), 2, "{manual}"},
		// Expected values below are from JAX 0.8.1 (NamedSharding._to_xla_hlo_sharding).
		{"manual y, unused x", abstract(t, []int{4, 2}, []string{"x", "y"}, mesh.Auto, mesh.Manual), mesh.P(), 1,
			"{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dims={manual, replicated}}"},
		{"manual y, x used", abstract(t, []int{4, 2}, []string{"x", "y"}, mesh.Auto, mesh.Manual), mesh.P("x"), 1,
			"{devices=[4,2]<=[8] last_tile_dims={manual}}"},
		{"manual x z, y used", abstract(t, []int{2, 2, 2}, []string{"x", "y", "z"}, mesh.Manual, mesh.Auto, mesh.Manual), mesh.P("y"), 1,
			"{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dims={manual}}"},
		{"manual y, unused x z", abstract(t, []int{2, 2, 2}, []string{"x", "y", "z"}, mesh.Auto, mesh.Manual, mesh.Auto), mesh.P(), 1,
			"{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}"},
		{"size-1 manual, y used", abstract(t, []int{1, 8}, []string{"x", "y"}, mesh.Manual, mesh.Auto), mesh.P("y"), 1, "{devices=[8]<=[8]}"},
		{"size-1 manual, unused", abstract(t, []int{1, 8}, []string{"x", "y"}, mesh.Manual, mesh.Auto), mesh.P(), 1, "{replicated}"},
		// On one device every sharding is {replicated} from JAX 0.12 (0.8.1: {manual}, {devices=[1]<=[1]}, ...).
		{"size-1 manual alone", abstract(t, []int{1}, []string{"x"}, mesh.Manual), mesh.P(), 1, "{replicated}"},
		{"size-1 manual used", abstract(t, []int{1}, []string{"x"}, mesh.Manual), mesh.P("x"), 1, "{replicated}"},
		{"size-1 used", abstract(t, []int{1}, []string{"a"}), mesh.P(nil, "a"), 2, "{replicated}"},
		{"size-1 both used", abstract(t, []int{1, 1}, []string{"a", "b"}), mesh.P([]string{"b", "a"}), 1, "{replicated}"},
		{"size-1 unused", abstract(t, []int{1, 1}, []string{"a", "b"}), mesh.P("a"), 1, "{replicated}"},
		{"size-1 replicated subgroup dropped", abstract(t, []int{8, 1}, []string{"a", "b"}), mesh.P("a"), 1, "{devices=[8]<=[8]}"},
		{"explicit axes", abstract(t, []int{2, 4}, []string{"x", "y"}, mesh.Explicit, mesh.Explicit), mesh.P("y"), 2,
			"{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GSPMD(named(t, tt.a, tt.spec), tt.rank)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestGSPMDTensorSharding(t *testing.T) {
	m42 := NewMesh([]MeshAxis{{"x", 4}, {"y", 2}}, nil)
	perm := NewMesh([]MeshAxis{{"x", 2}, {"y", 4}}, []int{0, 2, 4, 6, 1, 3, 5, 7})
	odd := NewMesh([]MeshAxis{{"x", 4}, {"y", 2}}, []int{0, 1, 3, 2, 6, 7, 5, 4})
	tests := []struct {
		name string
		s    TensorSharding
		m    Mesh
		want string
	}{
		{"xy", NewTensorSharding("mesh", Closed(Axis("x")), Closed(Axis("y"))), m42, "{devices=[4,2]<=[8]}"},
		{"yx", NewTensorSharding("mesh", Closed(Axis("y")), Closed(Axis("x"))), m42, "{devices=[2,4]<=[4,2]T(1,0)}"},
		{"x_", NewTensorSharding("mesh", Closed(Axis("x")), Closed()), m42, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"},
		{"y_ open", NewTensorSharding("mesh", Open(Axis("y")), Open()), m42, "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"},
		{"__", NewTensorSharding("mesh", Closed(), Closed()), m42, "{replicated}"},
		{"replicated list", NewTensorSharding("mesh", Closed(Axis("x")), Closed()).WithReplicated(Axis("y")), m42,
			"{devices=[4,1,2]<=[8] last_tile_dim_replicate}"},
		{"maximal", NewTensorSharding("maximal_mesh_3"), MaximalMesh(3), "{maximal device=3}"},
		{"empty mesh", NewTensorSharding("empty_mesh", Closed()), EmptyMesh(), "{replicated}"},
		{"sub-axis major", NewTensorSharding("mesh", Closed(SubAxis("x", 1, 2)), Closed()), m42,
			"{devices=[2,1,4]<=[8] last_tile_dim_replicate}"},
		{"sub-axis minor", NewTensorSharding("mesh", Closed(SubAxis("x", 2, 2)), Closed()), m42,
			"{devices=[2,1,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"},
		{"sub-axes split", NewTensorSharding("mesh", Closed(SubAxis("x", 2, 2)), Closed(SubAxis("x", 1, 2))), m42,
			"{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"},
		{"device ids listed", NewTensorSharding("mesh", Closed(Axis("x")), Closed(Axis("y"))), perm,
			"{devices=[2,4]0,2,4,6,1,3,5,7}"},
		{"device ids listed even as iota", NewTensorSharding("mesh", Closed(Axis("y")), Closed(Axis("x"))), perm,
			"{devices=[4,2]0,1,2,3,4,5,6,7}"},
		{"device ids explicit", NewTensorSharding("mesh", Closed(Axis("x")), Closed(Axis("y"))), odd,
			"{devices=[4,2]0,1,3,2,6,7,5,4}"},
		{"device ids explicit replicate", NewTensorSharding("mesh", Closed(Axis("y")), Closed()), odd,
			"{devices=[2,1,4]0,3,5,6,1,2,4,7 last_tile_dim_replicate}"},
		{"inline", NewInlineTensorSharding(m42, Closed(Axis("y")), Closed(Axis("x"))), EmptyMesh(),
			"{devices=[2,4]<=[4,2]T(1,0)}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.s.GSPMD(tt.m)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := NewTensorSharding("mesh", Closed()).WithUnreduced(ReduceSum, Axis("x")).GSPMD(m42)
	assert.True(t, errors.Is(err, ErrUnsupported), "%v", err)
	_, err = NewTensorSharding("mesh", Closed(Axis("z"))).GSPMD(m42)
	assert.ErrorIs(t, err, ErrUnknownAxis)
}
