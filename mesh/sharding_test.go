package mesh

import (
	"errors"
	"slices"
	"testing"
)

func TestNamedShardingErrors(t *testing.T) {
	m := mustMesh(t, nil, []int{4, 2}, "x", "y")
	exp, _ := m.WithAxisTypes(Explicit, Explicit)
	tests := []struct {
		name string
		mesh Mesh
		spec PartitionSpec
		err  string
		is   error
	}{
		// jax_semantics.md §3 check_pspec step 1 (DuplicateSpecError).
		{name: "dup across dims", mesh: m, spec: P("x", "x"),
			err: "mesh: a single NamedSharding spec specification can map every mesh axis to at most one positional dimension, but P('x', 'x') has duplicate entries for `x`", is: ErrDuplicateAxis},
		{name: "dup in tuple", mesh: m, spec: P(Axes("x", "x")),
			err: "but P(('x', 'x'),) has duplicate entries for `x`", is: ErrDuplicateAxis},
		{name: "dup sorted", mesh: m, spec: P("y", "x", Axes("x", "y")),
			err: "has duplicate entries for `x`, `y`", is: ErrDuplicateAxis},
		// §3 step 2, checked after duplicates.
		{name: "unknown", mesh: m, spec: P("x", "w"),
			err: "mesh: resource axis w of P('x', 'w') (dim 1) is not found in mesh: ('x', 'y')", is: ErrUnknownAxis},
		{name: "dup before unknown", mesh: m, spec: P("w", "w"), err: "duplicate entries for `w`", is: ErrDuplicateAxis},
		// §3 step 3.
		{name: "unconstrained explicit", mesh: exp, spec: P(Unconstrained),
			err: "mesh: unconstrained dimension not allowed: P(UNCONSTRAINED,) cannot contain UNCONSTRAINED when no mesh axis types are Auto", is: ErrUnconstrained},
		{name: "bad spec", mesh: m, spec: P(42), err: "unsupported type int", is: ErrInvalidSpec},
		{name: "empty mesh", mesh: Mesh{}, spec: P(), err: "NamedSharding needs a non-empty mesh", is: ErrInvalidMesh},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewNamedSharding(tc.mesh, tc.spec)
			wantErr(t, err, tc.err)
			if !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
	_, err := NewNamedSharding(m, P("x", "z"))
	var ue *UnknownAxisError
	if !errors.As(err, &ue) || ue.Axis != "z" || ue.Dim != 1 || !slices.Equal(ue.MeshAxes, []string{"x", "y"}) {
		t.Errorf("errors.As UnknownAxisError: %#v", ue)
	}
	_, err = NewNamedSharding(m, P("y", "y"))
	var de *DuplicateAxisError
	if !errors.As(err, &de) || !slices.Equal(de.Axes, []string{"y"}) {
		t.Errorf("errors.As DuplicateAxisError: %#v", de)
	}
}

func TestCheckShape(t *testing.T) {
	m := mustMesh(t, nil, []int{4, 2}, "x", "y")
	tests := []struct {
		name  string
		spec  PartitionSpec
		shape []int
		err   string
		is    error
	}{
		{name: "ok", spec: P("x", "y"), shape: []int{8, 2}},
		{name: "trailing replicated", spec: P("x"), shape: []int{4, 3, 5}},
		// jax_semantics.md §3: "is only valid for values of rank at least".
		{name: "rank", spec: P("x", "y"), shape: []int{8},
			err: "mesh: sharding NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'), memory_kind=device) is only valid for values of rank at least 2, but was applied to a value of rank 1", is: ErrRank},
		// §3: P(None, None) on rank 1 fails too.
		{name: "rank none none", spec: P(nil, nil), shape: []int{8}, err: "rank at least 2", is: ErrRank},
		// §3: rank 0 adds the scalar hint.
		{name: "scalar", spec: P("x"), shape: []int{},
			err: "rank at least 1, but was applied to a value of rank 0 (for scalars the PartitionSpec should be P())", is: ErrRank},
		{name: "scalar ok", spec: P(), shape: []int{}},
		// §4 divisibility (IndivisibleError wording).
		{name: "indivisible", spec: P("x"), shape: []int{3, 2},
			err: "mesh: NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x',), memory_kind=device) implies that array axis 0 is partitioned 4 times, but the dimension size is 3 (full shape: (3, 2), per-dimension tiling factors: (4, 1) should evenly divide the shape)", is: ErrIndivisible},
		{name: "indivisible tuple", spec: P(nil, Axes("y", "x")), shape: []int{2, 4},
			err: "implies that array axis 1 is partitioned 8 times, but the dimension size is 4 (full shape: (2, 4), per-dimension tiling factors: (1, 8) should evenly divide the shape)", is: ErrIndivisible},
		{name: "zero dim ok", spec: P("x"), shape: []int{0, 2}},
		{name: "negative", spec: P(), shape: []int{2, -1}, err: "mesh: invalid shape: dimension 1 of shape (2, -1) is negative", is: ErrShape},
		// Unconstrained is None in shard geometry (JAX 0.8.1 oracle, sharding/m8_u_8).
		{name: "unconstrained", spec: P(Unconstrained), shape: []int{8}},
		{name: "unconstrained rank", spec: P(Unconstrained, "y"), shape: []int{8}, err: "rank at least 2", is: ErrRank},
		{name: "unconstrained indivisible", spec: P(Unconstrained, "y"), shape: []int{8, 3}, err: "array axis 1 is partitioned 2 times", is: ErrIndivisible},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := MustNamedSharding(m, tc.spec)
			err := s.CheckShape(tc.shape)
			if wantErr(t, err, tc.err) && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
	s := MustNamedSharding(m, P("x"))
	var ie *IndivisibleError
	if err := s.CheckShape([]int{6}); !errors.As(err, &ie) || ie.Dim != 0 || ie.Parts != 4 || ie.Size != 6 {
		t.Errorf("errors.As IndivisibleError: %#v", ie)
	}
	var re *RankError
	if err := s.CheckShape(nil); !errors.As(err, &re) || re.Rank != 0 || re.SpecLen != 1 {
		t.Errorf("errors.As RankError: %#v", re)
	}
}

type geomCase struct {
	name    string
	ids     []int // device ids in mesh order; nil = iota
	sizes   []int
	names   []string
	spec    PartitionSpec
	shape   []int
	indices []string // per mesh position
	shard   []int
	rids    []int
	full    bool
	nshards int
}

var geomCases = []geomCase{
	// jax tests/array_test.py test_array_2d_shard: 4x2 mesh ('x','y'), shape (8, 2).
	{name: "array_2d x_y", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("x", "y"), shape: []int{8, 2},
		indices: []string{"[0:2, 0:1]", "[0:2, 1:2]", "[2:4, 0:1]", "[2:4, 1:2]", "[4:6, 0:1]", "[4:6, 1:2]", "[6:8, 0:1]", "[6:8, 1:2]"},
		shard:   []int{2, 1}, rids: []int{0, 0, 0, 0, 0, 0, 0, 0}, nshards: 8},
	{name: "array_2d x", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("x"), shape: []int{8, 2},
		indices: []string{"[0:2, 0:2]", "[0:2, 0:2]", "[2:4, 0:2]", "[2:4, 0:2]", "[4:6, 0:2]", "[4:6, 0:2]", "[6:8, 0:2]", "[6:8, 0:2]"},
		shard:   []int{2, 2}, rids: []int{0, 1, 0, 1, 0, 1, 0, 1}, nshards: 4},
	{name: "array_2d y", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("y"), shape: []int{8, 2},
		indices: []string{"[0:4, 0:2]", "[4:8, 0:2]", "[0:4, 0:2]", "[4:8, 0:2]", "[0:4, 0:2]", "[4:8, 0:2]", "[0:4, 0:2]", "[4:8, 0:2]"},
		shard:   []int{4, 2}, rids: []int{0, 0, 1, 1, 2, 2, 3, 3}, nshards: 2},
	{name: "array_2d none_y", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(nil, "y"), shape: []int{8, 2},
		indices: []string{"[0:8, 0:1]", "[0:8, 1:2]", "[0:8, 0:1]", "[0:8, 1:2]", "[0:8, 0:1]", "[0:8, 1:2]", "[0:8, 0:1]", "[0:8, 1:2]"},
		shard:   []int{8, 1}, rids: []int{0, 0, 1, 1, 2, 2, 3, 3}, nshards: 2},
	{name: "array_2d xy", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(Axes("x", "y")), shape: []int{8, 2},
		indices: []string{"[0:1, 0:2]", "[1:2, 0:2]", "[2:3, 0:2]", "[3:4, 0:2]", "[4:5, 0:2]", "[5:6, 0:2]", "[6:7, 0:2]", "[7:8, 0:2]"},
		shard:   []int{1, 2}, rids: []int{0, 0, 0, 0, 0, 0, 0, 0}, nshards: 8},
	{name: "array_2d replicated", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(), shape: []int{8, 2},
		indices: []string{"[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]"},
		shard:   []int{8, 2}, rids: []int{0, 1, 2, 3, 4, 5, 6, 7}, full: true, nshards: 1},
	// Tuple in the other order: ('y', 'x') makes y major (§4 closed form).
	{name: "tuple yx", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(Axes("y", "x")), shape: []int{8, 2},
		indices: []string{"[0:1, 0:2]", "[4:5, 0:2]", "[1:2, 0:2]", "[5:6, 0:2]", "[2:3, 0:2]", "[6:7, 0:2]", "[3:4, 0:2]", "[7:8, 0:2]"},
		shard:   []int{1, 2}, rids: []int{0, 0, 0, 0, 0, 0, 0, 0}, nshards: 8},
	// Transposed mapping: {devices=[2,4]<=[4,2]T(1,0)} in §4.
	{name: "y x transposed", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("y", "x"), shape: []int{4, 8},
		indices: []string{"[0:2, 0:2]", "[2:4, 0:2]", "[0:2, 2:4]", "[2:4, 2:4]", "[0:2, 4:6]", "[2:4, 4:6]", "[0:2, 6:8]", "[2:4, 6:8]"},
		shard:   []int{2, 2}, rids: []int{0, 0, 0, 0, 0, 0, 0, 0}, nshards: 8},
	// GDA docstring (seed jax_global_device_array.py): local_shards[0].index == (slice(0, 2), slice(0, 1)).
	{name: "gda x_y", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("x", "y"), shape: []int{8, 2},
		indices: []string{"[0:2, 0:1]", "[0:2, 1:2]", "[2:4, 0:1]", "[2:4, 1:2]", "[4:6, 0:1]", "[4:6, 1:2]", "[6:8, 0:1]", "[6:8, 1:2]"},
		shard:   []int{2, 1}, rids: make([]int, 8), nshards: 8},
	// Size-1 axes are dropped (§4 step 1): 'a' contributes no split.
	{name: "size-1 axis", sizes: []int{1, 4}, names: []string{"a", "b"}, spec: P("a", "b"), shape: []int{4, 8},
		indices: []string{"[0:4, 0:2]", "[0:4, 2:4]", "[0:4, 4:6]", "[0:4, 6:8]"},
		shard:   []int{4, 2}, rids: []int{0, 0, 0, 0}, nshards: 4},
	{name: "only size-1 axes", sizes: []int{1, 1}, names: []string{"a", "b"}, spec: P("a", "b"), shape: []int{3, 5},
		indices: []string{"[0:3, 0:5]"}, shard: []int{3, 5}, rids: []int{0}, full: true, nshards: 1},
	// Permuted device order: geometry is by mesh position, not id.
	{name: "permuted devices", ids: []int{0, 2, 4, 6, 1, 3, 5, 7}, sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(nil, "y"), shape: []int{8, 8},
		indices: []string{"[0:8, 0:4]", "[0:8, 4:8]", "[0:8, 0:4]", "[0:8, 4:8]", "[0:8, 0:4]", "[0:8, 4:8]", "[0:8, 0:4]", "[0:8, 4:8]"},
		shard:   []int{8, 4}, rids: []int{0, 0, 1, 1, 2, 2, 3, 3}, nshards: 2},
	// 3-D mesh, partial replication: x splits dim 0; y and z replicate.
	{name: "3d x", sizes: []int{2, 2, 2}, names: []string{"x", "y", "z"}, spec: P("x"), shape: []int{4},
		indices: []string{"[0:2]", "[0:2]", "[0:2]", "[0:2]", "[2:4]", "[2:4]", "[2:4]", "[2:4]"},
		shard:   []int{2}, rids: []int{0, 1, 2, 3, 0, 1, 2, 3}, nshards: 2},
	// 3-D mesh, middle axis: {devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}-like layout.
	{name: "3d y", sizes: []int{2, 2, 2}, names: []string{"x", "y", "z"}, spec: P(nil, "y"), shape: []int{2, 4},
		indices: []string{"[0:2, 0:2]", "[0:2, 0:2]", "[0:2, 2:4]", "[0:2, 2:4]", "[0:2, 0:2]", "[0:2, 0:2]", "[0:2, 2:4]", "[0:2, 2:4]"},
		shard:   []int{2, 2}, rids: []int{0, 1, 0, 1, 2, 3, 2, 3}, nshards: 2},
	// 3-D mesh, tuple (z, x) on dim 1: z major.
	{name: "3d zx tuple", sizes: []int{2, 2, 2}, names: []string{"x", "y", "z"}, spec: P(nil, Axes("z", "x")), shape: []int{1, 8},
		indices: []string{"[0:1, 0:2]", "[0:1, 4:6]", "[0:1, 0:2]", "[0:1, 4:6]", "[0:1, 2:4]", "[0:1, 6:8]", "[0:1, 2:4]", "[0:1, 6:8]"},
		shard:   []int{1, 2}, rids: []int{0, 0, 1, 1, 0, 0, 1, 1}, nshards: 4},
	{name: "3d all", sizes: []int{2, 2, 2}, names: []string{"x", "y", "z"}, spec: P("z", "y", "x"), shape: []int{2, 2, 2},
		indices: []string{"[0:1, 0:1, 0:1]", "[1:2, 0:1, 0:1]", "[0:1, 1:2, 0:1]", "[1:2, 1:2, 0:1]", "[0:1, 0:1, 1:2]", "[1:2, 0:1, 1:2]", "[0:1, 1:2, 1:2]", "[1:2, 1:2, 1:2]"},
		shard:   []int{1, 1, 1}, rids: make([]int, 8), nshards: 8},
	// 1-D mesh of 8, the common CPU case.
	{name: "1d", sizes: []int{8}, names: []string{"i"}, spec: P("i"), shape: []int{16},
		indices: []string{"[0:2]", "[2:4]", "[4:6]", "[6:8]", "[8:10]", "[10:12]", "[12:14]", "[14:16]"},
		shard:   []int{2}, rids: make([]int, 8), nshards: 8},
	// Zero-size dim: every device holds the same empty block, so replica ids
	// count all earlier devices (JAX 0.8.1 oracle, sharding/zero_size_dim).
	{name: "zero-size dim", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("x"), shape: []int{0, 3},
		indices: []string{"[0:0, 0:3]", "[0:0, 0:3]", "[0:0, 0:3]", "[0:0, 0:3]", "[0:0, 0:3]", "[0:0, 0:3]", "[0:0, 0:3]", "[0:0, 0:3]"},
		shard:   []int{0, 3}, rids: []int{0, 1, 2, 3, 4, 5, 6, 7}, nshards: 4},
	// Unconstrained is None in shard geometry, as in JAX 0.8.1's
	// devices_indices_map (oracle cases sharding/m42_u_y_8x2, m42_x_u_8x2).
	{name: "unconstrained y", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(Unconstrained, "y"), shape: []int{8, 2},
		indices: []string{"[0:8, 0:1]", "[0:8, 1:2]", "[0:8, 0:1]", "[0:8, 1:2]", "[0:8, 0:1]", "[0:8, 1:2]", "[0:8, 0:1]", "[0:8, 1:2]"},
		shard:   []int{8, 1}, rids: []int{0, 0, 1, 1, 2, 2, 3, 3}, nshards: 2},
	{name: "x unconstrained", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P("x", Unconstrained), shape: []int{8, 2},
		indices: []string{"[0:2, 0:2]", "[0:2, 0:2]", "[2:4, 0:2]", "[2:4, 0:2]", "[4:6, 0:2]", "[4:6, 0:2]", "[6:8, 0:2]", "[6:8, 0:2]"},
		shard:   []int{2, 2}, rids: []int{0, 1, 0, 1, 0, 1, 0, 1}, nshards: 4},
	{name: "all unconstrained", sizes: []int{8}, names: []string{"x"}, spec: P(Unconstrained, Unconstrained), shape: []int{8, 2},
		indices: []string{"[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]", "[0:8, 0:2]"},
		shard:   []int{8, 2}, rids: []int{0, 1, 2, 3, 4, 5, 6, 7}, full: true, nshards: 1},
}

func TestGeometry(t *testing.T) {
	for _, tc := range geomCases {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMesh(t, tc.ids, tc.sizes, tc.names...)
			s, err := NewNamedSharding(m, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := s.DevicesIndicesMap(tc.shape)
			if err != nil {
				t.Fatal(err)
			}
			if got := indexStrings(idx); !slices.Equal(got, tc.indices) {
				t.Errorf("DevicesIndicesMap =\n %v\nwant\n %v", got, tc.indices)
			}
			if tc.shape[0] != 0 {
				if oracle := jaxIndices(tc.names, tc.sizes, specAxes(tc.spec), tc.shape); !slices.Equal(oracle, tc.indices) {
					t.Errorf("oracle disagrees with table: %v", oracle)
				}
			}
			shard, err := s.ShardShape(tc.shape)
			if err != nil || !slices.Equal(shard, tc.shard) {
				t.Errorf("ShardShape = %v, %v; want %v", shard, err, tc.shard)
			}
			rids, err := s.ReplicaIDsFor(tc.shape)
			if err != nil || !slices.Equal(rids, tc.rids) {
				t.Errorf("ReplicaIDs = %v, %v; want %v", rids, err, tc.rids)
			}
			// Replica id is the count of earlier devices holding the same index.
			for p := range idx {
				n := 0
				for q := range p {
					if idx[q].Equal(idx[p]) {
						n++
					}
				}
				if n != rids[p] {
					t.Errorf("position %d: replica id %d, but %d earlier devices hold %v", p, rids[p], n, idx[p])
				}
			}
			if s.IsFullyReplicated() != tc.full {
				t.Errorf("IsFullyReplicated = %v", s.IsFullyReplicated())
			}
			if s.NumShards() != tc.nshards {
				t.Errorf("NumShards = %d, want %d", s.NumShards(), tc.nshards)
			}
			// The abstract sharding has the same positional geometry.
			as, err := NewAbstractSharding(m.Abstract(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			pidx, err := as.PositionIndices(tc.shape)
			if err != nil || !slices.Equal(indexStrings(pidx), tc.indices) {
				t.Errorf("abstract PositionIndices = %v, %v", pidx, err)
			}
			if _, err := as.DevicesIndicesMap(tc.shape); !errors.Is(err, ErrNoDevices) {
				t.Errorf("abstract DevicesIndicesMap err = %v", err)
			}
		})
	}
}

// TestGeometryOracle cross-checks PositionIndices against the JAX
// tile-assignment algorithm for every spec over a 2x1x3x2 mesh, and expects
// ErrIndivisible exactly where a dimension's size is not a multiple of the
// product of its axes' sizes.
func TestGeometryOracle(t *testing.T) {
	sizes := []int{2, 1, 3, 2}
	names := []string{"a", "b", "c", "d"}
	abs := MustAbstract(sizes, names)
	shape := []int{12, 6, 4}
	indivisible := 0
	// Assign each axis to dim 0, 1, 2 or unused (3); try both orders within a dim.
	for code := range 256 {
		var dims [3][]string
		for a := range 4 {
			d := (code >> (2 * a)) & 3
			if d < 3 {
				dims[d] = append(dims[d], names[a])
			}
		}
		for _, rev := range []bool{false, true} {
			if rev {
				for d := range dims {
					slices.Reverse(dims[d])
				}
			}
			spec := P(dims[0], dims[1], dims[2])
			s, err := NewAbstractSharding(abs, spec)
			if err != nil {
				t.Fatal(err)
			}
			divisible := true
			for d, parts := range wantTiling(names, sizes, dims[:], len(shape)) {
				divisible = divisible && shape[d]%parts == 0
			}
			idx, err := s.PositionIndices(shape)
			if !divisible {
				indivisible++
				if !errors.Is(err, ErrIndivisible) {
					t.Fatalf("%v on %v: err = %v, want ErrIndivisible", spec, shape, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v on %v: %v", spec, shape, err)
			}
			want := jaxIndices(names, sizes, dims[:], shape)
			if got := indexStrings(idx); !slices.Equal(got, want) {
				t.Fatalf("%v: got %v, want %v", spec, got, want)
			}
		}
	}
	if indivisible == 0 || indivisible == 512 {
		t.Fatalf("%d of 512 specs indivisible: the shape no longer tests both outcomes", indivisible)
	}
}

func TestShardingAccessors(t *testing.T) {
	m := mustMesh(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, []int{4, 2}, "x", "y")
	s := MustNamedSharding(m, P(nil, "y"))
	if got := s.String(); got != "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P(None, 'y'), memory_kind=device)" {
		t.Errorf("String = %s", got)
	}
	mm, err := s.Mesh()
	if err != nil || !mm.Equal(m) {
		t.Errorf("Mesh() = %v, %v", mm, err)
	}
	// §8: chunk (:, 0:4) of an (8,8) array on a 4x2 mesh P(None,'y') is on CPU 0,2,4,6
	// for iota devices; here devices are permuted so column 0 is 0,4,1,5.
	holders, err := s.DevicesHolding([]int{8, 8}, Index{{0, 8}, {0, 4}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, d := range holders {
		ids = append(ids, d.ID())
	}
	if !slices.Equal(ids, []int{0, 4, 1, 5}) {
		t.Errorf("DevicesHolding = %v", ids)
	}
	if _, err := s.DevicesHolding([]int{8, 8}, Index{{0, 8}}); !errors.Is(err, ErrShape) {
		t.Errorf("DevicesHolding bad rank err = %v", err)
	}
	shards, err := s.Shards([]int{8, 8})
	if err != nil || len(shards) != 8 || shards[3].Device.ID() != 6 || shards[3].ReplicaID != 1 || shards[3].Index.String() != "[0:8, 4:8]" {
		t.Errorf("Shards = %v, %v", shards, err)
	}
	abs := MustAbstract([]int{4, 2}, []string{"x", "y"})
	as, _ := NewAbstractSharding(abs, P("x"))
	if _, err := as.Mesh(); !errors.Is(err, ErrNoDevices) {
		t.Errorf("abstract Mesh() err = %v", err)
	}
	if got := as.String(); got != "NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x',))" {
		t.Errorf("abstract String = %s", got)
	}
	if rids, err := as.ReplicaIDs(); err != nil || !slices.Equal(rids, []int{0, 1, 0, 1, 0, 1, 0, 1}) {
		t.Errorf("abstract ReplicaIDs = %v, %v", rids, err)
	}
	// Equality.
	s2 := MustNamedSharding(m, P(nil, "y"))
	if !s.Equal(s2) || s.Key() != s2.Key() {
		t.Errorf("equal shardings differ")
	}
	iotaMesh := mustMesh(t, nil, []int{4, 2}, "x", "y")
	if s.Equal(MustNamedSharding(iotaMesh, P(nil, "y"))) || s.Equal(MustNamedSharding(m, P("x"))) {
		t.Errorf("different shardings equal")
	}
	as2, _ := NewAbstractSharding(m.Abstract(), P("x"))
	if !as.Equal(as2) || as.Equal(MustNamedSharding(iotaMesh, P("x"))) {
		t.Errorf("abstract equality wrong")
	}
}

func TestZeroSharding(t *testing.T) {
	var z NamedSharding
	if _, err := z.Mesh(); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("Mesh err = %v", err)
	}
	if err := z.CheckShape([]int{2}); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("CheckShape err = %v", err)
	}
	if _, err := z.ShardShape([]int{2}); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("ShardShape err = %v", err)
	}
	if _, err := z.DevicesIndicesMap([]int{2}); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("DevicesIndicesMap err = %v", err)
	}
	if _, err := z.ReplicaIDs(); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("ReplicaIDs err = %v", err)
	}
	if _, err := z.Shards([]int{2}); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("Shards err = %v", err)
	}
	if z.IsFullyReplicated() || z.NumShards() != 0 {
		t.Errorf("zero sharding claims replication")
	}
	_ = z.String()
}

func TestEquivalentTo(t *testing.T) {
	m := mustMesh(t, nil, []int{4, 2}, "x", "y")
	m1 := mustMesh(t, nil, []int{4, 1, 2}, "x", "one", "y")
	perm := mustMesh(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, []int{4, 2}, "x", "y")
	other := mustMesh(t, nil, []int{8}, "i")
	tests := []struct {
		name string
		a, b NamedSharding
		rank int
		want bool
	}{
		// JAX is_equivalent_to: trailing None does not matter.
		{"trailing none", MustNamedSharding(m, P("x")), MustNamedSharding(m, P("x", nil)), 2, true},
		{"replicated", MustNamedSharding(m, P()), MustNamedSharding(m, P(nil, nil)), 2, true},
		{"size-1 axis", MustNamedSharding(m1, P(Axes("x", "one"), "y")), MustNamedSharding(m, P("x", "y")), 2, true},
		{"flattened mesh", MustNamedSharding(m, P(Axes("x", "y"))), MustNamedSharding(other, P("i")), 1, true},
		{"different dims", MustNamedSharding(m, P("x")), MustNamedSharding(m, P(nil, "x")), 2, false},
		{"tuple order", MustNamedSharding(m, P(Axes("x", "y"))), MustNamedSharding(m, P(Axes("y", "x"))), 1, false},
		{"permuted devices", MustNamedSharding(m, P("x")), MustNamedSharding(perm, P("x")), 1, false},
		{"rank too small", MustNamedSharding(m, P("x", "y")), MustNamedSharding(m, P("x", "y")), 1, false},
	}
	for _, tc := range tests {
		if got := tc.a.EquivalentTo(tc.b, tc.rank); got != tc.want {
			t.Errorf("%s: EquivalentTo = %v, want %v", tc.name, got, tc.want)
		}
	}
}
