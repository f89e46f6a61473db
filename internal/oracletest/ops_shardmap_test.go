package oracletest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// smapCase is one case of testdata/oracle/ops_shardmap.json: a jax.shard_map on its mesh
// (the 4x2 ("x", "y") one, a 1-D or a 2x4), its specs, inputs, and JAX's outputs or error.
type smapCase struct {
	Name        string      `json:"name"`
	JAX         string      `json:"jax"`
	Mesh        meshJSON    `json:"mesh"`
	InSpecs     [][]any     `json:"in_specs"`
	OutSpecs    [][]any     `json:"out_specs"`
	AxisNames   []string    `json:"axis_names"`
	CheckVMA    bool        `json:"check_vma"`
	ExpectError bool        `json:"expect_error"`
	Inputs      []opsTensor `json:"inputs"`
	Outputs     []opsTensor `json:"outputs"`
	Error       *jaxError   `json:"error"`
}

// smapBody builds a case's shard_map body with lower's collectives.
type smapBody struct {
	call string
	body func(g *lower.Function, a []lower.Value) []lower.Value
}

func smap1(call string, body func(g *lower.Function, a []lower.Value) lower.Value) smapBody {
	return smapBody{call: call, body: func(g *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{body(g, a)} }}
}

var smapShift = [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}}

var opsShardMapBodies = map[string]smapBody{
	"axis_index_x": smap1(`g.Reshape(g.AxisIndex("x"), 1)`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Reshape(g.AxisIndex("x"), 1)
	}),
	"axis_index_xy": smap1(`g.Reshape(g.AxisIndex("x", "y"), 1, 1)`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Reshape(g.AxisIndex("x", "y"), 1, 1)
	}),
	"axis_index_y_partial": smap1(`b*0 + Convert(g.AxisIndex("y"))`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Add(g.Mul(a[0], g.Constant(0)), g.Convert(g.AxisIndex("y"), a[0].DType()))
	}),
	"axis_index_x_partial_size": smap1(`b + Convert(g.AxisIndex("x")*10)`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Add(a[0], g.Convert(g.Mul(g.AxisIndex("x"), g.Constant(10)), a[0].DType()))
	}),
	"psum_x":          smap1(`g.Psum(b, "x")`, func(g *lower.Function, a []lower.Value) lower.Value { return g.Psum(a[0], "x") }),
	"psum_replicated": smap1(`g.Psum(b, "x")`, func(g *lower.Function, a []lower.Value) lower.Value { return g.Psum(a[0], "x") }),
	"pmax_y":          smap1(`g.Pmax(b, "y")`, func(g *lower.Function, a []lower.Value) lower.Value { return g.Pmax(a[0], "y") }),
	"pmin_xy":         smap1(`g.Pmin(b, "x", "y")`, func(g *lower.Function, a []lower.Value) lower.Value { return g.Pmin(a[0], "x", "y") }),
	"ppermute_x": smap1(`g.Ppermute(b, shift, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Ppermute(a[0], smapShift, "x")
	}),
	"ppermute_partial_perm": smap1(`g.Ppermute(b, {{0, 2}, {3, 1}}, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Ppermute(a[0], [][2]int{{0, 2}, {3, 1}}, "x")
	}),
	"all_to_all_y": smap1(`g.AllToAllOver(b, 0, 1, "y")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllToAllOver(a[0], 0, 1, "y")
	}),
	"psum_scatter_tiled": smap1(`g.PsumScatter(b, 0, true, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.PsumScatter(a[0], 0, true, "x")
	}),
	"psum_scatter_untiled": smap1(`g.PsumScatter(b, 0, false, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.PsumScatter(a[0], 0, false, "x")
	}),
	"all_gather_unchecked": smap1(`g.AllGatherOver(b, 0, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherOver(a[0], 0, "x")
	}),
	"all_gather_untiled_1d": smap1(`g.AllGatherUntiled(b, 1, "i")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherUntiled(a[0], 1, "i")
	}),
	"all_gather_untiled_y": smap1(`g.AllGatherUntiled(b, 0, "y")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherUntiled(a[0], 0, "y")
	}),
	"all_gather_untiled_xy_last": smap1(`g.AllGatherUntiled(b, 2, "x", "y")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherUntiled(a[0], 2, "x", "y")
	}),
	"all_gather_untiled_2x4_y": smap1(`g.AllGatherUntiled(b, 1, "y")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherUntiled(a[0], 1, "y")
	}),
	"all_gather_untiled_unchecked": smap1(`g.AllGatherUntiled(b, 0, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherUntiled(a[0], 0, "x")
	}),
	"all_to_all_untiled_1d": smap1(`g.AllToAllUntiled(b, 0, 1, "i")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllToAllUntiled(a[0], 0, 1, "i")
	}),
	"all_to_all_untiled_x_concat_first": smap1(`g.AllToAllUntiled(b, 1, 0, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllToAllUntiled(a[0], 1, 0, "x")
	}),
	"all_to_all_untiled_xy_same": smap1(`g.AllToAllUntiled(b, 0, 0, "x", "y")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllToAllUntiled(a[0], 0, 0, "x", "y")
	}),
	"all_to_all_untiled_2x4_yx": smap1(`g.AllToAllUntiled(b, 2, 1, "y", "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllToAllUntiled(a[0], 2, 1, "y", "x")
	}),
	"unchecked_identity": smap1("b", func(g *lower.Function, a []lower.Value) lower.Value { return a[0] }),
	"replication_error":  smap1("b", func(g *lower.Function, a []lower.Value) lower.Value { return a[0] }),
	"replication_error_second": {call: "b, g.Neg(b)", body: func(g *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{a[0], g.Neg(a[0])}
	}},
	"replication_all_gather": smap1(`g.AllGatherOver(b, 0, "x")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.AllGatherOver(a[0], 0, "x")
	}),
	"replication_axis_index": smap1(`b + Convert(g.AxisIndex("y"))`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Add(a[0], g.Convert(g.AxisIndex("y"), a[0].DType()))
	}),
	"replication_ppermute": smap1(`g.Ppermute(b, {{0, 1}, {1, 0}}, "y")`, func(g *lower.Function, a []lower.Value) lower.Value {
		return g.Ppermute(a[0], [][2]int{{0, 1}, {1, 0}}, "y")
	}),
}

// TestOpsShardMap compares lower's shard_map collectives and its replication check with
// jax.shard_map on the same mesh and inputs (testdata/oracle/ops_shardmap.json).
func TestOpsShardMap(t *testing.T) {
	g := loadGolden[smapCase](t, "ops_shardmap")
	var table strings.Builder
	table.WriteString("Each case builds the shard_map with package `lower` (ShardMap, or ShardMapUnchecked where JAX has " +
		"check_vma=False) on the case's mesh of the pinned CPU plugin's 8 devices (4x2 (\"x\", \"y\") unless the JAX " +
		"column names a 1-D (8,) \"i\" or a 2x4 mesh), feeds each device its " +
		"block of the inputs JAX was given and assembles the results by the out_specs; values compare bit for bit. " +
		"Where JAX raises its replication error, lower must report ErrReplication for the same result and axis.\n\n" +
		"| case | JAX | lower body |\n|---|---|---|\n")
	for _, c := range g.Cases {
		fmt.Fprintf(&table, "| %s | `%s` | `%s` |\n", c.Name, strings.ReplaceAll(c.JAX, "|", "\\|"), opsShardMapBodies[c.Name].call)
	}
	report.noteGroup("ops_shardmap", strings.TrimSuffix(table.String(), "\n"))
	client := pjrttest.Client(t)
	seen := map[string]bool{}
	for _, c := range g.Cases {
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			b, ok := opsShardMapBodies[c.Name]
			if !ok {
				t.Fatalf("ops_shardmap/%s: no body for this case", c.Name)
			}
			// The golden is JAX's on the case's mesh: its values need that many devices. A
			// replication error comes from building the shard_map, which simulated devices
			// do as well on a host with fewer.
			n := prod(c.Mesh.Shape)
			var devs []mesh.Device
			if c.ExpectError && len(client.Devices()) < n {
				devs = cpuDevices[:n]
			} else {
				pjrttest.NeedDevices(t, n)
				for _, d := range client.Devices()[:n] {
					devs = append(devs, d)
				}
			}
			report.check(t, "ops_shardmap", c.Name, runShardMapCase(client, devs, c, b))
		})
	}
	for name := range opsShardMapBodies {
		if !seen[name] {
			t.Errorf("ops_shardmap: body %q has no case in the golden (regenerate with `make oracle`)", name)
		}
	}
}

// jaxReplication reads the result index and the axes of JAX's replication error, in its
// two forms: "out_specs[1] is PartitionSpec(...) which implies ... replicated across mesh
// axis 'x', but ..." and "out_specs is PartitionSpec() which implies ... only varying
// across mesh axes {} and not {x}, but ...".
var jaxReplication = regexp.MustCompile(`out_specs(?:\[(\d+)\])? is .*(?:replicated across mesh ax(?:is|es) (.*?)|and not \{(.*?)\}), but`)

// runShardMapCase builds the case's shard_map on a mesh of devs (devices of client, or
// simulated ones for an error case) and, unless JAX raised an error, runs it.
func runShardMapCase(client *pjrt.Client, devs []mesh.Device, c smapCase, b smapBody) []string {
	m, err := mesh.New(devs, c.Mesh.Shape, c.Mesh.Names...)
	if err != nil {
		return []string{"mesh: " + err.Error()}
	}
	prog, err := buildShardMap(m, c, b)
	if c.ExpectError {
		return smapErrorDiffs(c, err)
	}
	if err != nil {
		return []string{"xlamesh: " + err.Error()}
	}
	got, err := runSharded(client, m, prog, c.Inputs)
	if err != nil {
		return []string{"xlamesh: " + err.Error()}
	}
	if len(got) != len(c.Outputs) {
		return []string{fmt.Sprintf("JAX has %d outputs, xlamesh %d", len(c.Outputs), len(got))}
	}
	var diffs []string
	for i, want := range c.Outputs {
		wantRaw, err := opsEncode(want)
		if err != nil {
			return []string{fmt.Sprintf("output %d: %v", i, err)}
		}
		if len(wantRaw) != len(got[i]) {
			diffs = append(diffs, fmt.Sprintf("output %d: JAX %d bytes, xlamesh %d", i, len(wantRaw), len(got[i])))
			continue
		}
		diffs = append(diffs, opsCompare(i, opsDTypes[want.DType], wantRaw, got[i], 0)...)
	}
	return diffs
}

// smapErrorDiffs compares lower's error with JAX's replication error: ErrReplication,
// the same result index and every axis JAX names.
func smapErrorDiffs(c smapCase, err error) []string {
	if c.Error == nil {
		return []string{"golden has no JAX error for an error case"}
	}
	if err == nil {
		return []string{fmt.Sprintf("JAX raises %s; xlamesh builds the shard_map", c.Error.Class)}
	}
	if !errors.Is(err, lower.ErrReplication) {
		return []string{fmt.Sprintf("JAX raises its replication error; xlamesh: %v", err)}
	}
	mm := jaxReplication.FindStringSubmatch(c.Error.Message)
	if mm == nil {
		return []string{"cannot read JAX's message: " + c.Error.Message}
	}
	idx := 0
	if mm[1] != "" {
		idx, _ = strconv.Atoi(mm[1])
	}
	var d []string
	if !strings.Contains(err.Error(), fmt.Sprintf("result %d:", idx)) {
		d = append(d, fmt.Sprintf("JAX names out_specs[%d]; xlamesh: %v", idx, err))
	}
	var axes []string
	for _, ax := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(mm[2], -1) {
		axes = append(axes, ax[1])
	}
	if mm[3] != "" {
		for _, ax := range strings.Split(mm[3], ",") {
			axes = append(axes, strings.TrimSpace(ax))
		}
	}
	if len(axes) == 0 {
		return []string{"cannot read the axes in JAX's message: " + c.Error.Message}
	}
	for _, ax := range axes {
		if !strings.Contains(err.Error(), strconv.Quote(ax)) {
			d = append(d, fmt.Sprintf("JAX names axis %q; xlamesh: %v", ax, err))
		}
	}
	return d
}

func specsOf(raw [][]any) []mesh.PartitionSpec {
	out := make([]mesh.PartitionSpec, len(raw))
	for i, s := range raw {
		out[i] = specOf(s)
	}
	return out
}

// buildShardMap builds @main: the case's inputs, sharded by their in_specs, through the
// shard_map, its results sharded by the out_specs.
func buildShardMap(m mesh.Mesh, c smapCase, b smapBody) (*lower.Program, error) {
	mod := lower.NewModule("jit_" + c.Name)
	f := mod.Main()
	var args []lower.Value
	for i, in := range c.Inputs {
		s, err := mesh.NewNamedSharding(m, specOf(c.InSpecs[i]))
		if err != nil {
			return nil, err
		}
		args = append(args, f.ShardedArg(stablehlo.NewShape(opsDTypes[in.DType], in.Shape...), s))
	}
	sm := f.ShardMap
	if !c.CheckVMA {
		sm = f.ShardMapUnchecked
	}
	outs := sm(m.Abstract(), specsOf(c.InSpecs), specsOf(c.OutSpecs), c.AxisNames, b.body, args...)
	f.Return(outs...)
	var outSh []mesh.NamedSharding
	for _, s := range c.OutSpecs {
		ns, err := mesh.NewNamedSharding(m, specOf(s))
		if err != nil {
			return nil, err
		}
		outSh = append(outSh, ns)
	}
	f.ShardResults(outSh...)
	return mod.Build()
}

// runSharded compiles prog for m, feeds each device its block of the inputs and
// returns each result's global bytes, assembled by its sharding: every element from the
// first device (in mesh order) holding it, as a JAX array reads a replicated value from
// its first shard.
func runSharded(client *pjrt.Client, m mesh.Mesh, prog *lower.Program, inputs []opsTensor) ([][]byte, error) {
	exe, err := client.Compile(prog.Text(), pjrt.CompileOptions{NumPartitions: m.Size(), DeviceAssignment: m.DeviceIDs()})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	defer exe.Close()
	devs := m.Devices()
	args := make([][]*pjrt.Buffer, len(devs))
	defer func() {
		for _, l := range args {
			for _, b := range l {
				b.Close()
			}
		}
	}()
	for i, in := range inputs {
		s, _ := prog.ArgSharding(i)
		idx, err := s.DevicesIndicesMap(in.Shape)
		if err != nil {
			return nil, err
		}
		raw, err := opsEncode(in)
		if err != nil {
			return nil, err
		}
		d := opsDTypes[in.DType]
		for p, dev := range devs {
			pos := positions(in.Shape, idx[p])
			block := make([]byte, 0, len(pos)*shapes.ElementBytes(d))
			for _, q := range pos {
				block = append(block, raw[q*shapes.ElementBytes(d):(q+1)*shapes.ElementBytes(d)]...)
			}
			_, dims := sliceIota(in.Shape, idx[p])
			buf, err := client.BufferFromBytes(dev.(*pjrt.Device), d, dims, block)
			if err != nil {
				return nil, err
			}
			args[p] = append(args[p], buf)
		}
	}
	outs, err := exe.Execute(args)
	if err != nil {
		return nil, fmt.Errorf("execute: %w", err)
	}
	defer func() {
		for _, l := range outs {
			for _, b := range l {
				b.Close()
			}
		}
	}()
	var res [][]byte
	for j, shape := range prog.ResultShapes() {
		s, _ := prog.ResultSharding(j)
		dims := shape.Dims()
		idx, err := s.DevicesIndicesMap(dims)
		if err != nil {
			return nil, err
		}
		size := shapes.ElementBytes(shape.DType())
		global := make([]byte, shape.Size()*size)
		seen := make([]bool, shape.Size())
		for p := range devs {
			raw := make([]byte, outs[p][j].Shape().Bytes())
			if err := outs[p][j].CopyToHost(raw); err != nil {
				return nil, err
			}
			pos := positions(dims, idx[p])
			if len(pos)*size != len(raw) {
				return nil, fmt.Errorf("result %d: device %d holds %d bytes for a block of %d elements", j, p, len(raw), len(pos))
			}
			for k, q := range pos {
				if !seen[q] {
					copy(global[q*size:], raw[k*size:(k+1)*size])
					seen[q] = true
				}
			}
		}
		res = append(res, global)
	}
	return res, nil
}
