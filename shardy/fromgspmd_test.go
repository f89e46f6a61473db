package shardy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/mesh"
)

// readBack is spec as FromGSPMD gives it back: axes of size 1 dropped, one entry per
// dimension, P() when no dimension is split.
func readBack(a mesh.Abstract, spec mesh.PartitionSpec, rank int) mesh.PartitionSpec {
	dims := make([]mesh.Dim, rank)
	split := false
	for d := range rank {
		var axes []string
		if d < spec.Len() {
			for _, n := range spec.Dim(d).Axes() {
				if size, _ := a.AxisSize(n); size > 1 {
					axes = append(axes, n)
				}
			}
		}
		dims[d] = mesh.Axes(axes...)
		split = split || len(axes) > 0
	}
	if !split {
		return mesh.P()
	}
	return mesh.SpecOf(dims...)
}

// randomCase returns a random abstract mesh (1 to 4 axes of sizes 1 to 4, some Manual or
// Explicit), a random spec over it (each axis used at most once, in any order) and a rank.
func randomCase(r *rand.Rand) (mesh.Abstract, mesh.PartitionSpec, int, error) {
	n := 1 + r.IntN(4)
	sizes, names := make([]int, n), make([]string, n)
	types := make([]mesh.AxisType, n)
	for i := range n {
		sizes[i] = 1 + r.IntN(4)
		names[i] = string(rune('a' + i))
		types[i] = mesh.Auto
		switch r.IntN(6) {
		case 0:
			types[i] = mesh.Manual
		case 1:
			types[i] = mesh.Explicit
		}
	}
	a, err := mesh.NewAbstract(sizes, names, types...)
	if err != nil {
		return mesh.Abstract{}, mesh.PartitionSpec{}, 0, err
	}
	rank := r.IntN(4)
	dims := make([][]string, rank)
	if rank > 0 {
		for _, i := range r.Perm(n) {
			if d := r.IntN(rank + 1); d < rank {
				dims[d] = append(dims[d], names[i])
			}
		}
	}
	entries := make([]any, r.IntN(rank+1)) // a spec may be shorter than the rank
	for d := range entries {
		switch len(dims[d]) {
		case 0:
			entries[d] = nil
		case 1:
			entries[d] = dims[d][0]
		default:
			entries[d] = dims[d]
		}
	}
	return a, mesh.P(entries...), rank, nil
}

// TestFromGSPMDInvertsGSPMD: for random meshes and specs, GSPMD then FromGSPMD gives the spec
// back (without its size-1 axes), from the iota form and from the written-out one pjrt
// reports, and GSPMD of that spec is the same sharding.
func TestFromGSPMDInvertsGSPMD(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 2))
	for i := range 5000 {
		a, spec, rank, err := randomCase(r)
		require.NoError(t, err)
		name := fmt.Sprintf("%d: %s %s rank %d", i, a, spec, rank)
		s, err := mesh.NewAbstractSharding(a, spec)
		require.NoError(t, err, name)
		h, err := gspmdSharding(s, rank)
		require.NoError(t, err, name)
		want := readBack(a, spec, rank)
		got, err := FromGSPMD(a, h, rank)
		require.NoError(t, err, "%s: %s", name, h)
		require.True(t, want.Equal(got), "%s: %s read back as %s, want %s", name, h, got, want)
		explicit, err := h.Explicit()
		require.NoError(t, err)
		got, err = FromGSPMD(a, explicit, rank)
		require.NoError(t, err, "%s: %s", name, explicit)
		require.True(t, want.Equal(got), "%s: %s read back as %s, want %s", name, explicit, got, want)
		again, err := mesh.NewAbstractSharding(a, got)
		require.NoError(t, err, name)
		text, err := GSPMD(again, rank)
		require.NoError(t, err, name)
		require.Equal(t, h.String(), text, name)
	}
}

func TestFromGSPMD(t *testing.T) {
	m42 := abstract(t, []int{4, 2}, []string{"x", "y"})
	m22 := abstract(t, []int{2, 2}, []string{"x", "y"})
	tiled := func(tiles, devices []int, kinds ...xlaproto.ShardingType) xlaproto.OpSharding {
		h, err := xlaproto.NewTiled(tiles, devices, kinds...)
		require.NoError(t, err)
		return h
	}
	iota := func(tiles, reshape, perm []int, kinds ...xlaproto.ShardingType) xlaproto.OpSharding {
		h, err := xlaproto.NewIotaTiled(tiles, reshape, perm, kinds...)
		require.NoError(t, err)
		return h
	}
	maximal, err := xlaproto.NewMaximal(0)
	require.NoError(t, err)
	tests := []struct {
		name string
		a    mesh.Abstract
		h    xlaproto.OpSharding
		rank int
		want mesh.PartitionSpec
	}{
		{"xy", m42, iota([]int{4, 2}, []int{8}, nil), 2, mesh.P("x", "y")},
		{"yx", m42, iota([]int{2, 4}, []int{4, 2}, []int{1, 0}), 2, mesh.P("y", "x")},
		{"x_ replicated", m42, iota([]int{4, 1, 2}, []int{8}, nil, xlaproto.Replicated), 2, mesh.P("x", nil)},
		{"(yx)", m42, tiled([]int{8}, []int{0, 2, 4, 6, 1, 3, 5, 7}), 1, mesh.P([]string{"y", "x"})},
		{"replicated", m42, xlaproto.NewReplicated(), 2, mesh.P()},
		{"unsplit tiling", m42, iota([]int{1, 1, 8}, []int{8}, nil, xlaproto.Replicated), 2, mesh.P()},
		{"maximal on one device", abstract(t, []int{1}, []string{"x"}), maximal, 1, mesh.P()},
		{"manual", abstract(t, []int{2}, []string{"x"}, mesh.Manual), xlaproto.NewManual(), 1, mesh.P()},
		{"transposed replicas", m22, tiled([]int{2, 2}, []int{0, 2, 1, 3}, xlaproto.Replicated), 1, mesh.P("y")},
		{"replicas in any order", m22, tiled([]int{2, 2}, []int{2, 0, 3, 1}, xlaproto.Replicated), 1, mesh.P("y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromGSPMD(tt.a, tt.h, tt.rank)
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "%s read back as %s, want %s", tt.h, got, tt.want)
		})
	}

	errTests := []struct {
		name string
		a    mesh.Abstract
		h    xlaproto.OpSharding
		rank int
		kind error
		msg  string
	}{
		{"part of an axis", m42, iota([]int{2, 4}, []int{8}, nil), 2, ErrUnsupported,
			"shardy: from GSPMD: unsupported sharding: {devices=[2,4]<=[8]} is not a PartitionSpec over AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)): tile dimension 0 (2 tiles) takes part of axis \"x\" of size 4"},
		{"not a transposition", m42, tiled([]int{8}, []int{0, 1, 2, 3, 5, 4, 6, 7}), 1, ErrUnsupported,
			"its tile assignment is not a transposition of the mesh's axes"},
		{"stride of no axis", m42, tiled([]int{8}, []int{0, 3, 6, 1, 4, 7, 2, 5}), 1, ErrUnsupported, "not a transposition"},
		{"tiles for another mesh", m22, iota([]int{8}, []int{8}, nil), 1, ErrUnsupported, "it has 8 tiles for 4 devices"},
		{"rank", m42, iota([]int{4, 2}, []int{8}, nil), 1, ErrRank, "has 2 tile dimensions, 0 of them subgroups, for a value of rank 1"},
		{"negative rank", m42, xlaproto.NewReplicated(), -1, ErrRank, "negative rank -1"},
		{"tuple", m42, xlaproto.NewTuple(xlaproto.NewReplicated()), 1, ErrUnsupported, "its kind is tuple"},
		{"maximal", m42, maximal, 1, ErrUnsupported, "it places the value on one device of 8"},
		{"manual on auto axes", m42, xlaproto.NewManual(), 1, ErrUnsupported, `axis "x" is not Manual`},
		{"manual subgroup of an auto axis", m42, iota([]int{4, 2}, []int{8}, nil, xlaproto.Manual), 1, ErrUnsupported,
			`axis "y" (Auto) is in a manual subgroup`},
		{"unreduced subgroup", m42, iota([]int{4, 2}, []int{8}, nil, xlaproto.Unreduced), 1, ErrUnsupported, "it has a subgroup of kind unreduced"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromGSPMD(tt.a, tt.h, tt.rank)
			require.ErrorIs(t, err, tt.kind)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}
