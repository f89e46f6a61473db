package autodiff

import (
	"slices"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// The convolution's rule, ported from JAX's _conv_general_dilated_transpose_lhs and _rhs
// (jax/_src/lax/convolution.py): the input's cotangent is a convolution of the result's
// cotangent with the reversed kernel, the kernel's a convolution of the input with the
// result's cotangent, each with the dilations, strides and padding swapped as JAX swaps them.

func init() { Register("stablehlo.convolution", convRule) }

// convSpec is one of JAX's conv specs: batch (or out-feature) dimension, feature (or
// in-feature) dimension, then the spatial dimensions.
type convSpec []int

func lhsSpec(d stablehlo.ConvDims) convSpec {
	return append(convSpec{d.InputBatch, d.InputFeature}, d.InputSpatial...)
}

func rhsSpec(d stablehlo.ConvDims) convSpec {
	return append(convSpec{d.KernelOutput, d.KernelInput}, d.KernelSpatial...)
}

func outSpec(d stablehlo.ConvDims) convSpec {
	return append(convSpec{d.OutputBatch, d.OutputFeature}, d.OutputSpatial...)
}

// swap is JAX's _conv_spec_transpose: the first two entries exchanged.
func (s convSpec) swap() convSpec {
	t := slices.Clone(s)
	t[0], t[1] = t[1], t[0]
	return t
}

// convDims builds dimension numbers from JAX's three specs.
func convDims(lhs, rhs, out convSpec) stablehlo.ConvDims {
	return stablehlo.ConvDims{
		InputBatch: lhs[0], InputFeature: lhs[1], InputSpatial: slices.Clone(lhs[2:]),
		KernelOutput: rhs[0], KernelInput: rhs[1], KernelSpatial: slices.Clone(rhs[2:]),
		OutputBatch: out[0], OutputFeature: out[1], OutputSpatial: slices.Clone(out[2:]),
	}
}

func take(dims []int, at []int) []int {
	out := make([]int, len(at))
	for i, a := range at {
		out[i] = dims[a]
	}
	return out
}

func dilateShape(n, d int) int {
	if n == 0 {
		return 0
	}
	return 1 + d*(n-1)
}

// reshapeAxisOutOf is JAX's _reshape_axis_out_of: axis src of size n*k becomes two axes, n
// then k.
func reshapeAxisOutOf(f *stablehlo.Function, src, n int, x Value) Value {
	d := x.Shape().Dims()
	shape := append(append(slices.Clone(d[:src]), n, d[src]/n), d[src+1:]...)
	return f.Reshape(x, shape...)
}

// reshapeAxisInto is JAX's _reshape_axis_into: axis src is merged into axis dst (numbered
// with src removed), as the major part.
func reshapeAxisInto(f *stablehlo.Function, src, dst int, x Value) Value {
	d := x.Shape().Dims()
	var perm []int
	for i := range d {
		if i != src {
			perm = append(perm, i)
		}
	}
	perm = slices.Insert(perm, dst, src)
	shape := slices.Delete(slices.Clone(d), src, src+1)
	shape[dst] *= d[src]
	if !isIdentity(perm) {
		x = f.Transpose(x, perm...)
	}
	return f.Reshape(x, shape...)
}

func convRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.ConvParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	lhs, rhs := op.Operands()[0], op.Operands()[1]
	g := cts[0]
	d := p.Dims
	ls, rs, os := lhsSpec(d), rhsSpec(d), outSpec(d)
	lhsShape, rhsShape, gShape := lhs.Shape().Dims(), rhs.Shape().Dims(), g.Shape().Dims()
	inS, winS, outS := take(lhsShape, ls[2:]), take(rhsShape, rs[2:]), take(gShape, os[2:])
	n := len(inS)
	fgc, bgc := max(p.FeatureGroupCount, 1), max(p.BatchGroupCount, 1)
	pads := p.Padding.Pairs
	if pads == nil {
		pads = make([][2]int, n)
	}
	out := make([]Value, 2)
	if b.Active(lhs) {
		// _conv_general_dilated_transpose_lhs
		k := rhs
		groups := fgc
		if fgc > 1 {
			k = reshapeAxisOutOf(f, rs[0], fgc, k)
			k = reshapeAxisInto(f, rs[0], rs[1], k)
		} else if bgc > 1 {
			k = reshapeAxisOutOf(f, rs[0], bgc, k)
			k = reshapeAxisInto(f, rs[0], rs[1], k)
			groups = bgc
		}
		lp := make([][2]int, n)
		for i := range n {
			lhsD := dilateShape(inS[i], p.LhsDilation[i])
			rhsD := dilateShape(winS[i], p.RhsDilation[i])
			outD := dilateShape(outS[i], p.Strides[i])
			before := rhsD - pads[i][0] - 1
			lp[i] = [2]int{before, lhsD + rhsD - 1 - outD - before}
		}
		x := f.Conv(g, f.Reverse(k, rs[2:]...), stablehlo.ConvParams{
			Dims:    convDims(os, rs.swap(), ls),
			Strides: slices.Clone(p.LhsDilation), Padding: stablehlo.Pads(lp...),
			LhsDilation: slices.Clone(p.Strides), RhsDilation: slices.Clone(p.RhsDilation),
			FeatureGroupCount: groups, BatchGroupCount: 1,
		})
		if bgc > 1 {
			x = reshapeAxisOutOf(f, ls[1], bgc, x)
			x = reshapeAxisInto(f, ls[1], ls[0], x)
		}
		out[0] = x
	}
	if b.Active(rhs) {
		// _conv_general_dilated_transpose_rhs
		if g.Shape().Size() == 0 {
			out[1] = b.Zeros(rhs.Shape())
			return out
		}
		tf, tb := fgc, bgc
		if bgc > 1 {
			tf, tb = bgc, 1
		} else if fgc > 1 {
			tf, tb = 1, fgc
		}
		rp := make([][2]int, n)
		for i := range n {
			lhsD := dilateShape(inS[i], p.LhsDilation[i])
			rhsD := dilateShape(winS[i], p.RhsDilation[i])
			outD := dilateShape(outS[i], p.Strides[i])
			lo := pads[i][0]
			rp[i] = [2]int{lo, outD - lhsD + rhsD - lo - 1}
		}
		out[1] = f.Conv(lhs, g, stablehlo.ConvParams{
			Dims:    convDims(ls.swap(), os.swap(), rs.swap()),
			Strides: slices.Clone(p.RhsDilation), Padding: stablehlo.Pads(rp...),
			LhsDilation: slices.Clone(p.LhsDilation), RhsDilation: slices.Clone(p.Strides),
			FeatureGroupCount: tf, BatchGroupCount: tb,
		})
	}
	return out
}
