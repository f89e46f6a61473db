package shardy

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateSharding(t *testing.T) {
	m := MustParseMesh(`<["a"=2, "b"=4, "c"=6]>`)
	meshes := []MeshOp{NewMeshOp("mesh", m), NewMeshOp("maximal_mesh_0", MaximalMesh(0)), NewMeshOp("empty_mesh", EmptyMesh())}
	tests := []struct {
		name    string
		in      string
		rank    int
		wantErr string
		kind    error
	}{
		{"ok", `<@mesh, [{"a"}, {"b", "c"}]>`, 2, "", nil},
		{"ok open priorities", `<@mesh, [{"a", ?}p1, {?}p0]>`, 2, "", nil},
		{"ok replicated", `<@mesh, [{"b"}], replicated={"a", "c"}>`, 1, "", nil},
		{"ok sub-axes", `<@mesh, [{"b":(1)2}, {"b":(2)2}], replicated={"c":(1)2}>`, 2, "", nil},
		{"ok scalar", `<@mesh, []>`, 0, "", nil},
		{"ok maximal", `<@maximal_mesh_0, []>`, 3, "", nil},
		{"maximal with replicated", `<@maximal_mesh_0, [], replicated={"a"}>`, 0,
			`shardy: a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes`, ErrMaximal},
		{"ok empty mesh", `<@empty_mesh, [{}, {?}]>`, 2, "", nil},
		{"ok rank skipped", `<@mesh, [{}]>`, -1, "", nil},
		{"ok inline", `<mesh<["x"=2]>, [{"x"}]>`, 1, "", nil},
		{"unknown mesh", `<@m, [{}]>`, 1, `shardy: unknown mesh: @m`, ErrUnknownMesh},
		{"rank", `<@mesh, [{"a"}, {}]>`, 1, `shardy: sharding doesn't match tensor rank: 2 != 1`, ErrRank},
		{"maximal with dims", `<@maximal_mesh_0, [{}]>`, 1,
			`shardy: a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes`, ErrMaximal},
		{"unknown axis", `<@mesh, [{"a"}, {"z"}]>`, 2, `shardy: dim 1: unknown axis name: "z"`, ErrUnknownAxis},
		{"unknown replicated", `<@mesh, [{}], replicated={"z"}>`, 1, `shardy: replicated: unknown axis name: "z"`, ErrUnknownAxis},
		{"unknown unreduced", `<@mesh, [{}], unreduced={"z"}>`, 1, `shardy: unreduced: unknown axis name: "z"`, ErrUnknownAxis},
		{"dup in dim", `<@mesh, [{"a", "a"}]>`, 1, `shardy: dim 0: duplicate axis ref: "a"`, ErrDuplicateAxisRef},
		{"dup across dims", `<@mesh, [{"a"}, {"b", "a"}]>`, 2, `shardy: dim 1: duplicate axis ref: "a"`, ErrDuplicateAxisRef},
		{"dup replicated", `<@mesh, [{"a"}], replicated={"a"}>`, 1, `shardy: replicated: duplicate axis ref: "a"`, ErrDuplicateAxisRef},
		{"dup unreduced", `<@mesh, [{}], replicated={"b"}, unreduced={"b"}>`, 1, `shardy: unreduced: duplicate axis ref: "b"`, ErrDuplicateAxisRef},
		{"replicated order", `<@mesh, [{}], replicated={"c", "a"}>`, 1, `shardy: replicated axes are not ordered w.r.t. mesh`, ErrUnordered},
		{"unreduced order", `<@mesh, [{}], unreduced={"b", "a"}>`, 1, `shardy: unreduced axes are not ordered w.r.t. mesh`, ErrUnordered},
		{"sub-axis order", `<@mesh, [{}], replicated={"b":(2)2, "b":(1)2}>`, 1, `shardy: replicated axes are not ordered w.r.t. mesh`, ErrUnordered},
		{"negative priority", `<@mesh, [{"a"}]>`, -2, "", nil}, // replaced below
		{"closed empty priority", `<@mesh, [{"a"}, {}p1]>`, 2, `shardy: dim 1 is empty and closed but has a priority`, ErrPriority},
		{"sub and full", `<@mesh, [{"b":(1)2}, {"b"}]>`, 2, `shardy: dim 1: both sub-axis and full-axis are used for axis name: "b"`, ErrSubAxis},
		{"overlap", `<@mesh, [{"c":(1)3}, {"a"}], replicated={"c":(1)2}>`, 2,
			`shardy: replicated: overlapping sub-axes: "c":(1)2, "c":(1)3`, ErrDuplicateAxisRef},
		{"dup sub-axis", `<@mesh, [{"b":(1)2}, {"b":(1)2}]>`, 2, `shardy: dim 1: duplicate axis ref: "b":(1)2`, ErrDuplicateAxisRef},
		{"mergeable", `<@mesh, [{"b":(1)2, "b":(2)2}]>`, 1,
			`shardy: dim 0: two consecutive sub-axes can be merged: "b":(1)2, "b":(2)2`, ErrSubAxis},
		{"sub pre-size", `<@mesh, [{"b":(0)2}]>`, 1, `shardy: dim 0: sub-axis pre-size must be at least 1: "b":(0)2`, ErrSubAxis},
		{"sub size", `<@mesh, [{"b":(1)1}]>`, 1, `shardy: dim 0: sub-axis sizes must be greater than 1: "b":(1)1`, ErrSubAxis},
		{"sub pre-size first", `<@mesh, [{"b":(0)1}]>`, 1, `shardy: dim 0: sub-axis pre-size must be at least 1: "b":(0)1`, ErrSubAxis},
		{"sub divide", `<@mesh, [{"c":(2)2}]>`, 1,
			`shardy: dim 0: sub-axis next pre-size 4 doesn't divide the size of the full axis 6: "c":(2)2`, ErrSubAxis},
		{"sub full size", `<@mesh, [{"b":(1)4}]>`, 1, `shardy: dim 0: sub-axis size is equal to the full axis size: "b":(1)4`, ErrSubAxis},
		{"inline bad mesh", `<mesh<["x"=2, "x"=2]>, [{"x"}]>`, 1,
			`shardy: inline mesh <["x"=2, "x"=2]>: duplicate axis name: "x"`, ErrDuplicateAxisName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustParseTensorSharding(tt.in)
			if tt.name == "negative priority" {
				s = NewTensorSharding("mesh", Closed(Axis("a")).WithPriority(-1))
				tt.rank, tt.wantErr, tt.kind = 1, `shardy: dim 0 has a negative priority`, ErrPriority
			}
			err := s.ValidateIn(meshes, tt.rank)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, tt.kind)
		})
	}
}

func TestValidateMesh(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
		kind    error
	}{
		{`<["x"=4, "y"=2]>`, "", nil},
		{`<["x"=1]>`, "", nil},
		{`<[], device_ids=[3]>`, "", nil},
		{`<[]>`, "", nil},
		{`<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`, "", nil},
		{`<["x"=0]>`, `shardy: mesh <["x"=0]>: axis "x": axis size must be at least 1, got: 0`, ErrAxisSize},
		{`<["x"=2, "x"=2]>`, `shardy: mesh <["x"=2, "x"=2]>: duplicate axis name: "x"`, ErrDuplicateAxisName},
		{`<["x"=2], device_ids=[0, 1]>`, "", nil}, // iota ids are dropped by the parser, as by Shardy's builder
		{`<["x"=2], device_ids=[0]>`,
			`shardy: mesh <["x"=2], device_ids=[0]>: total product of axis sizes must match total number of device ids, got: 2 != 1`, ErrDeviceIDs},
		// Shardy's order: sizes, negative ids, duplicate names, then the ids' count and values.
		{`<["x"=2, "x"=2, "y"=0]>`, `shardy: mesh <["x"=2, "x"=2, "y"=0]>: axis "y": axis size must be at least 1, got: 0`, ErrAxisSize},
		{`<["x"=2, "x"=2], device_ids=[-1, 0, 1, 2]>`,
			`shardy: mesh <["x"=2, "x"=2], device_ids=[-1, 0, 1, 2]>: device id must be non-negative, got: -1`, ErrDeviceIDs},
		{`<["x"=2, "x"=2], device_ids=[1, 0]>`, `shardy: mesh <["x"=2, "x"=2], device_ids=[1, 0]>: duplicate axis name: "x"`, ErrDuplicateAxisName},
		{`<["x"=2], device_ids=[1, 2]>`, `shardy: mesh <["x"=2], device_ids=[1, 2]>: sorted device ids must be iota(product(axes)), got: 1, 2`, ErrDeviceIDs},
		{`<["x"=2], device_ids=[1, 1]>`, `shardy: mesh <["x"=2], device_ids=[1, 1]>: sorted device ids must be iota(product(axes)), got: 1, 1`, ErrDeviceIDs},
		{`<["x"=2], device_ids=[0, 2, 1]>`,
			`shardy: mesh <["x"=2], device_ids=[0, 2, 1]>: total product of axis sizes must match total number of device ids, got: 2 != 3`, ErrDeviceIDs},
		{`<[], device_ids=[0, 1]>`, `shardy: mesh <[], device_ids=[0, 1]>: axes is empty and device_ids has more than one element`, ErrDeviceIDs},
		{`<[], device_ids=[-1]>`, `shardy: mesh <[], device_ids=[-1]>: device id must be non-negative, got: -1`, ErrDeviceIDs},
	}
	for _, tt := range tests {
		err := MustParseMesh(tt.in).Validate()
		if tt.wantErr == "" {
			assert.NoError(t, err, tt.in)
			continue
		}
		assert.EqualError(t, err, tt.wantErr, tt.in)
		assert.ErrorIs(t, err, tt.kind, tt.in)
	}
	err := ValidateMeshOps([]MeshOp{NewMeshOp("mesh", EmptyMesh()), NewMeshOp("mesh", EmptyMesh())})
	assert.EqualError(t, err, `shardy: redefinition of mesh symbol: @mesh`)
	assert.ErrorIs(t, err, ErrDuplicateMesh)
	err = ValidateMeshOps([]MeshOp{NewMeshOp("m", MustParseMesh(`<["x"=0]>`))})
	assert.EqualError(t, err, `shardy: mesh @m: axis "x": axis size must be at least 1, got: 0`)
}

func TestValidatePerValueAndManual(t *testing.T) {
	meshes := []MeshOp{NewMeshOp("mesh", MustParseMesh(`<["x"=2, "y"=2]>`))}
	pv, err := ParseTensorShardingPerValue(`#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{"z"}]>]>`)
	require.NoError(t, err)
	assert.EqualError(t, pv.ValidateIn(meshes, []int{2}), `shardy: shardings don't match number of values: 2 shardings vs 1 values`)
	err = pv.ValidateIn(meshes, []int{2, 1})
	assert.EqualError(t, err, `shardy: value 1: dim 0: unknown axis name: "z"`)
	assert.ErrorIs(t, err, ErrUnknownAxis)
	meshes = append(meshes, NewMeshOp("maximal_mesh_0", MaximalMesh(0)))
	zero := []int{}
	for _, ok := range []string{`<[<@maximal_mesh_0, []>]>`, `<[<@mesh, [{}]>]>`, `<[<@mesh, []>]>`} {
		pv, err := ParseTensorShardingPerValue(ok)
		require.NoError(t, err)
		assert.NoError(t, pv.ValidateIn(meshes, zero), ok)
	}
	pv, err = ParseTensorShardingPerValue(`<[<@mesh, [{"x"}]>]>`)
	require.NoError(t, err)
	assert.EqualError(t, pv.ValidateIn(meshes, zero),
		`shardy: shardings don't match number of values: an op with no results may only have a maximal or fully replicated sharding, got <@mesh, [{"x"}]>`)
	pv, err = ParseTensorShardingPerValue(`<[<@maximal_mesh_0, []>, <@maximal_mesh_0, []>]>`)
	require.NoError(t, err)
	assert.ErrorIs(t, pv.ValidateIn(meshes, zero), ErrCount)
	assert.NoError(t, pv.ValidateIn(meshes, nil))

	m := meshes[0].Mesh()
	assert.NoError(t, NewManualAxes("x", "y").Validate(m))
	err = NewManualAxes("x", "w").Validate(m)
	assert.EqualError(t, err, `shardy: unknown manual axis: "w"`)
	assert.ErrorIs(t, err, ErrUnknownAxis)
	assert.ErrorIs(t, NewManualAxes("x", "x").Validate(m), ErrDuplicateAxisRef)
}

// TestValidateMatchesShardy compares Validate with Shardy's own verifier
// (run through jaxlib by testdata/gen_validate_shardy.py) on random valid
// and invalid shardings of a rank-2 tensor: both accept the same ones, and
// for the others report the same message (ours adds where: "dim 1: ").
func TestValidateMatchesShardy(t *testing.T) {
	b, err := os.ReadFile("testdata/validate_shardy.json")
	require.NoError(t, err)
	var data struct {
		JAX, Mesh string
		Cases     []struct {
			Sharding, Want string
			AxisAlone      []string `json:"axis_alone"`
		}
	}
	require.NoError(t, json.Unmarshal(b, &data))
	require.NotEmpty(t, data.Cases)
	m := MustParseMesh(data.Mesh)
	where := regexp.MustCompile(`^(shardy: )?((dim \d+|replicated|unreduced): )?`)
	perAxis := regexp.MustCompile(`^(both sub-axis and full-axis|sub-axis|overlapping sub-axes)`)
	// Known divergence: for a whole axis next to one of its sub-axes in a
	// replicated/unreduced list, Shardy's order check and ours disagree when
	// the sub-axis is itself invalid (pre-size 0): Shardy says "both sub-axis
	// and full-axis are used for axis name: "b"", ours is pinned here.
	known := map[string]string{
		`<@mesh, [{"a", ?}, {"c":(3)2}], unreduced={"b", "b":(0)2}>`: "unreduced axes are not ordered w.r.t. mesh",
	}
	perAxisSeen := 0
	for i, c := range data.Cases {
		s, err := ParseTensorSharding(c.Sharding)
		require.NoError(t, err, "case %d", i)
		err = s.Validate(m, 2)
		if want, ok := known[c.Sharding]; ok {
			require.Error(t, err, "case %d: %s", i, c.Sharding)
			assert.Equal(t, want, where.ReplaceAllString(err.Error(), ""), "case %d: %s", i, c.Sharding)
			continue
		}
		if c.Want == "" {
			assert.NoError(t, err, "case %d: %s", i, c.Sharding)
			continue
		}
		if !assert.Error(t, err, "case %d: %s: want %q", i, c.Sharding, c.Want) {
			continue
		}
		got := where.ReplaceAllString(err.Error(), "")
		if got != c.Want && perAxis.MatchString(c.Want) {
			// Shardy checks these axis by axis in hash-table order, so with
			// problems on two axes it may name either: ours must be exactly
			// what Shardy says about one of the axes alone.
			assert.Contains(t, c.AxisAlone, got, "case %d: %s: want one of Shardy's per-axis verdicts", i, c.Sharding)
			perAxisSeen++
			continue
		}
		assert.Equal(t, c.Want, got, "case %d: %s", i, c.Sharding)
	}
	assert.Positive(t, perAxisSeen, "no case where Shardy names another axis's problem: drop axis_alone")
}
