// Package refine refines StableHLO modules exported with symbolic shapes for concrete
// argument shapes, as jax.export does (refine_polymorphic_shapes) before it compiles such a
// module: jax.export.symbolic_shape("b, t") writes a module whose tensor types have dynamic
// dimensions ("?"), whose @main computes the dimension variables from its arguments'
// shapes (stablehlo.get_dimension_size), checks them (custom_call @shape_assertion) and
// passes them on, and whose body builds shapes with dynamic_broadcast_in_dim,
// dynamic_reshape, dynamic_iota and the like. XLA's PJRT compilers take static shapes only.
//
// Where it sits in the data flow: jaxexport reads an artifact's symbolic avals;
// mlir/bytecode reads its module to the generic form (or the module comes as the text JAX
// printed, which refine reads too: pretty.go); jit, given arrays, calls Module with
// their shapes and compiles the static module that comes back, once per distinct shapes
// (its lowering cache). refine is on the floor of the packages it uses, mlir (the one MLIR
// text scanner) and shapes.
//
// It is written here because no Go library refines StableHLO: the MLIR passes that do it
// (stablehlo-refine-arguments, stablehlo-refine-shapes) are C++ that PJRT plugins do not
// run.
package refine
