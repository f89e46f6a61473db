// Package shardy holds the attributes of the Shardy (`sdy`) MLIR dialect as
// Go values, prints them as the exact dialect text and parses that text
// back.
//
// It sits between package mesh and package lower: a mesh.NamedSharding
// (JAX's mesh + PartitionSpec) becomes a TensorSharding here
// (FromNamedSharding), and lower writes the String() of these values into
// StableHLO modules: `sdy.mesh @mesh = <["x"=4, "y"=2]>` symbols,
// `#sdy.sharding<@mesh, [{"x"}, {}]>` on function arguments and results,
// stripped `<@mesh, [...]>` shardings in sdy.sharding_constraint and
// sdy.manual_computation. Package mlir/bytecode decodes the Shardy
// attributes of MLIR bytecode (modules JAX exported) into these values and
// prints them with this package's printer.
//
// # Values
//
//   - Mesh: named axes and optional device_ids, `<["x"=4, "y"=2]>`; the
//     maximal mesh `<[], device_ids=[3]>`; the empty mesh `<[]>`. Device ids
//     equal to iota are dropped (as Shardy's MeshAttr builder does), so
//     `<["a"=2, "b"=2], device_ids=[0, 1, 2, 3]>` reads, prints and compares
//     as `<["a"=2, "b"=2]>`. MeshOp is the `sdy.mesh @name = <...>` symbol op.
//   - AxisRef: a whole axis `"x"` or a sub-axis `"x":(1)2`.
//   - DimSharding: one dimension, closed `{"x", "y"}` / `{}` or open
//     `{"x", ?}` / `{?}`, with an optional priority `p0`.
//   - TensorSharding: mesh (symbol or inline), one DimSharding per
//     dimension, `replicated={...}` and `unreduced={...}`. String() is the
//     `#sdy.sharding<...>` attribute, Stripped() the bare `<...>` form.
//   - TensorShardingPerValue: `#sdy.sharding_per_value<[...]>` for op results.
//   - ManualAxes: the `manual_axes={"x"}` list of sdy.manual_computation.
//   - SubAxisInfo: the `(1)2` of a sub-axis, an attribute of its own in
//     bytecode.
//   - AxisRefList `{"x", "y":(1)2}` and ListOfAxisRefLists `[{"x"}, {}]`:
//     the axes of Shardy's collectives (sdy.all_reduce, sdy.all_gather, ...).
//   - AllToAllParam `{"x"}: 0->1` and AllToAllParamList
//     `[{"x"}: 0->2, {"y"}: 1->3]`: the all-to-alls of sdy.all_to_all.
//   - ShardingRule: `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k])
//     {i=8, j=16, k=8} reduction={j}>`, how an op partitions, in factors
//     (`sdy.sharding_rule` of custom calls JAX exports); its TensorMapping
//     `[i, jk]` per operand and result holds one DimMapping `jk` per
//     dimension.
//
// Each of them is an Attr: Attribute returns the value as a standalone MLIR
// attribute, with the prefix MLIR's printer gives it in a generic op's
// attribute dictionary (`#sdy.mesh<...>`, `#sdy<manual_axes{"x"}>`,
// `#sdy<all_to_all_param{"x"}: 0->1>`, `#sdy.dim_mappingij`).
//
// All values are immutable: constructors copy their inputs, accessors return
// copies, With methods return new values. They are safe for concurrent use.
//
// # Printing and parsing
//
// Every value's String() is the dialect's own text, written by one recursive
// writer, and the Parse functions (ParseMesh, ParseMeshOp,
// ParseTensorSharding, ParseTensorShardingPerValue, ParseShardingRule,
// ...) read it back: Parse(v.String()) equals v, and printing parsed
// canonical text gives the same text. ParseAttribute reads the standalone
// form of every value, those without a Parse function of their own
// included: ParseAttribute(v.Attribute()) equals v. The parser also reads
// what Shardy and JAX accept that the printer writes differently
// (whitespace, `"\""` escapes, `unreduced=sum{...}`, `#sdy.sharding`-prefixed
// elements of a per-value list, which print stripped, explicit iota
// device_ids, the older `<"x"=4>` mesh form, `{"x"}:0->1`, `reduction={}`),
// and the two texts MLIR prints but cannot read back: `()` for a sharding
// rule of an op without operands or results, and `#sdy.dim_mappingij`, a
// dimension mapping in full. Parse errors are *ParseError values with the
// byte offset and, where Shardy's parser has one, Shardy's key phrase:
// `shardy: offset 27: expected ',' or '}', found "y"`, `expecting integer
// priority, got: p99999999999999999999`, `expecting factor indices to be
// ordered like an iota`.
//
// # Validation
//
// Constructors and parsers do not check Shardy's semantic rules; the
// Validate methods of meshes, shardings and manual axes do (sharding rules,
// all-to-all parameters and axis lists have none), with the wording of
// Shardy's verifier ("unknown axis name", "duplicate axis ref", "sharding
// doesn't match tensor rank: 2 != 1", ...), wrapping exported sentinel
// errors such as ErrUnknownAxis for errors.Is.
//
// MeshOpsInModule reads the `sdy.mesh` ops of a whole module's text, for
// checking shardings of a module written elsewhere (e.g. exported by JAX).
//
// # Conversions
//
// FromNamedSharding follows JAX's mapping of PartitionSpec entries (None ->
// `{}`, "x" -> `{"x"}`, ("x", "y") -> `{"x", "y"}`, Unconstrained -> `{?}`);
// MeshFromAbstract gives the mesh of a mesh.Abstract (device_ids only when
// not iota); AdjustForAxisTypes applies JAX's extra rule for meshes mixing
// Auto axes with Explicit ones (all dims open, unused Explicit axes
// replicated).
//
// # GSPMD
//
// For XLA's other partitioner the same shardings are written as HloSharding
// text in `mhlo.sharding` attributes: GSPMD converts a mesh.NamedSharding
// and TensorSharding.GSPMD a TensorSharding on a Mesh, e.g.
// `{devices=[4,2]<=[8]}`, `{devices=[2,1,4]<=[4,2]T(1,0)
// last_tile_dim_replicate}`, `{replicated}`, `{maximal device=0}`,
// `{manual}`. GSPMD reproduces the text JAX computes, and
// TensorSharding.GSPMD the text of XLA's own sdy export (both checked in
// testdata against several hundred cases generated with JAX 0.12.0.1; the
// generators are testdata/gen_*.py).
//
// The texts are printed by the one HloSharding value of xlamesh,
// internal/xlaproto's OpSharding (pjrt.OpSharding outside the module).
// FromGSPMD goes back, as JAX's parse_flatten_op_sharding does: from an
// HloSharding, such as the layout XLA chose for a result, to the
// PartitionSpec over an abstract mesh whose GSPMD form it is, or an error
// wrapping ErrUnsupported when no spec has that form.
//
// # Shardy version
//
// The package follows Shardy at commit
// a0277a83e7f84d40075be0d71a131cb71d806ff6 (github.com/openxla/shardy,
// 2026-08-22): every attribute of that commit's dialect tests
// (shardy/dialect/sdy/**/test/*.mlir) parses, prints as Shardy prints it and
// validates, and every attribute-level error of those tests is an error here
// with Shardy's key phrase. The facts are extracted into
// testdata/shardy_corpus.json by tools/shardy-corpus/generate.py, which
// records the commit. The corpus has no sharding rules, collective
// parameters or axis lists; their texts in attr_test.go are what jaxlib
// 0.12.0.1 prints for them. Where Shardy versions differ, this package follows the
// one in the plugins the project tests (xla-cpu-pjrt 0.0.1, and the jaxlib
// of the oracle): since May 2025 (Shardy commit e23167f) the MeshAttr
// builder drops device_ids equal to iota, so the verifier's older rule
// rejecting them ("if the ordered device ids are the same as
// iota(product(axes)), no need to specify them") can no longer fire, and
// Validate does not have it.
package shardy
