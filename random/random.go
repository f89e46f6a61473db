package random

import (
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Threefry2x32 applies the Threefry-2x32 block cipher of JAX's PRNG (20 rounds, JAX's
// rotation constants and key schedule) to the counter pairs (x1, x2) under the key (k1,
// k2), and returns the two output words, as jax.extend.random.threefry_2x32 does. All are
// u32 (a weak constant is a u32 scalar); the keys are scalars or have the counters' shape.
// Operands of another element type are an error wrapping stablehlo.ErrDType; counters that
// differ in shape, one wrapping stablehlo.ErrShape. It is built from u32 adds, xors and
// shifts (about 100 ops), as JAX lowers it on CPU and GPU.
func Threefry2x32(f *stablehlo.Function, k1, k2, x1, x2 stablehlo.Value) (stablehlo.Value, stablehlo.Value) {
	const opName = "threefry2x32"
	vs := []stablehlo.Value{k1, k2, x1, x2}
	if !f.CheckOperands(opName, vs...) {
		return stablehlo.Value{}, stablehlo.Value{}
	}
	for i, v := range vs {
		v = f.Materialize(v, stablehlo.NewShape(dtypes.Uint32))
		if f.Failed() {
			return stablehlo.Value{}, stablehlo.Value{}
		}
		if v.DType() != dtypes.Uint32 {
			f.Failf(opName, i, v, stablehlo.ErrDType, "threefry2x32 needs u32 operands, got %v", v.Shape())
			return stablehlo.Value{}, stablehlo.Value{}
		}
		vs[i] = v
	}
	if !slices.Equal(vs[2].Shape().Dims(), vs[3].Shape().Dims()) {
		f.Failf(opName, 3, vs[3], stablehlo.ErrShape, "counters differ in shape: %v vs %v", vs[2].Shape(), vs[3].Shape())
		return stablehlo.Value{}, stablehlo.Value{}
	}
	u := func(c uint32) stablehlo.Value { return f.ConstantOf(dtypes.Uint32, c) }
	rotl := func(v stablehlo.Value, r uint32) stablehlo.Value {
		return f.Or(f.ShiftLeft(v, u(r)), f.ShiftRightLogical(v, u(32-r)))
	}
	ks := [3]stablehlo.Value{vs[0], vs[1], f.Xor(f.Xor(vs[0], vs[1]), u(0x1BD11BDA))}
	rot := [2][4]uint32{{13, 15, 26, 6}, {17, 29, 16, 24}}
	a, b := f.Add(vs[2], ks[0]), f.Add(vs[3], ks[1])
	for i := range 5 {
		for _, r := range rot[i%2] {
			a = f.Add(a, b)
			b = f.Xor(a, rotl(b, r))
		}
		a = f.Add(a, ks[(i+1)%3])
		b = f.Add(f.Add(b, ks[(i+2)%3]), u(uint32(i+1)))
	}
	if f.Failed() {
		return stablehlo.Value{}, stablehlo.Value{}
	}
	return a, b
}

// keyWords checks a raw key and returns its two words as u32 scalars.
func keyWords(f *stablehlo.Function, opName string, key stablehlo.Value) (stablehlo.Value, stablehlo.Value, bool) {
	if !f.CheckOperands(opName, key) {
		return stablehlo.Value{}, stablehlo.Value{}, false
	}
	if key.IsWeak() || !key.Shape().Equal(stablehlo.NewShape(dtypes.Uint32, 2)) {
		f.Failf(opName, 0, key, stablehlo.ErrShape, "a key is jax.random's raw key data, u32[2]; got %v", key.Shape())
		return stablehlo.Value{}, stablehlo.Value{}, false
	}
	w := func(i int) stablehlo.Value { return f.Reshape(f.Slice(key, []int{i}, []int{i + 1}, nil)) }
	k1, k2 := w(0), w(1)
	return k1, k2, !f.Failed()
}

// counters returns JAX's iota_2x32_shape(dims): the high and low u32 words of each
// element's row-major index.
func counters(f *stablehlo.Function, dims []int) (hi, lo stablehlo.Value) {
	s := stablehlo.NewShape(dtypes.Uint32, dims...)
	n := s.Size()
	if len(dims) == 0 || n == 0 {
		z := f.Full(s, uint32(0))
		return z, z
	}
	idx := func(d stablehlo.DType) stablehlo.Value {
		var sum stablehlo.Value
		stride := 1
		for i := len(dims) - 1; i >= 0; i-- {
			t := f.Iota(stablehlo.NewShape(d, dims...), i)
			if stride != 1 {
				t = f.Mul(t, f.ConstantOf(d, stride))
			}
			if sum.Valid() {
				t = f.Add(sum, t)
			}
			sum = t
			stride *= dims[i]
		}
		return sum
	}
	if n <= math.MaxUint32 {
		return f.Full(s, uint32(0)), idx(dtypes.Uint32)
	}
	i := idx(dtypes.Uint64)
	return f.Convert(f.ShiftRightLogical(i, f.ConstantOf(dtypes.Uint64, 32)), dtypes.Uint32), f.Convert(i, dtypes.Uint32)
}

// Bits is jax.random.bits(key, dims, d): uniform random bits of the unsigned integer type d
// (u8, u16, u32 or u64; JAX's default is u32) and shape dims, from the raw key (u32[2]). It
// hashes each element's row-major index with Threefry2x32 and keeps the xor of the two words
// (u32, or its low bits for u8 and u16) or both words (u64, high word first), as JAX does. A
// key of another shape is an error wrapping stablehlo.ErrShape; a d that is not unsigned,
// one wrapping stablehlo.ErrDType.
func Bits(f *stablehlo.Function, key stablehlo.Value, d stablehlo.DType, dims ...int) stablehlo.Value {
	const opName = "random_bits"
	k1, k2, ok := keyWords(f, opName, key)
	if !ok {
		return stablehlo.Value{}
	}
	if !d.IsUnsigned() {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrDType, "random bits are u8, u16, u32 or u64, not %s", shapes.XLAName(d))
		return stablehlo.Value{}
	}
	if err := stablehlo.CheckShape(stablehlo.NewShape(d, dims...)); err != nil {
		f.Fail(opName, -1, stablehlo.Value{}, err)
		return stablehlo.Value{}
	}
	hi, lo := counters(f, dims)
	b1, b2 := Threefry2x32(f, k1, k2, hi, lo)
	switch d {
	case dtypes.Uint64:
		return f.Or(f.ShiftLeft(f.Convert(b1, d), f.ConstantOf(d, 32)), f.Convert(b2, d))
	case dtypes.Uint32:
		return f.Xor(b1, b2)
	}
	return f.Convert(f.Xor(b1, b2), d)
}

// floatBits returns the unsigned type of d's width and d's explicit mantissa bits.
func floatBits(d stablehlo.DType) (stablehlo.DType, int) {
	switch d {
	case dtypes.BFloat16:
		return dtypes.Uint16, 7
	case dtypes.Float16:
		return dtypes.Uint16, 10
	case dtypes.Float64:
		return dtypes.Uint64, 52
	}
	return dtypes.Uint32, 23
}

// Uniform is jax.random.uniform(key, dims, d, lo, hi): floats of type d uniform in
// [lo, hi), from the raw key (u32[2]). As in JAX, random bits fill the mantissa of a float
// in [1, 2) (8 random bits for bf16, whose 7-bit mantissa takes the top 7), 1 is
// subtracted, the result scaled by hi - lo and shifted by lo (lo and hi rounded to d
// first), and kept at least lo. A d that is not float is an error wrapping
// stablehlo.ErrDType; the key's errors are Bits'.
func Uniform(f *stablehlo.Function, key stablehlo.Value, d stablehlo.DType, lo, hi float64, dims ...int) stablehlo.Value {
	const opName = "random_uniform"
	if !f.CheckOperands(opName, key) {
		return stablehlo.Value{}
	}
	if !d.IsFloat() || !shapes.Supported(d) {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrDType, "uniform floats of %s: need a float type", shapes.XLAName(d))
		return stablehlo.Value{}
	}
	ut, nmant := floatBits(d)
	rngBits := ut.Bits()
	var bits stablehlo.Value
	if nmant < 8 {
		rngBits = 8
		bits = f.Convert(Bits(f, key, dtypes.Uint8, dims...), ut)
	} else {
		bits = Bits(f, key, ut, dims...)
	}
	one := f.BitcastConvert(f.ConstantOf(d, 1.0), ut)
	fb := f.Or(f.ShiftRightLogical(bits, f.ConstantOf(ut, rngBits-nmant)), one)
	floats := f.Sub(f.BitcastConvert(fb, d), f.ConstantOf(d, 1.0))
	minv, maxv := f.ConstantOf(d, lo), f.ConstantOf(d, hi)
	return f.Max(minv, f.Add(f.Mul(floats, f.Sub(maxv, minv)), minv))
}

// Normal is jax.random.normal(key, dims, d): standard normal floats of type d from the raw
// key (u32[2]), computed as JAX does: sqrt(2) * erf_inv(u) for u uniform in (-1, 1)
// (Uniform from the float just above -1 to 1). Its errors are Uniform's.
func Normal(f *stablehlo.Function, key stablehlo.Value, d stablehlo.DType, dims ...int) stablehlo.Value {
	const opName = "random_normal"
	if !f.CheckOperands(opName, key) {
		return stablehlo.Value{}
	}
	if !d.IsFloat() || !shapes.Supported(d) {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrDType, "normal floats of %s: need a float type", shapes.XLAName(d))
		return stablehlo.Value{}
	}
	_, nmant := floatBits(d)
	lo := -(1 - math.Ldexp(1, -(nmant+1))) // nextafter(-1, 0) in d
	u := Uniform(f, key, d, lo, 1, dims...)
	return f.Mul(f.ConstantOf(d, math.Sqrt2), f.ErfInv(u))
}

// Split is jax.random.split(key, n) on a raw key: n new raw keys, u32[n, 2], the
// Threefry2x32 hashes of the indices 0..n-1. A negative n is an error wrapping
// stablehlo.ErrShape; the key's errors are Bits'.
func Split(f *stablehlo.Function, key stablehlo.Value, n int) stablehlo.Value {
	const opName = "random_split"
	k1, k2, ok := keyWords(f, opName, key)
	if !ok {
		return stablehlo.Value{}
	}
	if n < 0 {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrShape, "negative key count %d", n)
		return stablehlo.Value{}
	}
	hi, lo := counters(f, []int{n})
	b1, b2 := Threefry2x32(f, k1, k2, hi, lo)
	return f.Concatenate(1, f.Reshape(b1, n, 1), f.Reshape(b2, n, 1))
}

// FoldIn is jax.random.fold_in(key, data) on a raw key: a new raw key mixing in the
// integer scalar data (converted to u32 as JAX does; a weak constant is a u32 scalar), the
// Threefry2x32 hash of the counter pair (0, data). data that is not an integer scalar is an
// error wrapping stablehlo.ErrShape; the key's errors are Bits'.
func FoldIn(f *stablehlo.Function, key, data stablehlo.Value) stablehlo.Value {
	const opName = "random_fold_in"
	k1, k2, ok := keyWords(f, opName, key)
	if !ok {
		return stablehlo.Value{}
	}
	if !f.CheckOperands(opName, data) {
		return stablehlo.Value{}
	}
	dv := f.Materialize(data, stablehlo.NewShape(dtypes.Uint32))
	if f.Failed() {
		return stablehlo.Value{}
	}
	if dv.Shape().Rank() != 0 || !dv.DType().IsInt() {
		f.Failf(opName, 1, dv, stablehlo.ErrShape, "fold_in data must be an integer scalar, got %v", dv.Shape())
		return stablehlo.Value{}
	}
	b1, b2 := Threefry2x32(f, k1, k2, f.ConstantOf(dtypes.Uint32, 0), f.Convert(dv, dtypes.Uint32))
	return f.Concatenate(0, f.Reshape(b1, 1), f.Reshape(b2, 1))
}

// Key is jax.random.PRNGKey(seed) for an integer scalar seed: the raw key u32[2] holding
// the seed's high and low 32 bits (the high word is 0 for seeds of 32 bits or fewer; a
// negative seed is sign-extended into its low word, as JAX converts it). A seed that is not
// an integer scalar is an error wrapping stablehlo.ErrShape.
func Key(f *stablehlo.Function, seed stablehlo.Value) stablehlo.Value {
	const opName = "random_key"
	vs, ok := f.Operands(opName, seed)
	if !ok {
		return stablehlo.Value{}
	}
	s := vs[0]
	d := s.DType()
	if s.Shape().Rank() != 0 || !d.IsInt() {
		f.Failf(opName, 0, s, stablehlo.ErrShape, "a seed is an integer scalar, got %v", s.Shape())
		return stablehlo.Value{}
	}
	hi := f.ConstantOf(dtypes.Uint32, 0)
	if d.Bits() == 64 {
		hi = f.Convert(f.ShiftRightLogical(s, f.ConstantOf(d, 32)), dtypes.Uint32)
	}
	return f.Concatenate(0, f.Reshape(hi, 1), f.Reshape(f.Convert(s, dtypes.Uint32), 1))
}
