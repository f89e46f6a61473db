package stablehlo

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// ScatterDims are the dimension numbers of Scatter: StableHLO's #stablehlo.scatter, JAX's
// lax.ScatterDimensionNumbers.
type ScatterDims struct {
	// UpdateWindowDims are the updates dimensions that hold a window's own dimensions (the
	// operand dimensions not inserted or batching), ascending.
	UpdateWindowDims []int
	// InsertedWindowDims are operand dimensions where a window has size 1 and updates no
	// dimension, ascending.
	InsertedWindowDims []int
	// InputBatchingDims are operand dimensions (window size 1, no updates dimension) that
	// are batch dimensions, ascending.
	InputBatchingDims []int
	// ScatterIndicesBatchingDims are the indices dimensions paired with InputBatchingDims.
	ScatterIndicesBatchingDims []int
	// ScatterDimsToOperandDims names, for each component of an index vector, the operand
	// dimension it starts the window at.
	ScatterDimsToOperandDims []int
	// IndexVectorDim is the indices dimension holding the index vectors; equal to the rank of
	// indices, each index is a vector of one.
	IndexVectorDim int
}

func (d ScatterDims) clone() ScatterDims {
	return ScatterDims{UpdateWindowDims: slices.Clone(d.UpdateWindowDims), InsertedWindowDims: slices.Clone(d.InsertedWindowDims),
		InputBatchingDims: slices.Clone(d.InputBatchingDims), ScatterIndicesBatchingDims: slices.Clone(d.ScatterIndicesBatchingDims),
		ScatterDimsToOperandDims: slices.Clone(d.ScatterDimsToOperandDims), IndexVectorDim: d.IndexVectorDim}
}

// ScatterParams are the parameters of stablehlo.scatter (operands: the tensor updated, the
// indices, the updates; one region combining an element with its update).
type ScatterParams struct {
	Dims ScatterDims
	// IndicesAreSorted and UniqueIndices are promises to XLA, as in lax.scatter: a false
	// promise gives undefined results.
	IndicesAreSorted, UniqueIndices bool
	// Combine is how an update meets the element it lands on: Sum (x.at[idx].add), Prod,
	// Max or Min; 0 replaces the element (x.at[idx].set; where several updates land on one
	// element, which one wins is unspecified).
	Combine Reduction
	// Custom is set in the Params of an op built by ScatterFunc: the combiner is the op's
	// region (Op.Regions) and Combine is 0.
	Custom bool
}

// Properties returns "indices_are_sorted = ..., scatter_dimension_numbers =
// #stablehlo.scatter<...>, unique_indices = ...".
func (p ScatterParams) Properties() string {
	var b strings.Builder
	b.WriteString("indices_are_sorted = ")
	b.WriteString(strconv.FormatBool(p.IndicesAreSorted))
	b.WriteString(", scatter_dimension_numbers = #stablehlo.scatter<")
	d := p.Dims
	writeDimFields(&b, []dimField{{"update_window_dims", d.UpdateWindowDims}, {"inserted_window_dims", d.InsertedWindowDims},
		{"input_batching_dims", d.InputBatchingDims}, {"scatter_indices_batching_dims", d.ScatterIndicesBatchingDims},
		{"scatter_dims_to_operand_dims", d.ScatterDimsToOperandDims}})
	b.WriteString("index_vector_dim = ")
	b.WriteString(strconv.Itoa(d.IndexVectorDim))
	b.WriteString(">, unique_indices = ")
	b.WriteString(strconv.FormatBool(p.UniqueIndices))
	return b.String()
}

// Scatter returns x with updates combined into the windows that indices select
// (stablehlo.scatter, JAX's lax.scatter/scatter_add/scatter_max/...; Params:
// ScatterParams): p.Combine says how (Sum, Prod, Max, Min, or 0 to replace). Each index
// vector of indices (along p.Dims.IndexVectorDim) starts a window in x in the operand
// dimensions p.Dims.ScatterDimsToOperandDims; the window's shape is that of the updates
// dimensions p.Dims.UpdateWindowDims. As in XLA, a window not wholly inside x is skipped:
// out-of-bounds updates are dropped (JAX's mode FILL_OR_DROP, the default of lax.scatter
// and x.at[...]). The updates' element type must be x's (a weak constant takes it) and
// every shape rule of the StableHLO specification is checked (ErrShape, naming the field).
func (f *Function) Scatter(x, indices, updates Value, p ScatterParams) Value {
	const opName = "scatter"
	if _, ok := f.check(opName, x); !ok {
		return Value{}
	}
	if p.Custom || p.Combine > Min {
		f.failf(opName, -1, nil, ErrFunction, "invalid combiner %v (Sum, Prod, Max, Min, or 0 to replace; ScatterFunc for a region)", p.Combine)
		return Value{}
	}
	d := x.v.shape.DType()
	return f.scatter(x, indices, updates, p, func() *Function {
		if p.Combine == 0 {
			s := NewShape(d)
			g := f.NewRegion(s, s)
			g.results = []*value{g.args[1]}
			g.returned = true
			return g
		}
		if d == dtypes.Bool && p.Combine != Max && p.Combine != Min {
			f.failf(opName, 0, x.v, ErrDType, "%v of pred", p.Combine)
			return nil
		}
		if shapes.IsComplex(d) && (p.Combine == Max || p.Combine == Min) {
			// As Max and Min refuse complex operands: StableHLO orders complex values
			// lexicographically, JAX's max and min do not lower to it.
			f.failf(opName, 0, x.v, ErrDType, "%v of %s (complex values have no order)", p.Combine, shapes.MLIRName(d))
			return nil
		}
		return f.scalarRegion(p.Combine, d)
	})
}

// ScatterFunc is Scatter with a combiner written in Go: body gets a region g and two
// scalars of x's element type, the current element and its update, and returns the new
// element (a scalar of the same type) built with g's methods. The op's Params have Custom
// set; p.Combine must be 0.
func (f *Function) ScatterFunc(x, indices, updates Value, p ScatterParams, body func(g *Function, old, update Value) Value) Value {
	const opName = "scatter"
	if _, ok := f.check(opName, x); !ok {
		return Value{}
	}
	if p.Combine != 0 || body == nil {
		f.failf(opName, -1, nil, ErrFunction, "ScatterFunc takes a body and no Combine (got %v)", p.Combine)
		return Value{}
	}
	p.Custom = true
	s := NewShape(x.v.shape.DType())
	return f.scatter(x, indices, updates, p, func() *Function { return f.combinerRegion(opName, s, body) })
}

// scatter checks the operands and dimension numbers, then builds the region with
// region (nil after an error) and emits the op.
func (f *Function) scatter(x, indices, updates Value, p ScatterParams, region func() *Function) Value {
	const opName = "scatter"
	vs, ok := f.check(opName, x, indices, updates)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	idx := f.materialize(vs[1], vs[1].shape)
	u := f.materialize(vs[2], vs[2].shape.WithDType(a.shape.DType()))
	if f.failed() {
		return Value{}
	}
	if !idx.shape.DType().IsInt() {
		f.failf(opName, 1, idx, ErrDType, "scatter indices must be integers, got %v", idx.shape)
		return Value{}
	}
	if u.shape.DType() != a.shape.DType() {
		f.failf(opName, 2, u, ErrDType, "updates %v differ in element type from operand %v", u.shape, a.shape)
		return Value{}
	}
	if msg := scatterCheck(a.shape, idx.shape, u.shape, p.Dims); msg != "" {
		f.failf(opName, 2, u, ErrShape, "%s (operand %v, indices %v, updates %v)", msg, a.shape, idx.shape, u.shape)
		return Value{}
	}
	g := region()
	if g == nil || f.failed() {
		return Value{}
	}
	q := p
	q.Dims = p.Dims.clone()
	o := &Op{name: "stablehlo.scatter", operands: []*value{a, idx, u}, params: q, regions: []*Function{g}}
	return f.emitMulti(o, []Shape{a.shape})[0]
}

// scatterCheck checks dimension numbers d against the operand, indices and updates shapes
// (constraints C1-C22 of the StableHLO specification) and returns a message, or "".
func scatterCheck(x, idx, upd Shape, d ScatterDims) string {
	ro, ri, ru := x.Rank(), idx.Rank(), upd.Rank()
	if d.IndexVectorDim < 0 || d.IndexVectorDim > ri {
		return "index_vector_dim " + strconv.Itoa(d.IndexVectorDim) + " out of range [0, " + strconv.Itoa(ri) + "]"
	}
	if n := len(d.UpdateWindowDims) + len(d.InsertedWindowDims) + len(d.InputBatchingDims); n != ro {
		return "update_window_dims, inserted_window_dims and input_batching_dims have " + strconv.Itoa(n) + " entries, want the operand rank " + strconv.Itoa(ro)
	}
	nScatter := ri
	if d.IndexVectorDim < ri {
		nScatter--
	}
	if ru != len(d.UpdateWindowDims)+nScatter {
		return "updates have rank " + strconv.Itoa(ru) + ", want " + strconv.Itoa(len(d.UpdateWindowDims)+nScatter) + " (update_window_dims plus the indices dimensions other than index_vector_dim)"
	}
	isWindow := make([]bool, ru)
	if m := dimsCheck("update_window_dims", d.UpdateWindowDims, ru, true, isWindow); m != "" {
		return m
	}
	dropped := make([]bool, ro)
	if m := dimsCheck("inserted_window_dims", d.InsertedWindowDims, ro, true, dropped); m != "" {
		return m
	}
	if m := dimsCheck("input_batching_dims", d.InputBatchingDims, ro, true, dropped); m != "" {
		return m
	}
	usedIdx := make([]bool, ri+1)
	usedIdx[d.IndexVectorDim] = true
	if m := dimsCheck("scatter_indices_batching_dims", d.ScatterIndicesBatchingDims, ri, false, usedIdx); m != "" {
		return m + " (or is index_vector_dim)"
	}
	if len(d.InputBatchingDims) != len(d.ScatterIndicesBatchingDims) {
		return "input_batching_dims " + IntList(d.InputBatchingDims) + " and scatter_indices_batching_dims " + IntList(d.ScatterIndicesBatchingDims) + " differ in length"
	}
	for i, od := range d.InputBatchingDims {
		if sd := d.ScatterIndicesBatchingDims[i]; x.Dim(od) != idx.Dim(sd) {
			return "batching dimension sizes differ: operand dimension " + strconv.Itoa(od) + " is " + strconv.Itoa(x.Dim(od)) + ", indices dimension " + strconv.Itoa(sd) + " is " + strconv.Itoa(idx.Dim(sd))
		}
	}
	want := 1
	if d.IndexVectorDim < ri {
		want = idx.Dim(d.IndexVectorDim)
	}
	if len(d.ScatterDimsToOperandDims) != want {
		return "scatter_dims_to_operand_dims " + IntList(d.ScatterDimsToOperandDims) + " has " + strconv.Itoa(len(d.ScatterDimsToOperandDims)) + " entries, want the index vector length " + strconv.Itoa(want)
	}
	mapped := make([]bool, ro)
	for _, b := range d.InputBatchingDims {
		mapped[b] = true
	}
	if m := dimsCheck("scatter_dims_to_operand_dims", d.ScatterDimsToOperandDims, ro, false, mapped); m != "" {
		return m + " (or is an input batching dimension)"
	}
	var scatterSizes []int
	for i, n := range idx.Dims() {
		if i != d.IndexVectorDim {
			scatterSizes = append(scatterSizes, n)
		}
	}
	var windowMax []int
	for i, n := range x.Dims() {
		if !dropped[i] {
			windowMax = append(windowMax, n)
		}
	}
	for i, n := range upd.Dims() {
		if isWindow[i] {
			if n > windowMax[0] {
				return "updates dimension " + strconv.Itoa(i) + " (a window dimension) has size " + strconv.Itoa(n) + ", larger than the operand's " + strconv.Itoa(windowMax[0])
			}
			windowMax = windowMax[1:]
		} else {
			if n != scatterSizes[0] {
				return "updates dimension " + strconv.Itoa(i) + " (a scatter dimension) has size " + strconv.Itoa(n) + ", want the indices' " + strconv.Itoa(scatterSizes[0])
			}
			scatterSizes = scatterSizes[1:]
		}
	}
	return ""
}

// ScatterAdd returns x with updates added at the indices idx along dimension 0, like
// JAX's x.at[idx].add(updates): updates has idx's dimensions followed by x's after the
// first (a scalar or weak constant is broadcast to that shape), and updates landing on one
// row add up. Indices follow jnp's rules (see Take): a negative index counts from the end,
// and an index still out of range drops its update (mode FILL_OR_DROP, the default of
// x.at[...].add). Built from a Scatter (Params: ScatterParams with Combine Sum).
func (f *Function) ScatterAdd(x, idx, updates Value) Value {
	const opName = "scatter"
	vs, ok := f.check(opName, x, idx, updates)
	if !ok {
		return Value{}
	}
	a, i, ok := f.indexOperands(vs)
	if !ok {
		return Value{}
	}
	if a.shape.Rank() == 0 {
		f.failf(opName, 0, a, ErrShape, "ScatterAdd needs an operand of rank 1 or more, got %v", a.shape)
		return Value{}
	}
	if !i.shape.DType().IsInt() {
		f.failf(opName, 1, i, ErrDType, "ScatterAdd: indices must be integers, got %v", i.shape)
		return Value{}
	}
	want := append(i.shape.Dims(), a.shape.Dims()[1:]...)
	u := vs[2]
	if u.weak != nil {
		u = f.materialize(u, scalarOf(a.shape))
	}
	if f.failed() {
		return Value{}
	}
	if u.shape.Rank() == 0 && len(want) > 0 && u.shape.DType() == a.shape.DType() {
		u = f.BroadcastInDim(Value{u}, want, nil).v
		if f.failed() {
			return Value{}
		}
	}
	iv := f.NormalizeIndex(Value{i}, a.shape.Dim(0))
	if f.failed() {
		return Value{}
	}
	r := i.shape.Rank()
	window := make([]int, a.shape.Rank()-1)
	for k := range window {
		window[k] = r + k
	}
	return f.Scatter(Value{a}, iv, Value{u}, ScatterParams{
		Dims:    ScatterDims{UpdateWindowDims: window, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: r},
		Combine: Sum,
	})
}
