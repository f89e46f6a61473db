package linalg

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Value and Shape are the builder's.
type (
	Value = stablehlo.Value
	Shape = stablehlo.Shape
)

// opName is the op errors name: what this package emits for each function is a custom call.
const opName = "custom_call"

// prefixes are LAPACK's type prefixes of the element types its kernels take.
var prefixes = map[dtypes.DType]string{dtypes.Float32: "s", dtypes.Float64: "d", dtypes.Complex64: "c",
	dtypes.Complex128: "z"}

// realOf is the type of a real result (eigenvalues, singular values) for element type d.
func realOf(d dtypes.DType) dtypes.DType {
	switch d {
	case dtypes.Complex64:
		return dtypes.Float32
	case dtypes.Complex128:
		return dtypes.Float64
	}
	return d
}

// matrices checks that x is a batch of matrices (square ones if square) of a type LAPACK takes,
// for function fn (jnp's name, for the message), and returns its batch dimensions and its
// matrices' rows and columns.
func matrices(f *stablehlo.Function, fn string, x Value, square bool) (batch []int, m, n int, ok bool) {
	vs, ok := f.Operands(opName, x)
	if !ok {
		return nil, 0, 0, false
	}
	s := vs[0].Shape()
	d := s.Dims()
	if len(d) < 2 || square && d[len(d)-1] != d[len(d)-2] {
		want := "[..., m, n]"
		if square {
			want = "[..., n, n]"
		}
		f.Failf(opName, 0, x, stablehlo.ErrShape, "The input to %s must have shape %s, got shape %s", fn, want,
			shapes.PyTuple(d))
		return nil, 0, 0, false
	}
	if _, ok := prefixes[s.DType()]; !ok {
		f.Failf(opName, 0, x, stablehlo.ErrDType, "%s takes float32, float64, complex64 or complex128 matrices, got %s",
			fn, shapes.NumPyName(s.DType()))
		return nil, 0, 0, false
	}
	return d[:len(d)-2], d[len(d)-2], d[len(d)-1], true
}

// kernel is one call of a LAPACK kernel, as JAX's CPU lowering writes it.
type kernel struct {
	routine  string // the routine without its type prefix, e.g. "potrf"
	cRoutine string // the routine's name for complex types where it differs ("ungqr" for "orgqr")
	args     []Value
	results  []Shape
	config   []string      // mhlo.backend_config entries, "name = value : type", in name order
	aliases  map[int]int   // result index -> the operand index it aliases
	batch    int           // leading batch dimensions, shared by every operand and result
	rule     autodiff.Rule // the call's transpose rule, given to the module; nil: none yet
}

// emit adds the custom call and returns its results.
func (k kernel) emit(f *stablehlo.Function) []Value {
	d := k.args[0].DType()
	routine := k.routine
	if shapes.IsComplex(d) && k.cRoutine != "" {
		routine = k.cRoutine
	}
	target := "lapack_" + prefixes[d] + routine + "_ffi"
	var aliases []string
	for out := range len(k.results) {
		in, ok := k.aliases[out]
		if !ok {
			continue
		}
		idx := ""
		if len(k.results) > 1 {
			idx = strconv.Itoa(out)
		}
		aliases = append(aliases, fmt.Sprintf("#stablehlo.output_operand_alias<output_tuple_indices = [%s], "+
			"operand_index = %d, operand_tuple_indices = []>", idx, in))
	}
	argShapes := make([]Shape, len(k.args))
	for i, a := range k.args {
		argShapes[i] = a.Shape()
	}
	attrs := []stablehlo.Attr{
		{Name: "mhlo.backend_config", Value: "{" + strings.Join(k.config, ", ") + "}"},
		{Name: "mhlo.frontend_attributes", Value: fmt.Sprintf("{num_batch_dims = %q}", strconv.Itoa(k.batch))},
		{Name: "operand_layouts", Value: layouts(argShapes, k.batch)},
		{Name: "output_operand_aliases", Value: "[" + strings.Join(aliases, ", ") + "]"},
		{Name: "result_layouts", Value: layouts(k.results, k.batch)},
		{Name: "sdy.sharding_rule", Value: shardingRule(argShapes, k.results, k.batch)},
	}
	if k.rule != nil && f.Module() != nil {
		autodiff.RegisterCustomCallFor(f.Module(), target, k.rule)
	}
	return f.CustomCall(target, k.args, k.results, attrs...)
}

// layouts writes the minor-to-major layouts of shapes as JAX gives LAPACK kernels: matrices
// (two dimensions after the batch) column-major, anything else row-major.
func layouts(ss []Shape, batch int) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		r := s.Rank()
		var order []int
		if r-batch >= 2 {
			order = append(order, r-2, r-1)
			for d := r - 3; d >= 0; d-- {
				order = append(order, d)
			}
		} else {
			for d := r - 1; d >= 0; d-- {
				order = append(order, d)
			}
		}
		parts := make([]string, len(order))
		for j, o := range order {
			parts[j] = strconv.Itoa(o)
		}
		switch r { // MLIR prints a one-element dense attribute as a splat
		case 0:
			out[i] = "dense<> : tensor<0xindex>"
		case 1:
			out[i] = "dense<0> : tensor<1xindex>"
		default:
			out[i] = fmt.Sprintf("dense<[%s]> : tensor<%dxindex>", strings.Join(parts, ", "), r)
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// shardingRule is the Shardy rule JAX gives the call: the batch dimensions are factors every
// operand and result shares, every other dimension a factor of its own, and the rule custom
// (Shardy propagates through the batch factors only).
func shardingRule(args, results []Shape, batch int) string {
	var sizes []string
	next := 0
	name := func() string {
		i := next
		next++
		if i < 18 {
			return string(rune('i' + i))
		}
		return "z_" + strconv.Itoa(i-17)
	}
	var batchNames []string
	if len(args) > 0 {
		for d := range batch {
			n := name()
			batchNames = append(batchNames, n)
			sizes = append(sizes, fmt.Sprintf("%s=%d", n, args[0].Dim(d)))
		}
	}
	factors := func(ss []Shape) string {
		parts := make([]string, len(ss))
		for i, s := range ss {
			fs := append([]string(nil), batchNames[:min(batch, s.Rank())]...)
			for d := batch; d < s.Rank(); d++ {
				n := name()
				fs = append(fs, n)
				sizes = append(sizes, fmt.Sprintf("%s=%d", n, s.Dim(d)))
			}
			parts[i] = "[" + strings.Join(fs, ", ") + "]"
		}
		return strings.Join(parts, ", ")
	}
	in := factors(args)
	out := factors(results)
	return fmt.Sprintf("#sdy.op_sharding_rule<(%s)->(%s) {%s}, custom>", in, out, strings.Join(sizes, ", "))
}

// char is a LAPACK character flag, as JAX writes it in the backend config.
func char(name string, c byte) string { return fmt.Sprintf("%s = %d : ui8", name, c) }

// shapeOf returns the shape of element type d with the batch dimensions then dims.
func shapeOf(d dtypes.DType, batch []int, dims ...int) Shape {
	return stablehlo.NewShape(d, append(append([]int(nil), batch...), dims...)...)
}

// nanUnless returns x where ok (a pred of the batch dimensions) holds, NaN elsewhere: JAX's
// answer for a matrix whose factorization failed.
func nanUnless(f *stablehlo.Function, ok, x Value, batch []int) Value {
	dims := x.Shape().Dims()
	keep := append(append([]int(nil), batch...), make([]int, len(dims)-len(batch))...)
	for i := len(batch); i < len(keep); i++ {
		keep[i] = 1
	}
	sel := f.BroadcastInDim(f.BroadcastInDim(ok, keep, iotaInts(len(batch))), dims, iotaInts(len(dims)))
	nan := f.Full(stablehlo.NewShape(realOf(x.DType()), dims...), math.NaN())
	if shapes.IsComplex(x.DType()) {
		nan = f.Convert(nan, x.DType())
	}
	return f.Select(sel, x, nan)
}

// iotaInts is 0, 1, ..., n-1.
func iotaInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// infoIs compares LAPACK's info results with 0 (dir EQ or GE).
func infoIs(f *stablehlo.Function, info Value, dir stablehlo.Comparison) Value {
	return f.Compare(info, f.Full(info.Shape(), int32(0)), dir)
}

// adjoint returns the conjugate transpose of x's matrices (the transpose for real types).
func adjoint(f *stablehlo.Function, x Value) Value {
	t := transposeLast(f, x)
	if shapes.IsComplex(x.DType()) {
		t = f.Conj(t)
	}
	return t
}

// symmetrize returns (x + xᴴ) / 2, as JAX's symmetrize.
func symmetrize(f *stablehlo.Function, x Value) Value {
	return f.Div(f.Add(x, adjoint(f, x)), f.Full(x.Shape(), 2))
}

// Cholesky returns the lower Cholesky factor L (x = L Lᴴ) of each Hermitian positive definite
// matrix of x (..., n, n), as jnp.linalg.cholesky: x symmetrized ((x + xᴴ)/2), factored by
// lapack_?potrf_ffi, the matrices whose factorization fails all NaN, zeros above the diagonal.
func Cholesky(f *stablehlo.Function, x Value) Value {
	batch, _, _, ok := matrices(f, "linalg.cholesky", x, true)
	if !ok {
		return Value{}
	}
	r := kernel{routine: "potrf", args: []Value{symmetrize(f, x)},
		results: []Shape{x.Shape(), shapeOf(dtypes.Int32, batch)},
		config:  []string{char("uplo", 'L')}, aliases: map[int]int{0: 0}, batch: len(batch), rule: potrfRule}.emit(f)
	if len(r) != 2 || f.Failed() {
		return Value{}
	}
	return jnp.Tril(f, nanUnless(f, infoIs(f, r[1], stablehlo.EQ), r[0], batch), 0)
}

// TriangularOptions are lax.linalg.triangular_solve's keywords; the zero value is its defaults.
type TriangularOptions struct {
	// LeftSide solves a x = b; else x a = b.
	LeftSide bool
	// Lower reads a's lower triangle; else its upper one.
	Lower bool
	// TransposeA uses aᵀ (aᴴ with ConjugateA); ConjugateA alone uses conj(a).
	TransposeA, ConjugateA bool
	// UnitDiagonal takes a's diagonal as ones without reading it.
	UnitDiagonal bool
}

// TriangularSolve solves op(a) x = b (LeftSide) or x op(a) = b for x, a a batch of triangular
// matrices (..., n, n) and b of (..., n, k) (LeftSide) or (..., k, n) matrices with the same
// batch, as lax.linalg.triangular_solve lowers on CPU: lapack_?trsm_ffi.
func TriangularSolve(f *stablehlo.Function, a, b Value, o TriangularOptions) Value {
	batch, _, n, ok := matrices(f, "linalg.triangular_solve", a, true)
	if !ok {
		return Value{}
	}
	bb, rows, cols, ok := matrices(f, "linalg.triangular_solve", b, false)
	if !ok {
		return Value{}
	}
	if fmt.Sprint(bb) != fmt.Sprint(batch) || (o.LeftSide && rows != n) || (!o.LeftSide && cols != n) ||
		a.DType() != b.DType() {
		side := "right"
		if o.LeftSide {
			side = "left"
		}
		f.Failf(opName, 1, b, stablehlo.ErrShape, "triangular_solve: a of shape %s and b of shape %s do not "+
			"match for a %s-side solve (the same batch and element type, b's %s dimension n)", shapes.PyTuple(a.Shape().Dims()),
			shapes.PyTuple(b.Shape().Dims()), side, map[bool]string{true: "rows'", false: "columns'"}[o.LeftSide])
		return Value{}
	}
	if o.ConjugateA && !o.TransposeA && shapes.IsComplex(a.DType()) {
		a = f.Conj(a)
	}
	trans, side, uplo, diag := byte('N'), byte('R'), byte('U'), byte('N')
	if o.TransposeA {
		trans = 'T'
		if o.ConjugateA {
			trans = 'C'
		}
	}
	if o.LeftSide {
		side = 'L'
	}
	if o.Lower {
		uplo = 'L'
	}
	if o.UnitDiagonal {
		diag = 'U'
	}
	r := kernel{routine: "trsm", args: []Value{a, b}, results: []Shape{b.Shape()},
		config:  []string{char("diag", diag), char("side", side), char("trans_x", trans), char("uplo", uplo)},
		aliases: map[int]int{0: 1}, batch: len(batch), rule: trsmRule}.emit(f)
	if len(r) != 1 {
		return Value{}
	}
	return r[0]
}

// LU returns the LU factorization with partial pivoting of each m x n matrix of x, as
// lax.linalg.lu on CPU (lapack_?getrf_ffi): lu holds L below the diagonal (its unit diagonal
// implied) and U on and above it; pivots (..., min(m, n)) the 0-based row each row i was
// swapped with, in order; permutation (..., m) the rows of x that make up L U. A matrix whose
// factorization fails is all NaN in lu (a singular one is not a failure: U has a zero pivot).
func LU(f *stablehlo.Function, x Value) (lu, pivots, permutation Value) {
	batch, m, n, ok := matrices(f, "linalg.lu", x, false)
	if !ok {
		return Value{}, Value{}, Value{}
	}
	k := min(m, n)
	r := kernel{routine: "getrf", args: []Value{x},
		results: []Shape{x.Shape(), shapeOf(dtypes.Int32, batch, k), shapeOf(dtypes.Int32, batch)},
		aliases: map[int]int{0: 0}, batch: len(batch), rule: getrfRule}.emit(f)
	if len(r) != 3 || f.Failed() {
		return Value{}, Value{}, Value{}
	}
	pivots = f.Sub(r[1], f.Full(r[1].Shape(), int32(1)))
	lu = nanUnless(f, infoIs(f, r[2], stablehlo.GE), r[0], batch)
	return lu, pivots, pivotsToPermutation(f, pivots, batch, k, m)
}

// pivotsToPermutation applies the k row swaps of pivots, in order, to the rows 0..m-1: a loop
// of k steps, as JAX's lu_pivots_to_permutation.
func pivotsToPermutation(f *stablehlo.Function, pivots Value, batch []int, k, m int) Value {
	permShape := shapeOf(dtypes.Int32, batch, m)
	perm := f.Iota(permShape, len(batch))
	if k == 0 || m == 0 {
		return perm
	}
	out := f.ForLoop(k, []Value{perm}, func(g *stablehlo.Function, i Value, carry []Value) []Value {
		p, i32 := carry[0], i
		starts := make([]Value, len(batch)+1)
		for d := range batch {
			starts[d] = g.Full(stablehlo.NewShape(dtypes.Int32), int32(0))
		}
		starts[len(batch)] = i32
		sizes := append(append([]int(nil), batch...), 1)
		j := g.DynamicSlice(pivots, starts, sizes)   // the row swapped with row i
		pi := g.DynamicSlice(p, starts, sizes)       // p[i]
		pj := jnp.TakeAlongAxis(g, p, j, len(batch)) // p[j]
		rows := g.Iota(permShape, len(batch))
		isI := g.Compare(rows, g.BroadcastTo(i32, permShape.Dims()...), stablehlo.EQ)
		isJ := g.Compare(rows, g.BroadcastTo(j, permShape.Dims()...), stablehlo.EQ)
		swapped := g.Select(isJ, g.BroadcastTo(pi, permShape.Dims()...), p)
		return []Value{g.Select(isI, g.BroadcastTo(pj, permShape.Dims()...), swapped)}
	})
	if len(out) != 1 {
		return Value{}
	}
	return out[0]
}

// Solve returns x with a x = b for each square matrix of a (..., n, n), as jnp.linalg.solve on
// CPU: LU with partial pivoting (LU), b's rows permuted, then the two triangular solves. b is
// (..., n, k) with a's batch, or a vector of n (NumPy 2's rule: a 1-D b is a vector).
func Solve(f *stablehlo.Function, a, b Value) Value {
	batch, _, n, ok := matrices(f, "linalg.solve", a, true)
	if !ok {
		return Value{}
	}
	vs, ok := f.Operands(opName, b)
	if !ok {
		return Value{}
	}
	bd := vs[0].Shape().Dims()
	vector := len(bd) == 1
	if vector {
		if len(batch) > 0 || bd[0] != n {
			f.Failf(opName, 1, b, stablehlo.ErrShape, "solve: a vector b (shape %s) takes a single n x n matrix a, "+
				"got a of shape %s", shapes.PyTuple(bd), shapes.PyTuple(a.Shape().Dims()))
			return Value{}
		}
		b = f.Reshape(b, n, 1)
	} else if len(bd) != len(batch)+2 || fmt.Sprint(bd[:len(batch)]) != fmt.Sprint(batch) || bd[len(bd)-2] != n {
		f.Failf(opName, 1, b, stablehlo.ErrShape, "solve: b of shape %s does not match a of shape %s: want "+
			"(..., n, k) with a's batch, or a vector of n", shapes.PyTuple(bd), shapes.PyTuple(a.Shape().Dims()))
		return Value{}
	}
	lu, _, perm := LU(f, a)
	if f.Failed() {
		return Value{}
	}
	dims := b.Shape().Dims()
	idx := f.BroadcastInDim(perm, dims, iotaInts(len(batch)+1))
	x := jnp.TakeAlongAxis(f, b, idx, len(batch))
	x = TriangularSolve(f, lu, x, TriangularOptions{LeftSide: true, Lower: true, UnitDiagonal: true})
	x = TriangularSolve(f, lu, x, TriangularOptions{LeftSide: true})
	if vector {
		x = f.Reshape(x, n)
	}
	return x
}

// QR returns the QR factorization of each m x n matrix of x, as jnp.linalg.qr on CPU
// (lapack_?geqrf_ffi, then lapack_?orgqr_ffi or ?ungqr_ffi for Q): Q with orthonormal columns
// and R upper triangular, x = Q R. With complete, Q is m x m and R m x n (mode "complete"),
// else Q is m x k and R k x n, k = min(m, n) (mode "reduced", jnp's default).
func QR(f *stablehlo.Function, x Value, complete bool) (q, r Value) {
	batch, m, n, ok := matrices(f, "linalg.qr", x, false)
	if !ok {
		return Value{}, Value{}
	}
	d := x.DType()
	k := min(m, n)
	if complete {
		k = m
	}
	if m == 0 || n == 0 {
		q = f.Convert(diagonal(f, shapeOf(d, batch, m, k).Dims()), d)
		return q, f.Full(shapeOf(d, batch, k, n), 0)
	}
	kk := min(m, n)
	g := kernel{routine: "geqrf", args: []Value{x}, results: []Shape{x.Shape(), shapeOf(d, batch, kk)},
		aliases: map[int]int{0: 0}, batch: len(batch), rule: geqrfRule}.emit(f)
	if len(g) != 2 || f.Failed() {
		return Value{}, Value{}
	}
	r, taus := g[0], g[1]
	householder := func(a Value) Value {
		out := kernel{routine: "orgqr", cRoutine: "ungqr", args: []Value{a, taus}, results: []Shape{a.Shape()},
			aliases: map[int]int{0: 0}, batch: len(batch), rule: orgqrRule}.emit(f)
		if len(out) != 1 {
			return Value{}
		}
		if m >= n && (!complete || m == n) { // where JAX defines the derivative
			linkQR(f, r, a, out[0])
		}
		return out[0]
	}
	rank := len(batch) + 2
	lo, hi := make([]int, rank), x.Shape().Dims()
	switch {
	case m < n:
		hi[rank-1] = m
		q = householder(f.Slice(r, lo, hi, nil))
	case complete:
		pad := make([]int, rank)
		pad[rank-1] = m - n
		q = householder(f.Pad(r, f.Full(stablehlo.NewShape(d), 0), make([]int, rank), pad, make([]int, rank)))
	default:
		q = householder(r)
		hi[rank-2] = n
		r = f.Slice(r, lo, hi, nil)
	}
	return q, jnp.Triu(f, r, 0)
}

// Eigh returns the eigenvalues w (real, ascending) and eigenvectors v (v's columns) of each
// Hermitian matrix of x, as jnp.linalg.eigh on CPU: x symmetrized, lapack_?syevd_ffi or
// ?heevd_ffi reading its lower triangle, the matrices whose decomposition fails all NaN.
func Eigh(f *stablehlo.Function, x Value) (w, v Value) {
	batch, _, n, ok := matrices(f, "linalg.eigh", x, true)
	if !ok {
		return Value{}, Value{}
	}
	r := kernel{routine: "syevd", cRoutine: "heevd", args: []Value{symmetrize(f, x)},
		results: []Shape{x.Shape(), shapeOf(realOf(x.DType()), batch, n), shapeOf(dtypes.Int32, batch)},
		config:  []string{char("mode", 'V'), char("uplo", 'L')}, aliases: map[int]int{0: 0}, batch: len(batch),
		rule: syevdRule}.emit(f)
	if len(r) != 3 || f.Failed() {
		return Value{}, Value{}
	}
	good := infoIs(f, r[2], stablehlo.EQ)
	return nanUnless(f, good, r[1], batch), nanUnless(f, good, r[0], batch)
}

// SVD returns the singular value decomposition x = u diag(s) vh of each m x n matrix of x, as
// jnp.linalg.svd on CPU (lapack_?gesdd_ffi, divide and conquer): s real and descending, u and
// vh with orthonormal columns and rows; with fullMatrices u is m x m and vh n x n, else m x k
// and k x n, k = min(m, n). The matrices whose decomposition fails are all NaN.
func SVD(f *stablehlo.Function, x Value, fullMatrices bool) (u, s, vh Value) {
	batch, m, n, ok := matrices(f, "linalg.svd", x, false)
	if !ok {
		return Value{}, Value{}, Value{}
	}
	d, k := x.DType(), min(m, n)
	uc, vr, mode := k, k, byte('S')
	if fullMatrices {
		uc, vr, mode = m, n, 'A'
	}
	if m == 0 || n == 0 {
		eye := func(a, b int) Value { return f.Convert(diagonal(f, shapeOf(d, batch, a, b).Dims()), d) }
		return eye(m, uc), f.Full(shapeOf(realOf(d), batch, 0), 0), eye(vr, n)
	}
	r := kernel{routine: "gesdd", args: []Value{x},
		results: []Shape{x.Shape(), shapeOf(realOf(d), batch, k), shapeOf(d, batch, m, uc), shapeOf(d, batch, vr, n),
			shapeOf(dtypes.Int32, batch)},
		config: []string{char("mode", mode)}, aliases: map[int]int{0: 0}, batch: len(batch), rule: gesddRule}.emit(f)
	if len(r) != 5 || f.Failed() {
		return Value{}, Value{}, Value{}
	}
	good := infoIs(f, r[4], stablehlo.EQ)
	return nanUnless(f, good, r[2], batch), nanUnless(f, good, r[1], batch), nanUnless(f, good, r[3], batch)
}
