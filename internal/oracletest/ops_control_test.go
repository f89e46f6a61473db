package oracletest

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

type (
	fn  = stablehlo.Function
	val = stablehlo.Value
)

// controlCase is a case of ops_control.json: an opsCase with the program that
// tools/oracle/ops_control.py ran, its parameters and JAX's lowered module.
type controlCase struct {
	opsCase
	Program   string         `json:"program"`
	Params    map[string]any `json:"params"`
	StableHLO string         `json:"stablehlo"`
}

// intParam returns the case's integer parameter name (0 when absent).
func (c controlCase) intParam(name string) int {
	v, _ := c.Params[name].(float64)
	return int(v)
}

// boolParam returns the case's boolean parameter name (false when absent).
func (c controlCase) boolParam(name string) bool {
	v, _ := c.Params[name].(bool)
	return v
}

// controlProgram builds a program of ops_control.py in f from its arguments, one per input.
type controlProgram func(f *fn, c controlCase, args []val) []val

// controlPrograms builds, for each program of tools/oracle/ops_control.py, the same
// computation with package stablehlo.
var controlPrograms = map[string]controlProgram{
	"while_count": func(f *fn, _ controlCase, a []val) []val {
		x := a[0]
		return f.While([]val{f.Constant(int32(0)), x},
			func(g *fn, c []val) val { return g.Less(c[0], g.Constant(10)) },
			func(g *fn, c []val) []val {
				i := c[0]
				if x.DType() != dtypes.Int32 {
					i = g.Convert(i, x.DType())
				}
				return []val{g.Add(c[0], g.Constant(1)), g.Add(g.Mul(c[1], g.Constant(2)), i)}
			})
	},
	"while_newton": func(f *fn, _ controlCase, a []val) []val {
		r := f.While([]val{f.Constant(int32(0)), a[0], f.Constant(float32(1))},
			func(g *fn, c []val) val {
				return g.And(g.Less(c[0], g.Constant(50)), g.Greater(c[2], g.Constant(1e-6)))
			},
			func(g *fn, c []val) []val {
				x := c[1]
				nx := g.Mul(g.Constant(0.5), g.Add(x, g.Div(a[0], x))) // a[0] is captured
				return []val{g.Add(c[0], g.Constant(1)), nx, g.ReduceMax(g.Abs(g.Sub(nx, x)))}
			})
		return []val{r[1], r[0]}
	},
	"while_capture": func(f *fn, _ controlCase, a []val) []val {
		x, w := a[0], a[1]
		b := f.Mul(w, f.Constant(3))
		dims := x.Shape().Dims()
		return f.While([]val{f.Constant(int32(0)), x},
			func(g *fn, c []val) val { return g.Less(c[0], g.Constant(4)) },
			func(g *fn, c []val) []val {
				return []val{g.Add(c[0], g.Constant(1)),
					g.Sub(g.Add(c[1], g.BroadcastTo(w, dims...)), g.BroadcastTo(b, dims...))}
			})[1:]
	},
	"fori": func(f *fn, c controlCase, a []val) []val {
		x := a[0]
		return f.ForLoop(c.intParam("n"), []val{f.Full(x.Shape(), 0)}, func(g *fn, i val, carry []val) []val {
			return []val{g.Add(g.Mul(carry[0], g.Constant(2)), g.Mul(g.Convert(i, x.DType()), x))}
		})
	},
	"cond": func(f *fn, _ controlCase, a []val) []val {
		x, y := a[1], a[2]
		return f.If(a[0],
			func(g *fn) []val { return []val{g.Mul(x, g.Constant(2)), g.Sum(y)} },
			func(g *fn) []val { return []val{g.Sub(x, y), g.Constant(int32(7))} })
	},
	"switch": func(f *fn, _ controlCase, a []val) []val {
		x := a[1]
		return f.Switch(a[0],
			func(g *fn) []val { return []val{g.Add(x, g.Constant(1))} },
			func(g *fn) []val { return []val{g.Mul(x, x)} },
			func(g *fn) []val { return []val{g.Neg(x)} })
	},
	"scan_sum": func(f *fn, c controlCase, a []val) []val {
		carry, ys := f.Scan(func(g *fn, c, x []val) ([]val, []val) {
			return []val{g.Add(c[0], x[0])}, []val{g.Mul(c[0], x[0])}
		}, []val{f.Constant(float32(0))}, a, stablehlo.ScanOptions{Reverse: c.boolParam("reverse")})
		return append(carry, ys...)
	},
	"scan_multi": func(f *fn, c controlCase, a []val) []val {
		v := a[2]
		carry, ys := f.Scan(func(g *fn, c, x []val) ([]val, []val) {
			n, acc := c[0], c[1]
			kf := g.Convert(x[1], dtypes.Float32)
			acc2 := g.Add(g.Add(g.Mul(acc, g.Constant(0.5)), g.Mul(x[0], kf)), v)
			return []val{g.Add(n, x[1]), acc2}, []val{acc2, n, g.Greater(x[1], g.Constant(0))}
		}, []val{f.Constant(int32(1)), f.Full(stablehlo.NewShape(dtypes.Float32, 3), 0)}, a[:2],
			stablehlo.ScanOptions{Reverse: c.boolParam("reverse")})
		return append(carry, ys...)
	},
	"scan_length": func(f *fn, c controlCase, a []val) []val {
		carry, ys := f.Scan(func(g *fn, c, _ []val) ([]val, []val) {
			return []val{g.Add(g.Mul(c[0], g.Constant(3)), g.Constant(1))}, []val{c[0]}
		}, a, nil, stablehlo.ScanOptions{Length: c.intParam("length")})
		return append(carry, ys...)
	},
	"scan_rnn": func(f *fn, _ controlCase, a []val) []val {
		w := a[2]
		carry, ys := f.Scan(func(g *fn, c, x []val) ([]val, []val) {
			wh := g.DotGeneral(w, c[0], stablehlo.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}})
			h := g.Tanh(g.Add(wh, x[0]))
			return []val{h}, []val{h}
		}, a[:1], a[1:2], stablehlo.ScanOptions{})
		return append(carry, ys...)
	},
	"sort": func(f *fn, c controlCase, a []val) []val {
		if c.boolParam("descending") {
			return []val{f.SortDescending(a[0], c.intParam("axis"))}
		}
		return []val{f.SortAscending(a[0], c.intParam("axis"))}
	},
	"sort_multi": func(f *fn, c controlCase, a []val) []val {
		return f.SortBy(a, c.intParam("axis"), c.intParam("num_keys"), true)
	},
	"argsort": func(f *fn, c controlCase, a []val) []val {
		return []val{f.Argsort(a[0], c.intParam("axis"), c.boolParam("descending"))}
	},
	"top_k": func(f *fn, c controlCase, a []val) []val {
		v, i := f.TopK(a[0], c.intParam("k"))
		return []val{v, i}
	},
	"argmax": func(f *fn, c controlCase, a []val) []val {
		ax := c.intParam("axis")
		return []val{f.Argmax(a[0], ax, dtypes.Int32), f.Argmin(a[0], ax, dtypes.Int32)}
	},
	"cumulative": func(f *fn, c controlCase, a []val) []val {
		ax, r := c.intParam("axis"), c.boolParam("reverse")
		return []val{f.Cumsum(a[0], ax, r), f.Cumprod(a[0], ax, r), f.Cummax(a[0], ax, r), f.Cummin(a[0], ax, r)}
	},
	"jnp_cumsum": func(f *fn, c controlCase, a []val) []val {
		ax := c.intParam("axis")
		return []val{f.Cumsum(a[0], ax, false), f.Cumprod(a[0], ax, false)}
	},
}

// TestOpsControl compares the control-flow, sort and scan ops with JAX
// (testdata/oracle/ops_control.json).
func TestOpsControl(t *testing.T) {
	g := loadGolden[controlCase](t, "ops_control")
	builders := map[string]opsBuilder{}
	for _, c := range g.Cases {
		prog := controlPrograms[c.Program]
		builders[c.Name] = opsBuilder{call: controlCalls[c.Program], build: func(f *fn, args []val) []val {
			if prog == nil {
				f.Failf("oracle", -1, val{}, stablehlo.ErrFunction, "no stablehlo program %q", c.Program)
				return nil
			}
			return prog(f, c, args)
		}}
	}
	runOpsGroup(t, "ops_control", "Each case runs a program of tools/oracle/ops_control.py under `jax.jit` and, built with "+
		"`stablehlo`, on one device of the pinned CPU plugin; all outputs compare bit for bit (NaN matching any NaN), "+
		"tanh, dot products and cumulative sums included. TestOpsControlJAXModules also runs JAX's own lowered module "+
		"on the plugin and requires the same bytes as the `stablehlo` build.", builders)
}

// controlCalls names, per program, the stablehlo calls that build it (the report's table).
var controlCalls = map[string]string{
	"while_count": "f.While", "while_newton": "f.While", "while_capture": "f.While (captures w, b)",
	"fori": "f.ForLoop", "cond": "f.If", "switch": "f.Switch", "scan_sum": "f.Scan", "scan_multi": "f.Scan",
	"scan_length": "f.Scan (no xs, Length)", "scan_rnn": "f.Scan (captures w)", "sort": "f.SortAscending / f.SortDescending",
	"sort_multi": "f.SortBy", "argsort": "f.Argsort", "top_k": "f.TopK", "argmax": "f.Argmax, f.Argmin",
	"cumulative": "f.Cumsum, f.Cumprod, f.Cummax, f.Cummin", "jnp_cumsum": "f.Cumsum, f.Cumprod",
}

// TestOpsControlJAXModules runs, for every ops_control case, JAX's own lowered module and the
// stablehlo build on the pinned CPU plugin: their outputs must be the same bytes, so a
// difference from JAX's outputs that both share (the known ones) lies in the plugin, not in
// the builder.
func TestOpsControlJAXModules(t *testing.T) {
	g := loadGolden[controlCase](t, "ops_control")
	client := pjrttest.Client(t)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			m := stablehlo.NewModule("jit_" + c.Name)
			f := m.Main()
			var args []val
			for _, in := range c.Inputs {
				args = append(args, f.Arg(stablehlo.NewShape(opsDTypes[in.DType], in.Shape...)))
			}
			f.Return(controlPrograms[c.Program](f, c, args)...)
			text, err := m.Build()
			if err != nil {
				t.Fatal(err)
			}
			ours, err := runText(client, text, c.Inputs)
			if err != nil {
				t.Fatalf("stablehlo module: %v", err)
			}
			theirs, err := runText(client, c.StableHLO, c.Inputs)
			if err != nil {
				t.Fatalf("JAX module: %v", err)
			}
			if len(ours) != len(theirs) {
				t.Fatalf("%d outputs, JAX's module %d", len(ours), len(theirs))
			}
			for i := range ours {
				if string(ours[i]) != string(theirs[i]) {
					t.Errorf("output %d: stablehlo module %x, JAX's module %x", i, ours[i], theirs[i])
				}
			}
		})
	}
}

// runText compiles text for one CPU device, runs it on inputs and returns each output's bytes.
func runText(client *pjrt.Client, text string, inputs []opsTensor) ([][]byte, error) {
	dev := client.Devices()[0]
	exe, err := client.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	defer exe.Close()
	var bufs []*pjrt.Buffer
	defer func() {
		for _, b := range bufs {
			b.Close()
		}
	}()
	for i, in := range inputs {
		raw, err := opsEncode(in)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		b, err := client.BufferFromBytes(dev, opsDTypes[in.DType], in.Shape, raw)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		bufs = append(bufs, b)
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{bufs})
	if err != nil {
		return nil, fmt.Errorf("execute: %w", err)
	}
	var res [][]byte
	for _, b := range outs[0] {
		raw := make([]byte, b.Shape().Bytes())
		err := b.CopyToHost(raw)
		b.Close()
		if err != nil {
			return nil, err
		}
		res = append(res, raw)
	}
	return res, nil
}
