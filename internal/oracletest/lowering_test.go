package oracletest

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

var loweringDTypes = map[string]lower.DType{"f32": dtypes.Float32, "i32": dtypes.Int32}

// programs builds, for each program name of the corpus, the same function
// with xlamesh's builder that generate.py's PROGRAMS table gives to jax.jit.
var programs = map[string]func(f *lower.Function, m mesh.Mesh, args []lower.Value) (lower.Value, error){
	"mul2": func(f *lower.Function, _ mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return f.Mul(a[0], f.Constant(2)), nil
	},
	"add": func(f *lower.Function, _ mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return f.Add(a[0], a[1]), nil
	},
	"matmul": func(f *lower.Function, _ mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return f.MatMul(a[0], a[1]), nil
	},
	"sum0": func(f *lower.Function, _ mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return f.Sum(a[0], 0), nil
	},
	"sum_all": func(f *lower.Function, _ mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return f.Sum(a[0]), nil
	},
	"wsc_none_y": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		s, err := mesh.NewNamedSharding(m, mesh.P(nil, "y"))
		if err != nil {
			return lower.Value{}, err
		}
		return f.Add(f.ShardingConstraint(f.Mul(a[0], f.Constant(2)), s), f.Constant(1)), nil
	},
	"wsc_x_u": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		s, err := mesh.NewNamedSharding(m, mesh.P("x", mesh.Unconstrained))
		if err != nil {
			return lower.Value{}, err
		}
		return f.Add(f.ShardingConstraint(f.Mul(a[0], f.Constant(2)), s), f.Constant(1)), nil
	},
	"smap_psum_x": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return psumShardMap(f, m, a, mesh.P("x", nil), mesh.P())
	},
	"smap_psum_xy": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return psumShardMap(f, m, a, mesh.P("x", "y"), mesh.P(nil, "y"))
	},
	"smap_psum_x_partial": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return shardMap1(f, m, a, mesh.P("x", nil), mesh.P(), []string{"x"}, func(g *lower.Function, x lower.Value) lower.Value {
			return g.Psum(x, "x")
		})
	},
	"smap_psum_xy_tuple": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		return shardMap1(f, m, a, mesh.P([]string{"x", "y"}, "z"), mesh.P(nil, "z"), nil, func(g *lower.Function, x lower.Value) lower.Value {
			return g.Psum(x, "x", "y")
		})
	},
	"smap_all_gather_x": func(f *lower.Function, m mesh.Mesh, a []lower.Value) (lower.Value, error) {
		// JAX's program has check_vma=False: the gathered value still varies over "x".
		return shardMapChecked(false, f, m, a, mesh.P("x", nil), mesh.P(), nil, func(g *lower.Function, x lower.Value) lower.Value {
			return g.AllGatherOver(x, 0, "x")
		})
	},
}

func psumShardMap(f *lower.Function, m mesh.Mesh, a []lower.Value, in, out mesh.PartitionSpec) (lower.Value, error) {
	return shardMap1(f, m, a, in, out, nil, func(g *lower.Function, x lower.Value) lower.Value {
		return g.Psum(x, "x")
	})
}

// shardMap1 is a one-argument, one-result shard_map over manual (nil: all
// mesh axes) with body.
func shardMap1(f *lower.Function, m mesh.Mesh, a []lower.Value, in, out mesh.PartitionSpec, manual []string,
	body func(g *lower.Function, x lower.Value) lower.Value) (lower.Value, error) {
	return shardMapChecked(true, f, m, a, in, out, manual, body)
}

// shardMapChecked is shardMap1 with JAX's check_vma: ShardMap when check,
// ShardMapUnchecked otherwise.
func shardMapChecked(check bool, f *lower.Function, m mesh.Mesh, a []lower.Value, in, out mesh.PartitionSpec, manual []string,
	body func(g *lower.Function, x lower.Value) lower.Value) (lower.Value, error) {
	sm := f.ShardMap
	if !check {
		sm = f.ShardMapUnchecked
	}
	res := sm(m.Abstract(), []mesh.PartitionSpec{in}, []mesh.PartitionSpec{out}, manual,
		func(g *lower.Function, args []lower.Value) []lower.Value {
			return []lower.Value{body(g, args[0])}
		}, a[0])
	if len(res) != 1 {
		if err := f.Module().Err(); err != nil {
			return lower.Value{}, err
		}
		return lower.Value{}, fmt.Errorf("shard_map returned %d results", len(res))
	}
	return res[0], nil
}

// lowerCase builds the case's program with xlamesh: @main with the case's
// argument shardings and result sharding, as jax.jit(f, in_shardings,
// out_shardings) does.
func lowerCase(c loweringCase) (*lower.Program, mesh.Mesh, error) {
	m, err := buildMesh(c.Mesh)
	if err != nil {
		return nil, m, err
	}
	build, ok := programs[c.Program]
	if !ok {
		return nil, m, fmt.Errorf("no xlamesh program %q", c.Program)
	}
	var opts []lower.Option
	if c.Partitioner == "gspmd" {
		opts = append(opts, lower.WithPartitioner(lower.GSPMD))
	}
	mod := lower.NewModule("jit_"+c.Program, opts...)
	f := mod.Main()
	var args []lower.Value
	for _, a := range c.Args {
		s, err := mesh.NewNamedSharding(m, specOf(a.Spec))
		if err != nil {
			return nil, m, err
		}
		args = append(args, f.ShardedArg(lower.NewShape(loweringDTypes[a.DType], a.Shape...), s))
	}
	y, err := build(f, m, args)
	if err != nil {
		return nil, m, err
	}
	out, err := mesh.NewNamedSharding(m, specOf(c.Out))
	if err != nil {
		return nil, m, err
	}
	f.Return(y)
	f.ShardResults(out)
	p, err := mod.Build()
	return p, m, err
}

// TestLowering compares the structure of xlamesh's lowered modules with
// JAX's (normalised as documented in docs/jax-compat.md).
func TestLowering(t *testing.T) {
	g := loadGolden[loweringCase](t, "lowering")
	report.noteGroup("lowering", "Each program is built with `lower` (`Module.Main`, `ShardedArg` with the in_sharding, the ops, `Return`, `ShardResults` with the out_sharding) "+
		"and its text compared with `jax.jit(f, in_shardings=..., out_shardings=...).lower(...).as_text()` after the normalisation below. "+
		"`gspmd_*` cases lower the same programs with `jax_use_shardy_partitioner=False` and `lower.WithPartitioner(lower.GSPMD)`; "+
		"`err_*` cases compare lower's error (its sentinel, or the mesh sentinel it wraps) with the error jit, with_sharding_constraint or shard_map raises.")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p, _, err := lowerCase(c)
			if c.ExpectError {
				report.check(t, "lowering", c.Name, errDiffs(c.caseHead, c.JAX.Error, err))
				return
			}
			want, err2 := parseModule(c.JAX.StableHLO)
			if err2 != nil {
				t.Fatalf("JAX module: %v", err2)
			}
			if err != nil {
				report.check(t, "lowering", c.Name, []string{fmt.Sprintf("xlamesh lowering: %v", err)})
				return
			}
			got, err := parseModule(p.Text())
			if err != nil {
				report.check(t, "lowering", c.Name, []string{fmt.Sprintf("xlamesh module: %v\n%s", err, p.Text())})
				return
			}
			d := diffModules(want, got)
			if len(d) > 0 {
				t.Logf("xlamesh module:\n%s", p.Text())
			}
			report.check(t, "lowering", c.Name, d)
		})
	}
}

func init() {
	kinds["lower_sharding"] = lower.ErrSharding
	kinds["lower_indivisible"] = lower.ErrIndivisible
	xlameshModule = func(c loweringCase) (string, error) {
		p, _, err := lowerCase(c)
		if err != nil {
			return "", err
		}
		return p.Text(), nil
	}
}
