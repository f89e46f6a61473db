package stablehlo

import (
	"math"
	"slices"
	"strconv"

	"github.com/gomlx/gopjrt/dtypes"
)

// RngAlgorithm is the algorithm of RngBitGenerator.
type RngAlgorithm uint8

// Random bit generator algorithms.
const (
	RngDefault  RngAlgorithm = iota + 1 // the backend's choice (Philox on XLA's CPU and GPU)
	RngThreeFry                         // Threefry; a state of 2 u64
	RngPhilox                           // Philox; a state of 2 or 3 u64
)

// String returns "DEFAULT", "THREE_FRY" or "PHILOX", as StableHLO spells them.
func (a RngAlgorithm) String() string {
	if a >= RngDefault && a <= RngPhilox {
		return [...]string{"", "DEFAULT", "THREE_FRY", "PHILOX"}[a]
	}
	return "RngAlgorithm(" + strconv.Itoa(int(a)) + ")"
}

// RngParams are the parameters of stablehlo.rng_bit_generator (one operand, the state;
// two results, the new state and the bits).
type RngParams struct {
	Algorithm RngAlgorithm
}

// Properties returns "rng_algorithm = #stablehlo<rng_algorithm ...>".
func (p RngParams) Properties() string {
	return "rng_algorithm = #stablehlo<rng_algorithm " + p.Algorithm.String() + ">"
}

// RngBitGenerator returns a tensor of shape out filled with random bits from state, and
// the state to use next (stablehlo.rng_bit_generator, JAX's lax.rng_bit_generator, which
// takes its key as u32[4] and bitcasts it to this u64[2]). state is a rank-1 u64 tensor
// of 2 elements for RngThreeFry and RngDefault, 2 or 3 for RngPhilox; out has an integer
// or float element type (JAX allows unsigned integers only). The bits are a deterministic
// function of the state, but which one is the backend's: XLA's CPU and GPU agree, other
// compilers need not.
func (f *Function) RngBitGenerator(state Value, alg RngAlgorithm, out Shape) (newState, bits Value) {
	const opName = "rng_bit_generator"
	s, ok := f.operand1(opName, state)
	if !ok {
		return Value{}, Value{}
	}
	if alg < RngDefault || alg > RngPhilox {
		f.failf(opName, -1, nil, ErrDType, "invalid algorithm %v", alg)
		return Value{}, Value{}
	}
	n := -1
	if s.shape.Rank() == 1 {
		n = s.shape.Dim(0)
	}
	if s.shape.DType() != dtypes.Uint64 || !(n == 2 || (n == 3 && alg == RngPhilox)) {
		want := "u64[2]"
		if alg == RngPhilox {
			want = "u64[2] or u64[3]"
		}
		f.failf(opName, 0, s, ErrShape, "%v needs a state of %s, got %v", alg, want, s.shape)
		return Value{}, Value{}
	}
	if err := validShape(out); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}, Value{}
	}
	if out.DType() == dtypes.Bool {
		f.failf(opName, -1, nil, ErrDType, "random bits of pred")
		return Value{}, Value{}
	}
	o := &Op{name: "stablehlo.rng_bit_generator", operands: []*value{s}, params: RngParams{Algorithm: alg}}
	r := f.emitMulti(o, []Shape{s.shape, NewShape(out.DType(), out.Dims()...)})
	return r[0], r[1]
}

// JAX's random numbers. A key is jax.random's raw threefry2x32 key data, a u32[2] tensor
// (jax.random.PRNGKey(seed), or jax.random.key_data of a typed key); the functions below
// compute exactly what jax.random computes from it with JAX's default implementation
// (threefry2x32, jax_threefry_partitionable on, JAX's default since 0.5), from plain
// integer ops, so a Go program and a JAX program given the same key draw the same bits.

// Threefry2x32 applies the Threefry-2x32 block cipher of JAX's PRNG (20 rounds, JAX's
// rotation constants and key schedule) to the counter pairs (x1, x2) under the key (k1,
// k2), and returns the two output words. All are u32; the keys are scalars or have the
// counters' shape.
func (f *Function) Threefry2x32(k1, k2, x1, x2 Value) (Value, Value) {
	const opName = "threefry2x32"
	vs, ok := f.check(opName, k1, k2, x1, x2)
	if !ok {
		return Value{}, Value{}
	}
	for i, v := range vs {
		v = f.materialize(v, NewShape(dtypes.Uint32))
		if f.failed() {
			return Value{}, Value{}
		}
		if v.shape.DType() != dtypes.Uint32 {
			f.failf(opName, i, v, ErrDType, "threefry2x32 needs u32 operands, got %v", v.shape)
			return Value{}, Value{}
		}
		vs[i] = v
	}
	if !slices.Equal(vs[2].shape.Dims(), vs[3].shape.Dims()) {
		f.failf(opName, 3, vs[3], ErrShape, "counters differ in shape: %v vs %v", vs[2].shape, vs[3].shape)
		return Value{}, Value{}
	}
	u := func(c uint32) Value { return f.ConstantOf(dtypes.Uint32, c) }
	rotl := func(v Value, r uint32) Value { return f.Or(f.ShiftLeft(v, u(r)), f.ShiftRightLogical(v, u(32-r))) }
	ks := [3]Value{{vs[0]}, {vs[1]}, f.Xor(f.Xor(Value{vs[0]}, Value{vs[1]}), u(0x1BD11BDA))}
	rot := [2][4]uint32{{13, 15, 26, 6}, {17, 29, 16, 24}}
	a, b := f.Add(Value{vs[2]}, ks[0]), f.Add(Value{vs[3]}, ks[1])
	for i := range 5 {
		for _, r := range rot[i%2] {
			a = f.Add(a, b)
			b = f.Xor(a, rotl(b, r))
		}
		a = f.Add(a, ks[(i+1)%3])
		b = f.Add(f.Add(b, ks[(i+2)%3]), u(uint32(i+1)))
	}
	if f.failed() {
		return Value{}, Value{}
	}
	return a, b
}

// keyWords checks a raw key and returns its two words as u32 scalars.
func (f *Function) keyWords(opName string, key Value) (Value, Value, bool) {
	vs, ok := f.check(opName, key)
	if !ok {
		return Value{}, Value{}, false
	}
	k := vs[0]
	if k.weak != nil || !k.shape.Equal(NewShape(dtypes.Uint32, 2)) {
		f.failf(opName, 0, k, ErrShape, "a key is jax.random's raw key data, u32[2]; got %v", k.shape)
		return Value{}, Value{}, false
	}
	w := func(i int) Value { return f.Reshape(f.Slice(Value{k}, []int{i}, []int{i + 1}, nil)) }
	k1, k2 := w(0), w(1)
	return k1, k2, !f.failed()
}

// counters returns JAX's iota_2x32_shape(dims): the high and low u32 words of each
// element's row-major index.
func (f *Function) counters(dims []int) (hi, lo Value) {
	s := NewShape(dtypes.Uint32, dims...)
	n := s.Size()
	if len(dims) == 0 || n == 0 {
		z := f.Full(s, uint32(0))
		return z, z
	}
	idx := func(d DType) Value {
		var sum Value
		stride := 1
		for i := len(dims) - 1; i >= 0; i-- {
			t := f.Iota(NewShape(d, dims...), i)
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

// RandomBits is jax.random.bits(key, dims, d): uniform random bits of the unsigned integer
// type d (u8, u16, u32 or u64; JAX's default is u32) and shape dims, from the raw key
// (u32[2]). It hashes each element's row-major index with Threefry2x32 and keeps the xor
// of the two words (u32, or its low bits for u8 and u16) or both words (u64, high word
// first), as JAX does.
func (f *Function) RandomBits(key Value, d DType, dims ...int) Value {
	const opName = "random_bits"
	k1, k2, ok := f.keyWords(opName, key)
	if !ok {
		return Value{}
	}
	if !d.IsUnsigned() {
		f.failf(opName, -1, nil, ErrDType, "random bits are u8, u16, u32 or u64, not %s", dtypeName(d))
		return Value{}
	}
	if err := validShape(NewShape(d, dims...)); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	hi, lo := f.counters(dims)
	b1, b2 := f.Threefry2x32(k1, k2, hi, lo)
	switch d {
	case dtypes.Uint64:
		return f.Or(f.ShiftLeft(f.Convert(b1, d), f.ConstantOf(d, 32)), f.Convert(b2, d))
	case dtypes.Uint32:
		return f.Xor(b1, b2)
	}
	return f.Convert(f.Xor(b1, b2), d)
}

// floatBits returns the unsigned type of d's width and d's explicit mantissa bits.
func floatBits(d DType) (DType, int) {
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

// RandomUniform is jax.random.uniform(key, dims, d, lo, hi): floats of type d uniform
// in [lo, hi), from the raw key (u32[2]). As in JAX, random bits fill the mantissa of a
// float in [1, 2) (8 random bits for bf16, whose 7-bit mantissa takes the top 7), 1 is
// subtracted, the result scaled by hi - lo and shifted by lo (lo and hi rounded to d
// first), and kept at least lo.
func (f *Function) RandomUniform(key Value, d DType, lo, hi float64, dims ...int) Value {
	const opName = "random_uniform"
	if _, ok := f.check(opName, key); !ok {
		return Value{}
	}
	if !d.IsFloat() || !supported(d) {
		f.failf(opName, -1, nil, ErrDType, "uniform floats of %s: need a float type", dtypeName(d))
		return Value{}
	}
	ut, nmant := floatBits(d)
	rngBits := ut.Bits()
	var bits Value
	if nmant < 8 {
		rngBits = 8
		bits = f.Convert(f.RandomBits(key, dtypes.Uint8, dims...), ut)
	} else {
		bits = f.RandomBits(key, ut, dims...)
	}
	one := f.BitcastConvert(f.ConstantOf(d, 1.0), ut)
	fb := f.Or(f.ShiftRightLogical(bits, f.ConstantOf(ut, rngBits-nmant)), one)
	floats := f.Sub(f.BitcastConvert(fb, d), f.ConstantOf(d, 1.0))
	minv, maxv := f.ConstantOf(d, lo), f.ConstantOf(d, hi)
	return f.Max(minv, f.Add(f.Mul(floats, f.Sub(maxv, minv)), minv))
}

// RandomNormal is jax.random.normal(key, dims, d): standard normal floats of type d from
// the raw key (u32[2]), computed as JAX does: sqrt(2) * erf_inv(u) for u uniform in
// (-1, 1) (RandomUniform from the float just above -1 to 1).
func (f *Function) RandomNormal(key Value, d DType, dims ...int) Value {
	const opName = "random_normal"
	if _, ok := f.check(opName, key); !ok {
		return Value{}
	}
	if !d.IsFloat() || !supported(d) {
		f.failf(opName, -1, nil, ErrDType, "normal floats of %s: need a float type", dtypeName(d))
		return Value{}
	}
	_, nmant := floatBits(d)
	lo := -(1 - math.Ldexp(1, -(nmant+1))) // nextafter(-1, 0) in d
	u := f.RandomUniform(key, d, lo, 1, dims...)
	return f.Mul(f.ConstantOf(d, math.Sqrt2), f.ErfInv(u))
}

// RandomSplit is jax.random.split(key, n) on a raw key: n new raw keys, u32[n, 2], the
// Threefry2x32 hashes of the indices 0..n-1.
func (f *Function) RandomSplit(key Value, n int) Value {
	const opName = "random_split"
	k1, k2, ok := f.keyWords(opName, key)
	if !ok {
		return Value{}
	}
	if n < 0 {
		f.failf(opName, -1, nil, ErrShape, "negative key count %d", n)
		return Value{}
	}
	hi, lo := f.counters([]int{n})
	b1, b2 := f.Threefry2x32(k1, k2, hi, lo)
	return f.Concatenate(1, f.Reshape(b1, n, 1), f.Reshape(b2, n, 1))
}

// RandomFoldIn is jax.random.fold_in(key, data) on a raw key: a new raw key mixing in
// the integer scalar data (converted to u32 as JAX does), the Threefry2x32 hash of the
// counter pair (0, data).
func (f *Function) RandomFoldIn(key, data Value) Value {
	const opName = "random_fold_in"
	k1, k2, ok := f.keyWords(opName, key)
	if !ok {
		return Value{}
	}
	vs, ok := f.check(opName, data)
	if !ok {
		return Value{}
	}
	dv := vs[0]
	if dv.weak != nil {
		dv = f.materialize(dv, NewShape(dtypes.Uint32))
	}
	if f.failed() {
		return Value{}
	}
	if dv.shape.Rank() != 0 || !dv.shape.DType().IsInt() {
		f.failf(opName, 1, dv, ErrShape, "fold_in data must be an integer scalar, got %v", dv.shape)
		return Value{}
	}
	b1, b2 := f.Threefry2x32(k1, k2, f.ConstantOf(dtypes.Uint32, 0), f.Convert(Value{dv}, dtypes.Uint32))
	return f.Concatenate(0, f.Reshape(b1, 1), f.Reshape(b2, 1))
}

// RandomKey is jax.random.PRNGKey(seed) for an integer scalar seed: the raw key u32[2]
// holding the seed's high and low 32 bits (the high word is 0 for seeds of 32 bits or
// fewer; a negative seed is sign-extended into its low word, as JAX converts it).
func (f *Function) RandomKey(seed Value) Value {
	const opName = "random_key"
	s, ok := f.operand1(opName, seed)
	if !ok {
		return Value{}
	}
	if s.shape.Rank() != 0 || !s.shape.DType().IsInt() {
		f.failf(opName, 0, s, ErrShape, "a seed is an integer scalar, got %v", s.shape)
		return Value{}
	}
	d := s.shape.DType()
	hi := f.ConstantOf(dtypes.Uint32, 0)
	if d.Bits() == 64 {
		hi = f.Convert(f.ShiftRightLogical(Value{s}, f.ConstantOf(d, 32)), dtypes.Uint32)
	}
	return f.Concatenate(0, f.Reshape(hi, 1), f.Reshape(f.Convert(Value{s}, dtypes.Uint32), 1))
}
