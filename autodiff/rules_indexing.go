package autodiff

import (
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Rules of gather, scatter and the window ops, after JAX's (jax/_src/lax/slicing.py and
// windowed_reductions.py).

func init() {
	for name, r := range map[string]Rule{
		"stablehlo.gather":        gatherRule,
		"stablehlo.scatter":       scatterRule,
		"stablehlo.reduce_window": reduceWindowRule,

		"stablehlo.select_and_scatter": selectAndScatterRule,
	} {
		Register(name, r)
	}
}

// gatherRule is JAX's _gather_transpose_rule: the cotangent scatter-added into zeros at the
// gathered windows (a stablehlo.gather is JAX's gather in mode PROMISE_IN_BOUNDS or after
// CLIP's clamping: XLA clamps the windows of the gather, and the scatter drops windows
// outside the operand, as JAX's transpose does).
func gatherRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.GatherParams](b, op)
	if !ok {
		return nil
	}
	x, idx := op.Operands()[0], op.Operands()[1]
	d := p.Dims
	sd := stablehlo.ScatterDims{
		UpdateWindowDims:           d.OffsetDims,
		InsertedWindowDims:         d.CollapsedSliceDims,
		InputBatchingDims:          d.OperandBatchingDims,
		ScatterIndicesBatchingDims: d.StartIndicesBatchingDims,
		ScatterDimsToOperandDims:   d.StartIndexMap,
		IndexVectorDim:             d.IndexVectorDim,
	}
	out := b.f.Scatter(b.Zeros(x.Shape()), idx, cts[0], stablehlo.ScatterParams{Dims: sd, IndicesAreSorted: p.IndicesAreSorted, Combine: stablehlo.Sum})
	return []Value{out, {}}
}

// scatterGatherParams returns the gather that reads back the windows a scatter with
// dimension numbers d writes into an operand of shape xs from updates of shape us (JAX's
// _scatter_add_transpose_rule).
func scatterGatherParams(d stablehlo.ScatterDims, xs, us Shape) stablehlo.GatherParams {
	sizes := make([]int, xs.Rank())
	pos := 0
	for i := range sizes {
		if slices.Contains(d.InsertedWindowDims, i) || slices.Contains(d.InputBatchingDims, i) {
			sizes[i] = 1
			continue
		}
		sizes[i] = us.Dim(d.UpdateWindowDims[pos])
		pos++
	}
	return stablehlo.GatherParams{Dims: stablehlo.GatherDims{
		OffsetDims:               d.UpdateWindowDims,
		CollapsedSliceDims:       d.InsertedWindowDims,
		OperandBatchingDims:      d.InputBatchingDims,
		StartIndicesBatchingDims: d.ScatterIndicesBatchingDims,
		StartIndexMap:            d.ScatterDimsToOperandDims,
		IndexVectorDim:           d.IndexVectorDim,
	}, SliceSizes: sizes}
}

// gatherFill is JAX's gather in mode FILL_OR_DROP with fill value 0: windows that do not
// lie wholly inside t read zeros (a scatter drops such windows, so their updates get no
// cotangent).
func gatherFill(f *stablehlo.Function, t, idx Value, p stablehlo.GatherParams) Value {
	g := f.Gather(t, idx, p)
	if f.Failed() {
		return g
	}
	d := p.Dims
	is := idx.Shape()
	it := is.DType()
	bounds := make([]int64, len(d.StartIndexMap))
	for k, od := range d.StartIndexMap {
		bounds[k] = int64(t.Shape().Dim(od) - p.SliceSizes[od])
	}
	var ok Value // pred over the batch (non-index-vector) dimensions of idx
	if d.IndexVectorDim == is.Rank() {
		hi := f.Full(is, bounds[0])
		ok = f.And(f.Compare(idx, f.Full(is, 0), stablehlo.GE), f.Compare(idx, hi, stablehlo.LE))
	} else {
		hi := f.BroadcastInDim(f.ArrayOf(it, bounds, len(bounds)), is.Dims(), []int{d.IndexVectorDim})
		in := f.And(f.Compare(idx, f.Full(is, 0), stablehlo.GE), f.Compare(idx, hi, stablehlo.LE))
		all := f.ReduceMin(f.Convert(in, dtypes.Int32), d.IndexVectorDim)
		ok = f.Equal(all, f.Full(all.Shape(), 1))
	}
	gs := g.Shape()
	var batch []int // result dims that are not offset dims, in order
	for i := range gs.Rank() {
		if !slices.Contains(d.OffsetDims, i) {
			batch = append(batch, i)
		}
	}
	mask := f.BroadcastInDim(ok, gs.Dims(), batch)
	return f.Select(mask, g, f.Full(gs, 0))
}

// scatterRule: a scatter-add passes the cotangent to the operand and gathers it for the
// updates (JAX's _scatter_add_transpose_rule); a replacing scatter does the same with the
// replaced elements and the overwritten updates cut out, found as JAX's _scatter_jvp finds
// them, by scattering update ids. A multiplying scatter follows JAX's scatter_mul rules
// (the updates' cotangent needs UniqueIndices, as in JAX), a max or min scatter transposes
// JAX's _scatter_extremal_jvp (scatterExtremalVJP); a scatter with a Go combiner has no
// rule. With repeated indices the winner of a replacing scatter is the platform's choice;
// where scatters are not deterministic (GPUs, unless XLA_FLAGS has
// --xla_gpu_deterministic_ops=true) the scatter of ids may choose another winner than the
// forward scatter did, and the gradient follows the ids, as JAX's does.
func scatterRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.ScatterParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	x, idx, u := op.Operands()[0], op.Operands()[1], op.Operands()[2]
	g := cts[0]
	gp := scatterGatherParams(p.Dims, x.Shape(), u.Shape())
	gp.IndicesAreSorted = p.IndicesAreSorted
	out := make([]Value, 3)
	switch {
	case p.Custom:
		return b.Fail(op, "scatter with a Go combiner has no transpose rule")
	case p.Combine == stablehlo.Sum:
		if b.Active(x) {
			out[0] = g
		}
		if b.Active(u) {
			out[2] = gatherFill(f, g, idx, gp)
		}
	case p.Combine == 0:
		// Ids 1..n of the updates' scatter (non-window) elements, broadcast over the windows;
		// the id that lands on an element is the update that won it.
		us := u.Shape()
		var batch []int
		var bdims []int
		for i := range us.Rank() {
			if !slices.Contains(p.Dims.UpdateWindowDims, i) {
				batch = append(batch, i)
				bdims = append(bdims, us.Dim(i))
			}
		}
		n := 1
		for _, v := range bdims {
			n *= v
		}
		ids := f.Add(f.Iota(stablehlo.NewShape(dtypes.Int32, n), 0), f.Full(stablehlo.NewShape(dtypes.Int32, n), 1))
		ids = f.BroadcastInDim(f.Reshape(ids, bdims...), us.Dims(), batch)
		won := f.Scatter(f.Full(x.Shape().WithDType(dtypes.Int32), 0), idx, ids,
			stablehlo.ScatterParams{Dims: p.Dims, IndicesAreSorted: p.IndicesAreSorted, UniqueIndices: p.UniqueIndices})
		if b.Active(x) {
			out[0] = f.Select(f.Equal(won, f.Full(won.Shape(), 0)), g, b.Zeros(g.Shape()))
		}
		if b.Active(u) {
			back := gatherFill(f, won, idx, gp)
			out[2] = f.Select(f.Equal(back, ids), gatherFill(f, g, idx, gp), b.Zeros(us))
		}
	case p.Combine == stablehlo.Prod:
		// JAX's scatter_mul JVP and transpose: the operand's cotangent is the cotangent
		// scattered with the same products; the updates' needs unique indices.
		if b.Active(u) && !p.UniqueIndices {
			return b.Fail(op, "scatter with Prod: the gradient with respect to the updates is only defined with unique indices (as in JAX: scatter_mul gradients need unique_indices=True)")
		}
		if b.Active(x) {
			out[0] = f.Scatter(g, idx, u, p)
		}
		if b.Active(u) {
			out[2] = gatherFill(f, f.Mul(g, x), idx, gp)
		}
	case p.Combine == stablehlo.Max || p.Combine == stablehlo.Min:
		out[0], out[2] = scatterExtremalVJP(b, op, p, gp, g)
	default:
		return b.Fail(op, "scatter with %v has no transpose rule", p.Combine)
	}
	return out
}

// scatterExtremalVJP transposes JAX's _scatter_extremal_jvp, the JVP of a scatter that
// takes a max or min: where updates and the element they land on tie for the result, the
// result's cotangent is split evenly among the winning updates and (if it kept its value)
// the element. It returns the cotangents of the operand and of the updates.
func scatterExtremalVJP(b *Backward, op *stablehlo.Op, p stablehlo.ScatterParams, gp stablehlo.GatherParams, g Value) (Value, Value) {
	f := b.f
	x, idx, u, y := op.Operands()[0], op.Operands()[1], op.Operands()[2], op.Results()[0]
	us := u.Shape()
	sum := stablehlo.ScatterParams{Dims: p.Dims, IndicesAreSorted: p.IndicesAreSorted, UniqueIndices: p.UniqueIndices, Combine: stablehlo.Sum}
	zerosX, onesU, zerosU := b.Zeros(x.Shape()), f.Full(us, 1), b.Zeros(us)
	won := f.Equal(u, f.Gather(y, idx, gp))                     // the update is the result
	kept := f.Equal(f.Gather(x, idx, gp), f.Gather(y, idx, gp)) // the element is the result
	wins := f.Gather(f.Scatter(zerosX, idx, f.Select(won, onesU, zerosU), sum), idx, gp)
	refs := f.Gather(f.Scatter(zerosX, idx, onesU, sum), idx, gp)
	shared := f.Div(onesU, f.Add(wins, onesU)) // the element kept its value: one more share
	updCoef := f.Select(won, f.Select(kept, shared, f.Div(onesU, wins)), zerosU)
	opCoef := f.Div(f.Sub(f.Select(kept, shared, zerosU), onesU), refs)
	// ct is zero at windows the scatter dropped; the coefficients there may not be finite.
	ct := gatherFill(f, g, idx, gp)
	inBounds := f.Compare(gatherFill(f, f.Full(x.Shape(), 1), idx, gp), zerosU, stablehlo.NE) // NE: complex has no GT
	var ctX, ctU Value
	if b.Active(x) {
		ctX = f.Add(g, f.Scatter(zerosX, idx, f.Select(inBounds, f.Mul(ct, opCoef), zerosU), sum))
	}
	if b.Active(u) {
		ctU = f.Select(inBounds, f.Mul(ct, updCoef), zerosU)
	}
	return ctX, ctU
}

// reduceWindowRule: a windowed sum spreads each window's cotangent back over the window
// (JAX's _reduce_window_sum_transpose_rule: pad, then a windowed sum); a windowed max or
// min gives it to the first maximum (minimum) of each window (JAX's select_and_gather_add
// transposed: select_and_scatter_add), which needs window dilations of 1. A windowed Prod
// and a Go body (ReduceWindowFunc) are refused, as jax.vjp refuses them (jaxGenericWindow).
//
// The reduce_window of Cumsum (stablehlo.CumulativeParams) transposes to a cumulative sum in
// the other direction (JAX's cumsum transpose); Cumprod, Cummax and Cummin transpose the
// associative scan JAX differentiates (see cumulativeVJP): a running maximum's cotangent goes
// to the element it came from, split in halves where lax.max meets a tie.
func reduceWindowRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	if c, ok := op.Params().(stablehlo.CumulativeParams); ok {
		if c.Reduction == stablehlo.Sum {
			return []Value{b.f.Cumsum(cts[0], c.Axis, !c.Reverse), {}}
		}
		return []Value{cumulativeVJP(b, op.Operands()[0], cts[0], c.Reduction, c.Axis, c.Reverse), {}}
	}
	p, ok := params[stablehlo.ReduceWindowParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	x := op.Operands()[0]
	g := cts[0]
	xs := x.Shape()
	r := xs.Rank()
	ones := slices.Repeat([]int{1}, r)
	out := make([]Value, len(op.Operands()))
	switch p.Reduction {
	case stablehlo.Sum:
		pads := convVJPLHSPadding(xs.Dims(), p.Window, p.Strides, g.Shape().Dims(), p.Padding.Pairs, p.BaseDilations, p.WindowDilations)
		low, high, interior := make([]int, r), make([]int, r), make([]int, r)
		for i := range r {
			low[i], high[i], interior[i] = pads[i][0], pads[i][1], p.Strides[i]-1
		}
		padded := f.Pad(g, f.Full(stablehlo.NewShape(g.DType()), 0), low, high, interior)
		out[0] = f.ReduceWindow(padded, stablehlo.Sum, stablehlo.ReduceWindowParams{
			Window: p.Window, Strides: p.BaseDilations, BaseDilations: ones, WindowDilations: p.WindowDilations,
			Padding: stablehlo.Pads(make([][2]int, r)...)})
	case stablehlo.Max, stablehlo.Min:
		if !slices.Equal(p.WindowDilations, ones) {
			return b.Fail(op, "the VJP of a windowed %v with window dilations %v is not implemented (as in JAX)", p.Reduction, p.WindowDilations)
		}
		sel, fill := stablehlo.GE, math.Inf(-1)
		if p.Reduction == stablehlo.Min {
			sel, fill = stablehlo.LE, math.Inf(1)
		}
		operand := x
		dilated := !slices.Equal(p.BaseDilations, ones)
		if dilated {
			interior := make([]int, r)
			for i, d := range p.BaseDilations {
				interior[i] = d - 1
			}
			operand = f.Pad(x, f.Full(stablehlo.NewShape(x.DType()), fill), make([]int, r), make([]int, r), interior)
		}
		res := f.SelectAndScatter(operand, g, stablehlo.SelectAndScatterParams{Select: sel, Window: p.Window, Strides: p.Strides, Padding: p.Padding})
		if dilated {
			res = f.Slice(res, make([]int, r), res.Shape().Dims(), p.BaseDilations)
		}
		out[0] = res
	case stablehlo.Prod:
		return b.Fail(op, "a windowed Prod is not differentiable in reverse mode: %s", jaxGenericWindow)
	default:
		return b.Fail(op, "a reduce_window with a Go body (ReduceWindowFunc) is not differentiable in reverse mode: %s; "+
			"ReduceWindow with Sum, Max or Min has a rule", jaxGenericWindow)
	}
	return out
}

// jaxGenericWindow says why a windowed product or a reduce_window with a Go body has no
// rule: lax.reduce_window turns only lax.add, lax.max and lax.min with their identities
// into the window reductions that have transpose rules; any other computation binds the
// generic reduce_window primitive, which JAX differentiates forward (jax.jvp) but cannot
// transpose.
const jaxGenericWindow = "JAX's generic reduce_window (lax.mul or any computation other than " +
	"add, max and min with their identities) has a JVP rule and no transpose, so jax.vjp refuses it too"

// convVJPLHSPadding is JAX's _conv_general_vjp_lhs_padding: the (low, high) padding of the
// cotangent that a transposed window op slides its window over.
func convVJPLHSPadding(in, window, strides, out []int, padding [][2]int, lhsDil, rhsDil []int) [][2]int {
	dil := func(n, d int) int {
		if n == 0 {
			return 0
		}
		return 1 + d*(n-1)
	}
	res := make([][2]int, len(in))
	for i := range in {
		lhs, rhs, o := dil(in[i], lhsDil[i]), dil(window[i], rhsDil[i]), dil(out[i], strides[i])
		lo := 0
		if padding != nil {
			lo = padding[i][0]
		}
		before := rhs - lo - 1
		res[i] = [2]int{before, lhs + rhs - 1 - o - before}
	}
	return res
}

// selectAndScatterRule is JAX's _select_and_scatter_add_transpose: the op is linear in its
// source, whose cotangent is the cotangent of the result read at the element each window
// selected (select_and_gather_add); the operand only chooses the elements and gets no
// cotangent, as in JAX. It makes a max or min pool's gradient differentiable again, for
// Hessian-vector products and JVP through a pool.
func selectAndScatterRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.SelectAndScatterParams](b, op)
	if !ok {
		return nil
	}
	out := make([]Value, len(op.Operands()))
	if b.Active(op.Operands()[1]) {
		out[1] = selectAndGather(b.f, op.Operands()[0], cts[0], op.Operands()[1].Shape(), p)
	}
	return out
}

// selectAndGather returns, for each window of operand (p's window, strides and padding),
// the element of t at the element of operand the window selects: walking the window in
// row-major order, a candidate replaces the element chosen so far unless p.Select(chosen,
// candidate) holds, and padding is never chosen, as stablehlo.select_and_scatter chooses.
// out is the shape of the windows' result.
func selectAndGather(f *stablehlo.Function, operand, t Value, out Shape, p stablehlo.SelectAndScatterParams) Value {
	if out.Size() == 0 {
		return f.Full(out, 0)
	}
	xs := operand.Shape()
	r := xs.Rank()
	low, high := make([]int, r), make([]int, r)
	for i, q := range p.Padding.Pairs {
		low[i], high[i] = q[0], q[1]
	}
	strides := p.Strides
	if strides == nil {
		strides = slices.Repeat([]int{1}, r)
	}
	zero := f.Full(stablehlo.NewShape(operand.DType()), 0)
	interior := make([]int, r)
	xp := f.Pad(operand, zero, low, high, interior)
	tp := f.Pad(t, zero, low, high, interior)
	vp := f.Pad(f.Full(xs, 1), zero, low, high, interior) // 1 on the operand, 0 on padding
	var best, bestT, bestValid Value
	offset := make([]int, r)
	for first := true; ; first = false {
		start, limit := make([]int, r), make([]int, r)
		for i := range r {
			start[i] = offset[i]
			limit[i] = offset[i] + (out.Dim(i)-1)*strides[i] + 1
		}
		v, tv := f.Slice(xp, start, limit, strides), f.Slice(tp, start, limit, strides)
		valid := f.Greater(f.Slice(vp, start, limit, strides), f.Full(out, 0))
		if first {
			best, bestT, bestValid = v, tv, valid
		} else {
			take := f.And(valid, f.Or(f.Not(bestValid), f.Not(f.Compare(best, v, p.Select))))
			best, bestT, bestValid = f.Select(take, v, best), f.Select(take, tv, bestT), f.Or(bestValid, valid)
		}
		// The next offset in the window, row-major.
		i := r - 1
		for ; i >= 0; i-- {
			offset[i]++
			if offset[i] < p.Window[i] {
				break
			}
			offset[i] = 0
		}
		if i < 0 || f.Failed() {
			break
		}
	}
	return bestT
}
