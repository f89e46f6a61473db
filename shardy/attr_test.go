package shardy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attrTests are values with their standalone attribute text. Every text is
// what jaxlib 0.12.0.1's sdy dialect prints after parsing it (checked with
// the oracle's venv: ir.Attribute.parse(text) prints text), but for
// `#sdy.dim_mappingij`, which MLIR prints for `#sdy<dim_mapping ij>` and
// cannot read back; ParseAttribute reads both.
var attrTests = []struct {
	name string
	v    Attr
	want string
}{
	{"mesh", NewMesh([]MeshAxis{{"x", 4}, {"y", 2}}, nil), `#sdy.mesh<["x"=4, "y"=2]>`},
	{"mesh device ids", NewMesh([]MeshAxis{{"a", 2}, {"b", 2}}, []int{0, 2, 1, 3}), `#sdy.mesh<["a"=2, "b"=2], device_ids=[0, 2, 1, 3]>`},
	{"mesh iota ids", NewMesh([]MeshAxis{{"a", 2}, {"b", 2}}, []int{0, 1, 2, 3}), `#sdy.mesh<["a"=2, "b"=2]>`},
	{"maximal mesh", MaximalMesh(0), `#sdy.mesh<[], device_ids=[0]>`},
	{"mesh axis", MeshAxis{"x", 4}, `#sdy<mesh_axis"x"=4>`},
	{"sub-axis info", SubAxisInfo{PreSize: 1, Size: 2}, `#sdy<sub_axis_info(1)2>`},
	{"axis ref", SubAxis("x", 1, 2), `#sdy<axis_ref"x":(1)2>`},
	{"axis ref quoted", Axis(`a"b`), `#sdy<axis_ref"a\22b">`},
	{"dimension sharding", Open(Axis("x")).WithPriority(2), `#sdy<dimension_sharding{"x", ?}p2>`},
	{"sharding", NewTensorSharding("m", Closed(Axis("x"))).WithUnreduced(ReduceMax, Axis("y")), `#sdy.sharding<@m, [{"x"}], unreduced=max{"y"}>`},
	{"per value", NewTensorShardingPerValue(NewTensorSharding("m")), `#sdy.sharding_per_value<[<@m, []>]>`},
	{"per value empty", NewTensorShardingPerValue(), `#sdy.sharding_per_value<[]>`},
	{"manual axes", NewManualAxes(), `#sdy<manual_axes{}>`},
	{"axis ref list", NewAxisRefList(Axis("a"), SubAxis("b", 2, 2)), `#sdy<axis_ref_list{"a", "b":(2)2}>`},
	{"axis ref list empty", NewAxisRefList(), `#sdy<axis_ref_list{}>`},
	{"list of axis ref lists", NewListOfAxisRefLists(NewAxisRefList(Axis("a")), NewAxisRefList()), `#sdy<list_of_axis_ref_lists[{"a"}, {}]>`},
	{"list of axis ref lists empty", NewListOfAxisRefLists(), `#sdy<list_of_axis_ref_lists[]>`},
	{"all-to-all param", NewAllToAllParam(AxisRefs("x"), 0, 1), `#sdy<all_to_all_param{"x"}: 0->1>`},
	{"all-to-all param negative", NewAllToAllParam(AxisRefs("x"), -1, 1), `#sdy<all_to_all_param{"x"}: -1->1>`},
	{"all-to-all param list", NewAllToAllParamList(NewAllToAllParam(AxisRefs("x"), 0, 1), NewAllToAllParam([]AxisRef{Axis("y"), SubAxis("z", 1, 2)}, 1, 3)),
		`#sdy<all_to_all_param_list[{"x"}: 0->1, {"y", "z":(1)2}: 1->3]>`},
	{"all-to-all param list empty", NewAllToAllParamList(), `#sdy<all_to_all_param_list[]>`},
	{"dim mapping", NewDimMapping(0, 1), `#sdy.dim_mappingij`},
	{"tensor mapping", NewTensorMapping(NewDimMapping(0), NewDimMapping(1)), `#sdy<tensor_mapping[i, j]>`},
	{"tensor mapping empty", NewTensorMapping(), `#sdy<tensor_mapping[]>`},
	{"rule", NewShardingRule([]int{8, 16, 8}, mappings("ij", "jk"), mappings("ik")).
		WithReductionFactors(1).WithNeedReplicationFactors(0).WithPermutationFactors(2).WithBlockedPropagationFactors(0).WithCustom(true),
		`#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j} need_replication={i} permutation={k} blocked_propagation={i}, custom>`},
	{"rule compound factors", NewShardingRule([]int{2, 4, 8}, []TensorMapping{NewTensorMapping(NewDimMapping(0, 1), NewDimMapping(2))}, mappings("ijk")),
		`#sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=2, j=4, k=8}>`},
	{"rule no factors", NewShardingRule(nil, []TensorMapping{NewTensorMapping(), NewTensorMapping()}, []TensorMapping{NewTensorMapping()}),
		`#sdy.op_sharding_rule<([], [])->([])>`},
	{"rule empty dim mapping", NewShardingRule([]int{2}, []TensorMapping{NewTensorMapping(NewDimMapping(), NewDimMapping(0))}, mappings("i")),
		`#sdy.op_sharding_rule<([#sdy.dim_mapping, i])->([i]) {i=2}>`},
	{"rule past z", NewShardingRule(make([]int, 20), []TensorMapping{NewTensorMapping(dims(0, 20)...)}, []TensorMapping{NewTensorMapping(NewDimMapping(19))}),
		`#sdy.op_sharding_rule<([i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z, z_1, z_2])->([z_2]) {i=0, j=0, k=0, l=0, m=0, n=0, o=0, p=0, q=0, r=0, s=0, t=0, u=0, v=0, w=0, x=0, y=0, z=0, z_1=0, z_2=0}>`},
}

// mappings returns one tensor mapping per string, one dimension per factor
// symbol (i..z only).
func mappings(tensors ...string) []TensorMapping {
	out := make([]TensorMapping, len(tensors))
	for i, t := range tensors {
		ds := make([]DimMapping, len(t))
		for j := range t {
			ds[j] = NewDimMapping(int(t[j] - 'i'))
		}
		out[i] = NewTensorMapping(ds...)
	}
	return out
}

// dims returns single-factor dimension mappings of factors lo..hi-1.
func dims(lo, hi int) []DimMapping {
	var ds []DimMapping
	for f := lo; f < hi; f++ {
		ds = append(ds, NewDimMapping(f))
	}
	return ds
}

// equalAttr compares two attributes with their types' Equal.
func equalAttr(a, b Attr) bool {
	switch a := a.(type) {
	case Mesh:
		b, ok := b.(Mesh)
		return ok && a.Equal(b)
	case MeshAxis:
		return a == b
	case SubAxisInfo:
		return a == b
	case AxisRef:
		return a == b
	case DimSharding:
		b, ok := b.(DimSharding)
		return ok && a.Equal(b)
	case TensorSharding:
		b, ok := b.(TensorSharding)
		return ok && a.Equal(b)
	case TensorShardingPerValue:
		b, ok := b.(TensorShardingPerValue)
		return ok && a.Equal(b)
	case ManualAxes:
		b, ok := b.(ManualAxes)
		return ok && a.Equal(b)
	case AxisRefList:
		b, ok := b.(AxisRefList)
		return ok && a.Equal(b)
	case ListOfAxisRefLists:
		b, ok := b.(ListOfAxisRefLists)
		return ok && a.Equal(b)
	case AllToAllParam:
		b, ok := b.(AllToAllParam)
		return ok && a.Equal(b)
	case AllToAllParamList:
		b, ok := b.(AllToAllParamList)
		return ok && a.Equal(b)
	case DimMapping:
		b, ok := b.(DimMapping)
		return ok && a.Equal(b)
	case TensorMapping:
		b, ok := b.(TensorMapping)
		return ok && a.Equal(b)
	case ShardingRule:
		b, ok := b.(ShardingRule)
		return ok && a.Equal(b)
	}
	return false
}

// TestAttribute: each value's standalone text, and ParseAttribute of it
// gives an equal value printing the same.
func TestAttribute(t *testing.T) {
	for _, tt := range attrTests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.v.Attribute())
			got, err := ParseAttribute(tt.want)
			require.NoError(t, err)
			assert.True(t, equalAttr(tt.v, got), "%s parses to %s", tt.want, got.Attribute())
			assert.Equal(t, tt.want, got.Attribute())
		})
	}
}

func TestPrintNewValues(t *testing.T) {
	tests := []struct {
		name string
		got  interface{ String() string }
		want string
	}{
		{"sub-axis info", SubAxisInfo{PreSize: 2, Size: 4}, `(2)4`},
		{"axis ref list", NewAxisRefList(Axis("x"), SubAxis("y", 1, 2)), `{"x", "y":(1)2}`},
		{"list of lists", NewListOfAxisRefLists(NewAxisRefList(), NewAxisRefList(Axis("x"))), `[{}, {"x"}]`},
		{"all-to-all", NewAllToAllParam(AxisRefs("x", "y"), 0, 2), `{"x", "y"}: 0->2`},
		{"all-to-all list", NewAllToAllParamList(NewAllToAllParam(AxisRefs("x"), 0, 2), NewAllToAllParam(AxisRefs("y"), 1, 3)), `[{"x"}: 0->2, {"y"}: 1->3]`},
		{"dim mapping", NewDimMapping(0, 18, 1), `iz_1j`},
		{"dim mapping empty", NewDimMapping(), ``},
		{"tensor mapping", NewTensorMapping(NewDimMapping(0), NewDimMapping(1, 2)), `[i, jk]`},
		{"tensor mapping empty dim", NewTensorMapping(NewDimMapping()), `[#sdy.dim_mapping]`},
		{"rule", NewShardingRule([]int{8, 16, 8}, mappings("ij", "jk"), mappings("ik")).WithReductionFactors(1),
			`#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`},
		{"rule custom", NewShardingRule([]int{4, 4, 4, 4}, mappings("ij"), []TensorMapping{mappings("kl")[0], NewTensorMapping()}).WithCustom(true),
			`#sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>`},
		{"rule no operands", NewShardingRule([]int{2}, nil, mappings("i")), `#sdy.op_sharding_rule<()->([i]) {i=2}>`},
		{"manual axes", NewManualAxes("x"), `{"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got.String())
		})
	}
	r := NewShardingRule([]int{2}, mappings("i"), mappings("i")).WithCustom(true)
	assert.Equal(t, `<([i])->([i]) {i=2}, custom>`, r.Stripped())
}

// Canonical rule texts: print(parse(s)) == s, with and without the prefix.
// jaxlib 0.12.0.1 prints each of them so; it prints `()` for a rule of an op
// without operands but cannot read it back, as ParseShardingRule does.
var canonicalRules = []string{
	`#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`,
	`#sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n]) {i=2, j=3, k=3, l=3, m=3, n=3}, custom>`,
	`#sdy.op_sharding_rule<([i, j])->([k, l], []) {i=4, j=4, k=4, l=4}, custom>`,
	`#sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=2, j=4, k=8}>`,
	`#sdy.op_sharding_rule<([i])->([i]) {i=2} need_replication={i} permutation={i} blocked_propagation={i}>`,
	`#sdy.op_sharding_rule<([i, j])->([i]) {i=2, j=3} reduction={j} need_replication={i}>`,
	`#sdy.op_sharding_rule<([], [])->([])>`,
	`#sdy.op_sharding_rule<()->([i]) {i=2}>`,
	`#sdy.op_sharding_rule<([z_1z_2])->([z]) {i=1, j=1, k=1, l=1, m=1, n=1, o=1, p=1, q=1, r=1, s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, z_1=2, z_2=3}>`,
}

func TestRuleRoundTrip(t *testing.T) {
	for _, s := range canonicalRules {
		r, err := ParseShardingRule(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, r.String())
		stripped := s[len("#sdy.op_sharding_rule"):]
		assert.Equal(t, stripped, r.Stripped())
		w, err := ParseShardingRule(stripped)
		require.NoError(t, err, stripped)
		assert.True(t, r.Equal(w), stripped)
	}
}

// Non-canonical input: what jaxlib 0.12.0.1 prints for it.
func TestParseAttributeLenient(t *testing.T) {
	tests := []struct{ in, want string }{
		{`#sdy<all_to_all_param{"x"}:0->1>`, `#sdy<all_to_all_param{"x"}: 0->1>`},
		{`#sdy.op_sharding_rule<([i, j],[j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`,
			`#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>`},
		{`#sdy.op_sharding_rule< ( [i , j] ) -> ( [ij] ) { i = 2 , j = 3 } reduction = { i } , custom >`,
			`#sdy.op_sharding_rule<([i, j])->([ij]) {i=2, j=3} reduction={i}, custom>`},
		{`#sdy.op_sharding_rule<([i])->([i]) {i=2} reduction={}>`, `#sdy.op_sharding_rule<([i])->([i]) {i=2}>`},
		{`#sdy.op_sharding_rule<([i])->([i]) {}>`, `#sdy.op_sharding_rule<([i])->([i])>`},
		{`#sdy.op_sharding_rule<([, i])->([i]) {i=2}>`, `#sdy.op_sharding_rule<([#sdy.dim_mapping, i])->([i]) {i=2}>`},
		{`#sdy.op_sharding_rule<([#sdy.dim_mappingij])->([i, j]) {i=2, j=2}>`, `#sdy.op_sharding_rule<([ij])->([i, j]) {i=2, j=2}>`},
		{`#sdy<dim_mapping ij>`, `#sdy.dim_mappingij`},
		{`#sdy.mesh<["a"=2, "b"=2], device_ids=[0, 1, 2, 3]>`, `#sdy.mesh<["a"=2, "b"=2]>`},
		{`#sdy<axis_ref"a\"b">`, `#sdy<axis_ref"a\22b">`},
		{`#sdy.sharding_per_value<[#sdy.sharding<@m, []>]>`, `#sdy.sharding_per_value<[<@m, []>]>`},
	}
	for _, tt := range tests {
		v, err := ParseAttribute(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, v.Attribute(), tt.in)
	}
}

func TestParseRuleErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{`<([i])->([i]) {j=2}>`, 15, `expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'i', received: 'j'`},
		{`<([i])->([i]) {i=2, k=3}>`, 20, `Expecting factor index symbol 'j', received: 'k'`},
		{`<([i])->([i]) {ij=2}>`, 15, `expecting single factor symbol: j`},
		{`<([a])->([i])>`, 3, `expecting symbol from 'i' to 'z'. Received: 'a'`},
		{`<([iz_])->([i])>`, 4, `expecting integer after 'z_'. Received: 'z_'`},
		{`<([z_01])->([i])>`, 3, `expecting positive integer without leading zeros. Received: '01'`},
		{`<([z_99999999999999999999])->([i])>`, 3, `expecting symbol index <=2^63-1. Received: '99999999999999999999'`},
		{`<([i])>([i])>`, 6, `expected '->', found '>'`},
		{`<([i])->([i]) {i=2} need_replication={i} reduction={i}>`, 41, `expected '>', found 'reduction'`},
		{`<([i])->([i]) {i=2} reduction={ij}>`, 31, `expecting single factor symbol: j`},
		{`<([i])->([i]), other>`, 15, `expected 'custom', found 'other'`},
		{`<([i] [j])->([i])>`, 6, `expected ',' or ')', found '['`},
		{`<([i j])->([i])>`, 5, `expected ',' or ']', found 'j'`},
		{`<([i])->([i]) {i=x}>`, 17, `expected factor size, found 'x'`},
	}
	for _, tt := range tests {
		_, err := ParseShardingRule(tt.in)
		require.Error(t, err, tt.in)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), tt.in)
		assert.True(t, errors.Is(err, ErrSyntax))
		assert.Equal(t, tt.offset, pe.Offset, tt.in)
		assert.Contains(t, err.Error(), tt.msg, tt.in)
	}
	attrErrs := []struct {
		in     string
		offset int
		msg    string
	}{
		{`sdy.mesh<[]>`, 0, `expected '#', found 'sdy.mesh'`},
		{`#sdy.foo<>`, 1, `expected Shardy attribute, found 'sdy.foo'`},
		{`#sdy<foo{}>`, 5, `expected Shardy attribute name, found 'foo'`},
		{`#sdy<all_to_all_param{"x"} 0->1>`, 27, `expected ':', found '0'`},
		{`#sdy<all_to_all_param{"x"}: 0-1>`, 29, `expected '->', found '-1'`},
		{`#sdy<axis_ref_list{"x"}`, 23, `expected '>', found end of input`},
		{`#sdy<list_of_axis_ref_lists[{"x"} {}]>`, 34, `expected ',' or ']', found '{'`},
		{`#sdy.dim_mappingia`, 17, `expecting symbol from 'i' to 'z'. Received: 'a'`},
		{`#sdy.op_sharding_rule<([#sdy.mesh])->()>`, 25, `expected 'sdy.dim_mapping', found 'sdy.mesh'`},
	}
	for _, tt := range attrErrs {
		_, err := ParseAttribute(tt.in)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%s: %v", tt.in, err)
		assert.Equal(t, tt.offset, pe.Offset, tt.in)
		assert.Contains(t, err.Error(), tt.msg, tt.in)
	}
}

func TestNewValuesImmutable(t *testing.T) {
	refs := AxisRefs("x", "y")
	l := NewAxisRefList(refs...)
	refs[0] = Axis("z")
	l.Refs()[1] = Axis("z")
	assert.Equal(t, `{"x", "y"}`, l.String())
	assert.Equal(t, 2, l.Len())

	lists := []AxisRefList{l, NewAxisRefList()}
	ll := NewListOfAxisRefLists(lists...)
	lists[0] = NewAxisRefList()
	ll.Lists()[1] = l
	assert.Equal(t, `[{"x", "y"}, {}]`, ll.String())
	assert.Equal(t, 2, ll.Len())

	axes := AxisRefs("x")
	p := NewAllToAllParam(axes, 0, 1)
	axes[0] = Axis("z")
	p.Axes()[0] = Axis("z")
	assert.Equal(t, `{"x"}: 0->1`, p.String())
	assert.Equal(t, 0, p.SrcDim())
	assert.Equal(t, 1, p.TgtDim())
	params := []AllToAllParam{p}
	pl := NewAllToAllParamList(params...)
	params[0] = NewAllToAllParam(nil, 3, 4)
	pl.Params()[0] = params[0]
	assert.Equal(t, `[{"x"}: 0->1]`, pl.String())
	assert.Equal(t, 1, pl.Len())

	fs := []int{0, 1}
	d := NewDimMapping(fs...)
	fs[0] = 5
	d.Factors()[1] = 5
	assert.Equal(t, `ij`, d.String())
	ds := []DimMapping{d}
	tm := NewTensorMapping(ds...)
	ds[0] = NewDimMapping(7)
	tm.Dims()[0] = ds[0]
	assert.Equal(t, `[ij]`, tm.String())
	assert.Equal(t, 1, tm.Rank())

	sizes := []int{2, 3}
	ops := []TensorMapping{tm}
	r := NewShardingRule(sizes, ops, ops)
	sizes[0], ops[0] = 9, NewTensorMapping()
	r.FactorSizes()[0] = 9
	r.Operands()[0] = NewTensorMapping()
	r.Results()[0] = NewTensorMapping()
	red := []int{1}
	r2 := r.WithReductionFactors(red...).WithCustom(true)
	red[0] = 0
	r2.ReductionFactors()[0] = 0
	assert.Equal(t, `#sdy.op_sharding_rule<([ij])->([ij]) {i=2, j=3}>`, r.String())
	assert.Equal(t, `#sdy.op_sharding_rule<([ij])->([ij]) {i=2, j=3} reduction={j}, custom>`, r2.String())
	assert.Equal(t, 2, r.NumFactors())
	assert.True(t, r2.IsCustom())
	assert.False(t, r.IsCustom())
	assert.Equal(t, []int{1}, r2.ReductionFactors())
	assert.Empty(t, r2.NeedReplicationFactors())
	r3 := r.WithNeedReplicationFactors(0).WithPermutationFactors(1).WithBlockedPropagationFactors(0)
	assert.Equal(t, []int{0}, r3.NeedReplicationFactors())
	assert.Equal(t, []int{1}, r3.PermutationFactors())
	assert.Equal(t, []int{0}, r3.BlockedPropagationFactors())
	assert.Empty(t, r.NeedReplicationFactors())
	assert.False(t, r.Equal(r2))
	assert.False(t, r.Equal(r3))
	assert.True(t, r2.Equal(r.WithCustom(true).WithReductionFactors(1)))
	assert.True(t, r.Equal(r2.WithCustom(false).WithReductionFactors()))

	info, ok := SubAxis("x", 2, 4).SubAxisInfo()
	assert.True(t, ok)
	assert.Equal(t, SubAxisInfo{PreSize: 2, Size: 4}, info)
	_, ok = Axis("x").SubAxisInfo()
	assert.False(t, ok)
}
