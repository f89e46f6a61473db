package stablehlo

import (
	"github.com/gomlx/gopjrt/dtypes"
)

// SelectAndScatterParams are the parameters of stablehlo.select_and_scatter (operands: the
// operand, the source, the scalar initial value; two regions: the select comparison and
// the scatter sum). Strides and Padding are filled in the recorded Params (nil strides are
// ones; Padding holds the resolved pairs).
type SelectAndScatterParams struct {
	// Select chooses the element of each window: GE picks the first maximum (the gradient of
	// a max pool, JAX's select_and_scatter_add with ge), LE the first minimum.
	Select Comparison
	// Window is the window's size in each dimension of the operand.
	Window []int
	// Strides move the window (nil: 1 in every dimension).
	Strides []int
	// Padding pads the operand; padding elements are never selected.
	Padding Padding
}

// Properties returns "padding = dense<...>, window_dimensions = ..., window_strides = ...".
func (p SelectAndScatterParams) Properties() string {
	return "padding = " + densePads(p.Padding.Pairs) + ", window_dimensions = " + i64Array(p.Window) +
		", window_strides = " + i64Array(p.Strides)
}

// SelectAndScatter picks one element of each window of operand, the first whose comparison
// p.Select with every other holds (GE: a maximum), and adds the source element of that
// window to it, in a result of operand's shape that is zero elsewhere (stablehlo.
// select_and_scatter with an add scatter; JAX's _select_and_scatter_add, the transpose of a
// max or min pool). source has the shape of ReduceWindow's result on operand with the same
// window, strides and padding, and operand's element type (ErrShape, ErrDType). Params:
// SelectAndScatterParams.
func (f *Function) SelectAndScatter(operand, source Value, p SelectAndScatterParams) Value {
	const opName = "select_and_scatter"
	vs, ok := f.check(opName, operand, source)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	s := f.materialize(vs[1], vs[1].shape)
	if f.failed() {
		return Value{}
	}
	if p.Select != GE && p.Select != LE && p.Select != GT && p.Select != LT {
		f.failf(opName, -1, nil, ErrDType, "select comparison %v; want GE, LE, GT or LT", p.Select)
		return Value{}
	}
	if !numeric(a.shape.DType()) {
		f.failf(opName, 0, a, ErrDType, "select_and_scatter needs a numeric operand, got %v", a.shape)
		return Value{}
	}
	if s.shape.DType() != a.shape.DType() {
		f.failf(opName, 1, s, ErrDType, "source type %v differs from operand %v", s.shape, a.shape)
		return Value{}
	}
	out, q, msg := windowShape(a.shape, ReduceWindowParams{Window: p.Window, Strides: p.Strides, Padding: p.Padding})
	if msg != "" {
		f.failf(opName, 0, a, ErrShape, "%s (operand %v)", msg, a.shape)
		return Value{}
	}
	if !out.Equal(s.shape) {
		f.failf(opName, 1, s, ErrShape, "source is %v, the windows of operand %v give %v", s.shape, a.shape, out)
		return Value{}
	}
	init := f.constant(opName, scalarOf(a.shape), []lit{{kind: 'i', i: 0}})
	if init.v == nil {
		return Value{}
	}
	sc := NewShape(a.shape.DType())
	sel := f.NewRegion(sc, sc)
	typ := "FLOAT"
	switch {
	case signed(a.shape.DType()):
		typ = "SIGNED"
	case !a.shape.DType().IsFloat():
		typ = "UNSIGNED"
	}
	c := sel.emit("stablehlo.compare", sel.args, sc.WithDType(dtypes.Bool), CompareParams{Dir: p.Select, Type: typ})
	sel.results, sel.returned = []*value{c.v}, true
	add := f.scalarRegion(Sum, a.shape.DType())
	params := SelectAndScatterParams{Select: p.Select, Window: q.Window, Strides: q.Strides, Padding: q.Padding}
	o := &Op{name: "stablehlo.select_and_scatter", operands: []*value{a, s, init.v}, params: params, regions: []*Function{sel, add}}
	return f.emitMulti(o, []Shape{a.shape})[0]
}
