package stablehlo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// Padding says how a convolution or a window reduction pads the dimensions its windows
// slide over: a mode, from which the padding is computed from the shapes as JAX's
// lax.padtype_to_pads does, or explicit (low, high) pairs, one per dimension (negative
// values crop). The zero Padding pads nothing.
type Padding struct {
	// Mode is, in any case as in JAX, "SAME" (the output has ceil(in/stride) elements, padding split evenly with
	// the odd element high), "SAME_LOWER" (the odd element low), "VALID" (no padding), or
	// "" for Pairs.
	Mode string
	// Pairs are the (low, high) padding of each dimension when Mode is "" (nil: none).
	Pairs [][2]int
}

// Padding modes, as JAX names them.
var (
	PadSame      = Padding{Mode: "SAME"}
	PadSameLower = Padding{Mode: "SAME_LOWER"}
	PadValid     = Padding{Mode: "VALID"}
)

// Pads returns explicit padding: (low, high) per dimension.
func Pads(pairs ...[2]int) Padding { return Padding{Pairs: slices.Clone(pairs)} }

// String returns the mode, or the pairs as "[(1, 1), (0, 2)]".
func (p Padding) String() string {
	if p.Mode != "" {
		return p.Mode
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, q := range p.Pairs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d)", q[0], q[1])
	}
	b.WriteByte(']')
	return b.String()
}

// Resolve returns the (low, high) padding of each of len(in) dimensions of sizes in, for
// windows of sizes window (already dilated) moved by strides, or a message saying what is
// wrong. For SAME, as in lax.padtype_to_pads: out = ceil(in/stride) and the padding is
// max(0, (out-1)*stride + window - in), split low = p/2, high = p - p/2 (SAME_LOWER swaps
// them).
func (p Padding) Resolve(in, window, strides []int) ([][2]int, string) {
	n := len(in)
	mode := strings.ToUpper(p.Mode)
	switch mode {
	case "":
		if p.Pairs == nil {
			return make([][2]int, n), ""
		}
		if len(p.Pairs) != n {
			return nil, "padding " + p.String() + " has " + strconv.Itoa(len(p.Pairs)) + " pairs for " + strconv.Itoa(n) + " dimensions"
		}
		return slices.Clone(p.Pairs), ""
	case "VALID":
		return make([][2]int, n), ""
	case "SAME", "SAME_LOWER":
		out := make([][2]int, n)
		for i := range n {
			s := strides[i]
			o := (in[i] + s - 1) / s
			pad := max(0, (o-1)*s+window[i]-in[i])
			lo, hi := pad/2, pad-pad/2
			if mode == "SAME_LOWER" {
				lo, hi = hi, lo
			}
			out[i] = [2]int{lo, hi}
		}
		return out, ""
	}
	return nil, "unknown padding mode " + strconv.Quote(p.Mode) + " (want SAME, SAME_LOWER, VALID, or pairs)"
}

// windowCount returns the number of windows of size window dilated by wdil, moved by
// stride, over a dimension of size in dilated by bdil and padded by pad: StableHLO's
// num_windows (constraint C15 of reduce_window, C25 of convolution). ok is false when a
// size overflows int64 or the padded size is negative.
func windowCount(in, window, stride, bdil, wdil int, pad [2]int) (n int, ok bool) {
	dilIn := 0
	if in > 0 {
		d, ok1 := mulDims(in-1, bdil)
		if !ok1 {
			return 0, false
		}
		dilIn = d + 1
	}
	padded, ok1 := addDims(dilIn, pad[0])
	padded, ok2 := addDims(padded, pad[1])
	if !ok1 || !ok2 || padded < 0 {
		return 0, false
	}
	dilW := 0
	if window > 0 {
		d, ok1 := mulDims(window-1, wdil)
		if !ok1 {
			return 0, false
		}
		dilW = d + 1
	}
	if padded == 0 || dilW > padded {
		return 0, true
	}
	return (padded-dilW)/stride + 1, true
}

// dilated returns (n-1)*d+1 for n > 0 (0 for n = 0), the size of a window of n
// elements d apart; ok is false on overflow.
func dilated(n, d int) (int, bool) {
	if n <= 0 {
		return 0, true
	}
	m, ok := mulDims(n-1, d)
	return m + 1, ok
}

// ones returns v, or n ones when v is nil.
func ones(v []int, n int) []int {
	if v == nil {
		return slices.Repeat([]int{1}, n)
	}
	return slices.Clone(v)
}

// positive checks that v has n entries, all at least 1 ("" if so).
func positive(name string, v []int, n int) string {
	if len(v) != n {
		return name + " " + IntList(v) + " needs " + strconv.Itoa(n) + " entries"
	}
	for _, x := range v {
		if x < 1 {
			return name + " " + IntList(v) + " must be positive"
		}
	}
	return ""
}

// densePads formats padding as StableHLO's 2-D i64 attribute, dense<[[lo, hi], ...]> :
// tensor<Nx2xi64>.
func densePads(pads [][2]int) string {
	var b strings.Builder
	b.WriteString("dense<")
	if len(pads) > 0 {
		b.WriteByte('[')
		for i, q := range pads {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "[%d, %d]", q[0], q[1])
		}
		b.WriteByte(']')
	}
	fmt.Fprintf(&b, "> : tensor<%dx2xi64>", len(pads))
	return b.String()
}

// ReduceWindowParams are the parameters of stablehlo.reduce_window (operands: the reduced
// tensor and the scalar initial value; one region combining two scalars). Every field
// is filled in the recorded Params: nil strides and dilations become ones, and Padding
// holds the resolved pairs (with the mode it came from).
type ReduceWindowParams struct {
	// Reduction combines the elements of a window (its identity is the initial value);
	// 0 for ReduceWindowFunc, whose region is the op's (Op.Regions).
	Reduction Reduction
	// Window is the window's size in each dimension of the operand.
	Window []int
	// Strides move the window (nil: 1 in every dimension).
	Strides []int
	// BaseDilations spread the operand's elements apart, d-1 padding elements between
	// neighbours (nil: 1, none).
	BaseDilations []int
	// WindowDilations spread the window's elements apart (nil: 1, none).
	WindowDilations []int
	// Padding pads the (dilated) operand with the initial value.
	Padding Padding
}

// Properties returns "base_dilations = ..., padding = dense<...>, window_dilations = ...,
// window_dimensions = ..., window_strides = ...".
func (p ReduceWindowParams) Properties() string {
	return "base_dilations = " + i64Array(p.BaseDilations) + ", padding = " + densePads(p.Padding.Pairs) +
		", window_dilations = " + i64Array(p.WindowDilations) + ", window_dimensions = " + i64Array(p.Window) +
		", window_strides = " + i64Array(p.Strides)
}

// ReduceWindow reduces each window of x with r, starting from r's identity (as Reduce
// does), like JAX's lax.reduce_window with lax.add/max/min/mul (Params:
// ReduceWindowParams). p.Window has one size per dimension of x; a Padding mode is
// resolved as lax.reduce_window does, from x's shape and the dilated window. The result
// has, per dimension, StableHLO's num_windows elements.
func (f *Function) ReduceWindow(x Value, r Reduction, p ReduceWindowParams) Value {
	const opName = "reduce_window"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if r < Sum || r > Min {
		f.failf(opName, -1, nil, ErrDType, "invalid reduction %v", r)
		return Value{}
	}
	if a.shape.DType() == dtypes.Bool && r != Max && r != Min {
		f.failf(opName, 0, a, ErrDType, "%v of pred", r)
		return Value{}
	}
	p.Reduction = r
	init := f.constant(opName, scalarOf(a.shape), []lit{r.init(a.shape.DType())})
	if init.v == nil {
		return Value{}
	}
	return f.reduceWindow(a, init.v, p, func() *Function { return f.scalarRegion(r, a.shape.DType()) })
}

// ReduceWindowFunc is ReduceWindow with an initial value init (a scalar of x's element
// type; a weak constant takes it) and a combiner written in Go: body gets a region g and
// two scalars, the accumulator and an element, and returns their combination. p.Reduction
// must be 0.
func (f *Function) ReduceWindowFunc(x, init Value, p ReduceWindowParams, body func(g *Function, acc, v Value) Value) Value {
	const opName = "reduce_window"
	vs, ok := f.check(opName, x, init)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	iv := f.materialize(vs[1], scalarOf(a.shape))
	if f.failed() {
		return Value{}
	}
	if p.Reduction != 0 || body == nil {
		f.failf(opName, -1, nil, ErrFunction, "ReduceWindowFunc takes a body and no Reduction (got %v)", p.Reduction)
		return Value{}
	}
	s := scalarOf(a.shape)
	if !iv.shape.Equal(s) {
		f.failf(opName, 1, iv, ErrShape, "initial value must be a %v, got %v", s, iv.shape)
		return Value{}
	}
	return f.reduceWindow(a, iv, p, func() *Function { return f.combinerRegion(opName, s, body) })
}

func (f *Function) reduceWindow(a, init *value, p ReduceWindowParams, region func() *Function) Value {
	const opName = "reduce_window"
	out, q, msg := windowShape(a.shape, p)
	if msg != "" {
		f.failf(opName, 0, a, ErrShape, "%s (operand %v)", msg, a.shape)
		return Value{}
	}
	g := region()
	if g == nil || f.failed() {
		return Value{}
	}
	o := &Op{name: "stablehlo.reduce_window", operands: []*value{a, init}, params: q, regions: []*Function{g}}
	return f.emitMulti(o, []Shape{out})[0]
}

// windowShape checks p against operand shape x and returns the result shape and the
// parameters with every field filled in, or a message.
func windowShape(x Shape, p ReduceWindowParams) (Shape, ReduceWindowParams, string) {
	r := x.Rank()
	q := ReduceWindowParams{Reduction: p.Reduction, Window: slices.Clone(p.Window), Strides: ones(p.Strides, r),
		BaseDilations: ones(p.BaseDilations, r), WindowDilations: ones(p.WindowDilations, r)}
	for _, c := range []struct {
		name string
		v    []int
	}{{"window_dimensions", q.Window}, {"window_strides", q.Strides}, {"base_dilations", q.BaseDilations}, {"window_dilations", q.WindowDilations}} {
		if m := positive(c.name, c.v, r); m != "" {
			return Shape{}, q, m
		}
	}
	dil := make([]int, r)
	for i := range r {
		d, ok := dilated(q.Window[i], q.WindowDilations[i])
		if !ok {
			return Shape{}, q, "dilated window overflows int64 in dimension " + strconv.Itoa(i)
		}
		dil[i] = d
	}
	pads, m := p.Padding.Resolve(x.Dims(), dil, q.Strides)
	if m != "" {
		return Shape{}, q, m
	}
	q.Padding = Padding{Mode: p.Padding.Mode, Pairs: pads}
	dims := make([]int, r)
	for i := range r {
		n, ok := windowCount(x.Dim(i), q.Window[i], q.Strides[i], q.BaseDilations[i], q.WindowDilations[i], pads[i])
		if !ok {
			return Shape{}, q, "dimension " + strconv.Itoa(i) + ": padding " + fmt.Sprint(pads[i]) + " leaves a negative or overflowing size"
		}
		dims[i] = n
	}
	return NewShape(x.DType(), dims...), q, ""
}

// poolWindow returns the window and strides of flax's pooling over x of rank rank with
// a window over the spatial dimensions (all but the leading batch dimensions and the
// trailing feature dimension), and the padding with zero pairs for the other dimensions.
func poolWindow(rank int, window, strides []int, pad Padding) (w, s []int, p Padding, msg string) {
	k := len(window)
	if rank < k+1 {
		return nil, nil, pad, "pooling a " + strconv.Itoa(k) + "-d window needs rank " + strconv.Itoa(k+1) + " or more (batch..., spatial..., features), got rank " + strconv.Itoa(rank)
	}
	if strides == nil {
		strides = slices.Repeat([]int{1}, k)
	}
	if len(strides) != k {
		return nil, nil, pad, "strides " + IntList(strides) + " need " + strconv.Itoa(k) + " entries, one per window dimension"
	}
	nb := rank - k - 1
	w = append(append(slices.Repeat([]int{1}, nb), window...), 1)
	s = append(append(slices.Repeat([]int{1}, nb), strides...), 1)
	p = pad
	if pad.Mode == "" && pad.Pairs != nil {
		if len(pad.Pairs) != k {
			return nil, nil, pad, "padding " + pad.String() + " needs " + strconv.Itoa(k) + " pairs, one per window dimension"
		}
		p = Pads(append(append(make([][2]int, nb), pad.Pairs...), [2]int{})...)
	}
	return w, s, p, ""
}

func (f *Function) pool(x Value, r Reduction, window, strides []int, pad Padding) (Value, Padding) {
	if _, ok := f.check("reduce_window", x); !ok {
		return Value{}, Padding{}
	}
	w, s, p, msg := poolWindow(x.v.shape.Rank(), window, strides, pad)
	if msg != "" {
		f.failf("reduce_window", 0, x.v, ErrShape, "%s (operand %v)", msg, x.v.shape)
		return Value{}, Padding{}
	}
	return f.ReduceWindow(x, r, ReduceWindowParams{Window: w, Strides: s, Padding: p}), p
}

// MaxPool is flax.linen.max_pool: the maximum over windows of x, whose dimensions are
// (batch..., spatial..., features) with one spatial dimension per entry of window (no
// batch dimension is fine); strides (nil: ones) and padding apply to the spatial
// dimensions. Padding pads with -inf (the lowest integer), so padded elements never win.
// Built from ReduceWindow (Params: ReduceWindowParams).
func (f *Function) MaxPool(x Value, window, strides []int, pad Padding) Value {
	v, _ := f.pool(x, Max, window, strides, pad)
	return v
}

// MinPool is flax.linen.min_pool: MaxPool with the minimum.
func (f *Function) MinPool(x Value, window, strides []int, pad Padding) Value {
	v, _ := f.pool(x, Min, window, strides, pad)
	return v
}

// SumPool is flax.linen.pool with lax.add and 0: the sum over windows, laid out as for
// MaxPool; padding adds zeros.
func (f *Function) SumPool(x Value, window, strides []int, pad Padding) Value {
	v, _ := f.pool(x, Sum, window, strides, pad)
	return v
}

// AvgPool is flax.linen.avg_pool on a float x: SumPool divided by the window's element
// count when countIncludePad is set (flax's default), or else by the number of elements of
// each window that are not padding (SumPool of ones with the same window).
func (f *Function) AvgPool(x Value, window, strides []int, pad Padding, countIncludePad bool) Value {
	const opName = "reduce_window"
	if _, ok := f.check(opName, x); !ok {
		return Value{}
	}
	if !x.v.shape.DType().IsFloat() {
		f.failf(opName, 0, x.v, ErrDType, "AvgPool needs a float operand, got %v", x.v.shape)
		return Value{}
	}
	sum, p := f.pool(x, Sum, window, strides, pad)
	if !sum.Valid() {
		return Value{}
	}
	if countIncludePad {
		n := 1
		for _, w := range window {
			n *= w
		}
		return f.Div(sum, f.Constant(float64(n)))
	}
	// flax counts over ones of x's shape with the features dimension 1 (and the first
	// batch dimension 1 when there is exactly one), then broadcasts the counts.
	dims := x.v.shape.Dims()
	dims[len(dims)-1] = 1
	if len(dims)-2 == len(window) {
		dims[0] = 1
	}
	w, s, _, _ := poolWindow(len(dims), window, strides, pad)
	counts := f.ReduceWindow(f.Full(NewShape(x.v.shape.DType(), dims...), 1), Sum, ReduceWindowParams{Window: w, Strides: s, Padding: p})
	if !counts.Valid() {
		return Value{}
	}
	bd := make([]int, len(dims))
	for i := range bd {
		bd[i] = i
	}
	return f.Div(sum, f.BroadcastInDim(counts, sum.v.shape.Dims(), bd))
}
