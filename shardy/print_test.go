package shardy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrint(t *testing.T) {
	mesh42 := NewMesh([]MeshAxis{{"x", 4}, {"y", 2}}, nil)
	tests := []struct {
		name string
		got  interface{ String() string }
		want string
	}{
		{"mesh", mesh42, `<["x"=4, "y"=2]>`},
		{"mesh iota ids dropped", NewMesh([]MeshAxis{{"x", 2}}, []int{0, 1}), `<["x"=2]>`},
		{"mesh device ids", NewMesh([]MeshAxis{{"x", 2}, {"y", 4}}, []int{0, 2, 4, 6, 1, 3, 5, 7}),
			`<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`},
		{"maximal mesh", MaximalMesh(3), `<[], device_ids=[3]>`},
		{"maximal mesh 0", NewMesh(nil, []int{0}), `<[], device_ids=[0]>`},
		{"empty mesh", EmptyMesh(), `<[]>`},
		{"mesh quoting", NewMesh([]MeshAxis{{"a\"b\\c\n", 1}}, nil), `<["a\22b\\c\0A"=1]>`},
		{"mesh op", NewMeshOp("mesh", mesh42), `sdy.mesh @mesh = <["x"=4, "y"=2]>`},
		{"mesh op quoted name", NewMeshOp("my mesh", mesh42), `sdy.mesh @"my mesh" = <["x"=4, "y"=2]>`},
		{"axis", Axis("x"), `"x"`},
		{"sub-axis", SubAxis("y", 1, 2), `"y":(1)2`},
		{"closed empty", Closed(), `{}`},
		{"open empty", Open(), `{?}`},
		{"closed axes", Closed(AxisRefs("x", "y")...), `{"x", "y"}`},
		{"open axes", Open(Axis("x")), `{"x", ?}`},
		{"priority", Closed(Axis("x")).WithPriority(0), `{"x"}p0`},
		{"open priority", Open().WithPriority(2), `{?}p2`},
		{"sharding", NewTensorSharding("mesh", Closed(Axis("x")), Closed()), `#sdy.sharding<@mesh, [{"x"}, {}]>`},
		{"scalar", NewTensorSharding("mesh"), `#sdy.sharding<@mesh, []>`},
		{"replicated", NewTensorSharding("mesh", Closed(Axis("x")).WithPriority(0), Open()).WithReplicated(Axis("y")),
			`#sdy.sharding<@mesh, [{"x"}p0, {?}], replicated={"y"}>`},
		{"inline unreduced", NewInlineTensorSharding(mesh42, Closed(Axis("x")), Closed()).WithUnreduced(ReduceSum, Axis("y")),
			`#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x"}, {}], unreduced={"y"}>`},
		{"unreduced max", NewTensorSharding("m", Closed()).WithUnreduced(ReduceMax, Axis("x"), Axis("y")),
			`#sdy.sharding<@m, [{}], unreduced=max{"x", "y"}>`},
		{"both lists", NewTensorSharding("m").WithUnreduced(ReduceMin, Axis("y")).WithReplicated(Axis("x")),
			`#sdy.sharding<@m, [], replicated={"x"}, unreduced=min{"y"}>`},
		{"replicated helper", Replicated("mesh", 2), `#sdy.sharding<@mesh, [{}, {}]>`},
		{"per value", NewTensorShardingPerValue(NewTensorSharding("mesh", Closed(Axis("x")), Closed()), Replicated("mesh", 2)),
			`#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]>`},
		{"per value empty", NewTensorShardingPerValue(), `#sdy.sharding_per_value<[]>`},
		{"manual axes", NewManualAxes("x", "y"), `{"x", "y"}`},
		{"manual axes empty", NewManualAxes(), `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got.String())
		})
	}
}

func TestStripped(t *testing.T) {
	s := NewTensorSharding("mesh", Closed(Axis("x")), Closed())
	assert.Equal(t, `<@mesh, [{"x"}, {}]>`, s.Stripped())
	s2 := NewTensorSharding("maximal_mesh_0")
	assert.Equal(t, `<@maximal_mesh_0, []>`, s2.Stripped())
}

func TestSortedBy(t *testing.T) {
	m := NewMesh([]MeshAxis{{"a", 2}, {"b", 4}, {"c", 2}}, nil)
	s := NewTensorSharding("m", Closed()).
		WithReplicated(Axis("c"), SubAxis("b", 2, 2), Axis("a"), SubAxis("b", 1, 2)).
		WithUnreduced(ReduceSum, Axis("c"), Axis("a"))
	got := s.SortedBy(m)
	require.Equal(t, `#sdy.sharding<@m, [{}], replicated={"a", "b":(1)2, "b":(2)2, "c"}, unreduced={"a", "c"}>`, got.String())
	// s itself is unchanged.
	assert.Equal(t, `#sdy.sharding<@m, [{}], replicated={"c", "b":(2)2, "a", "b":(1)2}, unreduced={"c", "a"}>`, s.String())
	assert.Equal(t, `{"a", "c"}`, NewManualAxes("c", "a").SortedBy(m).String())
}
