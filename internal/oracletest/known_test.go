package oracletest

// knownDiff explains a disagreement with JAX that the tests accept: exactly
// diffs, the comparison's lines for the case, each naming JAX's value and
// xlamesh's. A change on either side (a regenerated golden, a changed
// xlamesh result) fails the test until the entry is updated.
type knownDiff struct {
	status string // statusDeliberate or statusOpen
	why    string
	diffs  []string
}

const whyShardingInTypes = "on a mesh with Explicit axes JAX (sharding in types) adds an sdy.sharding_constraint after every op " +
	"(open dims plus replicated={...} for unused Explicit axes when Auto axes remain, closed dims on all-Explicit meshes); " +
	"xlamesh has no sharding-in-types and emits only the entry shardings, leaving the rest to Shardy's propagation " +
	"(documented in lower's package doc). Same numbers (lowering_numeric agrees)."

const whyFastMinMax = "the pinned CPU plugin (xla-cpu-pjrt 0.0.1) compiles with XLA's default of its day, " +
	"xla_cpu_enable_fast_min_max=true, so `maximum`/`minimum` inside reductions (reduce, reduce_window) drop NaN; jaxlib 0.8.1's XLA " +
	"propagates it. JAX's own module gives the same bytes on the plugin (TestOpsControlJAXModules), and with " +
	"XLA_FLAGS=--xla_cpu_enable_fast_min_max=false both modules match JAX: a plugin setting, not the builder (which writes JAX's reduce_window). " +
	"pjrt.CompileOptions cannot set XLA debug options yet."

// known lists, by "group/case", every disagreement with JAX that is either a
// deliberate xlamesh choice or an open issue reported to the package that
// owns it. Anything else that disagrees fails the tests.
var known = map[string]knownDiff{
	"mesh/jax_accepts_duplicate_names": {status: statusDeliberate, why: "xlamesh rejects duplicate axis names (ErrDuplicateAxis); " +
		"JAX 0.8.1 accepts Mesh(devices, ('x', 'x')) and its shape dict silently collapses to {'x': 2}.", diffs: []string{
		`JAX succeeds with {"axis_names":["x","x"],"axis_sizes":[4,2],"axis_types":["Auto","Auto"],"size":2,"device_ids":[0,1,2,3,4,5,6,7],"str":"Mesh('x': 2, axis_types=(Auto, Auto))","repr":"Mesh(axis_sizes=(4, 2), axis_names=('x', 'x'), axis_types=(Auto, Auto))"}; xlamesh: mesh: duplicate axis "x": axes 0 and 1 of ('x', 'x')`,
	}},
	"mesh/jax_accepts_duplicate_devices": {status: statusDeliberate, why: "xlamesh rejects a device placed twice (ErrDuplicateDevice); JAX does not check.", diffs: []string{
		`JAX succeeds with {"axis_names":["x","y"],"axis_sizes":[2,2],"axis_types":["Auto","Auto"],"size":4,"device_ids":[0,0,1,1],"str":"Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))","repr":"Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), axis_types=(Auto, Auto))"}; xlamesh: mesh: duplicate device: device 0 is at positions 0 and 1`,
	}},

	"lowering/elementwise_mixed_types_x": {status: statusDeliberate, why: whyShardingInTypes, diffs: []string{
		`sharding constraints: JAX ["<@mesh, [{\"x\", ?}, {?}]> : tensor<8x2xf32>" "<@mesh, [{\"x\", ?}, {?}]> : tensor<8x2xf32>"], xlamesh []`,
		`op sequence: JAX ["stablehlo.constant" "sdy.sharding_constraint" "stablehlo.multiply" "sdy.sharding_constraint" "func.return"], xlamesh ["stablehlo.constant" "stablehlo.multiply" "func.return"]`,
	}},
	"lowering/elementwise_mixed_types_repl": {status: statusDeliberate, why: whyShardingInTypes, diffs: []string{
		`sharding constraints: JAX ["<@mesh, [{?}, {?}], replicated={\"x\"}> : tensor<8x2xf32>" "<@mesh, [{?}, {?}], replicated={\"x\"}> : tensor<8x2xf32>"], xlamesh []`,
		`op sequence: JAX ["stablehlo.constant" "sdy.sharding_constraint" "stablehlo.multiply" "sdy.sharding_constraint" "func.return"], xlamesh ["stablehlo.constant" "stablehlo.multiply" "func.return"]`,
	}},
	"lowering/elementwise_explicit_y": {status: statusDeliberate, why: whyShardingInTypes, diffs: []string{
		`sharding constraints: JAX ["<@mesh, [{}, {\"y\"}]> : tensor<8x2xf32>" "<@mesh, [{}, {\"y\"}]> : tensor<8x2xf32>"], xlamesh []`,
		`op sequence: JAX ["stablehlo.constant" "sdy.sharding_constraint" "stablehlo.multiply" "sdy.sharding_constraint" "func.return"], xlamesh ["stablehlo.constant" "stablehlo.multiply" "func.return"]`,
	}},
	"lowering/shard_map_partial_manual": {status: statusDeliberate, why: "partial-manual shard_map (manual_axes={\"x\"} on a 4x2 mesh): the manual_computation " +
		"itself matches, but JAX also puts a scalar `sdy.sharding_constraint %2 <@mesh, []>` inside the all_reduce's reduction region, " +
		"a constraint that cannot change a scalar's layout; lower writes the reduction region without it. Same numbers.", diffs: []string{
		`sharding constraints: JAX ["<@mesh, []> : tensor<f32>"], xlamesh []`,
		`op sequence: JAX ["sdy.manual_computation" "stablehlo.all_reduce" "stablehlo.add" "sdy.sharding_constraint" "stablehlo.return" "sdy.return" "func.return"], xlamesh ["sdy.manual_computation" "stablehlo.all_reduce" "stablehlo.add" "stablehlo.return" "sdy.return" "func.return"]`,
	}},

	"ops_control/cumulative_f32_nan": {status: statusOpen, why: whyFastMinMax, diffs: []string{
		"output 2[1]: JAX NaN, xlamesh 1", "output 2[2]: JAX NaN, xlamesh 3", "output 2[3]: JAX NaN, xlamesh 3",
		"output 3[1]: JAX NaN, xlamesh 1", "output 3[2]: JAX NaN, xlamesh 1", "output 3[3]: JAX NaN, xlamesh -2",
	}},
	"ops_control/cumulative_f32_nan_reverse": {status: statusOpen, why: whyFastMinMax, diffs: []string{
		"output 2[0]: JAX NaN, xlamesh 3", "output 2[1]: JAX NaN, xlamesh 3",
		"output 3[0]: JAX NaN, xlamesh -2", "output 3[1]: JAX NaN, xlamesh -2",
	}},
	"programs/special_values/exported":                {status: statusOpen, why: whyMaxNaN, diffs: []string{fastMinMaxDiff}},
	"programs/special_values/mesh_2x4":                {status: statusOpen, why: whyMaxNaN, diffs: []string{fastMinMaxDiff}},
	"programs/special_values/devices_reversed":        {status: statusOpen, why: whyMaxNaN, diffs: []string{fastMinMaxDiff}},
	"programs/special_values/mesh_2x4 (text)":         {status: statusOpen, why: whyMaxNaN, diffs: []string{fastMinMaxDiff}},
	"programs/special_values/devices_reversed (text)": {status: statusOpen, why: whyMaxNaN, diffs: []string{fastMinMaxDiff}},
	"programs/smap_partial/mesh_4x1":                  smapPartial4x1,
	"programs/smap_partial/mesh_4x1 (text)":           smapPartial4x1,
}

// whyMaxNaN explains special_values: an elementwise maximum, outside any reduction.
const whyMaxNaN = "stablehlo.maximum with a NaN operand gives the other operand on the pinned CPU plugin and NaN in jaxlib 0.8.1, " +
	"as exported too (same module), so not the re-sharding; the same plugin setting as ops_control's: " + whyFastMinMax

const fastMinMaxDiff = "output 3: 4 of 32 values differ; first at flat 5: JAX NaN, xlamesh 4"

var smapPartial4x1 = knownDiff{status: statusOpen, why: "re-sharding a shard_map program onto a mesh whose axes differ " +
	"(here y: 2 -> 1, 8 -> 4 devices) is refused with lower.ErrMeshMismatch: the module's collectives carry replica_groups " +
	"over the 8 partitions of the old mesh, which lower.Wrap does not rewrite yet. JAX re-lowers the Python function instead.", diffs: []string{
	`call: jit: smap_partial: lowering failed: lower: wrap: cannot wrap module: mesh mismatch: the module has manual computations (shard_map) written for mesh @mesh = <["x"=4, "y"=2]>; they move only to a mesh with the same axes, not <["x"=4, "y"=1]>`,
}}
