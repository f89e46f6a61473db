package lower

import (
	"errors"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Sentinel errors. Errors returned by Build wrap one of them (test with errors.Is)
// inside an *OpError that names the function, the op and the operand (errors.As).
// The first six are package stablehlo's own (the same values), for ops of the builder.
var (
	// ErrShape: operand shapes do not fit the op (rank, dimension sizes, element count).
	ErrShape = stablehlo.ErrShape
	// ErrDType: an operand has an element type the op does not accept.
	ErrDType = stablehlo.ErrDType
	// ErrForeignValue: an operand was defined in another function or outside an isolated region.
	ErrForeignValue = stablehlo.ErrForeignValue
	// ErrInvalidValue: an operand is the zero Value.
	ErrInvalidValue = stablehlo.ErrInvalidValue
	// ErrIndivisible: a dimension is not divisible by the product of its manual axes.
	ErrIndivisible = stablehlo.ErrIndivisible
	// ErrFunction: a function is used wrongly (no return, returned twice, wrong call arity).
	ErrFunction = stablehlo.ErrFunction

	// ErrUnknownAxis: a mesh axis name is not in the mesh.
	ErrUnknownAxis = errors.New("unknown mesh axis")
	// ErrMeshMismatch: a sharding uses a mesh whose shape differs from the module's mesh.
	ErrMeshMismatch = errors.New("mesh mismatch")
	// ErrSharding: a sharding does not fit its value (rank, axes, manual axes).
	ErrSharding = errors.New("invalid sharding")
	// ErrNotManual: a collective was used outside a shard_map body or over non-manual axes.
	ErrNotManual = errors.New("not in a manual computation")
	// ErrPartitioner: the op is not available with the module's partitioner.
	ErrPartitioner = errors.New("unsupported with this partitioner")
	// ErrShardingType: under sharding in types (a mesh with Explicit axes), an op whose
	// operands' shardings have no consistent result, or whose result JAX asks the program to
	// state with an out sharding (JAX's ShardingTypeError); the error's text is JAX's.
	ErrShardingType = errors.New("sharding type error")
)

// OpError is the error Build returns for the first op that failed: stablehlo.OpError,
// whose messages start "lower: " for lower's modules, e.g.
// "lower: @main: add: operand 1 (%3): <cause>".
type OpError = stablehlo.OpError
