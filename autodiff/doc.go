// Package autodiff differentiates functions built with package stablehlo in reverse mode:
// jax.vjp, jax.grad and jax.value_and_grad over Go-built programs.
//
// It sits on the builder and knows nothing of meshes: the backward pass is made of ordinary
// builder ops, added to the same function as the forward ones, so the gradient program is
// compiled, partitioned and run like any other. Package lower gives each module it makes the
// rules of its own ops (sharding constraints, shard_map bodies, collectives over mesh axes), so shardings
// in the forward program have their transposed shardings in the backward one; package jit
// builds a jitted training step from a loss.
//
// # Differentiating
//
// Build the forward computation, then ask for its gradient before returning:
//
//	f := m.Main()
//	w := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 2))
//	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 4))
//	loss := f.Sum(f.Tanh(f.MatMul(x, w)))
//	grads := autodiff.Grad(f, loss, w)          // d loss / d w, a 4x2 value of f
//	f.Return(loss, grads[0])
//
// VJP is the general form (cotangents for several outputs of any shape); Grad and
// ValueAndGrad take a scalar loss; JVP is forward mode, computed by transposing the VJP. StopGradient marks a value through which no cotangent
// flows. Errors stick in the module, as the builder's do: an op on the path without a rule
// records an error wrapping ErrNotDifferentiable whose *stablehlo.OpError names the op.
//
// # How the walk works
//
// VJP reads the function's recorded ops (stablehlo.Function.Ops), finds those on a path
// from the differentiated values to the outputs, and walks them backwards, calling each op's
// Rule with the cotangents of its results. The rule adds ops computing the cotangents of its
// operands; cotangents of a value used several times are added up. Rules use the forward
// values directly (nothing is recomputed), except for ops with bodies: a func.call's callee,
// a branch of an if and a shard_map body are replayed next to their backward pass (XLA
// merges the copies of a call), and a loop runs forward once more to stack the values each
// iteration starts from.
//
// Integer and pred values carry no cotangent, as in JAX: their ops are cut from the walk
// (comparisons, argmax, random bits, integer index arithmetic), VJP gives integer inputs
// zeros (JAX's float0), and Grad refuses them with ErrNotFloat like jax.grad.
//
// # Complex, float8 and float4 values
//
// Every floating-point and complex type carries a cotangent of its own type, as in JAX
// (shapes.IsInexact). The float8 family and f4E2M1FN are ordinary floats to the rules: their
// cotangents are computed in their type, with its rounding, and a conversion's cotangent is
// converted back. A complex cotangent follows JAX's convention: it is the plain transpose of
// the linear map, without conjugation, so the cotangent of x in x*y is ct*y, holomorphic
// ops (exp, log, sin, tanh, sqrt, div, pow, ...) take their real formulas in complex
// arithmetic, and the transposes of real(x), imag(x) and complex(x, y) are complex(ct, 0),
// complex(0, -ct) and (real(ct), -imag(ct)); the builder's Conj, made of those, transposes
// to the conjugate of ct. A conversion of real values to complex transposes to the real
// part of ct, abs of complex x to complex(ct, 0)*conj(x)/|x| (none at 0), and an FFT to
// JAX's transpose (fft for FFT and IFFT, JAX's masked inverse transforms for RFFT and
// IRFFT). Grad takes complex values (the gradient of |z|^2 is 2 conj(z), as
// jax.grad gives it) but, like jax.grad, only a real loss; VJP takes complex outputs.
//
// # Rules
//
// Rules are registered by op name (Register, for every module); this package registers those of the
// builder's ops: elementwise math, select, clamp, convert, the shape ops, dot_general,
// convolution, reduce (sum, prod, max, min), reduce_window (sum, max, min; cumsum, cumprod,
// cummax, cummin), select_and_scatter (a pool's gradient, so gradients of gradients and
// Hessian-vector products go through pools), gather, scatter (add, replace, mul, max, min),
// sort, top_k, real, imag, complex, fft, if, case, while loops with a known trip count
// (ForLoop, Scan), func.call and the GSPMD @Sharding call. Rules can also belong to one
// module (RegisterFor, RegisterCustomCallFor, consulted first): package lower gives each
// module it makes the rules of its sharding constraint, shard_map, the collectives and
// annotate_device_placement, so that what a program's derivative is never depends on which
// packages a binary links (a builder-only module's collective has no rule, lower linked or
// not). An op with open regions (if, case,
// while) depends on the values they capture as well as on its operands: Inputs lists both,
// and a rule returns one cotangent per input.
//
// Each follows JAX's rule for the same primitive, including where the derivative is not
// defined: max and min split the cotangent evenly between tied operands, a reduce max
// among tied elements, a max or min scatter among the tied updates and element, abs takes
// +1 at 0, and sign, floor, ceil and round have zero derivatives. Where JAX differentiates
// a reformulation of an op, so does the rule: a product reduction through a tree of
// pairwise products (exact with zero factors, no division), cumprod, cummax and cummin
// through JAX's associative scan (a running maximum's cotangent goes where lax.max sends
// it, ties included).
//
// Custom calls are told apart by target: RegisterCustomCallFor gives a module's calls to a
// target their rule (package lower gives annotate_device_placement's, which places the
// cotangent back in the memory the value came from).
//
// These record ErrNotDifferentiable instead: a custom call of a target without a rule, a
// scatter with a Go combiner
// (ScatterFunc); as in JAX, a while loop without a known trip count, a windowed max or min
// with window dilations, the updates of a multiplying scatter without UniqueIndices, a
// clamp of complex values (lax.clamp's derivative compares, and complex values have no
// order), and a windowed product or a reduce_window with a Go body (ReduceWindowFunc): lax.reduce_window
// turns only add, max and min with their identities into reductions JAX can transpose, and
// binds any other computation, lax.mul included, as a generic reduce_window that jax.vjp
// refuses (jax.jvp takes it forward; JVP here, a transposed VJP, refuses it as well).
// docs/jax-compat.md lists the rules and how each is checked against JAX.
//
// Subpackage gradcheck compares the gradients with finite differences, for tests.
package autodiff
