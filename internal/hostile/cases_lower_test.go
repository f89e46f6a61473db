package hostile

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// builds returns the error of building a module whose @main returns body's values.
func builds(body func(f *lower.Function) []lower.Value) error {
	m := lower.NewModule("hostile")
	f := m.Main()
	f.Return(body(f)...)
	_, err := m.Build()
	return err
}

// builderCase is a lower builder input with the sentinels its Build error must match.
func builderCase(name string, cl class, body func(f *lower.Function) []lower.Value, want ...any) *hcase {
	return &hcase{
		name: "lower builder: " + name, class: cl, entry: "lower builder", want: is(want...),
		as:  as[*lower.OpError]("*lower.OpError"),
		run: func(*H) error { return builds(body) },
	}
}

var f32 = dtypes.Float32

func lowerCases() []*hcase {
	m8 := mesh.MustNew(mesh.SimDevices(8), []int{8}, "x")
	arg := func(f *lower.Function, dims ...int) lower.Value { return f.Arg(lower.NewShape(f32, dims...)) }
	shapeErr := []any{"lower.ErrShape", lower.ErrShape}
	return []*hcase{
		builderCase("Reshape to 2^62 x 2^62 x 0", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Reshape(arg(f, 0), 1<<62, 1<<62, 0)}
		}, shapeErr...),
		builderCase("Reshape of 4 elements to (2^62+1) x 4, which wraps to 4", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Reshape(arg(f, 4), 1<<62+1, 4)}
		}, shapeErr...),
		builderCase("Pad by MaxInt64-2 low", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Pad(arg(f, 4), f.Constant(float32(0)), []int{math.MaxInt64 - 2}, []int{10}, []int{0})}
		}, shapeErr...),
		builderCase("Pad with interior MaxInt64/2", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Pad(arg(f, 4), f.Constant(float32(0)), []int{0}, []int{0}, []int{math.MaxInt64 / 2})}
		}, shapeErr...),
		builderCase("Pad to a negative size", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Pad(arg(f, 4), f.Constant(float32(0)), []int{-10}, []int{0}, []int{0})}
		}, shapeErr...),
		builderCase("Full of 2^40 x 2^40", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Full(lower.NewShape(f32, 1<<40, 1<<40), float32(1))}
		}, shapeErr...),
		builderCase("Full of negative size", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Full(lower.NewShape(f32, -1), float32(1))}
		}, shapeErr...),
		builderCase("Iota of 2^40 x 2^40", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Iota(lower.NewShape(f32, 1<<40, 1<<40), 0)}
		}, shapeErr...),
		builderCase("BroadcastTo 2^40 x 2^40", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.BroadcastTo(arg(f), 1<<40, 1<<40)}
		}, shapeErr...),
		builderCase("argument of 2^62 float32s (bytes overflow int64)", classPrograms, func(f *lower.Function) []lower.Value {
			return []lower.Value{arg(f, 1<<62)}
		}, shapeErr...),
		builderCase("constant array with (2^62+2) x 4 dims for 4 values", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Array([]float32{1, 2, 3, 4}, 1<<62+2, 4)}
		}, shapeErr...),
		builderCase("Slice with stride 0", classHangs, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Slice(arg(f, 4), []int{0}, []int{4}, []int{0})}
		}, shapeErr...),
		builderCase("Transpose by [0 0]", classPanics, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Transpose(arg(f, 4, 2), 0, 0)}
		}, shapeErr...),
		builderCase("zero Value operand", classPanics, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Neg(lower.Value{})}
		}, "lower.ErrInvalidValue", lower.ErrInvalidValue),
		builderCase("Constant(nil)", classPanics, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Constant(nil)}
		}, "lower.ErrDType", lower.ErrDType),
		builderCase("Convert to DType(999)", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.Convert(arg(f, 4), dtypes.DType(999))}
		}, "lower.ErrDType", lower.ErrDType),
		builderCase("argument sharded 8 ways along 3 rows", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.ShardedArg(lower.NewShape(f32, 3), mesh.MustNamedSharding(m8, mesh.P("x")))}
		}, "lower.ErrSharding", lower.ErrSharding, "mesh.ErrIndivisible", mesh.ErrIndivisible),
		builderCase("two mesh shapes in one module", classSilent, func(f *lower.Function) []lower.Value {
			m42 := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
			return []lower.Value{f.ShardedArg(lower.NewShape(f32, 8), mesh.MustNamedSharding(m8, mesh.P("x"))),
				f.ShardedArg(lower.NewShape(f32, 8), mesh.MustNamedSharding(m42, mesh.P("x")))}
		}, "lower.ErrMeshMismatch", lower.ErrMeshMismatch),
		builderCase("AllReduceOver outside a ShardMap", classSilent, func(f *lower.Function) []lower.Value {
			return []lower.Value{f.AllReduceOver(arg(f, 4), lower.Sum, "x")}
		}, "lower.ErrNotManual", lower.ErrNotManual),
		builderCase("ShardMap with a nil body", classPanics, func(f *lower.Function) []lower.Value {
			abs := mesh.MustAbstract([]int{4}, []string{"d"})
			return f.ShardMap(abs, []mesh.PartitionSpec{mesh.P("d")}, []mesh.PartitionSpec{mesh.P()}, nil, nil, arg(f, 8))
		}, "lower.ErrFunction", lower.ErrFunction),
		builderCase("@main calls itself", classPrograms, func(f *lower.Function) []lower.Value {
			return f.Call(f.Function, arg(f, 4))
		}, "lower.ErrFunction", lower.ErrFunction),
		{
			name: "lower builder: two functions that call each other", class: classPrograms, entry: "lower builder",
			want: is("lower.ErrFunction", lower.ErrFunction),
			run: func(*H) error {
				m := lower.NewModule("mutual")
				f, g, h := m.Main(), m.Func("g"), m.Func("h")
				g.Return(g.Call(h.Function, g.Arg(lower.NewShape(f32, 4)))...)
				h.Return(h.Call(g.Function, h.Arg(lower.NewShape(f32, 4)))...)
				f.Return(f.Call(g.Function, f.Arg(lower.NewShape(f32, 4)))...)
				_, err := m.Build()
				return err
			},
		},
		{
			name: "lower builder: a value of another module", class: classPanics, entry: "lower builder",
			want: is("lower.ErrForeignValue", lower.ErrForeignValue),
			run: func(*H) error {
				x := lower.NewModule("other").Main().Arg(lower.NewShape(f32, 4))
				return builds(func(f *lower.Function) []lower.Value { return []lower.Value{f.Neg(x)} })
			},
		},
		{
			name: "lower builder: Return twice", class: classPanics, entry: "lower builder",
			want: is("lower.ErrFunction", lower.ErrFunction),
			run: func(*H) error {
				m := lower.NewModule("twice")
				f := m.Main()
				f.Return()
				f.Return()
				_, err := m.Build()
				return err
			},
		},
		{
			name: `lower builder: module named "a\b"`, class: classNames, entry: "lower builder",
			want: is("mlir.ErrName", mlir.ErrName), as: as[*mlir.Error]("*mlir.Error"),
			run: func(*H) error {
				m := lower.NewModule(`a\b`)
				m.Main().Return()
				_, err := m.Build()
				return err
			},
		},
		{
			name: `lower builder: function named "é"`, class: classNames, entry: "lower builder",
			want: is("lower.ErrFunction", lower.ErrFunction, "mlir.ErrName", mlir.ErrName),
			run: func(*H) error {
				m := lower.NewModule("m")
				g := m.Func("é")
				g.Return(g.Arg(lower.NewShape(f32, 2)))
				f := m.Main()
				f.Return(f.Call(g.Function, f.Arg(lower.NewShape(f32, 2)))...)
				_, err := m.Build()
				return err
			},
		},
		{
			name: `lower builder: names with '-', '"', spaces and '$' are quoted`, class: classNames, entry: "lower builder",
			run: func(*H) error {
				m := lower.NewModule(`jit_my-fn "x" $1`)
				g := m.Func("g-1 \"q\"")
				g.Return(g.Neg(g.Arg(lower.NewShape(f32, 2))))
				f := m.Main()
				f.Return(f.Call(g.Function, f.Arg(lower.NewShape(f32, 2)))...)
				p, err := m.Build()
				if err != nil {
					return err
				}
				text := p.Text()
				for _, want := range []string{`module @"jit_my-fn \22x\22 $1"`, `func.func private @"g-1 \22q\22"`, `call @"g-1 \22q\22"`} {
					if !strings.Contains(text, want) {
						return wrongf("the module lacks %s:\n%s", want, text)
					}
				}
				return mlir.Check(text)
			},
		},
		{
			name: "lower.ParseDType: f99", class: classSilent, entry: "lower builder",
			want: is("lower.ErrDType", lower.ErrDType),
			run: func(*H) error {
				_, err := lower.ParseDType("f99")
				return err
			},
		},
		// Pod scale (issue 31): replica-group checks that must neither scan nor size a table
		// by the largest id.
		{
			name: "lower builder: replica group with id 2^62 twice", class: classPanics, entry: "lower builder",
			want: is("stablehlo.ErrReplicaGroups", stablehlo.ErrReplicaGroups),
			run: func(*H) error {
				return builds(func(f *lower.Function) []lower.Value {
					return []lower.Value{f.AllReduce(arg(f, 4), lower.Sum, [][]int{{1 << 62, 0}, {1, 1 << 62}})}
				})
			},
		},
		{
			name: "lower builder: collective_permute over 65,536 partitions", class: classHangs, entry: "lower builder",
			run: func(*H) error {
				pairs := make([][2]int, 65536)
				for i := range pairs {
					pairs[i] = [2]int{i, (i + 1) % 65536}
				}
				m := lower.NewModule("ring")
				f := m.Main()
				f.Return(f.CollectivePermute(f.Arg(lower.NewShape(f32, 4)), pairs))
				p, err := m.Build()
				if err != nil {
					return err
				}
				if !strings.Contains(p.Text(), "[65535, 0]]> : tensor<65536x2xi64>") {
					return wrongf("the source_target_pairs of 65,536 partitions are not in the module")
				}
				return nil
			},
		},
	}
}

// A module @main is named in a comment and in string attributes before the real one.
const trickyModule = `// func.func @main(%c: tensor<1xf32>) -> tensor<1xf32> in a comment
module @m attributes {jax.doc = "module { func.func public @main(%s: tensor<3xf32>) -> tensor<3xf32> {"} {
  func.func private @helper(%a: tensor<8x2xf32>) -> tensor<8x2xf32> attributes {note = "func.func @main("} {
    return %a : tensor<8x2xf32> // func.func @main(
  }
  // func.func @main(%c: tensor<1xf32>) -> tensor<1xf32>
  func.func public @main(%arg0: tensor<8x2xf32> {jax.arg_info = "@main(x", mhlo.sharding = "{replicated}"}) -> (tensor<8x2xf32> {jax.result_info = "}, {"}) {
    %0 = func.call @helper(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    %1 = stablehlo.add %0, %0 : tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
}
`

// plainModule is a @main of one argument, wrapped in extra top-level text.
func plainModule(extra, args, body string) string {
	return "module @m {\n" + extra + "  func.func public @main(" + args + ") -> tensor<2xf32> {\n" + body + "  }\n}\n"
}

const plainBody = "    %0 = stablehlo.add %x, %x : tensor<2xf32>\n    return %0 : tensor<2xf32>\n"

// wrapCase is wrap.Module refusing text; want are the sentinels besides wrap.ErrModule.
func wrapCase(name string, cl class, text string, nargs int, want ...any) *hcase {
	return &hcase{
		name: "wrap.Module: " + name, class: cl, entry: "wrap.Module",
		want: append(is("wrap.ErrModule", wrap.ErrModule), is(want...)...),
		run: func(*H) error {
			_, err := wrap.Module(text, make([]mesh.NamedSharding, nargs), []mesh.NamedSharding{{}})
			return err
		},
	}
}

func wrapCases() []*hcase {
	m42 := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	x := "%x: tensor<2xf32>"
	return []*hcase{
		{
			name: "wrap.Module: @main in comments and string attributes before the real one", class: classPanics, entry: "wrap.Module",
			run: func(*H) error {
				p, err := wrap.Module(trickyModule, []mesh.NamedSharding{mesh.MustNamedSharding(m42, mesh.P("x", "y"))},
					[]mesh.NamedSharding{mesh.MustNamedSharding(m42, mesh.P("x"))})
				if err != nil {
					return err
				}
				text := p.Text()
				for _, want := range []string{
					`// func.func @main(%c: tensor<1xf32>) -> tensor<1xf32> in a comment`,
					`jax.doc = "module { func.func public @main(%s: tensor<3xf32>) -> tensor<3xf32> {"`,
					`%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>, jax.arg_info = "@main(x"}`,
					`-> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, jax.result_info = "}, {"})`,
				} {
					if !strings.Contains(text, want) {
						return wrapWrong(want, text)
					}
				}
				if len(p.ArgShapes()) != 1 || !p.ArgShapes()[0].Equal(lower.NewShape(f32, 8, 2)) || p.NumPartitions() != 8 {
					return wrongf("arguments %v, %d partitions", p.ArgShapes(), p.NumPartitions())
				}
				return mlir.Check(text, mlir.Partitions(8))
			},
		},
		wrapCase("@main only in a comment", classPanics, "module {\n  // func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n}\n", 1),
		wrapCase("@main only in a string attribute", classPanics, "module attributes {a = \"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\"} {\n}\n", 1),
		wrapCase("empty text", classPanics, "", 1),
		wrapCase("a bracket closed by the wrong kind", classPrograms, "module {\n  func.func @main(%x: tensor<2xf32>] -> tensor<2xf32> {\n  }\n}\n", 1,
			"mlir.ErrSyntax", mlir.ErrSyntax),
		wrapCase("two shardings for one argument", classSilent, plainModule("", x, plainBody), 2),
		wrapCase("a private function that calls itself", classPrograms, plainModule(`  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
`, x, plainBody), 1, "mlir.ErrRecursion", mlir.ErrRecursion),
		wrapCase("regions 1,000 deep", classPrograms, nestedCase(1000), 2, "mlir.ErrNesting", mlir.ErrNesting),
		wrapCase("a type 10,000 deep", classPrograms, plainModule("", x+", %t: "+strings.Repeat("tuple<", 10000)+"tensor<f32>"+strings.Repeat(">", 10000), plainBody), 2,
			"mlir.ErrNesting", mlir.ErrNesting),
		wrapCase("tensor<4611686018427387904xf32>, bytes overflow int64", classPrograms, plainModule("", x+", %t: tensor<4611686018427387904xf32>", plainBody), 2,
			"mlir.ErrTensorSize", mlir.ErrTensorSize),
		wrapCase("stablehlo.infeed", classHangs, plainModule("", "%t: !stablehlo.token",
			"    %0:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)\n    return %0#0 : tensor<2xf32>\n"), 1,
			"mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		wrapCase(`a function named "a\\b"`, classNames, plainModule("  func.func private @\"a\\\\b\"() {\n    return\n  }\n", x, plainBody), 1,
			"mlir.ErrName", mlir.ErrName),
		wrapCase("an unparsable mhlo.sharding", classSilent, plainModule("", `%x: tensor<2xf32> {mhlo.sharding = "{devices=[2]<=[4,2]}"}`, plainBody), 1,
			"mlir.ErrSharding", mlir.ErrSharding),
		{
			name: "wrap.Module: a sharding of a dynamic dimension", class: classSilent, entry: "wrap.Module",
			want: is("wrap.ErrModule", wrap.ErrModule),
			run: func(*H) error {
				text := "module {\n  func.func public @main(%x: tensor<?x2xf32>) -> tensor<2xf32> {\n    %0 = stablehlo.constant dense<1.0> : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n"
				_, err := wrap.Module(text, []mesh.NamedSharding{mesh.MustNamedSharding(m42, mesh.P("x"))}, []mesh.NamedSharding{{}})
				return err
			},
		},
		{
			name: "wrap.Module: 2 rows sharded 4 ways", class: classSilent, entry: "wrap.Module",
			want: is("lower.ErrSharding", lower.ErrSharding, "mesh.ErrIndivisible", mesh.ErrIndivisible),
			run: func(*H) error {
				_, err := wrap.Module(plainModule("", x, plainBody), []mesh.NamedSharding{mesh.MustNamedSharding(m42, mesh.P("x"))}, []mesh.NamedSharding{{}})
				return err
			},
		},
	}
}

func wrapWrong(want, text string) error {
	return wrongf("the wrapped module lacks %s:\n%s", want, text)
}

// nestedCase returns a module whose @main nests stablehlo.case regions depth deep (arguments:
// the index and x).
func nestedCase(depth int) string {
	body := `"stablehlo.return"(%x) : (tensor<2xf32>) -> ()`
	for d := 1; d <= depth; d++ {
		body = fmt.Sprintf("%%r%d = \"stablehlo.case\"(%%i) ({\n%s\n}) : (tensor<i32>) -> tensor<2xf32>\n\"stablehlo.return\"(%%r%d) : (tensor<2xf32>) -> ()", d, body, d)
	}
	body = body[:strings.LastIndex(body, `"stablehlo.return"`)] + fmt.Sprintf("return %%r%d : tensor<2xf32>\n", depth)
	return plainModule("", "%i: tensor<i32>, %x: tensor<2xf32>", body)
}
