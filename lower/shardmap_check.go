package lower

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The replication check of shard_map, JAX's check_vma. Every value in a shard_map body
// has a set of manual mesh axes it may vary over (JAX's "varying manual axes", vma):
//
//   - a body argument varies over the manual axes its in_spec names (and over whatever its
//     operand varied over in an enclosing shard_map);
//   - constants, iota and the like vary over none;
//   - AllReduceOver (Psum, Pmax, Pmin) removes its axes: every device of the group holds
//     the same result;
//   - AxisIndex over axes varies over exactly those; AllGatherOver, ReduceScatterOver
//     (PsumScatter), AllToAllOver and Ppermute add their axes, as JAX's pvary does
//     before them: their results differ along the axes;
//   - a collective that lower did not build (a copy made by stablehlo.Function.Replay, say)
//     is read from its replica groups: all_reduce removes the axes along which its groups
//     reach, the others add them;
//   - any other op varies over the union of its operands' axes (for an op with regions, also
//     over its regions' results, its region arguments taking the union of its operands);
//     partition_id varies over every manual axis;
//   - a nested shard_map's results vary over what its body's results vary over, less its
//     own manual axes.
//
// A result of the body whose out_spec does not name an axis it varies over would be
// assembled as if its blocks were equal along that axis, silently keeping one device's
// block: ShardMap reports it as an error wrapping ErrReplication that names the result
// and the axis, as JAX raises. ShardMapUnchecked skips the check (check_vma=False).

// ErrReplication: a shard_map result's out_spec leaves out a manual axis the value varies
// over, so it is not replicated along it (JAX's check_vma).
var ErrReplication = errors.New("out_specs imply replication the value does not have")

// vmaRule says how a collective's result varies, given its operands' union.
type vmaRule struct {
	op   byte     // 'd': drop axes, 'a': add axes, 's': set to axes
	axes []string // mesh axis names
}

// vmaKey is the stablehlo.Module context key of the module's map[Value]vmaRule.
type vmaKey struct{}

// setVMA records how v, a result of a collective in a shard_map body, varies.
func (f *Function) setVMA(v Value, op byte, axes []string) {
	if !v.Valid() {
		return
	}
	h := f.m.hlo
	rules, _ := h.Context(vmaKey{}).(map[Value]vmaRule)
	if rules == nil {
		rules = make(map[Value]vmaRule)
		h.SetContext(vmaKey{}, rules)
	}
	rules[v] = vmaRule{op: op, axes: axes}
}

// axisMask returns the bit set of the named axes of a.
func axisMask(a mesh.Abstract, axes []string) uint64 {
	var m uint64
	for _, n := range axes {
		if i := a.AxisIndex(n); i >= 0 && i < 64 {
			m |= 1 << i
		}
	}
	return m
}

// specMask returns the bit set of the axes a spec names.
func specMask(a mesh.Abstract, s mesh.PartitionSpec) uint64 {
	var m uint64
	for i := range s.Len() {
		m |= axisMask(a, s.Dim(i).Axes())
	}
	return m
}

// vmaChecker walks a shard_map and its nested ones.
type vmaChecker struct {
	abs   mesh.Abstract
	rules map[Value]vmaRule
	env   map[Value]uint64
}

// checkReplication runs the check on op, an outermost sdy.manual_computation just added
// to f, recording the first failure as f's error.
func (f *Function) checkReplication(op *stablehlo.Op) {
	p, ok := op.Params().(ShardMapParams)
	if !ok || p.Mesh.NumAxes() > 64 {
		return
	}
	rules, _ := f.m.hlo.Context(vmaKey{}).(map[Value]vmaRule)
	c := &vmaChecker{abs: p.Mesh, rules: rules, env: make(map[Value]uint64)}
	if _, err := c.shardMap(op, make([]uint64, len(op.Operands())), 0, nil); err != nil {
		f.Fail(op.Name(), -1, Value{}, err)
	}
}

// shardMap returns the vma of the results of shard_map op, whose operands vary over in,
// inside shard_maps whose manual axes are outer; path names the nested shard_maps.
func (c *vmaChecker) shardMap(op *stablehlo.Op, in []uint64, outer uint64, path []int) ([]uint64, error) {
	p := op.Params().(ShardMapParams)
	manual := axisMask(c.abs, p.Manual)
	body := op.Regions()[0]
	for i, a := range body.Args() {
		c.env[a] = in[i] | (specMask(c.abs, p.InSpecs[i]) & manual)
	}
	if err := c.ops(body, outer|manual, path); err != nil {
		return nil, err
	}
	rs := body.Results()
	out := make([]uint64, len(rs))
	for i, r := range rs {
		v := c.env[r]
		if missing := v & manual &^ specMask(c.abs, p.OutSpec[i]); missing != 0 && p.CheckVMA {
			return nil, c.replicationError(path, i, p.OutSpec[i], missing)
		}
		out[i] = v &^ manual
	}
	return out, nil
}

func (c *vmaChecker) replicationError(path []int, result int, spec mesh.PartitionSpec, missing uint64) error {
	names := c.abs.AxisNames()
	var axes []string
	for i, n := range names {
		if missing&(1<<i) != 0 {
			axes = append(axes, strconv.Quote(n))
		}
	}
	where := "result " + strconv.Itoa(result)
	for i := len(path) - 1; i >= 0; i-- {
		where += " of the nested shard_map at op " + strconv.Itoa(path[i])
	}
	verb := "axis"
	if len(axes) > 1 {
		verb = "axes"
	}
	list := strings.Join(axes, ", ")
	return fmt.Errorf("%w: %s: out_specs %v implies the value is replicated over mesh %s %s, but it varies over %s "+
		"(name the %s in the out_spec, reduce over it with Psum/AllReduceOver, or build with ShardMapUnchecked, JAX's check_vma=False)",
		ErrReplication, where, spec, verb, list, list, verb)
}

// ops computes the vma of every value defined in fn, a body or region inside shard_maps
// whose manual axes are manual.
func (c *vmaChecker) ops(fn *stablehlo.Function, manual uint64, path []int) error {
	for k, op := range fn.Ops() {
		var u uint64
		operands := op.Operands()
		in := make([]uint64, len(operands))
		for i, v := range operands {
			in[i] = c.env[v]
			u |= in[i]
		}
		results := op.Results()
		if _, ok := op.Params().(ShardMapParams); ok {
			out, err := c.shardMap(op, in, manual, append(slices.Clone(path), k))
			if err != nil {
				return err
			}
			for i, r := range results {
				c.env[r] = c.apply(r, out[i], op)
			}
			continue
		}
		for _, g := range op.Regions() {
			for _, a := range g.Args() {
				c.env[a] = u
			}
			if err := c.ops(g, manual, path); err != nil {
				return err
			}
			for _, r := range g.Results() {
				u |= c.env[r]
			}
		}
		switch op.Name() {
		case "stablehlo.partition_id", "stablehlo.replica_id":
			u = manual
		}
		for _, r := range results {
			c.env[r] = c.apply(r, u, op)
		}
	}
	return nil
}

// apply returns the vma of result r of op whose operands vary over u: by the rule lower's
// collective recorded for r, or else, for a collective built otherwise (a copy made by
// stablehlo.Function.Replay, or stablehlo's own with replica groups), by the axes along
// which its groups or pairs reach.
func (c *vmaChecker) apply(r Value, u uint64, op *stablehlo.Op) uint64 {
	if rule, ok := c.rules[r]; ok {
		m := axisMask(c.abs, rule.axes)
		switch rule.op {
		case 'd':
			return u &^ m
		case 'a':
			return u | m
		default:
			return m
		}
	}
	switch p := op.Params().(type) {
	case stablehlo.AllReduceParams:
		return u &^ c.groupAxes(p.Groups)
	case stablehlo.AllGatherParams:
		return u | c.groupAxes(p.Groups)
	case stablehlo.ReduceScatterParams:
		return u | c.groupAxes(p.Groups)
	case stablehlo.AllToAllParams:
		return u | c.groupAxes(p.Groups)
	case stablehlo.CollectivePermuteParams:
		var m uint64
		sizes := c.abs.AxisSizes()
		for _, q := range p.Pairs {
			m |= differ(sizes, q[0], q[1])
		}
		return u | m
	}
	return u
}

// groupAxes returns the mesh axes along which the partition ids of some replica group
// differ.
func (c *vmaChecker) groupAxes(groups [][]int) uint64 {
	var m uint64
	sizes := c.abs.AxisSizes() // once, not once per id: AxisSizes copies
	for _, g := range groups {
		for _, id := range g[1:] {
			m |= differ(sizes, g[0], id)
		}
	}
	return m
}

// differ returns the axes of a mesh of the given sizes along which the coordinates of
// partitions a and b differ (partition ids are row-major mesh positions).
func differ(sizes []int, a, b int) uint64 {
	var m uint64
	for k := len(sizes) - 1; k >= 0; k-- {
		if a%sizes[k] != b%sizes[k] {
			m |= 1 << k
		}
		a, b = a/sizes[k], b/sizes[k]
	}
	return m
}

// VaryingAxes returns the manual mesh axes, in mesh order, that v, a value of a shard_map
// body being built or built (or of a region of an op in one), may vary over by the rules
// of the replication check: JAX's jax.typeof(v).vma. It reports false for a value outside
// any shard_map body, and for one of a region whose op is not added yet.
func (f *Function) VaryingAxes(v Value) ([]string, bool) {
	if !v.Valid() {
		return nil, false
	}
	g := FunctionOf(v.Function())
	if g == nil || g.m != f.m {
		return nil, false
	}
	c := g.manualCtx()
	if c == nil || c.abs.NumAxes() > 64 {
		return nil, false
	}
	rules, _ := f.m.hlo.Context(vmaKey{}).(map[Value]vmaRule)
	k := &vmaChecker{abs: c.abs, rules: rules, env: make(map[Value]uint64)}
	if err := k.body(c); err != nil {
		return nil, false
	}
	m, ok := k.env[v]
	if !ok {
		return nil, false
	}
	var axes []string
	for i, n := range c.abs.AxisNames() {
		if m&(1<<i) != 0 {
			axes = append(axes, n)
		}
	}
	return axes, true
}

// body computes the vma of the values of shard_map body c.body so far, after its
// enclosing bodies' (for its operands).
func (k *vmaChecker) body(c *manualCtx) error {
	var outer uint64
	if c.parent != nil {
		if err := k.body(c.parent); err != nil {
			return err
		}
		outer = axisMask(k.abs, c.parent.axes)
	}
	manual := axisMask(k.abs, c.manual)
	for i, a := range c.body.Args() {
		var in uint64
		if c.parent != nil {
			in = k.env[c.operands[i]]
		}
		k.env[a] = in | (specMask(k.abs, c.inSpecs[i]) & manual)
	}
	return k.ops(c.body, outer|manual, nil)
}
