package oracletest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// broadcastCase is an ops_broadcast case: an ops case, or one JAX refuses (Error set, no
// outputs).
type broadcastCase struct {
	opsCase
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestOpsBroadcast compares NumPy broadcasting in stablehlo's binary and ternary ops and
// the functions of package jnp (Where, Tril, Triu, TakeAlongAxis, Clip, Arange, Linspace)
// and nn.OneHot with jnp and jax.nn on the same inputs (testdata/oracle/ops_broadcast.json).
// A case JAX refuses must fail to build with an error wrapping stablehlo.ErrShape that
// contains JAX's message.
func TestOpsBroadcast(t *testing.T) {
	const group = "ops_broadcast"
	g := loadGolden[broadcastCase](t, group)
	var table strings.Builder
	table.WriteString("Each case builds one binary or ternary op on operands of different shapes, or one function of package jnp (or nn.OneHot), " +
		"and runs it on the pinned CPU plugin on the inputs JAX was given (tools/oracle/ops_broadcast.py); every output compares bit for bit. " +
		"A case JAX refuses must fail to build with an error wrapping ErrShape that contains JAX's message.\n\n" +
		"| case | JAX | stablehlo |\n|---|---|---|\n")
	for _, c := range g.Cases {
		fmt.Fprintf(&table, "| %s | `%s` | `%s` |\n", c.Name, strings.ReplaceAll(c.JAX, "|", "\\|"),
			strings.ReplaceAll(opsBroadcastBuilders[c.Name].call, "|", "\\|"))
	}
	report.noteGroup(group, strings.TrimSuffix(table.String(), "\n"))
	client := pjrttest.Client(t)
	seen := map[string]bool{}
	for _, c := range g.Cases {
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			b, ok := opsBroadcastBuilders[c.Name]
			if !ok {
				t.Fatalf("%s/%s: no stablehlo builder for this case", group, c.Name)
			}
			var diffs []string
			if c.Error != nil {
				diffs = broadcastErrorDiffs(c, b)
			} else {
				d, err := runOpsCase(t, client, c.opsCase, b)
				if err != nil {
					d = []string{"xlamesh: " + err.Error()}
				}
				diffs = d
			}
			report.check(t, group, c.Name, diffs)
		})
	}
	for name := range opsBroadcastBuilders {
		if !seen[name] {
			t.Errorf("%s: builder %q has no case in the golden (regenerate with `make oracle`)", group, name)
		}
	}
}

// broadcastErrorDiffs builds a case JAX refuses and reports how its error differs from
// JAX's: it must wrap ErrShape and contain JAX's message.
func broadcastErrorDiffs(c broadcastCase, b opsBuilder) []string {
	m := stablehlo.NewModule("jit_" + c.Name)
	f := m.Main()
	var args []stablehlo.Value
	for _, in := range c.Inputs {
		d, ok := opsDTypes[in.DType]
		if !ok {
			return []string{fmt.Sprintf("input dtype %q", in.DType)}
		}
		args = append(args, f.Arg(stablehlo.NewShape(d, in.Shape...)))
	}
	f.Return(b.build(f, args)...)
	_, err := m.Build()
	switch {
	case err == nil:
		return []string{"JAX: " + c.Error.Type + ": " + c.Error.Message + "; xlamesh: no error"}
	case !errors.Is(err, stablehlo.ErrShape):
		return []string{"xlamesh: error does not wrap ErrShape: " + err.Error()}
	case !strings.Contains(err.Error(), c.Error.Message):
		return []string{fmt.Sprintf("message: JAX %q, xlamesh %q", c.Error.Message, err.Error())}
	}
	return nil
}

type fn2 = func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value

// bin is a binary op of the case's two inputs.
func bin(call string, op fn2) opsBuilder {
	return op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return op(f, a[0], a[1]) })
}

// tern is f.<op>(a, b, c) of the case's three inputs.
func tern(call string, op func(f *stablehlo.Function, a, b, c stablehlo.Value) stablehlo.Value) opsBuilder {
	return op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return op(f, a[0], a[1], a[2]) })
}

// none is a builder of no inputs.
func none(call string, build func(f *stablehlo.Function) stablehlo.Value) opsBuilder {
	return op1(call, func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value { return build(f) })
}

var (
	addOp    = bin("f.Add(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Add(x, y) })
	whereOp  = tern("jnp.Where(f, c, x, y)", func(f *stablehlo.Function, a, b, c stablehlo.Value) stablehlo.Value { return jnp.Where(f, a, b, c) })
	selectOp = tern("f.Select(p, x, y)", func(f *stablehlo.Function, a, b, c stablehlo.Value) stablehlo.Value { return f.Select(a, b, c) })
	clampOp  = tern("f.Clamp(lo, x, hi)", func(f *stablehlo.Function, a, b, c stablehlo.Value) stablehlo.Value { return f.Clamp(a, b, c) })
	takeOp   = func(axis int) opsBuilder {
		return bin(fmt.Sprintf("jnp.TakeAlongAxis(f, x, i, %d)", axis), func(f *stablehlo.Function, x, i stablehlo.Value) stablehlo.Value {
			return jnp.TakeAlongAxis(f, x, i, axis)
		})
	}
	trilOp = func(k int) opsBuilder {
		return op1(fmt.Sprintf("jnp.Tril(f, x, %d)", k), func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Tril(f, a[0], k) })
	}
	triuOp = func(k int) opsBuilder {
		return op1(fmt.Sprintf("jnp.Triu(f, x, %d)", k), func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Triu(f, a[0], k) })
	}
	oneHotOp = func(n int, d dtypes.DType) opsBuilder {
		return op1(fmt.Sprintf("nn.OneHot(f, i, %d, %s)", n, d), func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.OneHot(f, a[0], n, d) })
	}
	clipOp = func(call string, lo, hi any) opsBuilder {
		return op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			var l, h stablehlo.Value
			if lo != nil {
				l = f.Constant(lo)
			}
			if hi != nil {
				h = f.Constant(hi)
			}
			return jnp.Clip(f, a[0], l, h)
		})
	}
	arangeOp = func(start, stop, step float64, d dtypes.DType) opsBuilder {
		return none(fmt.Sprintf("jnp.Arange(f, %v, %v, %v, %s)", start, stop, step, d), func(f *stablehlo.Function) stablehlo.Value {
			return jnp.Arange(f, start, stop, step, d)
		})
	}
	linspaceOp = func(start, stop float64, num int, endpoint bool, d dtypes.DType) opsBuilder {
		return none(fmt.Sprintf("jnp.Linspace(f, %v, %v, %d, %v, %s)", start, stop, num, endpoint, d), func(f *stablehlo.Function) stablehlo.Value {
			return jnp.Linspace(f, start, stop, num, endpoint, d)
		})
	}
)

var opsBroadcastBuilders = map[string]opsBuilder{
	"add_bias":              addOp,
	"add_rank_promote":      addOp,
	"add_stretch_both":      addOp,
	"add_stretch_same_rank": addOp,
	"add_scalar_array":      addOp,
	"add_bf16":              addOp,
	"add_incompatible":      addOp,
	"sub_column":            bin("f.Sub(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Sub(x, y) }),
	"mul_int":               bin("f.Mul(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Mul(x, y) }),
	"mul_incompatible":      bin("f.Mul(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Mul(x, y) }),
	"div_row":               bin("f.Div(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Div(x, y) }),
	"max_stretch":           bin("f.Max(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Max(x, y) }),
	"min_stretch":           bin("f.Min(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Min(x, y) }),
	"pow_bcast":             bin("f.Pow(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Pow(x, y) }),
	"rem_int":               bin("f.Rem(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Rem(x, y) }),
	"atan2_bcast":           bin("f.Atan2(y, x)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Atan2(x, y) }),
	"and_bool":              bin("f.And(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.And(x, y) }),
	"or_int":                bin("f.Or(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Or(x, y) }),
	"xor_int":               bin("f.Xor(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Xor(x, y) }),
	"shift_left_bcast":      bin("f.ShiftLeft(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.ShiftLeft(x, y) }),
	"compare_lt":            bin("f.Less(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Less(x, y) }),
	"compare_eq_int":        bin("f.Equal(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Equal(x, y) }),
	"compare_incompatible":  bin("f.Less(x, y)", func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value { return f.Less(x, y) }),

	"select_bcast":        selectOp,
	"select_scalar_pred":  selectOp,
	"select_rank_promote": selectOp,
	"where_int_cond":      whereOp,
	"where_float_cond":    whereOp,
	"clamp_bcast":         clampOp,
	"clamp_scalar_bounds": clampOp,
	"clamp_bound_bigger":  clampOp,
	"where_incompatible": op1("jnp.Where(f, p, x, f.Constant(1.0))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.Where(f, a[0], a[1], f.Constant(1.0))
	}),
	"where_incompatible_xy": whereOp,

	"tril_k0": trilOp(0), "tril_k1": trilOp(1), "tril_km1": trilOp(-1), "tril_k3": trilOp(3), "tril_km4": trilOp(-4),
	"triu_k0": triuOp(0), "triu_k1": triuOp(1), "triu_km1": triuOp(-1), "triu_k3": triuOp(3), "triu_km4": triuOp(-4),
	"tril_batched":     trilOp(0),
	"triu_batched_int": triuOp(1),
	"tril_bool":        trilOp(0),

	"one_hot":            oneHotOp(4, dtypes.Float32),
	"one_hot_2d_int":     oneHotOp(3, dtypes.Int32),
	"one_hot_uint8_bf16": oneHotOp(5, dtypes.BFloat16),
	"one_hot_scalar":     oneHotOp(3, dtypes.Float32),

	"take_along_axis1":      takeOp(1),
	"take_along_axis0":      takeOp(0),
	"take_along_neg_axis":   takeOp(-1),
	"take_along_fill":       takeOp(1),
	"take_along_fill_int":   takeOp(0),
	"take_along_fill_uint8": takeOp(0),
	"take_along_argsort": op1("jnp.TakeAlongAxis(f, x, f.Argsort(x, 1, false), 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.TakeAlongAxis(f, a[0], f.Argsort(a[0], 1, false), 1)
	}),

	"clip_both": clipOp("jnp.Clip(f, x, f.Constant(-1), f.Constant(2))", -1, 2),
	"clip_lo":   clipOp("jnp.Clip(f, x, f.Constant(0), Value{})", 0, nil),
	"clip_hi":   clipOp("jnp.Clip(f, x, Value{}, f.Constant(0.5))", nil, 0.5),
	"clip_nan":  clipOp("jnp.Clip(f, x, f.Constant(0), f.Constant(1))", 0, 1),
	"clip_int":  clipOp("jnp.Clip(f, x, f.Constant(-2), f.Constant(3))", -2, 3),
	"clip_arrays": tern("jnp.Clip(f, x, lo, hi)", func(f *stablehlo.Function, x, lo, hi stablehlo.Value) stablehlo.Value {
		return jnp.Clip(f, x, lo, hi)
	}),

	"arange_int":          arangeOp(0, 7, 1, dtypes.Int32),
	"arange_int_step":     arangeOp(-3, 10, 4, dtypes.Int32),
	"arange_int_neg_step": arangeOp(5, -6, -2, dtypes.Int32),
	"arange_f32":          arangeOp(0.1, 1.0, 0.1, dtypes.Float32),
	"arange_f32_neg":      arangeOp(2.5, -1.0, -0.75, dtypes.Float32),
	"arange_bf16":         arangeOp(0, 3, 0.3, dtypes.BFloat16),
	"arange_uint8":        arangeOp(2, 250, 37, dtypes.Uint8),
	"arange_empty":        arangeOp(3, 1, 0.5, dtypes.Float32),
	"linspace_f32":        linspaceOp(0, 1, 7, true, dtypes.Float32),
	"linspace_f32_noend":  linspaceOp(-2, 3, 6, false, dtypes.Float32),
	"linspace_f32_odd":    linspaceOp(0.1, 0.7, 13, true, dtypes.Float32),
	"linspace_bf16":       linspaceOp(-1, 1, 9, true, dtypes.BFloat16),
	"linspace_int":        linspaceOp(0, 10, 7, true, dtypes.Int32),
	"linspace_one":        linspaceOp(2, 5, 1, true, dtypes.Float32),
	"linspace_zero":       linspaceOp(2, 5, 0, true, dtypes.Float32),
}
