// Package shapes holds Shape, the one type of an array's element type and static dimensions in
// xlamesh. It is a leaf: it imports only gopjrt's dtypes (the one element-type vocabulary) and
// the standard library, so every layer can share it without an import arrow pointing back.
//
// Where it sits in the data flow: stablehlo builds ops on Shapes and prints them as MLIR tensor
// types ([Shape.String], "tensor<8x2xf32>"); pjrt reads the shapes of a compiled program's
// arguments and results, and of device buffers, as Shapes; jit checks arrays against them; and
// jaxexport reads an exported function's avals as Shapes. stablehlo.Shape, pjrt.Shape and
// jaxexport.Aval are aliases of this type, not conversions.
//
// A Shape is an immutable value: its constructor and Dims copy the dimensions, no method changes
// it, and it is safe for concurrent use.
package shapes
