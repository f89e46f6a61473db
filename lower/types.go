package lower

import (
	"fmt"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// The builder's vocabulary is package stablehlo's; these aliases keep lower's programs
// self-contained (lower.Value, lower.NewShape, lower.Sum, ...).
type (
	// Value is an SSA value: stablehlo.Value.
	Value = stablehlo.Value
	// Shape is a ranked tensor type: stablehlo.Shape.
	Shape = stablehlo.Shape
	// DType is the element type of a tensor: gopjrt's dtypes.DType, as in stablehlo.
	DType = stablehlo.DType
	// DotDims are the dimension numbers of DotGeneral: stablehlo.DotDims.
	DotDims = stablehlo.DotDims
	// Reduction is the combining function of a reduce or a collective: stablehlo.Reduction.
	Reduction = stablehlo.Reduction
	// Comparison is the direction of Compare: stablehlo.Comparison.
	Comparison = stablehlo.Comparison

	// The parameter and option structs of the builder's ops, so that a Body written with
	// package lower names them from lower too (lower.ScanOptions{Reverse: true}).

	// ScanOptions configure Scan: stablehlo.ScanOptions.
	ScanOptions = stablehlo.ScanOptions
	// ConvParams are Conv's parameters: stablehlo.ConvParams.
	ConvParams = stablehlo.ConvParams
	// ConvDims are Conv's dimension numbers: stablehlo.ConvDims.
	ConvDims = stablehlo.ConvDims
	// GatherParams are Gather's parameters: stablehlo.GatherParams.
	GatherParams = stablehlo.GatherParams
	// GatherDims are Gather's dimension numbers: stablehlo.GatherDims.
	GatherDims = stablehlo.GatherDims
	// ScatterParams are Scatter's parameters: stablehlo.ScatterParams.
	ScatterParams = stablehlo.ScatterParams
	// ScatterDims are Scatter's dimension numbers: stablehlo.ScatterDims.
	ScatterDims = stablehlo.ScatterDims
	// ReduceWindowParams are ReduceWindow's parameters: stablehlo.ReduceWindowParams.
	ReduceWindowParams = stablehlo.ReduceWindowParams
	// Padding is the padding of the pooling ops: stablehlo.Padding.
	Padding = stablehlo.Padding
	// FFTType is the kind of FFT: stablehlo.FFTType.
	FFTType = stablehlo.FFTType
	// RngAlgorithm is RngBitGenerator's algorithm: stablehlo.RngAlgorithm.
	RngAlgorithm = stablehlo.RngAlgorithm
	// SelectAndScatterParams are SelectAndScatter's parameters:
	// stablehlo.SelectAndScatterParams.
	SelectAndScatterParams = stablehlo.SelectAndScatterParams
	// Attr is a named attribute of a custom call, an argument or a result: stablehlo.Attr.
	Attr = stablehlo.Attr
	// MeshAxes name the mesh axes a collective over explicit groups runs over:
	// stablehlo.MeshAxes.
	MeshAxes = stablehlo.MeshAxes
)

// Reductions (stablehlo's).
const (
	Sum  = stablehlo.Sum
	Prod = stablehlo.Prod
	Max  = stablehlo.Max
	Min  = stablehlo.Min
)

// Comparison directions (stablehlo's).
const (
	EQ = stablehlo.EQ
	NE = stablehlo.NE
	LT = stablehlo.LT
	LE = stablehlo.LE
	GT = stablehlo.GT
	GE = stablehlo.GE
)

// NewShape returns the tensor type of the given element type and dimensions, e.g.
// NewShape(dtypes.Float32, 8, 2) for tensor<8x2xf32>; see stablehlo.NewShape.
func NewShape(d DType, dims ...int) Shape { return stablehlo.NewShape(d, dims...) }

// MLIRType returns element type d as StableHLO text writes it ("i1", "f32", ...); see
// stablehlo.MLIRType.
func MLIRType(d DType) string { return stablehlo.MLIRType(d) }

// ParseDType reads an element type name in either XLA ("s32", "pred") or MLIR ("i32", "i1")
// spelling; see stablehlo.ParseDType. Any other name gives an error wrapping ErrDType.
func ParseDType(s string) (DType, error) {
	d, err := stablehlo.ParseDType(s)
	if err != nil {
		return d, fmt.Errorf("lower: %w: unknown element type %q", ErrDType, s)
	}
	return d, nil
}
