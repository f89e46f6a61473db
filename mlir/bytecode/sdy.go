package bytecode

import (
	"fmt"

	"github.com/xlamesh/xlamesh/shardy"
)

// Shardy (sdy) dialect attribute encodings (shardy/dialect/sdy/ir/bytecode.td): a varint
// code, then the fields; nested attributes are references to other entries. They decode
// to package shardy's values, which print themselves (shardy.Attr).
const (
	sdyManualAxes = iota
	sdyMeshAxis
	sdyMesh
	sdySubAxisInfo
	sdyAxisRef
	sdyDimensionSharding
	sdyTensorShardingV1
	sdyTensorShardingPerValueV1
	sdyDimMapping
	sdyTensorMapping
	sdyOpShardingRule
	sdyAxisRefList
	sdyListOfAxisRefLists
	sdyAllToAllParam
	sdyAllToAllParamList
	sdyTensorShardingV2
	sdyTensorShardingPerValueV2
	sdyTensorShardingV3
)

// Shardy's ReductionOp, as TensorShardingV3 stores it.
const (
	sdyReduceSum = iota
	sdyReduceMax
	sdyReduceMin
)

// The text of Shardy attributes. Shardy values hold their parts by value, so an
// attribute that refers to another many times (a per-value list of the same sharding,
// a sharding of the same dimension) copies it as often: each decoded attribute's text
// (one entry's, counted once however often it is referred to) is bounded before its
// value is built, and all of them together may not pass sdyLimit. The bound is its
// parts' text (entry.size, measured once each is built) plus sdyOwnText and the
// attribute's own strings and integers.
const (
	sdyOwnText = 160 // brackets, keywords and prefixes of one attribute, at most
	sdyIntText = 22  // an integer or factor symbol and its separator, at most
	sdySepText = 2   // the separator before a part
)

// sdyLimit is the most text the Shardy attributes of an n-byte file may print, each
// counted once: generous for real modules (their attributes are small and shared by
// reference), linear in n.
func sdyLimit(n int) int { return 8*n + 1<<20 }

// sdyText is the running bound on the text of one Shardy attribute; it saturates rather
// than overflow.
type sdyText int

const sdyTextMax = 1 << 50

func (t *sdyText) add(n int) { *t = min(*t+sdyText(n), sdyTextMax) }

// str adds a quoted string: MLIR escapes a byte in at most 3.
func (t *sdyText) str(s string) { t.add(3*len(s) + 2 + sdySepText) }

// ints adds n integers.
func (t *sdyText) ints(n int) { t.add(n * sdyIntText) }

// sdyAttr decodes a Shardy attribute into its shardy value and returns the length of the
// value's text where another attribute holds it.
func (f *file) sdyAttr(d *decoder) (attr, int) {
	code := d.varint()
	if d.err != nil {
		return nil, 0
	}
	t := sdyText(sdyOwnText)
	var v shardy.Attr
	switch code {
	case sdyManualAxes:
		n := d.count(1, "manual axis")
		names := make([]string, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			s := f.stringAttr(d)
			t.str(s)
			names = append(names, s)
		}
		if f.sdyFits(d, t) {
			v = shardy.NewManualAxes(names...)
		}
	case sdyMeshAxis:
		name := f.str(d)
		size := d.svarint()
		t.str(name)
		t.ints(1)
		if f.sdyFits(d, t) {
			v = shardy.MeshAxis{Name: name, Size: int(size)}
		}
	case sdyMesh:
		axes := sdyRefs[shardy.MeshAxis](f, d, &t, "mesh axis")
		ids := f.svarints(d)
		t.ints(len(ids))
		if f.sdyFits(d, t) {
			v = shardy.NewMesh(axes, ints(ids))
		}
	case sdySubAxisInfo:
		pre := d.svarint()
		size := d.svarint()
		t.ints(2)
		if f.sdyFits(d, t) {
			v = shardy.SubAxisInfo{PreSize: int(pre), Size: int(size)}
		}
	case sdyAxisRef:
		name := f.str(d)
		t.str(name)
		r := shardy.Axis(name)
		if i, ok := d.flagged(); ok {
			s, size := sdyRefAt[shardy.SubAxisInfo](f, d, i, "sub-axis info")
			t.add(size)
			r = shardy.SubAxis(name, s.PreSize, s.Size)
		}
		if f.sdyFits(d, t) {
			v = r
		}
	case sdyDimensionSharding:
		axes := sdyRefs[shardy.AxisRef](f, d, &t, "axis ref")
		closed := d.byte() != 0
		p, hasPriority := d.flagged() // p < 2^63
		t.ints(1)
		if f.sdyFits(d, t) {
			dim := shardy.Closed(axes...)
			if !closed {
				dim = shardy.Open(axes...)
			}
			if hasPriority {
				dim = dim.WithPriority(int(p))
			}
			v = dim
		}
	case sdyTensorShardingV1, sdyTensorShardingV2, sdyTensorShardingV3:
		v = f.sdySharding(d, code, &t)
	case sdyTensorShardingPerValueV1, sdyTensorShardingPerValueV2:
		shardings := sdyRefs[shardy.TensorSharding](f, d, &t, "sharding")
		if f.sdyFits(d, t) {
			v = shardy.NewTensorShardingPerValue(shardings...)
		}
	case sdyAxisRefList:
		refs := sdyRefs[shardy.AxisRef](f, d, &t, "axis ref")
		if f.sdyFits(d, t) {
			v = shardy.NewAxisRefList(refs...)
		}
	case sdyListOfAxisRefLists:
		lists := sdyRefs[shardy.AxisRefList](f, d, &t, "axis list")
		if f.sdyFits(d, t) {
			v = shardy.NewListOfAxisRefLists(lists...)
		}
	case sdyAllToAllParam:
		axes := sdyRefs[shardy.AxisRef](f, d, &t, "axis ref")
		src := d.svarint()
		tgt := d.svarint()
		if f.sdyFits(d, t) {
			v = shardy.NewAllToAllParam(axes, int(src), int(tgt))
		}
	case sdyAllToAllParamList:
		params := sdyRefs[shardy.AllToAllParam](f, d, &t, "all-to-all parameter")
		if f.sdyFits(d, t) {
			v = shardy.NewAllToAllParamList(params...)
		}
	case sdyDimMapping:
		factors := f.svarints(d)
		t.ints(len(factors))
		if f.sdyFits(d, t) {
			v = shardy.NewDimMapping(ints(factors)...)
		}
	case sdyTensorMapping:
		dims := sdyRefs[shardy.DimMapping](f, d, &t, "dim mapping")
		if f.sdyFits(d, t) {
			v = shardy.NewTensorMapping(dims...)
		}
	case sdyOpShardingRule:
		v = f.sdyRule(d, &t)
	default:
		d.failKind(ErrUnsupported, "sdy attribute code %d", code)
	}
	if d.err != nil || v == nil {
		return nil, 0
	}
	n := sdyNestedLen(v)
	f.sdyLeft -= n
	return v, n
}

// sdySharding decodes a TensorShardingAttr of the given version.
func (f *file) sdySharding(d *decoder, code uint64, t *sdyText) shardy.Attr {
	i := d.varint()
	if d.err != nil {
		return nil
	}
	var mesh shardy.Mesh
	var meshName string
	inline := false
	switch m := f.attrAt(d, i).(type) {
	case aSymRef:
		meshName = m.root
		t.str(meshName)
	case shardy.Mesh:
		mesh, inline = m, true
		t.add(f.attrs[i].size)
	default:
		if d.err == nil {
			d.fail("sdy sharding whose mesh is neither a mesh nor a symbol")
		}
	}
	dims := sdyRefs[shardy.DimSharding](f, d, t, "dimension sharding")
	replicated := sdyRefs[shardy.AxisRef](f, d, t, "axis ref")
	var unreduced []shardy.AxisRef
	if code != sdyTensorShardingV1 {
		unreduced = sdyRefs[shardy.AxisRef](f, d, t, "axis ref")
	}
	reduction := shardy.ReduceSum
	if code == sdyTensorShardingV3 {
		// Shardy prints a ReductionOp other than max and min as sum does.
		switch d.svarint() {
		case sdyReduceMax:
			reduction = shardy.ReduceMax
		case sdyReduceMin:
			reduction = shardy.ReduceMin
		}
	}
	if !f.sdyFits(d, *t) {
		return nil
	}
	s := shardy.NewTensorSharding(meshName, dims...)
	if inline {
		s = shardy.NewInlineTensorSharding(mesh, dims...)
	}
	if len(replicated) > 0 {
		s = s.WithReplicated(replicated...)
	}
	if len(unreduced) > 0 {
		s = s.WithUnreduced(reduction, unreduced...)
	}
	return s
}

// sdyRule decodes an OpShardingRuleAttr.
func (f *file) sdyRule(d *decoder, t *sdyText) shardy.Attr {
	sizes := f.svarints(d)
	t.ints(2 * len(sizes)) // `z_1=size`
	operands := sdyRefs[shardy.TensorMapping](f, d, t, "tensor mapping")
	results := sdyRefs[shardy.TensorMapping](f, d, t, "tensor mapping")
	var kinds [4][]int64
	for k := range kinds {
		kinds[k] = f.svarints(d)
		t.ints(len(kinds[k]))
	}
	custom := d.byte() != 0
	if !f.sdyFits(d, *t) {
		return nil
	}
	return shardy.NewShardingRule(ints(sizes), operands, results).
		WithReductionFactors(ints(kinds[0])...).
		WithNeedReplicationFactors(ints(kinds[1])...).
		WithPermutationFactors(ints(kinds[2])...).
		WithBlockedPropagationFactors(ints(kinds[3])...).
		WithCustom(custom)
}

// sdyRefs reads a count and that many references to Shardy attributes of type T, adding
// their text to t.
func sdyRefs[T shardy.Attr](f *file, d *decoder, t *sdyText, what string) []T {
	n := d.count(1, what)
	out := make([]T, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		v, size := sdyRef[T](f, d, what)
		t.add(size)
		out = append(out, v)
	}
	return out
}

// sdyRef reads a reference to a Shardy attribute of type T, and returns it with the
// length of its text; an attribute of another kind is an error.
func sdyRef[T shardy.Attr](f *file, d *decoder, what string) (T, int) {
	i := d.varint()
	if d.err != nil {
		var zero T
		return zero, 0
	}
	return sdyRefAt[T](f, d, i, what)
}

// sdyRefAt is sdyRef for attribute i.
func sdyRefAt[T shardy.Attr](f *file, d *decoder, i uint64, what string) (T, int) {
	v, ok := f.attrAt(d, i).(T)
	if !ok {
		if d.err == nil {
			d.fail("sdy %s of another kind", what)
		}
		return v, 0
	}
	return v, f.attrs[i].size
}

// sdyFits reports whether an attribute of text t may still be built, failing d if not.
func (f *file) sdyFits(d *decoder, t sdyText) bool {
	if d.err != nil {
		return false
	}
	if int(t) > f.sdyLeft {
		d.failKind(ErrUnsupported, "Shardy attributes would print more than %d bytes", sdyLimit(len(f.in)))
		return false
	}
	return true
}

// sdyNestedLen returns the length of v's text where another attribute holds it: its
// String, a sharding stripped, an inline mesh after "mesh", an empty dim mapping in
// full.
func sdyNestedLen(v shardy.Attr) int {
	switch v := v.(type) {
	case shardy.TensorSharding:
		return len(v.Stripped())
	case shardy.Mesh:
		return len("mesh") + len(v.String())
	case shardy.DimMapping:
		return max(len(v.String()), len(shardy.NewDimMapping().Attribute()))
	case fmt.Stringer:
		return len(v.String())
	}
	return len(v.Attribute())
}

// ints converts decoded integers to int.
func ints(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// writeSdy prints a Shardy attribute in full, as MLIR does; false for other attributes.
func writeSdy(b *textBuf, a attr) bool {
	v, ok := a.(shardy.Attr)
	if ok && !b.done() {
		b.WriteString(v.Attribute())
	}
	return ok
}
