package oracletest

// knownDiff explains a disagreement with JAX that the tests accept.
type knownDiff struct {
	status string // statusDeliberate or statusOpen
	why    string
}

const (
	whyUnconstrainedGeometry = "xlamesh rejects Unconstrained in shard geometry (ErrUnconstrained, documented on mesh.Unconstrained): " +
		"an unconstrained dim has no layout until the compiler picks one. JAX 0.8.1's devices_indices_map and device_put treat it as None (replicated)."
)

const whyShardingInTypes = "on a mesh with Explicit axes JAX (sharding in types) adds an sdy.sharding_constraint after every op " +
	"(open dims plus replicated={...} for unused Explicit axes when Auto axes remain, closed dims on all-Explicit meshes); " +
	"xlamesh has no sharding-in-types and emits only the entry shardings, leaving the rest to Shardy's propagation " +
	"(documented in lower's package doc). Same numbers (lowering_numeric agrees)."

// known lists, by "group/case", every disagreement with JAX that is either a
// deliberate xlamesh choice or an open issue reported to the package that
// owns it. Anything else that disagrees fails the tests.
var known = map[string]knownDiff{
	"mesh/jax_accepts_duplicate_names": {statusDeliberate, "xlamesh rejects duplicate axis names (ErrDuplicateAxis); " +
		"JAX 0.8.1 accepts Mesh(devices, ('x', 'x')) and its shape dict silently collapses to {'x': 2}."},
	"mesh/jax_accepts_duplicate_devices": {statusDeliberate, "xlamesh rejects a device placed twice (ErrDuplicateDevice); JAX does not check."},

	"sharding/m8_u_8":                       {statusDeliberate, whyUnconstrainedGeometry},
	"sharding/m42_u_y_8x2":                  {statusDeliberate, whyUnconstrainedGeometry},
	"sharding/m42_x_u_8x2":                  {statusDeliberate, whyUnconstrainedGeometry},
	"sharding/mixed_u_y_8x2":                {statusDeliberate, whyUnconstrainedGeometry},
	"lowering/elementwise_mixed_types_x":    {statusDeliberate, whyShardingInTypes},
	"lowering/elementwise_mixed_types_repl": {statusDeliberate, whyShardingInTypes},
	"lowering/elementwise_explicit_y":       {statusDeliberate, whyShardingInTypes},
	"lowering/shard_map_partial_manual": {statusDeliberate, "partial-manual shard_map (manual_axes={\"x\"} on a 4x2 mesh): the manual_computation " +
		"itself matches, but JAX also puts a scalar `sdy.sharding_constraint %2 <@mesh, []>` inside the all_reduce's reduction region, " +
		"a constraint that cannot change a scalar's layout; lower writes the reduction region without it. Same numbers."},
}
