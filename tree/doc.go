// Package tree flattens Go values that hold arrays into ordered lists of leaves and builds
// them back, as JAX's pytrees: the trees of parameters, optimizer states and batches that a
// jitted train step takes and returns.
//
// # Where it sits
//
// tree is on the ground floor: it imports nothing of xlamesh and knows no array type. Its
// functions are generic in the leaf type L, so one struct type serves every stage of a
// program when its leaves are a type parameter:
//
//	type Block[T any] struct{ Wq, Wk, Wv, Wo T }
//	type Params[T any] struct {
//		Embed  T
//		Blocks []Block[T]
//	}
//
// Params[*jit.Array] holds the arrays on the devices, Params[lower.Value] the values a jitted
// body computes with, Params[mesh.PartitionSpec] their layout. Package jit flattens a call's
// tree of arrays, builds the body's tree of values with the same structure (Build), and
// flattens what the body returns; package autodiff returns gradients as a tree of the
// parameters' type; package optim updates trees.
//
// # What a tree is
//
// A leaf is a value whose static type is L (a struct field, slice element or map value
// declared as L; an interface holding an L). The containers are:
//
//   - structs: their exported fields, in declaration order; a field tagged `tree:"-"` is
//     left out, as are unexported fields;
//   - slices and arrays: their elements in order;
//   - maps with string, integer or unsigned keys: their values in sorted key order (as
//     jax.tree_util sorts dict keys);
//   - pointers and interfaces: what they point to or hold; a nil pointer, interface, slice or
//     map is an empty subtree (JAX's None).
//
// Any other value where a tree is expected (an int field, a func) is an error: it is neither a
// leaf nor a container. Tag it `tree:"-"` to keep configuration beside the arrays.
//
// A leaf's Path reads as Go would select it from the root: ".Blocks[1].Wq", `.Layers["mlp"]`,
// "[3]"; the root itself is "". Errors name the path of the first node that fails.
//
// # Structure
//
// A Def is the structure of a tree without its leaves: its containers, their field names,
// lengths and keys. Two trees of different types have equal Defs when one could be built
// from the other's leaves, so a Def is how a tree of arrays becomes a tree of values and back.
// Expand reads a prefix tree, as jax.jit's in_shardings does: a leaf of the prefix stands for
// every leaf of the subtree at its place (one spec for a whole block).
//
// Defs are immutable and safe for concurrent use.
package tree
