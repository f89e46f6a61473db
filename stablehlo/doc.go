// Package stablehlo builds StableHLO modules in Go: functions of tensor ops with shape
// inference, printed as MLIR text that XLA's StableHLO parser accepts.
//
// It is the builder floor of xlamesh and knows nothing of meshes or shardings: package
// lower builds on it, adding `sdy.mesh` symbols, `sdy.sharding` on @main's arguments and
// results, sharding constraints and shard_map regions through the extension points below;
// package pjrt compiles the text. Element types are gopjrt's dtypes.DType values; mlir
// checks names and text. The functions of jax.numpy, jax.nn and jax.random that are
// compositions of ops rather than ops live beside the builder, in packages jnp, nn and
// random, and take the Function they build in: jnp.Tril(f, x, 0), nn.Softmax(f, x).
//
// # Building
//
// A Module holds functions; each Function method adds one op and returns its result, so a
// program reads like the math it computes:
//
//	m := stablehlo.NewModule("f")
//	f := m.Main()
//	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 2))
//	f.Return(f.Mul(x, f.Constant(2.0)))                // weak constant: f32, broadcast to 8x2
//	text, err := m.Build()
//
// MLIRType and ParseDType convert element types to and from the names StableHLO text uses
// ("f32", "i1", "complex<f32>", "f8E4M3FN"); Shape.String and ParseShape do the same for
// tensor types. Values may be of every element type XLA has (see DType); complex values
// have Real, Imag, Complex, Conj and the FFT family (FFT with FFT, IFFT, RFFT, IRFFT, as
// lax.fft), and Convert moves between every pair of types except complex to real (take Real).
//
// Ops infer their result shapes and check their operands. The first error sticks: later
// ops are no-ops returning the zero Value, and Build returns that error as an *OpError
// naming the function, the op and the operand, wrapping a sentinel such as ErrShape,
// ErrDType or ErrForeignValue. Every shape an op produces must have an element count and a
// byte size that fit int64 (ErrShape), so no arithmetic wraps.
//
// Binary ops broadcast their operands with NumPy's rule; Broadcast2 and BroadcastArrays
// apply it explicitly. Einsum and MatMul (einsum.go) follow jnp.einsum and jnp.matmul's
// batch rules.
//
// Gather and Scatter take StableHLO's full dimension numbers; Take and ScatterAdd are x[idx]
// and x.at[idx].add with jnp's index rules. Conv is lax.conv_general_dilated (ConvLayout
// reads "NHWC"-style layouts; Padding is SAME/VALID or pairs), ReduceWindow is
// lax.reduce_window, and MaxPool, AvgPool, ... are flax's pools; SelectAndScatter is the
// transpose of a max or min pool. RngBitGenerator is XLA's generator (package random
// computes jax.random's threefry2x32 numbers bit for bit instead).
//
// Collectives (AllReduce, AllGather, ReduceScatter, AllToAll, CollectivePermute) take
// explicit replica groups of partition ids; lower derives them from mesh axis names.
//
// Control flow takes Go callbacks that build each region: While, If, Case and Switch
// (jax.lax.while_loop, cond and switch), ForLoop and Scan (fori_loop and lax.scan, While
// loops whose WhileParams record the trip count). Their regions may use values of the
// enclosing function (see region.go, Function.Captures). Sort, SortBy, SortAscending,
// SortDescending, Argsort and TopK sort as jax.lax.sort and jnp.sort do; Argmax, Argmin,
// Cumsum, Cumprod, Cummax and Cummin reduce along an axis as JAX lowers them.
//
// # Reading a built function
//
// Function.Ops lists the recorded ops. Each Op has a Name ("stablehlo.transpose"), its
// Operands and Results, typed Params (TransposeParams, DotDims, ReduceParams, ...) and its
// Regions, so a pass such as reverse-mode differentiation can walk a function without
// parsing text; see Op.
//
// # Adding ops
//
// An op of this package follows one pattern, in a file of its op family (elementwise.go,
// shape_ops.go, dot.go, reduce.go, collectives.go, control.go, sort.go, ...):
//
//	func (f *Function) Transpose(x Value, perm ...int) Value {
//		const opName = "transpose"
//		a, ok := f.operand1(opName, x) // valid, defined in f, a weak constant made a constant op;
//		if !ok {                       // after an error: false
//			return Value{}
//		}
//		if !isPermutation(perm, a.shape.Rank()) {
//			f.failf(opName, 0, a, ErrShape, "permutation %v ...", perm) // sticky *OpError
//			return Value{}
//		}
//		return f.emit("stablehlo.transpose", []*value{a}, resultShape, TransposeParams{Perm: perm})
//	}
//
// Ops of several operands call check, then materialize each weak constant at the shape the
// op gives it. The parameters type implements Properties, which the generic printer writes as
// `<{...}>`; ops with several results or regions build an *Op and call emitMulti; an op with
// a pretty form sets a PrintFunc. Regions (reduce bodies, while and cond bodies, sort
// comparators) are Functions nested in the op's function: NewRegion, then ops, then Yield,
// or BuildRegion for a Go callback (see region.go).
//
// Packages built on this one add their ops with Function.AddOp and an OpSpec (operands,
// result shapes, Params, regions, a PrintFunc writing through a Printer), check operands with
// Function.Operands (or Function.CheckOperands, then Function.Materialize to give a weak constant a
// shape of their choice), record errors with Function.Fail, Function.Failf and Module.Fail,
// keep their state with Module.SetContext and find it from any nested region with
// Function.Context, and annotate the module with Module.SetAttr, Module.SetPreamble,
// Function.SetArgAttr and Function.SetResultAttr. Packages jnp, nn and random, which only
// compose ops, are written with these and the ops alone.
//
// # Printing
//
// Ops are printed in MLIR's generic form ("stablehlo.add"(...) : (...) -> ...), which
// every StableHLO version parses; constants, custom calls and calls use their pretty forms.
// Symbol names print bare when they are MLIR identifiers and quoted otherwise
// (`module @"jit_my-fn"`); a module or function name outside mlir.CheckName's class is a
// build error. The printed module numbers values in text order, per function.
package stablehlo
