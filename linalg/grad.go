package linalg

import (
	"strconv"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The transpose rules of the kernels, which each function gives the module it builds in
// (autodiff.RegisterCustomCallFor), so that reverse mode differentiates through them as JAX
// does: each is the transpose of JAX's JVP rule of the primitive, written with this package's
// own functions. A complex cotangent follows JAX's convention (package autodiff): the plain
// transpose of the linear map, without conjugation.

// flags returns the character flags of a recorded kernel call, by name.
func flags(op *stablehlo.Op) map[string]byte {
	out := map[string]byte{}
	p, ok := op.Params().(stablehlo.CustomCallParams)
	if !ok {
		return out
	}
	for _, a := range p.Attrs {
		if a.Name != "mhlo.backend_config" {
			continue
		}
		// The entries "name = 76 : ui8" of the dictionary.
		var toks []mlir.Token
		for s := mlir.NewScanner(a.Value); ; {
			t := s.Next()
			if t.Kind == mlir.EOF {
				break
			}
			toks = append(toks, t)
		}
		for i := 0; i+4 < len(toks); i++ {
			name, eq, v, colon, typ := toks[i], toks[i+1], toks[i+2], toks[i+3], toks[i+4]
			if name.Kind != mlir.Ident || !eq.Is(mlir.Punct, "=") || v.Kind != mlir.Int ||
				!colon.Is(mlir.Punct, ":") || !typ.Is(mlir.Ident, "ui8") {
				continue
			}
			if n, err := strconv.ParseUint(v.Text, 0, 8); err == nil {
				out[name.Text] = byte(n)
			}
		}
	}
	return out
}

// transposeLast swaps the last two dimensions of x (no conjugation).
func transposeLast(f *stablehlo.Function, x Value) Value {
	r := x.Shape().Rank()
	perm := iotaInts(r)
	perm[r-2], perm[r-1] = r-1, r-2
	return f.Transpose(x, perm...)
}

// trsmRule transposes x = op(a)⁻¹ b (side L) or b op(a)⁻¹ (side R) for both operands: b's
// cotangent is the solve with op(a) transposed; a's is minus that times x (in the order of the
// side), taken back through op and kept to a's triangle (without the diagonal for a unit one).
func trsmRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	ct := cts[0]
	out := make([]Value, 2)
	if !ct.Valid() {
		return out
	}
	f := b.Function()
	fl := flags(op)
	o := TriangularOptions{LeftSide: fl["side"] == 'L', Lower: fl["uplo"] == 'L', UnitDiagonal: fl["diag"] == 'U'}
	transposed, conjugated := fl["trans_x"] != 'N', fl["trans_x"] == 'C'
	a, x := op.Operands()[0], op.Results()[0]
	o.TransposeA, o.ConjugateA = !transposed, conjugated
	ctB := TriangularSolve(f, a, ct, o)
	out[1] = ctB
	if !b.Active(a) {
		return out
	}
	var ctOpA Value
	if o.LeftSide {
		ctOpA = f.Neg(f.MatMul(ctB, transposeLast(f, x)))
	} else {
		ctOpA = f.Neg(f.MatMul(transposeLast(f, x), ctB))
	}
	if transposed {
		ctOpA = transposeLast(f, ctOpA)
	}
	if conjugated && shapes.IsComplex(ctOpA.DType()) {
		ctOpA = f.Conj(ctOpA)
	}
	switch {
	case o.Lower && o.UnitDiagonal:
		ctOpA = jnp.Tril(f, ctOpA, -1)
	case o.Lower:
		ctOpA = jnp.Tril(f, ctOpA, 0)
	case o.UnitDiagonal:
		ctOpA = jnp.Triu(f, ctOpA, 1)
	default:
		ctOpA = jnp.Triu(f, ctOpA, 0)
	}
	out[0] = ctOpA
	return out
}

// potrfRule transposes JAX's Cholesky JVP, L̇ = L φ(L⁻¹ Ṡ L⁻ᴴ) (φ: the lower triangle with the
// diagonal halved), for the symmetrized operand S: S̄ = L⁻ᵀ φ(Lᵀ L̄) conj(L)⁻¹, two triangular
// solves. L is the kernel's result's lower triangle (its upper one holds S's values).
func potrfRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	ct := cts[0]
	if !ct.Valid() {
		return make([]Value, 1)
	}
	f := b.Function()
	l := jnp.Tril(f, op.Results()[0], 0)
	y := phi(f, f.MatMul(transposeLast(f, l), ct))
	z := TriangularSolve(f, l, y, TriangularOptions{LeftSide: true, Lower: true, TransposeA: true})
	return []Value{TriangularSolve(f, l, z, TriangularOptions{Lower: true, ConjugateA: true})}
}

// phi keeps the lower triangle of x's matrices and halves their diagonal.
func phi(f *stablehlo.Function, x Value) Value {
	diag := diagonal(f, x.Shape().Dims())
	l := jnp.Tril(f, x, 0)
	return f.Select(diag, f.Div(l, f.Full(x.Shape(), 2)), l)
}

// getrfRule transposes JAX's LU JVP for square matrices: with Q = L⁻¹ P Ȧ U⁻¹, the tangent of
// the packed factors is L tril(Q, -1) + triu(Q) U; so Q̄ = tril(Lᵀ C, -1) + triu(C Uᵀ) and
// Ā = Pᵀ L⁻ᵀ Q̄ U⁻ᵀ, L (unit lower) and U read from the packed result as the forward solves read
// them, Pᵀ the inverse permutation of the rows. Pivots and permutation carry no cotangent.
func getrfRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	ct := cts[0]
	out := make([]Value, 1)
	if !ct.Valid() {
		return out
	}
	lu := op.Results()[0]
	d := lu.Shape().Dims()
	r := len(d)
	if d[r-1] != d[r-2] {
		return b.Fail(op, "the gradient of an LU factorization of %dx%d matrices: only square ones have one yet",
			d[r-2], d[r-1])
	}
	f := b.Function()
	batch := d[:r-2]
	n := d[r-1]
	lower := TriangularOptions{LeftSide: true, Lower: true, TransposeA: true, UnitDiagonal: true}
	upper := TriangularOptions{TransposeA: true}
	lt := f.Add(f.MatMul(transposeLast(f, jnp.Tril(f, lu, -1)), ct), ct) // Lᵀ C, L's unit diagonal added
	q := f.Add(jnp.Tril(f, lt, -1), jnp.Triu(f, f.MatMul(ct, transposeLast(f, jnp.Triu(f, lu, 0))), 0))
	x := TriangularSolve(f, lu, TriangularSolve(f, lu, q, lower), upper)
	pivots := f.Sub(op.Results()[1], f.Full(op.Results()[1].Shape(), int32(1)))
	perm := pivotsToPermutation(f, pivots, batch, n, n)
	inverse := f.Argsort(perm, r-2, false)
	idx := f.BroadcastInDim(inverse, d, iotaInts(r-1))
	out[0] = jnp.TakeAlongAxis(f, x, idx, r-2)
	return out
}

// syevdRule transposes JAX's eigh JVP for the symmetrized operand S: with M = Vᴴ Ṡ V, the
// tangents are V̇ = V (F ∘ M), F_ij = 1/(w_j - w_i) off the diagonal and 0 on it, and
// ẇ = real(diag(M)); so M̄ = F ∘ (Vᵀ V̄) + diag(w̄) and S̄ = conj(V) M̄ Vᵀ.
func syevdRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	ctV, ctW := cts[0], cts[1]
	if !ctV.Valid() && !ctW.Valid() {
		return make([]Value, 1)
	}
	f := b.Function()
	v, w := op.Results()[0], op.Results()[1]
	d := v.Shape().Dims()
	r := len(d)
	dt := v.DType()
	m := f.Full(v.Shape(), 0)
	if ctV.Valid() {
		// F from the eigenvalues: 1/(w_j - w_i), with the diagonal's 1/0 replaced by 0.
		wj := f.BroadcastInDim(w, d, append(iotaInts(r-2), r-1))
		wi := f.BroadcastInDim(w, d, append(iotaInts(r-2), r-2))
		eye := diagonal(f, d)
		gap := f.Sub(wj, wi)
		one := f.Full(gap.Shape(), 1)
		fm := f.Select(eye, f.Full(gap.Shape(), 0), f.Div(one, f.Select(eye, one, gap)))
		if shapes.IsComplex(dt) {
			fm = f.Convert(fm, dt)
		}
		m = f.Mul(fm, f.MatMul(transposeLast(f, v), ctV))
	}
	if ctW.Valid() {
		cw := ctW
		if shapes.IsComplex(dt) {
			cw = f.Convert(cw, dt)
		}
		eye := diagonal(f, d)
		diag := f.Select(eye, f.BroadcastInDim(cw, d, append(iotaInts(r-2), r-1)), f.Full(v.Shape(), 0))
		m = f.Add(m, diag)
	}
	cv := v
	if shapes.IsComplex(dt) {
		cv = f.Conj(v)
	}
	return []Value{f.MatMul(f.MatMul(cv, m), transposeLast(f, v))}
}

// gesddRule transposes JAX's SVD JVP (reduced matrices; JAX has none for full ones): with
// dS = Uᴴ Ȧ V, ṡ = real(diag(dS)), U̇ = U (F ∘ (dS·S + (dS·S)ᴴ) + D) and V̇ = V (F ∘ (S·dS +
// (S·dS)ᴴ)), F_ij = 1/(s_j² - s_i²) off the diagonal, D = diag((dS - dSᴴ)_ii / 2s_i), plus the
// parts of Ȧ outside U's columns (m > n) or V's (n > m) divided by s; V̇ᵀ = V̇ᴴ.
func gesddRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.Function()
	if flags(op)["mode"] != 'S' {
		return b.Fail(op, "the gradient of an SVD with full matrices: JAX has none either (use reduced ones)")
	}
	cs, cu, cvt := cts[1], cts[2], cts[3]
	res := op.Results()
	s, u, vt := res[1], res[2], res[3]
	ud := u.Shape().Dims()
	r := len(ud)
	m, k := ud[r-2], ud[r-1]
	n := vt.Shape().Dim(r - 1)
	dt := u.DType()
	kk := u.Shape().Dims()
	kk[r-2] = k // k x k
	cplx := func(x Value) Value {
		if shapes.IsComplex(dt) {
			return f.Convert(x, dt)
		}
		return x
	}
	H := func(x Value) Value { return adjoint(f, x) }
	conj := func(x Value) Value {
		if shapes.IsComplex(dt) {
			return f.Conj(x)
		}
		return x
	}
	batch := iotaInts(r - 2)
	sRow := cplx(f.BroadcastInDim(s, kk, append(batch, r-1))) // s_j in column j
	sCol := cplx(f.BroadcastInDim(s, kk, append(batch, r-2))) // s_i in row i
	eye := diagonal(f, kk)
	zero := f.Full(stablehlo.NewShape(dt, kk...), 0)
	one := f.Full(stablehlo.NewShape(dt, kk...), 1)
	diffs := f.Sub(f.Mul(sRow, sRow), f.Mul(sCol, sCol))
	fm := f.Select(eye, zero, f.Div(one, f.Select(eye, one, diffs)))
	v := H(vt)
	ctS := zero
	ctV := Value{} // the cotangent of V (n x k), from V̇ᵀ's
	if cvt.Valid() {
		ctV = H(cvt)
	}
	if cs.Valid() {
		ctS = f.Add(ctS, f.Select(eye, cplx(f.BroadcastInDim(cs, kk, append(batch, r-1))), zero))
	}
	var ctA Value
	add := func(x Value) {
		if !ctA.Valid() {
			ctA = x
		} else {
			ctA = f.Add(ctA, x)
		}
	}
	if cu.Valid() {
		g := f.MatMul(transposeLast(f, u), cu)
		fg := f.Mul(fm, g)
		ctSS := f.Add(fg, H(fg))
		ctS = f.Add(ctS, f.Mul(ctSS, sRow))
		e := f.Select(eye, f.Div(f.Mul(g, f.Full(g.Shape(), 0.5)), sRow), zero)
		ctS = f.Add(ctS, f.Sub(e, H(e)))
	}
	if ctV.Valid() {
		h := f.MatMul(transposeLast(f, v), ctV)
		fh := f.Mul(fm, h)
		ctSdS := f.Add(fh, H(fh))
		ctS = f.Add(ctS, f.Mul(sCol, ctSdS))
	}
	add(f.MatMul(f.MatMul(conj(u), ctS), transposeLast(f, v)))
	if m > n && cu.Valid() {
		p := f.Div(cu, sRowOf(f, s, ud, dt)) // U̇'s extra part, per column j / s_j
		p = f.Sub(p, f.MatMul(conj(u), f.MatMul(transposeLast(f, u), p)))
		add(f.MatMul(p, transposeLast(f, v)))
	}
	if n > m && ctV.Valid() {
		vd := v.Shape().Dims()
		q := f.Div(ctV, sRowOf(f, s, vd, dt))
		q = f.Sub(q, f.MatMul(transposeLast(f, vt), f.MatMul(transposeLast(f, v), q)))
		add(H(f.MatMul(q, transposeLast(f, u))))
	}
	return []Value{ctA}
}

// sRowOf broadcasts the singular values s (..., k) over the rows of a (..., rows, k) matrix.
func sRowOf(f *stablehlo.Function, s Value, dims []int, dt dtypes.DType) Value {
	r := len(dims)
	x := f.BroadcastInDim(s, dims, append(iotaInts(r-2), r-1))
	if shapes.IsComplex(dt) {
		x = f.Convert(x, dt)
	}
	return x
}

// QR's derivative is that of two kernels: geqrf makes R (and the reflectors) and orgqr Q from
// them. JAX's JVP needs both cotangents at once, so orgqr's rule hands Q's cotangent to
// geqrf's, which runs after it in the backward walk: qrKey's table, in the module's context,
// links the two calls of each QR that has a derivative (m >= n, reduced, or square).
type qrKey struct{}

// qrLink is one QR: the geqrf call's packed result, the value orgqr took in its place (the same,
// or padded), Q, and Q's cotangent while a walk passes between the two rules.
type qrLink struct {
	packed, orgqrIn, q Value
	ctQ                Value
}

type qrTable struct {
	byPacked, byOrgqrIn map[Value]*qrLink
}

func qrLinks(m *stablehlo.Module) *qrTable {
	t, _ := m.Context(qrKey{}).(*qrTable)
	if t == nil {
		t = &qrTable{byPacked: map[Value]*qrLink{}, byOrgqrIn: map[Value]*qrLink{}}
		m.SetContext(qrKey{}, t)
	}
	return t
}

// linkQR records a QR whose derivative JAX defines.
func linkQR(f *stablehlo.Function, packed, orgqrIn, q Value) {
	if f.Module() == nil {
		return
	}
	l := &qrLink{packed: packed, orgqrIn: orgqrIn, q: q}
	t := qrLinks(f.Module())
	t.byPacked[packed], t.byOrgqrIn[orgqrIn] = l, l
}

// orgqrRule keeps Q's cotangent for geqrf's rule and gives the packed factors a zero cotangent,
// so that the walk reaches geqrf even when R is not used.
func orgqrRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	in := op.Operands()[0]
	l := qrLinks(b.Function().Module()).byOrgqrIn[in]
	if l == nil {
		return b.Fail(op, "the gradient of Q: JAX defines it for a QR of m x n matrices with m >= n (and "+
			"reduced ones unless square) only")
	}
	if ct := cts[0]; ct.Valid() {
		if l.ctQ.Valid() {
			l.ctQ = b.Function().Add(l.ctQ, ct)
		} else {
			l.ctQ = ct
		}
	}
	return []Value{b.Zeros(in.Shape()), {}}
}

// geqrfRule transposes JAX's QR JVP (m >= n): with Y = Ẋ R⁻¹, Z = Qᴴ Y, L = tril(Z, -1) and
// Ω = L - Lᴴ + I ∘ (Z - real(Z)), Q̇ = Q (Ω - Z) + Y and Ṙ = (Z - Ω) R.
func geqrfRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.Function()
	packed := op.Results()[0]
	l := qrLinks(f.Module()).byPacked[packed]
	if l == nil {
		return b.Fail(op, "the gradient of R: JAX defines it for a QR of m x n matrices with m >= n (and "+
			"reduced ones unless square) only")
	}
	ctQ := l.ctQ
	l.ctQ = Value{} // consumed: the next walk starts afresh
	d := packed.Shape().Dims()
	r := len(d)
	n := d[r-1]
	dt := packed.DType()
	lo, hi := make([]int, r), append([]int(nil), d...)
	hi[r-2] = n
	rr := jnp.Triu(f, f.Slice(packed, lo, hi, nil), 0)
	nn := rr.Shape()
	zero := f.Full(nn, 0)
	ctZ, ctDo := zero, zero
	var ctY Value
	if ctQ.Valid() {
		qc := f.MatMul(transposeLast(f, l.q), ctQ)
		ctDo = f.Add(ctDo, qc)
		ctZ = f.Sub(ctZ, qc)
		ctY = ctQ
	}
	if ct := cts[0]; ct.Valid() {
		cr := f.MatMul(jnp.Triu(f, f.Slice(ct, lo, hi, nil), 0), transposeLast(f, rr))
		ctZ = f.Add(ctZ, cr)
		ctDo = f.Sub(ctDo, cr)
	}
	ctL := f.Sub(ctDo, adjoint(f, ctDo))
	ctZ = f.Add(ctZ, jnp.Tril(f, ctL, -1))
	if shapes.IsComplex(dt) {
		eye := diagonal(f, nn.Dims())
		diag := f.Select(eye, ctDo, zero)
		ctZ = f.Add(ctZ, f.Sub(diag, f.Convert(f.Real(diag), dt)))
	}
	q := l.q
	if shapes.IsComplex(dt) {
		q = f.Conj(q)
	}
	fromZ := f.MatMul(q, ctZ)
	if ctY.Valid() {
		ctY = f.Add(ctY, fromZ)
	} else {
		ctY = fromZ
	}
	return []Value{TriangularSolve(f, rr, ctY, TriangularOptions{TransposeA: true})}
}

// diagonal is the pred mask of the diagonals of matrices of dims (..., n, n).
func diagonal(f *stablehlo.Function, dims []int) Value {
	r := len(dims)
	sq := stablehlo.NewShape(dtypes.Int32, dims[r-2], dims[r-1])
	return f.BroadcastInDim(f.Compare(f.Iota(sq, 0), f.Iota(sq, 1), stablehlo.EQ), dims, []int{r - 2, r - 1})
}
