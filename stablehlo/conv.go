package stablehlo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// ConvDims are the dimension numbers of Conv: which dimension of the input (lhs), the
// kernel (rhs) and the output is the batch, the feature and each spatial dimension, as in
// JAX's lax.ConvDimensionNumbers. Spatial dimension i of the three lists correspond.
type ConvDims struct {
	InputBatch, InputFeature int
	InputSpatial             []int
	KernelInput              int // the kernel's input-feature dimension
	KernelOutput             int // the kernel's output-feature dimension
	KernelSpatial            []int
	OutputBatch              int
	OutputFeature            int
	OutputSpatial            []int
}

func (d ConvDims) clone() ConvDims {
	d.InputSpatial, d.KernelSpatial, d.OutputSpatial = slices.Clone(d.InputSpatial), slices.Clone(d.KernelSpatial), slices.Clone(d.OutputSpatial)
	return d
}

// ConvLayout returns the dimension numbers for layouts written as JAX writes them, e.g.
// ("NHWC", "HWIO", "NHWC") or ("NCHW", "OIHW", "NCHW"): N and C are the input's and
// output's batch and feature dimensions, I and O the kernel's input and output features,
// and every other letter a spatial dimension, matched by letter across the three strings
// and numbered in the kernel's order (lax.conv_general_permutations). Malformed layouts
// give an error wrapping ErrShape.
func ConvLayout(lhs, rhs, out string) (ConvDims, error) {
	fail := func(format string, args ...any) (ConvDims, error) {
		return ConvDims{}, fmt.Errorf("stablehlo: conv layout (%q, %q, %q): %w: "+format, append([]any{lhs, rhs, out, ErrShape}, args...)...)
	}
	if len(lhs) != len(rhs) || len(lhs) != len(out) {
		return fail("the three layouts differ in length")
	}
	specs := [3]string{lhs, rhs, out}
	pairs := [3][2]byte{{'N', 'C'}, {'O', 'I'}, {'N', 'C'}}
	for i, s := range specs {
		for k := range len(s) {
			if strings.IndexByte(s, s[k]) != k {
				return fail("layout %d repeats %q", i, s[k])
			}
		}
		if strings.IndexByte(s, pairs[i][0]) < 0 || strings.IndexByte(s, pairs[i][1]) < 0 {
			return fail("layout %d must contain %q and %q once", i, pairs[i][0], pairs[i][1])
		}
	}
	var spatial []byte // in the kernel's order
	for k := range len(rhs) {
		if c := rhs[k]; c != 'O' && c != 'I' {
			spatial = append(spatial, c)
		}
	}
	find := func(s string, i int) ([]int, bool) {
		var dims []int
		for _, c := range spatial {
			k := strings.IndexByte(s, c)
			if k < 0 || c == pairs[i][0] || c == pairs[i][1] {
				return nil, false
			}
			dims = append(dims, k)
		}
		return dims, len(dims) == len(s)-2
	}
	in, ok1 := find(lhs, 0)
	ker, _ := find(rhs, 1)
	o, ok3 := find(out, 2)
	if !ok1 || !ok3 {
		return fail("the layouts must have the same spatial letters")
	}
	return ConvDims{
		InputBatch: strings.IndexByte(lhs, 'N'), InputFeature: strings.IndexByte(lhs, 'C'), InputSpatial: in,
		KernelInput: strings.IndexByte(rhs, 'I'), KernelOutput: strings.IndexByte(rhs, 'O'), KernelSpatial: ker,
		OutputBatch: strings.IndexByte(out, 'N'), OutputFeature: strings.IndexByte(out, 'C'), OutputSpatial: o,
	}, nil
}

// ConvParams are the parameters of stablehlo.convolution (lax.conv_general_dilated). In
// the recorded Params every field is filled: nil strides and dilations become ones, zero
// group counts 1, and Padding holds the resolved pairs (with the mode it came from).
type ConvParams struct {
	Dims ConvDims
	// Strides move the window over each spatial dimension (nil: ones).
	Strides []int
	// Padding pads each spatial dimension of the (dilated) input with zeros; a mode is
	// resolved from the undilated input and the dilated kernel, as lax does.
	Padding Padding
	// LhsDilation spreads the input's elements apart (a transposed convolution; nil: ones).
	LhsDilation []int
	// RhsDilation spreads the kernel's elements apart (atrous convolution; nil: ones).
	RhsDilation []int
	// FeatureGroupCount splits input and output features into groups convolved apart
	// (depthwise: the input feature count); 0 means 1.
	FeatureGroupCount int
	// BatchGroupCount splits the batch likewise (used by gradients of grouped
	// convolutions); 0 means 1.
	BatchGroupCount int
}

// Properties returns the convolution's attributes: batch_group_count, dimension_numbers
// = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count,
// lhs_dilation, padding, rhs_dilation, window_strides.
func (p ConvParams) Properties() string {
	d := p.Dims
	n := len(d.InputSpatial) + 2
	layout := func(a, b int, ac, bc string, sp []int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "?"
		}
		set := func(k int, s string) {
			if k >= 0 && k < n {
				parts[k] = s
			}
		}
		set(a, ac)
		set(b, bc)
		for i, k := range sp {
			set(k, strconv.Itoa(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "batch_group_count = " + strconv.Itoa(p.BatchGroupCount) + " : i64, dimension_numbers = #stablehlo.conv<" +
		layout(d.InputBatch, d.InputFeature, "b", "f", d.InputSpatial) + "x" +
		layout(d.KernelInput, d.KernelOutput, "i", "o", d.KernelSpatial) + "->" +
		layout(d.OutputBatch, d.OutputFeature, "b", "f", d.OutputSpatial) + ">, feature_group_count = " +
		strconv.Itoa(p.FeatureGroupCount) + " : i64, lhs_dilation = " + i64Array(p.LhsDilation) +
		", padding = " + densePads(p.Padding.Pairs) + ", rhs_dilation = " + i64Array(p.RhsDilation) +
		", window_strides = " + i64Array(p.Strides)
}

// Conv is JAX's lax.conv_general_dilated: it convolves the input lhs with the kernel rhs
// (stablehlo.convolution; Params: ConvParams). Both have rank N = 2 + the number of
// spatial dimensions and one element type; p.Dims (see ConvLayout) says where batch,
// features and spatial dimensions are. The output has, in the dimensions p.Dims names,
// the batch (divided by the batch group count), the kernel's output features, and per
// spatial dimension StableHLO's number of windows. Every constraint of the specification
// is checked, naming the dimension at fault (ErrShape, ErrDType).
func (f *Function) Conv(lhs, rhs Value, p ConvParams) Value {
	const opName = "convolution"
	vs, ok := f.check(opName, lhs, rhs)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	b := f.materialize(vs[1], vs[1].shape)
	if f.failed() {
		return Value{}
	}
	if a.shape.DType() != b.shape.DType() {
		f.failf(opName, 1, b, ErrDType, "operand types differ: %v vs %v", a.shape, b.shape)
		return Value{}
	}
	if a.shape.DType() == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "convolution of pred")
		return Value{}
	}
	out, q, i, msg := convShape(a.shape, b.shape, p)
	if msg != "" {
		v := a
		if i == 1 {
			v = b
		}
		f.failf(opName, i, v, ErrShape, "%s (lhs %v, rhs %v)", msg, a.shape, b.shape)
		return Value{}
	}
	return f.emit("stablehlo.convolution", []*value{a, b}, out, q)
}

// convShape checks p against the input and kernel shapes and returns the output shape
// and the filled-in parameters, or the operand at fault (-1 for none) and a message.
func convShape(x, k Shape, p ConvParams) (Shape, ConvParams, int, string) {
	d := p.Dims
	n := x.Rank()
	s := n - 2
	q := ConvParams{Dims: d.clone(), Strides: ones(p.Strides, s), LhsDilation: ones(p.LhsDilation, s),
		RhsDilation: ones(p.RhsDilation, s), FeatureGroupCount: max(p.FeatureGroupCount, 1), BatchGroupCount: max(p.BatchGroupCount, 1)}
	if k.Rank() != n || n < 2 {
		return Shape{}, q, 1, "lhs and rhs need one rank of 2 or more"
	}
	for _, c := range []struct {
		name string
		v    []int
	}{{"window_strides", q.Strides}, {"lhs_dilation", q.LhsDilation}, {"rhs_dilation", q.RhsDilation}} {
		if m := positive(c.name, c.v, s); m != "" {
			return Shape{}, q, -1, m
		}
	}
	for _, c := range []struct {
		name    string
		a, b    int
		spatial []int
		op      int
	}{{"input", d.InputBatch, d.InputFeature, d.InputSpatial, 0}, {"kernel", d.KernelInput, d.KernelOutput, d.KernelSpatial, 1},
		{"output", d.OutputBatch, d.OutputFeature, d.OutputSpatial, -1}} {
		all := append([]int{c.a, c.b}, c.spatial...)
		if len(c.spatial) != s {
			return Shape{}, q, c.op, c.name + " spatial dimensions " + IntList(c.spatial) + " need " + strconv.Itoa(s) + " entries"
		}
		if m := dimsCheck(c.name+" dimensions", all, n, false, nil); m != "" {
			return Shape{}, q, c.op, m
		}
	}
	if p.FeatureGroupCount < 0 || p.BatchGroupCount < 0 {
		return Shape{}, q, -1, "negative group count"
	}
	fg, bg := q.FeatureGroupCount, q.BatchGroupCount
	if fg > 1 && bg > 1 {
		return Shape{}, q, -1, "feature_group_count " + strconv.Itoa(fg) + " and batch_group_count " + strconv.Itoa(bg) + ": one must be 1"
	}
	batch, feat := x.Dim(d.InputBatch), x.Dim(d.InputFeature)
	kin, kout := k.Dim(d.KernelInput), k.Dim(d.KernelOutput)
	switch {
	case batch%bg != 0:
		return Shape{}, q, 0, "input batch dimension " + strconv.Itoa(d.InputBatch) + " (size " + strconv.Itoa(batch) + ") is not divisible by batch_group_count " + strconv.Itoa(bg)
	case feat%fg != 0:
		return Shape{}, q, 0, "input feature dimension " + strconv.Itoa(d.InputFeature) + " (size " + strconv.Itoa(feat) + ") is not divisible by feature_group_count " + strconv.Itoa(fg)
	case kin != feat/fg:
		return Shape{}, q, 1, "kernel input feature dimension " + strconv.Itoa(d.KernelInput) + " has size " + strconv.Itoa(kin) + ", want the input features / feature_group_count = " + strconv.Itoa(feat/fg)
	case kout%bg != 0 || kout%fg != 0:
		return Shape{}, q, 1, "kernel output feature dimension " + strconv.Itoa(d.KernelOutput) + " (size " + strconv.Itoa(kout) + ") is not divisible by the group count " + strconv.Itoa(max(fg, bg))
	}
	in := make([]int, s)
	win := make([]int, s)
	for i := range s {
		in[i] = x.Dim(d.InputSpatial[i])
		w, ok := dilated(k.Dim(d.KernelSpatial[i]), q.RhsDilation[i])
		if !ok {
			return Shape{}, q, 1, "dilated kernel overflows int64 in spatial dimension " + strconv.Itoa(i)
		}
		win[i] = w
	}
	pads, m := p.Padding.Resolve(in, win, q.Strides)
	if m != "" {
		return Shape{}, q, -1, m
	}
	q.Padding = Padding{Mode: p.Padding.Mode, Pairs: pads}
	dims := make([]int, n)
	dims[d.OutputBatch] = batch / bg
	dims[d.OutputFeature] = kout
	for i := range s {
		c, ok := windowCount(in[i], k.Dim(d.KernelSpatial[i]), q.Strides[i], q.LhsDilation[i], q.RhsDilation[i], pads[i])
		if !ok {
			return Shape{}, q, -1, "spatial dimension " + strconv.Itoa(i) + ": padding " + fmt.Sprint(pads[i]) + " leaves a negative or overflowing size"
		}
		dims[d.OutputSpatial[i]] = c
	}
	return NewShape(x.DType(), dims...), q, -1, ""
}
