package stablehlo

import (
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
