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

const whyArgmaxIota = "argmax/argmin reduce the operand together with an iota of its indices: JAX builds that iota " +
	"with the operand's sharding, stablehlo.Argmax builds it before the rule sees the reduce, so it is typed (and " +
	"constrained) replicated; the reduce and its results are typed and constrained as JAX's. Same types and numbers."

// known lists, by "group/case", every disagreement with JAX that is either a
// deliberate xlamesh choice or an open issue reported to the package that
// owns it. Anything else that disagrees fails the tests.
var known = map[string]knownDiff{
	"backcompat/tpu_stablehlo_dynamic_reduce_window/data_variadic_2023_06_17/as written": tpuReduceWindow,
	"backcompat/tpu_stablehlo_dynamic_reduce_window/data_variadic_2023_06_17/text":       tpuReduceWindow,
	"backcompat/tpu_stablehlo_dynamic_reduce_window/data_variadic_2023_06_17/re-sharded": tpuReduceWindow,
	"mesh/jax_accepts_duplicate_names": {status: statusDeliberate, why: "xlamesh rejects duplicate axis names (ErrDuplicateAxis); " +
		"JAX accepts Mesh(devices, ('x', 'x')) and its shape dict silently collapses to {'x': 2} (JAX 0.12 reports size 8, 0.8.1 reported 2).", diffs: []string{
		`JAX succeeds with {"axis_names":["x","x"],"axis_sizes":[4,2],"axis_types":["Auto","Auto"],"size":8,"device_ids":[0,1,2,3,4,5,6,7],"str":"Mesh('x': 2, axis_types=(Auto, Auto))","repr":"Mesh(axis_sizes=(4, 2), axis_names=('x', 'x'), axis_types=(Auto, Auto))"}; xlamesh: mesh: duplicate axis "x": axes 0 and 1 of ('x', 'x')`,
	}},
	"mesh/jax_accepts_duplicate_devices": {status: statusDeliberate, why: "xlamesh rejects a device placed twice (ErrDuplicateDevice); JAX does not check.", diffs: []string{
		`JAX succeeds with {"axis_names":["x","y"],"axis_sizes":[2,2],"axis_types":["Auto","Auto"],"size":4,"device_ids":[0,0,1,1],"str":"Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))","repr":"Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), axis_types=(Auto, Auto))"}; xlamesh: mesh: duplicate device: device 0 is at positions 0 and 1`,
	}},

	"explicit/argmax_sharded_dim": {status: statusDeliberate, why: whyArgmaxIota, diffs: []string{
		`constraints: JAX [<@mesh, [{"X"}, {"Y"}]> <@mesh, [{"Y"}]> <@mesh, [{"Y"}]>], xlamesh [<@mesh, [{}, {}]> <@mesh, [{"Y"}]> <@mesh, [{"Y"}]>]`,
	}},
	"explicit/argmin_dim1": {status: statusDeliberate, why: whyArgmaxIota, diffs: []string{
		`constraints: JAX [<@mesh, [{"X"}, {"Y"}]> <@mesh, [{"X"}]> <@mesh, [{"X"}]>], xlamesh [<@mesh, [{}, {}]> <@mesh, [{"X"}]> <@mesh, [{"X"}]>]`,
	}},
	"lowering/shard_map_partial_manual": {status: statusDeliberate, why: "partial-manual shard_map (manual_axes={\"x\"} on a 4x2 mesh): the manual_computation " +
		"itself matches, but JAX also puts a scalar `sdy.sharding_constraint %3 <@mesh, []>` inside the all_reduce's reduction region, " +
		"a constraint that cannot change a scalar's layout, and (from JAX 0.12) an all-open `<@mesh, [{?}, {?}]>` on the all_reduce's result, " +
		"which leaves the propagation free as before; lower writes neither. Same numbers.", diffs: []string{
		`sharding constraints: JAX ["<@mesh, []> : tensor<f32>" "<@mesh, [{?}, {?}]> : tensor<2x2xf32>"], xlamesh []`,
		`op sequence: JAX ["sdy.manual_computation" "stablehlo.all_reduce" "stablehlo.add" "sdy.sharding_constraint" "stablehlo.return" "sdy.sharding_constraint" "sdy.return" "func.return"], xlamesh ["sdy.manual_computation" "stablehlo.all_reduce" "stablehlo.add" "stablehlo.return" "sdy.return" "func.return"]`,
	}},
}

// tpuReduceWindow is the one disagreement of JAX's back-compat data, however the module runs.
var tpuReduceWindow = knownDiff{status: statusDeliberate,
	why: "JAX computed this artifact's expected outputs on a TPU, for a reduce_window whose initial values (1.0 and 2) are " +
		"not identities of its reducer (add, subtract): XLA leaves how often an initial value is applied to the backend, " +
		"and the TPU applies them more than once. On CPU XLA applies them once per window, and JAX 0.12's own CPU backend " +
		"(jax.lax.reduce_window with the same window (2, 3) and reducer) gives xlamesh's numbers: [[19, 25], [43, 49]] and " +
		"[[-616, -622], [-640, -646]]. The unary artifact of the same test, with an identity, agrees.", diffs: []string{
		"output 0: 4 of 4 values differ; first at flat 0: JAX 27, xlamesh 19 (largest difference 0.14 of the largest magnitude)",
		"output 1: 4 of 4 values differ; first at flat 0: JAX -608, xlamesh -616",
	}}
