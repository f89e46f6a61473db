package shardy

import (
	"slices"
	"strings"
)

// AxisRef refers to a mesh axis, whole (`"x"`) or a sub-axis (`"x":(m)k`).
//
// A sub-axis `"x":(m)k` is the middle factor when axis x is split major to
// minor as [m, k, size(x)/(m·k)]: m (the pre-size) is the product of the
// more major part. So on x=4, `"x":(1)2` is the major half and `"x":(2)2`
// the minor half. AxisRef is a comparable value; == compares refs.
type AxisRef struct {
	name    string
	sub     bool
	preSize int
	size    int
}

// Axis returns a reference to the whole axis name: `"x"`.
func Axis(name string) AxisRef { return AxisRef{name: name} }

// SubAxis returns a reference to the sub-axis `"name":(preSize)size`.
// It does not validate; sub-axis rules are checked by Validate.
func SubAxis(name string, preSize, size int) AxisRef {
	return AxisRef{name: name, sub: true, preSize: preSize, size: size}
}

// AxisRefs returns a whole-axis reference for each name.
func AxisRefs(names ...string) []AxisRef {
	refs := make([]AxisRef, len(names))
	for i, n := range names {
		refs[i] = Axis(n)
	}
	return refs
}

// Name returns the name of the (full) axis referred to.
func (a AxisRef) Name() string { return a.name }

// IsSubAxis reports whether a refers to a sub-axis.
func (a AxisRef) IsSubAxis() bool { return a.sub }

// PreSize returns the sub-axis pre-size m of `"x":(m)k`, or 0 for a whole axis.
func (a AxisRef) PreSize() int { return a.preSize }

// SubSize returns the sub-axis size k of `"x":(m)k`, or 0 for a whole axis.
func (a AxisRef) SubSize() int { return a.size }

// SubAxisInfo returns the `(m)k` part of a sub-axis reference and true, or
// false for a whole axis.
func (a AxisRef) SubAxisInfo() (SubAxisInfo, bool) {
	return SubAxisInfo{PreSize: a.preSize, Size: a.size}, a.sub
}

// Size returns the number of shards a splits a dimension into on mesh m:
// the sub-axis size, or the axis size for a whole axis (0 if m lacks it).
func (a AxisRef) Size(m Mesh) int {
	if a.sub {
		return a.size
	}
	s, _ := m.AxisSize(a.name)
	return s
}

// String returns the reference text: `"x"` or `"x":(1)2`.
func (a AxisRef) String() string {
	var b strings.Builder
	a.writeTo(&b)
	return b.String()
}

func (a AxisRef) writeTo(b *strings.Builder) {
	writeQuoted(b, a.name)
	if a.sub {
		b.WriteByte(':')
		SubAxisInfo{PreSize: a.preSize, Size: a.size}.writeTo(b)
	}
}

// SubAxisInfo is the `(m)k` part of a sub-axis reference `"x":(m)k`: the
// pre-size m and the size k (see AxisRef). As an attribute of its own it is
// `#sdy<sub_axis_info(1)2>`. SubAxisInfo is a comparable value.
type SubAxisInfo struct {
	PreSize int
	Size    int
}

// String returns `(m)k`.
func (s SubAxisInfo) String() string {
	var b strings.Builder
	s.writeTo(&b)
	return b.String()
}

func (s SubAxisInfo) writeTo(b *strings.Builder) {
	b.WriteByte('(')
	writeInt(b, s.PreSize)
	b.WriteByte(')')
	writeInt(b, s.Size)
}

// AxisRefList is Shardy's list of axis references `{"x", "y":(1)2}`, as an
// attribute `#sdy<axis_ref_list{"x", "y":(1)2}>` (the axes of sdy.all_reduce,
// for example). It is an immutable value.
type AxisRefList struct {
	refs []AxisRef
}

// NewAxisRefList returns the list of refs, in the given order.
func NewAxisRefList(refs ...AxisRef) AxisRefList { return AxisRefList{refs: slices.Clone(refs)} }

// Refs returns a copy of the references.
func (l AxisRefList) Refs() []AxisRef { return slices.Clone(l.refs) }

// Len returns the number of references.
func (l AxisRefList) Len() int { return len(l.refs) }

// Equal reports whether l and o hold the same references in the same order.
func (l AxisRefList) Equal(o AxisRefList) bool { return slices.Equal(l.refs, o.refs) }

// String returns `{"x", "y":(1)2}` (or `{}`).
func (l AxisRefList) String() string {
	var b strings.Builder
	l.writeTo(&b)
	return b.String()
}

func (l AxisRefList) writeTo(b *strings.Builder) { writeAxisList(b, l.refs) }

// ListOfAxisRefLists is Shardy's list of axis lists `[{"x"}, {}]`, as an
// attribute `#sdy<list_of_axis_ref_lists[{"x"}, {}]>` (the per-dimension
// gathering axes of sdy.all_gather, for example). It is an immutable value.
type ListOfAxisRefLists struct {
	lists []AxisRefList
}

// NewListOfAxisRefLists returns the list of lists, in the given order.
func NewListOfAxisRefLists(lists ...AxisRefList) ListOfAxisRefLists {
	return ListOfAxisRefLists{lists: slices.Clone(lists)}
}

// Lists returns a copy of the lists.
func (l ListOfAxisRefLists) Lists() []AxisRefList { return slices.Clone(l.lists) }

// Len returns the number of lists.
func (l ListOfAxisRefLists) Len() int { return len(l.lists) }

// Equal reports whether l and o hold equal lists in the same order.
func (l ListOfAxisRefLists) Equal(o ListOfAxisRefLists) bool {
	return slices.EqualFunc(l.lists, o.lists, AxisRefList.Equal)
}

// String returns `[{"x"}, {}]` (or `[]`).
func (l ListOfAxisRefLists) String() string {
	var b strings.Builder
	l.writeTo(&b)
	return b.String()
}

func (l ListOfAxisRefLists) writeTo(b *strings.Builder) {
	b.WriteByte('[')
	for i, r := range l.lists {
		if i > 0 {
			b.WriteString(", ")
		}
		r.writeTo(b)
	}
	b.WriteByte(']')
}

// AllToAllParam is one all-to-all of sdy.all_to_all: the axes it runs over,
// and the source and target dimensions, `{"x"}: 0->1`; as an attribute
// `#sdy<all_to_all_param{"x"}: 0->1>`. It is an immutable value.
type AllToAllParam struct {
	axes     []AxisRef
	src, tgt int
}

// NewAllToAllParam returns the all-to-all over axes from dimension src to
// dimension tgt.
func NewAllToAllParam(axes []AxisRef, src, tgt int) AllToAllParam {
	return AllToAllParam{axes: slices.Clone(axes), src: src, tgt: tgt}
}

// Axes returns a copy of the axes.
func (p AllToAllParam) Axes() []AxisRef { return slices.Clone(p.axes) }

// SrcDim returns the source dimension.
func (p AllToAllParam) SrcDim() int { return p.src }

// TgtDim returns the target dimension.
func (p AllToAllParam) TgtDim() int { return p.tgt }

// Equal reports whether p and o have the same axes and dimensions.
func (p AllToAllParam) Equal(o AllToAllParam) bool {
	return slices.Equal(p.axes, o.axes) && p.src == o.src && p.tgt == o.tgt
}

// String returns `{"x"}: 0->1`.
func (p AllToAllParam) String() string {
	var b strings.Builder
	p.writeTo(&b)
	return b.String()
}

func (p AllToAllParam) writeTo(b *strings.Builder) {
	writeAxisList(b, p.axes)
	b.WriteString(": ")
	writeInt(b, p.src)
	b.WriteString("->")
	writeInt(b, p.tgt)
}

// AllToAllParamList is the list of all-to-alls of sdy.all_to_all,
// `[{"x"}: 0->2, {"y"}: 1->3]`; as an attribute
// `#sdy<all_to_all_param_list[...]>`. It is an immutable value.
type AllToAllParamList struct {
	params []AllToAllParam
}

// NewAllToAllParamList returns the list of params, in the given order.
func NewAllToAllParamList(params ...AllToAllParam) AllToAllParamList {
	return AllToAllParamList{params: slices.Clone(params)}
}

// Params returns a copy of the params.
func (l AllToAllParamList) Params() []AllToAllParam { return slices.Clone(l.params) }

// Len returns the number of params.
func (l AllToAllParamList) Len() int { return len(l.params) }

// Equal reports whether l and o hold equal params in the same order.
func (l AllToAllParamList) Equal(o AllToAllParamList) bool {
	return slices.EqualFunc(l.params, o.params, AllToAllParam.Equal)
}

// String returns `[{"x"}: 0->2, {"y"}: 1->3]` (or `[]`).
func (l AllToAllParamList) String() string {
	var b strings.Builder
	l.writeTo(&b)
	return b.String()
}

func (l AllToAllParamList) writeTo(b *strings.Builder) {
	b.WriteByte('[')
	for i, p := range l.params {
		if i > 0 {
			b.WriteString(", ")
		}
		p.writeTo(b)
	}
	b.WriteByte(']')
}

func writeAxisList(b *strings.Builder, refs []AxisRef) {
	b.WriteByte('{')
	for i, r := range refs {
		if i > 0 {
			b.WriteString(", ")
		}
		r.writeTo(b)
	}
	b.WriteByte('}')
}
