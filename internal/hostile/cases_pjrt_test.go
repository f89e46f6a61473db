package hostile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// module8 is a module for 8 partitions whose @main takes args and returns a tensor<8x2xf32>.
func module8(extra, args, body string) string {
	return `module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
` + extra + `  func.func public @main(` + args + `) -> tensor<8x2xf32> {
` + body + `  }
}
`
}

const (
	arg8x2  = "%arg0: tensor<8x2xf32>"
	body8x2 = "    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"
)

// module1 is module8 for one partition.
func module1(extra, args, body string) string {
	return strings.Replace(module8(extra, args, body), "num_partitions = 8", "num_partitions = 1", 1)
}

// addModule adds two f32[4] on each of its partitions (replicated).
func addModule(partitions int) string {
	return fmt.Sprintf(`module @add attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%%x: tensor<4xf32>, %%y: tensor<4xf32>) -> tensor<4xf32> {
    %%0 = stablehlo.add %%x, %%y : tensor<4xf32>
    return %%0 : tensor<4xf32>
  }
}
`, partitions)
}

// ids returns the ids of the client's first n devices.
func ids(c *pjrt.Client, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = c.Devices()[i].ID()
	}
	return out
}

// compileOn compiles text for the first n devices of c (Must), closing it when the case ends.
func compileOn(h *H, c *pjrt.Client, text string, n int) *pjrt.Executable {
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: ids(c, n)})
	h.Must(err)
	h.Cleanup(func() { exe.Close() })
	return exe
}

// buffer copies flat to device d of c (Must), closing it when the case ends.
func buffer(h *H, c *pjrt.Client, d int, flat any, dims ...int) *pjrt.Buffer {
	b, err := c.BufferFromHost(c.Devices()[d], flat, dims)
	h.Must(err)
	h.Cleanup(func() { b.Close() })
	return b
}

// results reads every result buffer to the host and closes them all.
func results(outs [][]*pjrt.Buffer) ([][]any, error) {
	var got [][]any
	var first error
	for _, dev := range outs {
		var row []any
		for _, b := range dev {
			v, err := b.ToHost()
			if err != nil && first == nil {
				first = err
			}
			row = append(row, v)
			b.Close()
		}
		got = append(got, row)
	}
	return got, first
}

// addWorks runs exe (addModule on n devices) on valid arguments and checks every result:
// the executable is usable after whatever came before.
func addWorks(h *H, c *pjrt.Client, exe *pjrt.Executable) error {
	n := len(exe.Devices())
	args := make([][]*pjrt.Buffer, n)
	for d := range n {
		args[d] = []*pjrt.Buffer{buffer(h, c, d, []float32{1, 2, 3, 4}, 4), buffer(h, c, d, []float32{10, 20, 30, float32(d)}, 4)}
	}
	outs, err := exe.Execute(args)
	if err != nil {
		return fmt.Errorf("a valid call after it: %w", err)
	}
	got, err := results(outs)
	if err != nil {
		return fmt.Errorf("a valid call after it: %w", err)
	}
	for d := range n {
		if want := []float32{11, 22, 33, 4 + float32(d)}; len(got[d]) != 1 || !slices.Equal(got[d][0].([]float32), want) {
			return fmt.Errorf("a valid call after it: device %d got %v, want %v", d, got[d], want)
		}
	}
	return nil
}

// thenUsable checks, after a rejected call, that a valid call gives the right values and that
// Close returns: a failed execution left the executable usable.
func thenUsable(h *H, c *pjrt.Client, exe *pjrt.Executable, err error) error {
	if werr := addWorks(h, c, exe); werr != nil {
		h.Failf("%v", werr)
	}
	if cerr := exe.Close(); cerr != nil {
		h.Failf("Close after it: %v", cerr)
	}
	return err
}

// compileCase compiles text on the child's 8-device client with opts.
func compileCase(name string, cl class, text string, opts pjrt.CompileOptions, want ...any) *hcase {
	return &hcase{
		name: "Client.Compile: " + name, class: cl, entry: "pjrt Compile", group: "compile",
		want: append(is("pjrt.ErrCompile", pjrt.ErrCompile), is(want...)...),
		run: func(h *H) error {
			exe, err := h.Client().Compile(text, opts)
			if err == nil {
				exe.Close()
			}
			return err
		},
	}
}

// checked is compileCase for 8 partitions on the first 8 devices, for a module the checker
// must refuse with the given mlir sentinel (and *mlir.Error).
func checked(name string, cl class, text string, kindName string, kind error) *hcase {
	c := compileCase(name, cl, text, pjrt.CompileOptions{DeviceAssignment: []int{0, 1, 2, 3, 4, 5, 6, 7}}, kindName, kind)
	c.as = as[*mlir.Error]("*mlir.Error")
	return c
}

// plugin is compileCase for an error the plugin itself reports (*pjrt.Error).
func plugin(name string, cl class, text string) *hcase {
	c := compileCase(name, cl, text, pjrt.CompileOptions{})
	c.as = as[*pjrt.Error]("*pjrt.Error")
	return c
}

// allPrintable is every printable ASCII character but the backslash: the names XLA takes.
func allPrintable() string {
	var b strings.Builder
	for c := byte(0x20); c < 0x7f; c++ {
		if c != '\\' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// slowModule is n rounds of matmul, sine and transpose of a 64x64 argument: XLA's CPU
// compiler needs about a second for n = 800.
func slowModule(n int, name string) string {
	m := lower.NewModule(name)
	f := m.Main()
	a := f.Arg(lower.NewShape(f32, 64, 64))
	x := a
	for range n {
		x = f.Transpose(f.Sin(f.DotGeneral(x, a, lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}})), 1, 0)
	}
	f.Return(x)
	p, err := m.Build()
	if err != nil {
		panic(err)
	}
	return p.Text()
}

func compileCases() []*hcase {
	all8 := []int{0, 1, 2, 3, 4, 5, 6, 7}
	calls := func(g string) string {
		return fmt.Sprintf("    %%0 = func.call @%s(%%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %%0 : tensor<8x2xf32>\n", g)
	}
	fn := func(name, callee string) string {
		return fmt.Sprintf("  func.func private @%s(%%x: tensor<8x2xf32>) -> tensor<8x2xf32> {\n    %%0 = func.call @%s(%%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %%0 : tensor<8x2xf32>\n  }\n", name, callee)
	}
	infeed := "    %0:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<8x2xf32>, !stablehlo.token)\n    return %0#0 : tensor<8x2xf32>\n"
	tokenArg := "%t: !stablehlo.token"
	cases := []*hcase{
		checked("a private function that calls itself", classPrograms, module8(fn("f", "f"), arg8x2, calls("f")), "mlir.ErrRecursion", mlir.ErrRecursion),
		checked("f calls g calls h calls f", classPrograms, module8(fn("f", "g")+fn("g", "h")+fn("h", "f"), arg8x2, calls("f")), "mlir.ErrRecursion", mlir.ErrRecursion),
		checked("@main calls @main", classPrograms, module8("", arg8x2, calls("main")), "mlir.ErrRecursion", mlir.ErrRecursion),
		checked("recursion in the generic form", classPrograms, `"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "main"}> ({
    "func.call"() <{callee = @main}> : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
`, "mlir.ErrRecursion", mlir.ErrRecursion),
		checked("regions 1,000 deep", classPrograms, strings.Replace(nestedCase(1000), "module @m {", "module @m attributes {mhlo.num_partitions = 8 : i32} {", 1),
			"mlir.ErrNesting", mlir.ErrNesting),
		checked("a type 10,000 deep", classPrograms, module8("", arg8x2+", %t: "+strings.Repeat("tuple<", 10000)+"tensor<f32>"+strings.Repeat(">", 10000), body8x2),
			"mlir.ErrNesting", mlir.ErrNesting),
		checked("100,000 nested brackets in an attribute", classPrograms, module8("", arg8x2+" {a = "+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+"}", body8x2),
			"mlir.ErrNesting", mlir.ErrNesting),
		checked("tensor<4611686018427387904xf32>: bytes overflow int64", classPrograms, module8("", arg8x2+", %t: tensor<4611686018427387904xf32>", body8x2),
			"mlir.ErrTensorSize", mlir.ErrTensorSize),
		checked("tensor<4294967296x4294967296xf32>: elements overflow int64", classPrograms, module8("", arg8x2+", %t: tensor<4294967296x4294967296xf32>", body8x2),
			"mlir.ErrTensorSize", mlir.ErrTensorSize),
		checked("a dimension past int64", classPrograms, module8("", arg8x2+", %t: tensor<99999999999999999999xf32>", body8x2),
			"mlir.ErrTensorSize", mlir.ErrTensorSize),
		checked("an iota of 3037000500x3037000500xi8 in the body", classPrograms, module8("", arg8x2,
			"    %1 = stablehlo.iota dim = 0 : tensor<3037000500x3037000500xi8>\n"+body8x2), "mlir.ErrTensorSize", mlir.ErrTensorSize),
		checked("an unterminated string", classPrograms, module8("", arg8x2, "    %0 = \"unterminated\n"), "mlir.ErrSyntax", mlir.ErrSyntax),
		checked("stablehlo.infeed", classHangs, module8("", tokenArg, infeed), "mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		checked("stablehlo.outfeed", classHangs, module8("", arg8x2+", "+tokenArg,
			"    %1 = \"stablehlo.outfeed\"(%arg0, %t) : (tensor<8x2xf32>, !stablehlo.token) -> !stablehlo.token\n"+body8x2), "mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		checked("stablehlo.send", classHangs, module8("", arg8x2+", "+tokenArg,
			"    %1 = \"stablehlo.send\"(%arg0, %t) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>}> : (tensor<8x2xf32>, !stablehlo.token) -> !stablehlo.token\n"+body8x2),
			"mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		checked("stablehlo.recv", classHangs, module8("", tokenArg,
			"    %0:2 = \"stablehlo.recv\"(%t) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>}> : (!stablehlo.token) -> (tensor<8x2xf32>, !stablehlo.token)\n    return %0#0 : tensor<8x2xf32>\n"),
			"mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		checked("a Python host callback", classHangs, module8("", arg8x2,
			"    %1 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) {has_side_effect = true} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+body8x2),
			"mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		checked("an FFI host callback in the generic form", classHangs, module8("", arg8x2,
			"    %1 = \"stablehlo.custom_call\"(%arg0) <{api_version = 4 : i32, call_target_name = \"xla_ffi_python_cpu_callback\"}> : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+body8x2),
			"mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp),
		compileCase("an 8-partition module without a device assignment", classSilent, module8("", arg8x2, body8x2), pjrt.CompileOptions{},
			"mlir.ErrPartitions", mlir.ErrPartitions),
		checked("mhlo.num_partitions = 0 on 8 devices", classSilent, strings.Replace(module8("", arg8x2, body8x2), "num_partitions = 8", "num_partitions = 0", 1),
			"mlir.ErrPartitions", mlir.ErrPartitions),
		checked("mhlo.num_partitions = 3 on 8 devices", classSilent, strings.Replace(module8("", arg8x2, body8x2), "num_partitions = 8", "num_partitions = 3", 1),
			"mlir.ErrPartitions", mlir.ErrPartitions),
		checked("mhlo.num_replicas = 2", classSilent, strings.Replace(module8("", arg8x2, body8x2), "num_replicas = 1", "num_replicas = 2", 1),
			"mlir.ErrPartitions", mlir.ErrPartitions),
		func() *hcase {
			c := compileCase("an sdy.mesh of 16 devices on 8", classSilent, module8(`  sdy.mesh @mesh = <["x"=8, "y"=2]>`+"\n",
				`%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}`, body8x2), pjrt.CompileOptions{DeviceAssignment: all8})
			c.as = as[*pjrt.Error]("*pjrt.Error")
			return c
		}(),
		checked("an unparsable mhlo.sharding", classSilent, module8("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,2]<=[4,2]}"}`, body8x2),
			"mlir.ErrSharding", mlir.ErrSharding),
		checked("an mhlo.sharding of 2 devices in an 8-partition module", classSilent, module8("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}`, body8x2),
			"mlir.ErrSharding", mlir.ErrSharding),
		checked("a manual sharding on an argument of @main", classSilent, module8("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dims={manual}}"}`, body8x2),
			"mlir.ErrSharding", mlir.ErrSharding),
		checked(`an sdy.mesh axis "a\\b"`, classNames, module8(`  sdy.mesh @mesh = <["a\\b"=8]>`+"\n", arg8x2, body8x2), "mlir.ErrName", mlir.ErrName),
		checked(`an sdy.mesh axis "é"`, classNames, module8(`  sdy.mesh @mesh = <["é"=8]>`+"\n", arg8x2, body8x2), "mlir.ErrName", mlir.ErrName),
		checked(`an sdy.mesh axis "\0A"`, classNames, module8(`  sdy.mesh @mesh = <["x\0A"=8]>`+"\n", arg8x2, body8x2), "mlir.ErrName", mlir.ErrName),
		checked(`a module named @"\FF"`, classNames, strings.Replace(module8("", arg8x2, body8x2), "@m ", `@"\FF" `, 1), "mlir.ErrName", mlir.ErrName),
		checked(`a function named @""`, classNames, module8("  func.func private @\"\"() {\n    return\n  }\n", arg8x2, body8x2), "mlir.ErrName", mlir.ErrName),
		plugin("an op no dialect has", classPrograms, module1("", arg8x2, "    %0 = \"foo.bar\"(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		plugin("an add of two element types", classPrograms, module1("", arg8x2+", %y: tensor<8x2xi32>", "    %0 = stablehlo.add %arg0, %y : (tensor<8x2xf32>, tensor<8x2xi32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		plugin("a module without @main", classPrograms, "module {\n  func.func public @other() {\n    return\n  }\n}\n"),
		checked("random bytes", classPrograms, "\x13\x37\xfe\xed\x00\x01\x02\x03garbage\xff\xff{{{", "mlir.ErrSyntax", mlir.ErrSyntax),
		func() *hcase {
			c := compileCase("the MLIR bytecode magic followed by junk", classPrograms, "ML\xefR\x00\x01\x02\x03\x04\x05 junk that is no bytecode",
				pjrt.CompileOptions{}, "bytecode.ErrUnsupported", bytecode.ErrUnsupported)
			c.as = as[*bytecode.Error]("*bytecode.Error")
			return c
		}(),
		compileCase("an empty program", classPrograms, "", pjrt.CompileOptions{}),
		compileCase("an unknown partitioner", classSilent, addModule(1), pjrt.CompileOptions{Partitioner: 9}),
		{
			name: "Client.Compile: a device assignment naming device 3 twice", class: classSilent, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				_, err := h.Client().Compile(addModule(8), pjrt.CompileOptions{DeviceAssignment: []int{0, 1, 2, 3, 3, 5, 6, 7}})
				return err
			},
		},
		{
			name: "Client.Compile: device 99 of 8", class: classSilent, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				_, err := h.Client().Compile(addModule(1), pjrt.CompileOptions{DeviceAssignment: []int{99}})
				return err
			},
		},
		{
			name: "Client.Compile: device -1", class: classSilent, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				_, err := h.Client().Compile(addModule(1), pjrt.CompileOptions{DeviceAssignment: []int{-1}})
				return err
			},
		},
		{
			name: "Client.Compile: NumPartitions 3 with 8 devices assigned", class: classSilent, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				_, err := h.Client().Compile(addModule(8), pjrt.CompileOptions{NumPartitions: 3, DeviceAssignment: all8})
				return err
			},
		},
		{
			name: "Client.Compile: NumPartitions 100 on 8 devices", class: classSilent, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				_, err := h.Client().Compile(addModule(100), pjrt.CompileOptions{NumPartitions: 100})
				return err
			},
		},
		{
			name: "Client.Compile: names of every character XLA takes compile and run", class: classNames, entry: "pjrt Compile", group: "compile",
			run: func(h *H) error {
				c := h.Client()
				axis := mlir.Quote(allPrintable())
				text := strings.Replace(module8(`  sdy.mesh @"m e-s.h$" = <[`+axis+`=2, " "=2, "\22"=2]>`+"\n",
					`%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@"m e-s.h$", [{`+axis+`, " "}, {"\22"}]>}`, body8x2),
					"@m ", `@"jit_my-fn {}"`+" ", 1)
				exe := compileOn(h, c, text, 8)
				// Each device holds a 2x1 block: rows 2*(d/2), columns d%2.
				args := make([][]*pjrt.Buffer, 8)
				for d := range 8 {
					args[d] = []*pjrt.Buffer{buffer(h, c, d, []float32{float32(10 * d), float32(10*d + 1)}, 2, 1)}
				}
				outs, err := exe.Execute(args)
				if err != nil {
					return err
				}
				got, err := results(outs)
				if err != nil {
					return err
				}
				for d := range 8 {
					if want := []float32{float32(20 * d), float32(20*d + 2)}; !slices.Equal(got[d][0].([]float32), want) {
						return wrongf("device %d: got %v, want %v", d, got[d][0], want)
					}
				}
				return nil
			},
		},
		{
			name: "Client.Compile: wrap.Module of a module naming @main in comments and strings runs", class: classPanics, entry: "wrap.Module", group: "compile",
			run: func(h *H) error {
				c := h.Client()
				m := mesh42(h, c)
				p, err := wrap.Module(trickyModule, []mesh.NamedSharding{sharding(h, m, mesh.P("x", "y"))}, []mesh.NamedSharding{sharding(h, m, mesh.P("x"))})
				if err != nil {
					return err
				}
				exe, err := c.Compile(p.Text(), pjrt.CompileOptions{DeviceAssignment: p.DeviceAssignment()})
				if err != nil {
					return err
				}
				h.Cleanup(func() { exe.Close() })
				// Device d (x = d/2, y = d%2) holds rows 2x..2x+1 of column y, and gets them
				// back doubled with both columns.
				args := make([][]*pjrt.Buffer, 8)
				for d := range 8 {
					x, y := d/2, d%2
					args[d] = []*pjrt.Buffer{buffer(h, c, d, []float32{float32(4*x + y), float32(4*x + 2 + y)}, 2, 1)}
				}
				outs, err := exe.Execute(args)
				if err != nil {
					return err
				}
				got, err := results(outs)
				if err != nil {
					return err
				}
				for d := range 8 {
					x := float32(d / 2)
					if want := []float32{8 * x, 8*x + 2, 8*x + 4, 8*x + 6}; !slices.Equal(got[d][0].([]float32), want) {
						return wrongf("device %d: got %v, want %v", d, got[d][0], want)
					}
				}
				return nil
			},
		},
		{
			name: "Client.Compile: a chain of 500 calls (deep, not recursive) compiles and runs", class: classPrograms, entry: "pjrt Compile", group: "compile",
			run: func(h *H) error {
				const n = 500
				var b strings.Builder
				b.WriteString("module @chain {\n")
				for i := range n {
					next := fmt.Sprintf("    %%1 = func.call @f%d(%%0) : (tensor<4xf32>) -> tensor<4xf32>\n    return %%1 : tensor<4xf32>\n", i+1)
					if i == n-1 {
						next = "    return %0 : tensor<4xf32>\n"
					}
					fmt.Fprintf(&b, "  func.func private @f%d(%%x: tensor<4xf32>) -> tensor<4xf32> {\n    %%c = stablehlo.constant dense<1.0> : tensor<4xf32>\n    %%0 = stablehlo.add %%x, %%c : tensor<4xf32>\n%s  }\n", i, next)
				}
				b.WriteString("  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = func.call @f0(%x) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n")
				c := h.Client()
				exe := compileOn(h, c, b.String(), 1)
				outs, err := exe.Execute([][]*pjrt.Buffer{{buffer(h, c, 0, []float32{0, 1, 2, 3}, 4)}})
				if err != nil {
					return err
				}
				got, err := results(outs)
				if err != nil {
					return err
				}
				if want := []float32{n, n + 1, n + 2, n + 3}; !slices.Equal(got[0][0].([]float32), want) {
					return wrongf("got %v, want %v", got[0][0], want)
				}
				return nil
			},
		},
		{
			name: "Client.Compile: a module returning complex64 and f8E4M3FN runs; ToHost reads the types", class: classSilent, entry: "pjrt Compile", group: "compile",
			run: func(h *H) error {
				c := h.Client()
				exe := compileOn(h, c, `module @odd {
  func.func public @main(%x: tensor<4xf32>) -> (tensor<4xcomplex<f32>>, tensor<4xf8E4M3FN>, tensor<4xf32>) {
    %0 = stablehlo.complex %x, %x : tensor<4xcomplex<f32>>
    %1 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
    return %0, %1, %x : tensor<4xcomplex<f32>>, tensor<4xf8E4M3FN>, tensor<4xf32>
  }
}
`, 1)
				shapes := exe.OutputShapes()
				if len(shapes) != 3 || shapes[0].DType() != dtypes.Complex64 || shapes[1].DType() != dtypes.F8E4M3FN {
					h.Failf("output shapes %v", shapes)
				}
				outs, err := exe.Execute([][]*pjrt.Buffer{{buffer(h, c, 0, []float32{1, 2, 3, 4}, 4)}})
				if err != nil {
					return fmt.Errorf("execute: %v", err) // not the ErrHostData wanted
				}
				defer func() {
					for _, b := range outs[0] {
						b.Close()
					}
				}()
				if v, err := outs[0][2].ToHost(); err != nil || !slices.Equal(v.([]float32), []float32{1, 2, 3, 4}) {
					h.Failf("the f32 result: %v, %v", v, err)
				}
				// Read whole: complex64 as []complex64, f8E4M3FN as its bytes (1, 2, 3, 4 are
				// 0x38, 0x40, 0x44, 0x48); a destination 1 byte short is refused, typed.
				if v, err := outs[0][0].ToHost(); err != nil || !slices.Equal(v.([]complex64), []complex64{1 + 1i, 2 + 2i, 3 + 3i, 4 + 4i}) {
					return wrongf("the complex64 result: %v, %v", v, err)
				}
				if v, err := outs[0][1].ToHost(); err != nil || !slices.Equal(v.([]uint8), []uint8{0x38, 0x40, 0x44, 0x48}) {
					return wrongf("the f8E4M3FN result: %v, %v", v, err)
				}
				if err := outs[0][1].CopyToHost(make([]byte, 3)); !errors.Is(err, pjrt.ErrHostData) {
					return wrongf("CopyToHost of the f8E4M3FN result into 3 bytes: %v", err)
				}
				return nil
			},
		},
		{
			name: "Client.Compile: on a closed client", class: classOwnership, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrClosed", pjrt.ErrClosed),
			run: func(h *H) error {
				c := h.Fresh(1)
				h.Must(c.Close())
				_, err := c.Compile(addModule(1), pjrt.CompileOptions{})
				return err
			},
		},
		{
			name: "Client.CompileContext: a cancelled context", class: classOwnership, entry: "pjrt Compile", group: "compile",
			want: is("context.Canceled", context.Canceled),
			run: func(h *H) error {
				c := h.Client()
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, err := c.CompileContext(ctx, addModule(1), pjrt.CompileOptions{})
				exe := compileOn(h, c, addModule(1), 1)
				if werr := addWorks(h, c, exe); werr != nil {
					h.Failf("%v", werr)
				}
				return err
			},
		},
		{
			name: "Client.CompileContext: a 20 ms deadline on a long compile", class: classOwnership, entry: "pjrt Compile", group: "compile",
			want: is("context.DeadlineExceeded", context.DeadlineExceeded),
			run: func(h *H) error {
				c := h.Client()
				text := slowModule(600, fmt.Sprintf("slow_%d", time.Now().UnixNano()))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer cancel()
				start := time.Now()
				_, err := c.CompileContext(ctx, text, pjrt.CompileOptions{})
				if d := time.Since(start); d > 2*time.Second {
					h.Failf("CompileContext returned after %v, not at the deadline", d)
				}
				exe := compileOn(h, c, addModule(1), 1)
				if werr := addWorks(h, c, exe); werr != nil {
					h.Failf("%v", werr)
				}
				return err
			},
		},
	}
	cases = append(cases, customCallCases()...)
	cases = append(cases, bytecodeCompileCases()...)
	return append(cases, loadExecutableCases()...)
}

func loadExecutableCases() []*hcase {
	load := func(name string, data func(h *H) []byte) *hcase {
		return &hcase{
			name: "Client.LoadExecutable: " + name, class: classPrograms, entry: "pjrt.LoadExecutable", group: "compile",
			want: is("pjrt.ErrCompile", pjrt.ErrCompile),
			run: func(h *H) error {
				exe, err := h.Client().LoadExecutable(data(h), pjrt.CompileOptions{})
				if err == nil {
					exe.Close()
				}
				return err
			},
		}
	}
	serialized := func(h *H) []byte {
		exe := compileOn(h, h.Client(), addModule(1), 1)
		data, err := exe.Serialize()
		h.Must(err)
		return data
	}
	// reload compiles addModule(n) for n devices, serializes it and loads it with opts, whose
	// devices do not fit it.
	reload := func(name string, n int, opts pjrt.CompileOptions) *hcase {
		return &hcase{
			name: "Client.LoadExecutable: " + name, class: classSilent, entry: "pjrt.LoadExecutable", group: "compile",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				c := h.Client()
				data, err := compileOn(h, c, addModule(n), n).Serialize()
				h.Must(err)
				exe, err := c.LoadExecutable(data, opts)
				if err == nil {
					exe.Close()
				}
				return err
			},
		}
	}
	return []*hcase{
		load("random bytes", func(*H) []byte { return []byte("\x08\x96\x01 this is not an executable \xff\xfe") }),
		load("no bytes", func(*H) []byte { return nil }),
		load("the first half of a serialized executable", func(h *H) []byte { d := serialized(h); return d[:len(d)/2] }),
		load("a serialized executable with its first 64 bytes zeroed", func(h *H) []byte {
			d := serialized(h)
			clear(d[:min(64, len(d))])
			return d
		}),
		{
			// Zero options load a program on the devices it was compiled for (not on one device as
			// Compile's zero options would: the program's partitions are fixed by then).
			name: "Client.LoadExecutable: an 8-partition executable loaded with zero options runs on its 8 devices", class: classSilent, entry: "pjrt.LoadExecutable", group: "compile",
			run: func(h *H) error {
				c := h.Client()
				data, err := compileOn(h, c, addModule(8), 8).Serialize()
				h.Must(err)
				exe, err := c.LoadExecutable(data, pjrt.CompileOptions{})
				if err != nil {
					return err
				}
				defer exe.Close()
				if got := exe.DeviceAssignment(); len(got) != 8 {
					return fmt.Errorf("loaded on devices %v, want the 8 it was compiled for", got)
				}
				return addWorks(h, c, exe)
			},
		},
		reload("an 8-partition executable loaded for device 0", 8, pjrt.CompileOptions{DeviceAssignment: []int{0}}),
		reload("a 2-partition executable loaded for devices 0, 1, 2", 2, pjrt.CompileOptions{DeviceAssignment: []int{0, 1, 2}}),
		reload("a 2-partition executable loaded for device 0 twice", 2, pjrt.CompileOptions{DeviceAssignment: []int{0, 0}}),
		{
			name: "Client.LoadExecutable: a 1-partition executable loaded with zero options runs", class: classSilent, entry: "pjrt.LoadExecutable", group: "compile",
			run: func(h *H) error {
				c := h.Client()
				data, err := compileOn(h, c, addModule(1), 1).Serialize()
				h.Must(err)
				exe, err := c.LoadExecutable(data, pjrt.CompileOptions{})
				if err != nil {
					return err
				}
				defer exe.Close()
				return addWorks(h, c, exe)
			},
		},
		{
			name: "Client.LoadExecutable: serialize, load and run", class: classOwnership, entry: "pjrt.LoadExecutable", group: "compile",
			run: func(h *H) error {
				c := h.Client()
				data, err := compileOn(h, c, addModule(2), 2).Serialize()
				h.Must(err)
				exe, err := c.LoadExecutable(data, pjrt.CompileOptions{DeviceAssignment: ids(c, 2)})
				if err != nil {
					return err
				}
				defer exe.Close()
				return addWorks(h, c, exe)
			},
		},
	}
}

// executeCase gives exe (addModule on n devices of the child's client) the arguments args
// returns and fails the case unless the executable then still works and closes.
func executeCase(name string, cl class, n int, args func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption), want ...any) *hcase {
	return &hcase{
		name: "Executable.Execute: " + name, class: cl, entry: "pjrt Execute", group: "execute",
		want: is(want...),
		run: func(h *H) error {
			c := h.Client()
			exe := compileOn(h, c, addModule(n), n)
			a, opts := args(h, c)
			outs, err := exe.Execute(a, opts...)
			if err == nil {
				results(outs)
			}
			return thenUsable(h, c, exe, err)
		},
	}
}

func executeCases() []*hcase {
	f4 := []float32{1, 2, 3, 4}
	two := func(h *H, c *pjrt.Client, d int) []*pjrt.Buffer {
		return []*pjrt.Buffer{buffer(h, c, d, f4, 4), buffer(h, c, d, f4, 4)}
	}
	none := []pjrt.ExecuteOption(nil)
	return []*hcase{
		{
			name: "Executable.Execute: 1,024 arguments on 8 devices, each buffer at 8 places, results waited for 1,000 times", class: classHangs,
			entry: "pjrt Execute", group: "execute",
			run: func(h *H) error {
				// Each buffer is locked once per call however often it is passed (a second read lock
				// can deadlock behind a writer), in time linear in the 8,192 places.
				const n, distinct = 1024, 128
				c := h.Client()
				var b strings.Builder
				b.WriteString("module @sum attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n  func.func public @main(")
				for i := range n {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "%%a%d: tensor<1xf32>", i)
				}
				b.WriteString(") -> tensor<1xf32> {\n")
				last := "%a0"
				for i := 1; i < n; i++ {
					fmt.Fprintf(&b, "    %%s%d = stablehlo.add %s, %%a%d : tensor<1xf32>\n", i, last, i)
					last = fmt.Sprintf("%%s%d", i)
				}
				fmt.Fprintf(&b, "    return %s : tensor<1xf32>\n  }\n}\n", last)
				exe := compileOn(h, c, b.String(), 8)
				args := make([][]*pjrt.Buffer, 8)
				for d := range args {
					own := make([]*pjrt.Buffer, distinct)
					for i := range own {
						own[i] = buffer(h, c, d, []float32{float32(i + d)}, 1)
					}
					for i := range n {
						args[d] = append(args[d], own[i%distinct])
					}
				}
				start := time.Now()
				outs, err := exe.Execute(args)
				if err != nil {
					return err
				}
				var all []*pjrt.Buffer
				for range 1000 {
					for _, o := range outs {
						all = append(all, o[0])
					}
				}
				if err := pjrt.WaitAll(all...); err != nil {
					return err
				}
				took := time.Since(start)
				got, err := results(outs)
				if err != nil {
					return err
				}
				for d := range 8 {
					// 8 times the sum of i + d over the 128 distinct buffers
					want := float32(8 * (distinct*(distinct-1)/2 + distinct*d))
					if v := got[d][0].([]float32); len(v) != 1 || v[0] != want {
						return wrongf("device %d: got %v, want [%v]", d, v, want)
					}
				}
				if took > 10*time.Second {
					return wrongf("one call and its wait took %v", took)
				}
				return nil
			},
		},
		executeCase("an int32 argument for a float32 parameter", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{{buffer(h, c, 0, []int32{1, 2, 3, 4}, 4), buffer(h, c, 0, f4, 4)}}, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("a 2x2 argument for a [4] parameter", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{{buffer(h, c, 0, f4, 2, 2), buffer(h, c, 0, f4, 4)}}, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("one argument of two", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{{buffer(h, c, 0, f4, 4)}}, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("three arguments of two", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{append(two(h, c, 0), buffer(h, c, 0, f4, 4))}, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("arguments for 7 of 8 devices", classHangs, 8, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			var a [][]*pjrt.Buffer
			for d := range 7 {
				a = append(a, two(h, c, d))
			}
			return a, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("no arguments at all", classHangs, 1, func(*H, *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return nil, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("device 1's buffers in device 0's place", classHangs, 2, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{two(h, c, 1), two(h, c, 0)}, none
		}, "pjrt.ErrDevice", pjrt.ErrDevice),
		executeCase("a buffer of another client", classOwnership, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			other := h.ClientN(1)
			return [][]*pjrt.Buffer{{buffer(h, other, 0, f4, 4), buffer(h, c, 0, f4, 4)}}, none
		}, "pjrt.ErrDevice", pjrt.ErrDevice),
		executeCase("a closed buffer", classOwnership, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			a := two(h, c, 0)
			a[1].Close()
			return [][]*pjrt.Buffer{a}, none
		}, "pjrt.ErrClosed", pjrt.ErrClosed),
		executeCase("a nil buffer", classPanics, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{{buffer(h, c, 0, f4, 4), nil}}, none
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("donation index 0 given twice", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{two(h, c, 0)}, []pjrt.ExecuteOption{pjrt.Donate(0, 0)}
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("donation index 5 of 2 arguments", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{two(h, c, 0)}, []pjrt.ExecuteOption{pjrt.Donate(5)}
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("donation index -1", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			return [][]*pjrt.Buffer{two(h, c, 0)}, []pjrt.ExecuteOption{pjrt.Donate(-1)}
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("one buffer as both arguments, both donated", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			b := buffer(h, c, 0, f4, 4)
			return [][]*pjrt.Buffer{{b, b}}, []pjrt.ExecuteOption{pjrt.Donate(0, 1)}
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		executeCase("one buffer as both arguments, one donated", classHangs, 1, func(h *H, c *pjrt.Client) ([][]*pjrt.Buffer, []pjrt.ExecuteOption) {
			b := buffer(h, c, 0, f4, 4)
			return [][]*pjrt.Buffer{{b, b}}, []pjrt.ExecuteOption{pjrt.Donate(1)}
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		{
			name: "Executable.Execute: an error buffer as argument fails the results, typed", class: classHangs, entry: "pjrt Execute", group: "execute",
			want: is("pjrt.ErrExecute", pjrt.ErrExecute), as: as[*pjrt.Error]("*pjrt.Error"),
			run: func(h *H) error {
				c := h.Client0115() // the pinned 0.81 plugin has no error buffers
				exe := compileOn(h, c, addModule(1), 1)
				bad, err := c.NewErrorBuffer(c.Devices()[0], shapes.Make(dtypes.Float32, 4), pjrt.DataLoss, "hostile: poisoned input")
				h.Must(err)
				h.Cleanup(func() { bad.Close() })
				outs, err := exe.Execute([][]*pjrt.Buffer{{bad, buffer(h, c, 0, f4, 4)}})
				if err == nil {
					_, err = results(outs)
				}
				if err != nil && !strings.Contains(err.Error(), "hostile: poisoned input") {
					h.Failf("the error lost the poisoned buffer's message: %v", err)
				}
				return thenUsable(h, c, exe, err)
			},
		},
		{
			name: "Executable.Execute: 40 goroutines past WithMaxInFlight(1) while the client closes", class: classHangs, entry: "pjrt Execute", group: "execute",
			run: func(h *H) error {
				c, err := pjrt.Open(pjrt.WithCPUDeviceCount(1), pjrt.WithMaxInFlight(1))
				h.Must(err)
				exe, err := c.Compile(addModule(1), pjrt.CompileOptions{})
				h.Must(err)
				x, err := c.BufferFromHost(c.Devices()[0], []float32{1, 2, 3, 4}, []int{4})
				h.Must(err)
				var wg sync.WaitGroup
				errs := make(chan error, 40)
				for range 40 {
					wg.Go(func() {
						outs, err := exe.Execute([][]*pjrt.Buffer{{x, x}})
						if err == nil {
							_, err = results(outs)
						}
						if err != nil && !errors.Is(err, pjrt.ErrClosed) {
							errs <- err
						}
					})
				}
				time.Sleep(10 * time.Millisecond)
				cerr := c.Close()
				wg.Wait()
				close(errs)
				for e := range errs {
					h.Failf("an execution: %v", e)
				}
				x.Close()
				exe.Close()
				return cerr
			},
		},
		{
			name: "Executable.Execute: a function with zero results", class: classPanics, entry: "pjrt Execute", group: "execute",
			run: func(h *H) error {
				c := h.Client()
				exe := compileOn(h, c, "module @nothing attributes {mhlo.num_partitions = 2 : i32} {\n  func.func public @main(%x: tensor<4xf32>) {\n    return\n  }\n}\n", 2)
				outs, err := exe.Execute([][]*pjrt.Buffer{{buffer(h, c, 0, f4, 4)}, {buffer(h, c, 1, f4, 4)}})
				if err != nil {
					return err
				}
				if len(outs) != 2 || len(outs[0]) != 0 || len(outs[1]) != 0 || exe.NumOutputs() != 0 {
					return wrongf("got %v, %d outputs", outs, exe.NumOutputs())
				}
				return nil
			},
		},
		{
			name: "Executable.Execute: a function with zero arguments", class: classPanics, entry: "pjrt Execute", group: "execute",
			run: func(h *H) error {
				c := h.Client()
				exe := compileOn(h, c, "module @constant {\n  func.func public @main() -> tensor<2xi64> {\n    %0 = stablehlo.constant dense<[7, -7]> : tensor<2xi64>\n    return %0 : tensor<2xi64>\n  }\n}\n", 1)
				outs, err := exe.Execute([][]*pjrt.Buffer{{}})
				if err != nil {
					return err
				}
				got, err := results(outs)
				if err != nil {
					return err
				}
				if !slices.Equal(got[0][0].([]int64), []int64{7, -7}) {
					return wrongf("got %v", got)
				}
				return nil
			},
		},
		{
			name: "Executable.Execute: after Close", class: classOwnership, entry: "pjrt Execute", group: "execute",
			want: is("pjrt.ErrClosed", pjrt.ErrClosed),
			run: func(h *H) error {
				c := h.Client()
				exe := compileOn(h, c, addModule(1), 1)
				h.Must(exe.Close())
				if err := exe.Close(); err != nil {
					h.Failf("a second Close: %v", err)
				}
				_, err := exe.Execute([][]*pjrt.Buffer{two(h, c, 0)})
				return err
			},
		},
		{
			name: "Executable.Execute: after its client closed", class: classOwnership, entry: "pjrt Execute", group: "execute",
			want: is("pjrt.ErrClosed", pjrt.ErrClosed),
			run: func(h *H) error {
				c := h.Fresh(1)
				exe := compileOn(h, c, addModule(1), 1)
				a := two(h, c, 0)
				h.Must(c.Close())
				_, err := exe.Execute([][]*pjrt.Buffer{a})
				if _, terr := a[0].ToHost(); !errors.Is(terr, pjrt.ErrClosed) {
					h.Failf("ToHost of a buffer of the closed client: %v, want pjrt.ErrClosed", terr)
				}
				return err
			},
		},
		{
			name: "Executable.Execute: a donated buffer used again", class: classOwnership, entry: "pjrt Execute", group: "execute",
			want: is("pjrt.ErrClosed", pjrt.ErrClosed),
			run: func(h *H) error {
				c := h.Client()
				exe := compileOn(h, c, addModule(1), 1)
				a := two(h, c, 0)
				outs, err := exe.Execute([][]*pjrt.Buffer{a}, pjrt.Donate(0))
				h.Must(err)
				got, err := results(outs)
				h.Must(err)
				if !slices.Equal(got[0][0].([]float32), []float32{2, 4, 6, 8}) {
					h.Failf("the donating call gave %v", got)
				}
				_, err = exe.Execute([][]*pjrt.Buffer{a})
				return thenUsable(h, c, exe, err)
			},
		},
	}
}

func transferCases() []*hcase {
	tr := func(name string, cl class, run func(h *H, c *pjrt.Client) error, want ...any) *hcase {
		return &hcase{name: name, class: cl, entry: "pjrt transfers", group: "transfer", want: is(want...),
			run: func(h *H) error { return run(h, h.Client()) }}
	}
	host := func(h *H, c *pjrt.Client, dev *pjrt.Device, flat any, dims ...int) error {
		b, err := c.BufferFromHost(dev, flat, dims)
		if err == nil {
			b.Close()
		}
		return err
	}
	hostData := []any{"pjrt.ErrHostData", pjrt.ErrHostData}
	data := make([]byte, 64)
	strided := func(strides []int64, dims ...int) func(h *H, c *pjrt.Client) error {
		return func(h *H, c *pjrt.Client) error {
			bs, err := c.BuffersFromHost([]pjrt.HostTransfer{{Device: c.Devices()[0], DType: dtypes.Float32, Dims: dims, Data: data, ByteStrides: strides}})
			for _, b := range bs {
				b.Close()
			}
			return err
		}
	}
	return []*hcase{
		tr("Client.BufferFromHost: a closed 64 MiB buffer's staging memory kept for good", classOwnership, func(h *H, c *pjrt.Client) error {
			// The staging block of a closed buffer is kept for reuse only for the idle time (2 s
			// by default), then given back to the operating system.
			if c.Platform() != "cpu" {
				return nil
			}
			b, err := c.BufferFromBytes(c.Devices()[0], dtypes.Uint8, []int{64 << 20}, make([]byte, 64<<20))
			if err != nil {
				return err
			}
			b.Close()
			deadline := time.Now().Add(2*pjrt.DefaultStagingIdleTime + 5*time.Second)
			for pjrt.Staging().IdleBytes != 0 {
				if time.Now().After(deadline) {
					return wrongf("staging memory still held: %+v", pjrt.Staging())
				}
				time.Sleep(20 * time.Millisecond)
			}
			return nil
		}),
		tr("Client.BufferFromHost: 4 values for 2x3", classSilent, func(h *H, c *pjrt.Client) error {
			return host(h, c, c.Devices()[0], []float32{1, 2, 3, 4}, 2, 3)
		}, hostData...),
		tr("Client.BufferFromHost: dimension -4", classPanics, func(h *H, c *pjrt.Client) error {
			return host(h, c, c.Devices()[0], []float32{1, 2, 3, 4}, -4)
		}, hostData...),
		tr("Client.BufferFromHost: 2^62 x 2^62 dimensions", classSilent, func(h *H, c *pjrt.Client) error {
			return host(h, c, c.Devices()[0], []float32{1, 2, 3, 4}, 1<<62, 1<<62)
		}, hostData...),
		tr("Client.BufferFromHost: (2^62+1) x 4 dimensions, whose count wraps to 4", classSilent, func(h *H, c *pjrt.Client) error {
			return host(h, c, c.Devices()[0], []float32{1, 2, 3, 4}, 1<<62+1, 4)
		}, hostData...),
		tr("Client.BufferFromHost: a nil device", classPanics, func(h *H, c *pjrt.Client) error {
			return host(h, c, nil, []float32{1, 2, 3, 4}, 4)
		}, "pjrt.ErrDevice", pjrt.ErrDevice),
		tr("Client.BufferFromHost: a device of another client", classOwnership, func(h *H, c *pjrt.Client) error {
			return host(h, c, h.ClientN(1).Devices()[0], []float32{1, 2, 3, 4}, 4)
		}, "pjrt.ErrDevice", pjrt.ErrDevice),
		tr("Client.BufferFromHost: []string", classPanics, func(h *H, c *pjrt.Client) error {
			return host(h, c, c.Devices()[0], []string{"a"}, 1)
		}, hostData...),
		tr("Client.BufferFromHost: nil data", classPanics, func(h *H, c *pjrt.Client) error {
			return host(h, c, c.Devices()[0], nil, 4)
		}, hostData...),
		tr("Client.BufferFromHost: a 0x4 array", classPanics, func(h *H, c *pjrt.Client) error {
			b, err := c.BufferFromHost(c.Devices()[0], []float32{}, []int{0, 4})
			if err != nil {
				return err
			}
			defer b.Close()
			v, err := b.ToHost()
			if err != nil || len(v.([]float32)) != 0 || !slices.Equal(b.Dims(), []int{0, 4}) {
				return wrongf("got %v %v dims %v", v, err, b.Dims())
			}
			return nil
		}),
		tr("Client.BufferFromBytes: element type DType(999)", classSilent, func(h *H, c *pjrt.Client) error {
			b, err := c.BufferFromBytes(c.Devices()[0], dtypes.DType(999), []int{4}, make([]byte, 16))
			if err == nil {
				b.Close()
			}
			return err
		}, hostData...),
		tr("Client.BufferFromBytes: int4 elements with high bits set, which XLA would drop", classSilent, func(h *H, c *pjrt.Client) error {
			b, err := c.BufferFromBytes(c.Devices()[0], dtypes.S4, []int{2}, []byte{0x07, 0xf8})
			if err == nil {
				b.Close()
			}
			return err
		}, hostData...),
		tr("Client.BuffersFromHost: byte strides reaching past the data", classSilent, strided([]int64{4096, 4}, 4, 4), hostData...),
		tr("Client.BuffersFromHost: negative byte strides", classSilent, strided([]int64{-16, 4}, 4, 4), hostData...),
		tr("Client.BuffersFromHost: 3 byte strides for 2 dimensions", classPanics, strided([]int64{16, 4, 4}, 4, 4), hostData...),
		tr("Client.BuffersFromHost: byte strides that overflow int64", classSilent, strided([]int64{1 << 62, 4}, 4, 4), hostData...),
		tr("Buffer.CopyToHost: a destination 1 byte short", classSilent, func(h *H, c *pjrt.Client) error {
			return buffer(h, c, 0, []float32{1, 2, 3, 4}, 4).CopyToHost(make([]byte, 15))
		}, hostData...),
		tr("Client.CopyToHostAll: one good copy, one too long", classSilent, func(h *H, c *pjrt.Client) error {
			return c.CopyToHostAll([]pjrt.HostCopy{
				{Buffer: buffer(h, c, 0, []float32{1, 2, 3, 4}, 4), Dst: make([]byte, 16)},
				{Buffer: buffer(h, c, 1, []float32{1, 2, 3, 4}, 4), Dst: make([]byte, 17)},
			})
		}, hostData...),
		tr("Client.CopyToHostAll: a nil buffer", classPanics, func(h *H, c *pjrt.Client) error {
			return c.CopyToHostAll([]pjrt.HostCopy{{Buffer: nil, Dst: make([]byte, 16)}})
		}, hostData...),
		tr("Client.CopyToHostAll: a buffer of another client", classOwnership, func(h *H, c *pjrt.Client) error {
			return c.CopyToHostAll([]pjrt.HostCopy{{Buffer: buffer(h, h.ClientN(1), 0, []float32{1, 2, 3, 4}, 4), Dst: make([]byte, 16)}})
		}, "pjrt.ErrDevice", pjrt.ErrDevice),
		tr("Buffer.ToHost: after Close; Close twice", classOwnership, func(h *H, c *pjrt.Client) error {
			b := buffer(h, c, 0, []float32{1, 2, 3, 4}, 4)
			h.Must(b.Close())
			if err := b.Close(); err != nil {
				h.Failf("a second Close: %v", err)
			}
			_, err := b.ToHost()
			return err
		}, "pjrt.ErrClosed", pjrt.ErrClosed),
		tr("Buffer.ToHost: an error buffer", classHangs, func(h *H, _ *pjrt.Client) error {
			c := h.Client0115() // the pinned 0.81 plugin has no error buffers
			b, err := c.NewErrorBuffer(c.Devices()[0], shapes.Make(dtypes.Float32, 4), pjrt.Aborted, "hostile")
			h.Must(err)
			defer b.Close()
			_, err = b.ToHost()
			return err
		}, "pjrt.ErrExecute", pjrt.ErrExecute),
		tr("pjrt.FlatFromBytes: 3 bytes of float32", classSilent, func(*H, *pjrt.Client) error {
			_, err := pjrt.FlatFromBytes(dtypes.Float32, []byte{1, 2, 3})
			return err
		}, hostData...),
		tr("Client.Device: id 99 and id -1", classPanics, func(h *H, c *pjrt.Client) error {
			if _, err := c.Device(-1); !errors.Is(err, pjrt.ErrDevice) {
				h.Failf("Device(-1): %v", err)
			}
			_, err := c.Device(99)
			return err
		}, "pjrt.ErrDevice", pjrt.ErrDevice),
	}
}

func openCases() []*hcase {
	open := func(name string, cl class, entry string, opts []pjrt.Option, want ...any) *hcase {
		return &hcase{
			name: "pjrt.Open: " + name, class: cl, entry: entry, group: "open", want: is(want...),
			run: func(h *H) error {
				c, err := pjrt.Open(opts...)
				if err == nil {
					c.Close()
				}
				return err
			},
		}
	}
	openDevices := func(name string, cl class, opts []pjrt.Option, n int) *hcase {
		entry := "pjrt.Open"
		if strings.Contains(name, "WithCreateOption") {
			entry = "pjrt.WithCreateOption"
		}
		return &hcase{
			name: "pjrt.Open: " + name, class: cl, entry: entry, group: "open",
			run: func(h *H) error {
				c, err := pjrt.Open(opts...)
				if err != nil {
					return err
				}
				defer c.Close()
				if got := len(c.Devices()); got != n {
					return wrongf("%d devices, want %d", got, n)
				}
				return nil
			},
		}
	}
	return []*hcase{
		open("WithCPUDeviceCount(0)", classSilent, "pjrt.Open", []pjrt.Option{pjrt.WithCPUDeviceCount(0)}, "pjrt.ErrDevice", pjrt.ErrDevice),
		open("WithCPUDeviceCount(-3)", classSilent, "pjrt.Open", []pjrt.Option{pjrt.WithCPUDeviceCount(-3)}, "pjrt.ErrDevice", pjrt.ErrDevice),
		open("WithCPUDeviceCount(1<<40)", classSilent, "pjrt.Open", []pjrt.Option{pjrt.WithCPUDeviceCount(1 << 40)}, "pjrt.ErrDevice", pjrt.ErrDevice),
		open("WithCPUDeviceCount(1<<32 + 1)", classSilent, "pjrt.Open", []pjrt.Option{pjrt.WithCPUDeviceCount(1<<32 + 1)}, "pjrt.ErrDevice", pjrt.ErrDevice),
		open("WithMaxInFlight(0)", classSilent, "pjrt.Open", []pjrt.Option{pjrt.WithMaxInFlight(0)}, "pjrt.ErrExecute", pjrt.ErrExecute),
		open("WithCreateOption of a struct value", classPanics, "pjrt.WithCreateOption", []pjrt.Option{pjrt.WithCreateOption("x", struct{}{})},
			"pjrt.ErrCreateOption", pjrt.ErrCreateOption),
		open("WithCreateOption of a []string", classPanics, "pjrt.WithCreateOption", []pjrt.Option{pjrt.WithCreateOption("x", []string{"a"})},
			"pjrt.ErrCreateOption", pjrt.ErrCreateOption),
		open("WithCreateOption of a nil value", classPanics, "pjrt.WithCreateOption", []pjrt.Option{pjrt.WithCreateOption("x", nil)},
			"pjrt.ErrCreateOption", pjrt.ErrCreateOption),
		// The default CPU plugin (API 0.115) refuses option names it does not know, the one a NUL
		// makes included; the API 0.81 one ignored them.
		open("WithCreateOption with a NUL in the name", classNames, "pjrt.WithCreateOption",
			[]pjrt.Option{pjrt.WithCreateOption("cpu_device_count\x00x", 2)}, "pjrt.ErrCreateClient", pjrt.ErrCreateClient),
		open("WithCreateOption with an empty name", classSilent, "pjrt.WithCreateOption",
			[]pjrt.Option{pjrt.WithCreateOption("", int64(2))}, "pjrt.ErrCreateClient", pjrt.ErrCreateClient),
		openDevices(`WithCreateOption("cpu_device_count", 3) gives 3 devices`, classSilent, []pjrt.Option{pjrt.WithCreateOption("cpu_device_count", 3)}, 3),
		openDevices("WithCPUDeviceCount(3) gives 3 devices", classSilent, []pjrt.Option{pjrt.WithCPUDeviceCount(3)}, 3),
		{
			name: "pjrt.Open: a compile cache whose entries are corrupt", class: classSilent, entry: "pjrt.Open", group: "open",
			run: func(h *H) error {
				dir := h.Dir()
				text := addModule(1) + fmt.Sprintf("// %d\n", time.Now().UnixNano())
				c1, err := pjrt.Open(pjrt.WithCPUDeviceCount(1), pjrt.WithCompileCache(dir))
				h.Must(err)
				exe, err := c1.Compile(text, pjrt.CompileOptions{})
				h.Must(err)
				exe.Close()
				h.Must(c1.Close())
				n := 0
				h.Must(filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
					if err == nil && info.Mode().IsRegular() {
						n++
						return os.WriteFile(path, []byte("\x00corrupt\xff"), 0o644)
					}
					return err
				}))
				if n == 0 {
					h.Failf("the compile cache in %s holds no file", dir)
				}
				c2, err := pjrt.Open(pjrt.WithCPUDeviceCount(1), pjrt.WithCompileCache(dir))
				if err != nil {
					return err
				}
				defer c2.Close()
				exe = compileOn(h, c2, text, 1)
				return addWorks(h, c2, exe)
			},
		},
		{
			name: "Client.Close: twice, with buffers and executables alive", class: classOwnership, entry: "pjrt.Open", group: "open",
			run: func(h *H) error {
				c := h.Fresh(2)
				exe := compileOn(h, c, addModule(1), 1)
				b := buffer(h, c, 0, []float32{1, 2, 3, 4}, 4)
				if err := c.Close(); err != nil {
					return err
				}
				if err := c.Close(); err != nil {
					return fmt.Errorf("the second Close: %w", err)
				}
				if err := b.Close(); err != nil {
					return fmt.Errorf("closing a buffer of the closed client: %w", err)
				}
				return exe.Close()
			},
		},
	}
}

// compileCacheCases damage a persistent compile cache entry of x+y in every way that used to
// reach XLA (a swapped entry ran the other program, a flipped bit gave wrong numbers or killed
// the process, a FIFO hung, a device file was read forever), then compile x+y again through a
// new client on that directory: the entry must be a miss (counted in CacheRejects when it was
// refused) and the program's result exact.
func compileCacheCases() []*hcase {
	// open opens a one-device client of the given plugin ("" for the default) caching in dir.
	open := func(h *H, dir, plugin string) *pjrt.Client {
		opts := []pjrt.Option{pjrt.WithCPUDeviceCount(1), pjrt.WithCompileCache(dir)}
		if plugin != "" {
			opts = append(opts, pjrt.WithPlugin(plugin))
		}
		c, err := pjrt.Open(opts...)
		h.Must(err)
		h.Cleanup(func() { c.Close() })
		return c
	}
	// compileEntry compiles text on c and returns the entry it wrote into dir (the one file
	// there not in known) and the executable's serialization.
	compileEntry := func(h *H, c *pjrt.Client, dir, text string, known ...string) (string, []byte) {
		exe, err := c.Compile(text, pjrt.CompileOptions{})
		h.Must(err)
		defer exe.Close()
		raw, err := exe.Serialize()
		h.Must(err)
		files, err := filepath.Glob(filepath.Join(dir, "*.xlaexec"))
		h.Must(err)
		for _, f := range files {
			if !slices.Contains(known, f) {
				return f, raw
			}
		}
		h.Must(fmt.Errorf("compiling wrote no cache entry into %s", dir))
		return "", nil
	}
	rewrite := func(h *H, path string, data []byte) {
		h.Must(os.RemoveAll(path))
		h.Must(os.WriteFile(path, data, 0o644))
	}
	type damage func(h *H, dir, text, entry string, raw []byte)
	cacheCase := func(name string, cl class, rejects int64, d damage) *hcase {
		return &hcase{name: "pjrt Compile: " + name, class: cl, entry: "pjrt Compile", group: "cache",
			run: func(h *H) error {
				dir := h.Dir()
				text := addModule(1) + fmt.Sprintf("// %d\n", time.Now().UnixNano())
				c := open(h, dir, "")
				entry, raw := compileEntry(h, c, dir, text)
				d(h, dir, text, entry, raw)
				c2 := open(h, dir, "")
				exe, err := c2.Compile(text, pjrt.CompileOptions{})
				if err != nil {
					return err
				}
				h.Cleanup(func() { exe.Close() })
				if err := addWorks(h, c2, exe); err != nil {
					return err
				}
				if st := c2.CompileStats(); st.Compiles != 1 || st.CacheHits != 0 || st.CacheRejects != rejects {
					return wrongf("compile stats %+v, want 1 compile, no hit, %d rejected", st, rejects)
				}
				return nil
			}}
	}
	special := func(make func(path string) error) damage {
		return func(h *H, _, _, entry string, _ []byte) {
			h.Must(os.Remove(entry))
			h.Must(make(entry))
		}
	}
	edit := func(f func(data []byte) []byte) damage {
		return func(h *H, _, _, entry string, _ []byte) {
			data, err := os.ReadFile(entry)
			h.Must(err)
			rewrite(h, entry, f(data))
		}
	}
	return []*hcase{
		cacheCase("compile cache entries of x+y and x*y swapped", classSilent, 1, func(h *H, dir, text, entry string, _ []byte) {
			mul := strings.Replace(text, "stablehlo.add", "stablehlo.multiply", 1)
			other, _ := compileEntry(h, open(h, dir, ""), dir, mul, entry)
			h.Must(os.Rename(entry, entry+".swap"))
			h.Must(os.Rename(other, entry))
			h.Must(os.Rename(entry+".swap", other))
		}),
		cacheCase("a compile cache entry with one payload bit flipped", classPrograms, 1, edit(func(d []byte) []byte {
			d[len(d)/2] ^= 0x10
			return d
		})),
		cacheCase("a compile cache entry with its second half overwritten by 0xff", classPrograms, 1, edit(func(d []byte) []byte {
			for i := len(d) / 2; i < len(d); i++ {
				d[i] = 0xff
			}
			return d
		})),
		cacheCase("a compile cache entry with one header bit flipped", classSilent, 1, edit(func(d []byte) []byte {
			d[20] ^= 1
			return d
		})),
		cacheCase("a compile cache entry one byte short", classPrograms, 1, edit(func(d []byte) []byte { return d[:len(d)-1] })),
		cacheCase("a compile cache entry of the old format (the serialized executable alone)", classSilent, 1,
			func(h *H, _, _, entry string, raw []byte) { rewrite(h, entry, raw) }),
		cacheCase("a FIFO as compile cache entry", classHangs, 1, special(func(p string) error { return syscall.Mkfifo(p, 0o644) })),
		cacheCase("a link to /dev/null as compile cache entry", classHangs, 1, special(func(p string) error { return os.Symlink("/dev/null", p) })),
		cacheCase("a link to /dev/zero as compile cache entry", classHangs, 1, special(func(p string) error { return os.Symlink("/dev/zero", p) })),
		cacheCase("a directory as compile cache entry", classSilent, 1, special(func(p string) error { return os.Mkdir(p, 0o755) })),
		cacheCase("a compile cache entry over the size cap (sparse)", classHangs, 1, special(func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			return errors.Join(f.Truncate(pjrt.MaxCompileCacheEntry+1), f.Close())
		})),
		cacheCase("the other CPU plugin's compile cache entry in the default plugin's place", classSilent, 1,
			func(h *H, dir, text, entry string, _ []byte) {
				path, err := otherCPUPlugin()
				h.Must(err)
				other, _ := compileEntry(h, open(h, dir, path), dir, text, entry)
				h.Must(os.Rename(other, entry))
			}),
	}
}

// runawayExecuteCases leave an execution running until their child ends (group "runaway").
func runawayExecuteCases() []*hcase {
	return []*hcase{{
		name: "Executable.CloseContext: an Execute of a while loop that never ends", class: classHangs,
		entry: "pjrt Execute", group: "runaway", leavesRunning: true,
		want: is("pjrt.ErrStillRunning", pjrt.ErrStillRunning), as: as[*pjrt.StillRunningError]("*pjrt.StillRunningError"),
		run: func(h *H) error {
			c, err := pjrttest.Open(8) // never closed: the execution holds it to the end of the child
			h.Must(err)
			exe, err := c.Compile(pjrttest.SpinModule(1), pjrt.CompileOptions{})
			h.Must(err)
			x, err := c.BufferFromHost(exe.Devices()[0], []float32{1, 2, 3, 4}, []int{4})
			h.Must(err)
			go func() { _, _ = exe.Execute([][]*pjrt.Buffer{{x}}) }() // the CPU plugin runs it inside the call
			time.Sleep(time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			closeErr := exe.CloseContext(ctx)
			if took := time.Since(start); took > 4*time.Second {
				h.Failf("Executable.CloseContext returned after %v, its deadline was 1s", took)
			}
			start = time.Now()
			if _, err := exe.Execute([][]*pjrt.Buffer{{x}}); !errors.Is(err, pjrt.ErrClosed) {
				h.Failf("Execute on the closed executable: %v, want pjrt.ErrClosed", err)
			}
			if took := time.Since(start); took > time.Second {
				h.Failf("Execute on the closed executable returned after %v", took)
			}
			inc, err := c.Compile(`module @jit_inc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %x, %one : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}`, pjrt.CompileOptions{DeviceAssignment: []int{1}})
			h.Must(err)
			defer inc.Close()
			y, err := c.BufferFromHost(inc.Devices()[0], []float32{1, 2, 3, 4}, []int{4})
			h.Must(err)
			defer y.Close()
			outs, err := inc.Execute([][]*pjrt.Buffer{{y}})
			h.Must(err)
			got, err := outs[0][0].ToHost()
			outs[0][0].Close()
			if err != nil || !slices.Equal(got.([]float32), []float32{2, 3, 4, 5}) {
				h.Failf("another executable of the client: %v, %v; want [2 3 4 5]", got, err)
			}
			return closeErr
		},
	}, {
		name: "Executable.CloseContext: an 8-device Execute of a while loop that never ends", class: classHangs,
		entry: "pjrt Execute", group: "runaway", leavesRunning: true,
		want: is("pjrt.ErrStillRunning", pjrt.ErrStillRunning), as: as[*pjrt.StillRunningError]("*pjrt.StillRunningError"),
		run: func(h *H) error {
			c, err := pjrttest.Open(8) // never closed: the execution holds it to the end of the child
			h.Must(err)
			exe, err := c.Compile(pjrttest.SpinModule(8),
				pjrt.CompileOptions{NumPartitions: 8})
			h.Must(err)
			args := make([][]*pjrt.Buffer, 8)
			for d, dev := range exe.Devices() {
				b, err := c.BufferFromHost(dev, []float32{1, 2, 3, 4}, []int{4})
				h.Must(err)
				args[d] = []*pjrt.Buffer{b}
			}
			_, err = exe.Execute(args) // returns; the execution runs on, on the plugin's threads
			h.Must(err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			closeErr := exe.CloseContext(ctx)
			if took := time.Since(start); took > 4*time.Second {
				h.Failf("Executable.CloseContext returned after %v, its deadline was 1s", took)
			}
			var still *pjrt.StillRunningError
			if !errors.As(closeErr, &still) || still.Executions != 1 || still.Calls != 0 {
				h.Failf("Executable.CloseContext: %v; want 0 calls and 1 execution still running", closeErr)
			}
			return closeErr
		},
	}, {
		name: "Buffer.Close: an argument of a one-device Execute that never ends", class: classHangs,
		entry: "pjrt Execute", group: "runaway", leavesRunning: true,
		run: func(h *H) error {
			c, err := pjrttest.Open(8) // never closed: the execution holds it to the end of the child
			h.Must(err)
			exe, err := c.Compile(pjrttest.SpinModule(1), pjrt.CompileOptions{})
			h.Must(err)
			x, err := c.BufferFromHost(exe.Devices()[0], []float32{1, 2, 3, 4}, []int{4})
			h.Must(err)
			go func() { _, _ = exe.Execute([][]*pjrt.Buffer{{x}}) }() // the CPU plugin runs it inside the call
			for deadline := time.Now().Add(30 * time.Second); exe.Unfinished() == 0; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					return errors.New("the execution did not start")
				}
			}
			start := time.Now()
			if err := x.Close(); err != nil {
				return err
			}
			if took := time.Since(start); took > time.Second {
				h.Failf("Buffer.Close of the running call's argument returned after %v", took)
			}
			if _, err := x.ToHost(); !errors.Is(err, pjrt.ErrClosed) {
				h.Failf("ToHost of the closed argument: %v, want pjrt.ErrClosed", err)
			}
			return nil
		},
	}}
}

// mcJob is one process of an in-memory 2-process job whose processes are goroutines of the child.
type mcJob struct {
	*pjrttest.MemoryStore
	id int
}

func (j mcJob) ProcessID() int             { return j.id }
func (j mcJob) NumProcesses() int          { return 2 }
func (j mcJob) InitTimeout() time.Duration { return 20 * time.Second }

// jobClients opens the clients of a 2-process job on the CPU plugin that takes a process id, 2
// devices each, closed when the case ends.
func jobClients(h *H) [2]*pjrt.Client {
	path, err := pjrt.MultiProcessCPUPlugin()
	h.Must(err)
	store := &pjrttest.MemoryStore{}
	var clients [2]*pjrt.Client
	var errs [2]error
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Go(func() {
			clients[p], errs[p] = pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCPUDeviceCount(2),
				pjrt.WithDistributed(mcJob{MemoryStore: store, id: p}))
		})
	}
	wg.Wait()
	for p := range 2 {
		h.Must(errs[p])
		h.Cleanup(func() { clients[p].Close() })
	}
	return clients
}

// multiControllerCases compile programs whose device assignment spans the processes of a job
// (multi-controller execution) on a CPU plugin that cannot run them: typed errors naming the
// devices of the other process, before the plugin or from it, never a crash.
func multiControllerCases() []*hcase {
	return []*hcase{
		{
			name: "Client.Compile: a device assignment over both processes of a CPU job", class: classPrograms,
			entry: "pjrt Compile", group: "multicontroller",
			want: is("pjrt.ErrMultiController", pjrt.ErrMultiController), as: as[*pjrt.NotAddressableError]("*pjrt.NotAddressableError"),
			run: func(h *H) error {
				c := jobClients(h)
				var first error
				for p := range 2 {
					_, err := c[p].Compile(addModule(4), pjrt.CompileOptions{DeviceAssignment: ids(c[p], 4)})
					var na *pjrt.NotAddressableError
					if errors.As(err, &na) && !slices.Equal(na.Devices, ids(c[p], 4)[2-2*p:4-2*p]) {
						h.Failf("process %d: not addressable %v, want the other process's devices", p, na.Devices)
					}
					if p == 0 {
						first = err
					}
				}
				return first
			},
		},
		{
			name: "Client.Compile: a device assignment of the other process's devices only", class: classSilent,
			entry: "pjrt Compile", group: "multicontroller",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				c := jobClients(h)
				_, err := c[0].Compile(addModule(2), pjrt.CompileOptions{DeviceAssignment: ids(c[0], 4)[2:]})
				return err
			},
		},
		{
			name: "Client.Compile: a device assignment over both processes, interleaved, with a device twice", class: classSilent,
			entry: "pjrt Compile", group: "multicontroller",
			want: is("pjrt.ErrDevice", pjrt.ErrDevice),
			run: func(h *H) error {
				c := jobClients(h)
				all := ids(c[0], 4)
				_, err := c[0].Compile(addModule(4), pjrt.CompileOptions{DeviceAssignment: []int{all[0], all[2], all[2], all[1]}})
				return err
			},
		},
	}
}

// mesh8 is the Shardy mesh of 8 devices of the manual-sharding cases.
const mesh8 = `  sdy.mesh @mesh = <["x"=8]>` + "\n"

// manualOn is a body that gives v (8x2) the sharding manual with a Sharding custom call, uses
// the result and returns it: XLA's SPMD partitioner aborts on such a use of a value that is
// not manual.
func manualOn(v, manual string) string {
	return "    %0 = stablehlo.custom_call @Sharding(" + v + ") {mhlo.sharding = \"" + manual + "\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n" +
		"    %1 = stablehlo.add %0, %0 : tensor<8x2xf32>\n    return %1 : tensor<8x2xf32>\n"
}

// shardOf is the body line %s = Sharding(v) with sharding (v 8x2).
func shardOf(v, sharding string) string {
	return "    %s = stablehlo.custom_call @Sharding(" + v + ") {mhlo.sharding = \"" + sharding + "\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"
}

// toShard is the body line %m = SPMDFullToShardShape(v) of an 8x2 v to the manual shape.
func toShard(v, shape string) string {
	return "    %m = stablehlo.custom_call @SPMDFullToShardShape(" + v + ") {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<" + shape + "xf32>\n"
}

// fromShard ends a body: a manual Sharding of v (of shape), SPMDShardToFullShape to full (tiled
// [8,1]), sliced to the 8x2 result.
func fromShard(v, shape, full string) string {
	return "    %c = stablehlo.custom_call @Sharding(" + v + ") {mhlo.sharding = \"{manual}\"} : (tensor<" + shape + "xf32>) -> tensor<" + shape + "xf32>\n" +
		"    %f = stablehlo.custom_call @SPMDShardToFullShape(%c) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<" + shape + "xf32>) -> tensor<" + full + "xf32>\n" +
		"    %r = stablehlo.slice %f [0:8, 0:2] : (tensor<" + full + "xf32>) -> tensor<8x2xf32>\n    return %r : tensor<8x2xf32>\n"
}

// customCallCases: custom calls to targets XLA interprets itself, with attributes or operands
// of a kind XLA does not check before using them (each killed the process: a segfault for
// mhlo.topk's k, an abort in sharding_remover.cc for the operand counts, aborts in
// hlo_sharding.cc, spmd_partitioner.cc and custom_call_handler.cc for a manual Sharding or an
// SPMDShardToFullShape on a value that is not manual, or whose operand and result give each
// device different shapes).
func customCallCases() []*hcase {
	topk := func(k string) string {
		return strings.Replace(module8("", "%arg0: tensor<8xf32>", "    %0:2 = stablehlo.custom_call @mhlo.topk(%arg0) {mhlo.attributes = {k = "+k+
			", largest = true}} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi32>)\n    return %0#0 : tensor<2xf32>\n"), "-> tensor<8x2xf32>", "-> tensor<2xf32>", 1)
	}
	twoOperands := func(target string) string {
		return module8("", arg8x2, "    %0 = stablehlo.custom_call @"+target+"(%arg0, %arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")
	}
	unsupported := func(name, text string) *hcase {
		return checked(name, classPrograms, text, "mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp)
	}
	return []*hcase{
		unsupported("custom_call @mhlo.topk with k a string", topk(`"2"`)),
		unsupported("custom_call @mhlo.topk with k a float", topk("2.0 : f32")),
		unsupported("custom_call @mhlo.topk with largest a string", strings.Replace(topk("2"), "largest = true", `largest = "yes"`, 1)),
		unsupported("custom_call @mhlo.topk in the generic form with k a string", strings.Replace(strings.Replace(topk(`"2"`),
			"stablehlo.custom_call @mhlo.topk(%arg0)", `"stablehlo.custom_call"(%arg0) <{call_target_name = "mhlo.topk"}>`, 1), "-> tensor<8x2xf32>", "", 1)),
		unsupported("custom_call @Sharding with two operands", twoOperands("Sharding")),
		unsupported("custom_call @SPMDFullToShardShape with two operands", twoOperands("SPMDFullToShardShape")),
		unsupported("custom_call @SPMDShardToFullShape with two operands", twoOperands("SPMDShardToFullShape")),
		unsupported("custom_call @xla.sdy.FuncResultSharding with two operands", twoOperands("xla.sdy.FuncResultSharding")),
		unsupported("custom_call @annotate_device_placement without a placement", module8("", arg8x2,
			"    %0 = stablehlo.custom_call @annotate_device_placement(%arg0) {has_side_effect = true} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("composite chlo.top_k with k a string", strings.Replace(module8(
			"  func.func private @impl(%x: tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi32>) {\n    %0 = stablehlo.slice %x [0:2] : (tensor<8xf32>) -> tensor<2xf32>\n    %1 = stablehlo.constant dense<0> : tensor<2xi32>\n    return %0, %1 : tensor<2xf32>, tensor<2xi32>\n  }\n",
			"%arg0: tensor<8xf32>", "    %0:2 = stablehlo.composite \"chlo.top_k\" %arg0 {composite_attributes = {k = \"2\", largest = true}, decomposition = @impl, version = 1 : i32} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi32>)\n    return %0#0 : tensor<2xf32>\n"),
			"-> tensor<8x2xf32>", "-> tensor<2xf32>", 1)),
		unsupported("custom_call @mhlo.erf with a misspelt mhlo.attributes on 8 partitions", module8(`  sdy.mesh @mesh = <["x"=8]>`+"\n", arg8x2,
			"    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"mhlo.erf\"}> {mhlo.attbibutes = {}, mhlo.version = 1 : i64} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("custom_call @SPMDFullToShardShape with a replicated sharding on 8 partitions", module8(`  sdy.mesh @mesh = <["x"=8]>`+"\n", arg8x2,
			"    %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("custom_call @xla.sdy.FuncResultSharding with a junk sharding on 8 partitions", module8(`  sdy.mesh @mesh = <["x"=8]>`+"\n", arg8x2,
			"    %0 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%arg0) {mhlo.frontend_attributes = {xla.sdy.sharding = \"junk<\"}} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("custom_call @xla.sdy.GlobalToLocalShape outside a round-trip module on 8 partitions", module8(`  sdy.mesh @mesh = <["x"=8]>`+"\n", arg8x2,
			"    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("custom_call @Sharding {manual} on a full argument, used, on 8 partitions", module8(mesh8, arg8x2, manualOn("%arg0", "{manual}"))),
		unsupported("custom_call @Sharding partly manual on a full argument, used, on 8 partitions", module8(mesh8, arg8x2,
			manualOn("%arg0", "{devices=[4,1,2]<=[8] last_tile_dims={manual}}"))),
		unsupported("custom_call @Sharding {manual} in the generic form on a full argument on 8 partitions", module8(mesh8, arg8x2,
			"    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"Sharding\"}> {\"mhlo.sharding\" = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
				"    %1 = stablehlo.add %0, %0 : tensor<8x2xf32>\n    return %1 : tensor<8x2xf32>\n")),
		unsupported("custom_call @Sharding {manual} after SPMDShardToFullShape on 8 partitions", module8(mesh8, arg8x2,
			"    %s = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
				"    %m = stablehlo.custom_call @SPMDFullToShardShape(%s) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<1x2xf32>\n"+
				"    %f = stablehlo.custom_call @SPMDShardToFullShape(%m) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<1x2xf32>) -> tensor<8x2xf32>\n"+
				manualOn("%f", "{manual}"))),
		unsupported("custom_call @Sharding {manual} in a body called with a full value on 8 partitions", module8(mesh8+
			"  func.func private @shmap_body(%arg0: tensor<8x2xf32>) -> tensor<8x2xf32> {\n"+manualOn("%arg0", "{manual}")+"  }\n", arg8x2,
			"    %0 = call @shmap_body(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("custom_call @SPMDShardToFullShape on a full argument on 8 partitions", module8(mesh8, arg8x2,
			"    %0 = stablehlo.custom_call @SPMDShardToFullShape(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
		unsupported("custom_call @SPMDFullToShardShape of the wrong shape on 8 partitions", module8(mesh8, arg8x2,
			shardOf("%arg0", "{devices=[8,1]<=[8]}")+toShard("%s", "2x2")+fromShard("%m", "2x2", "16x2"))),
		unsupported("custom_call @SPMDShardToFullShape of the wrong shape on 8 partitions", module8(mesh8, arg8x2,
			shardOf("%arg0", "{devices=[8,1]<=[8]}")+toShard("%s", "1x2")+fromShard("%m", "1x2", "16x2"))),
		unsupported("custom_call @SPMDFullToShardShape on a tiled argument on 8 partitions", module8(mesh8,
			`%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}`, toShard("%arg0", "8x2")+fromShard("%m", "8x2", "8x2"))),
		unsupported("custom_call to an mhlo target XLA has no rule for", module8("", arg8x2,
			"    %0 = stablehlo.custom_call @mhlo.frobnicate(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n")),
	}
}

// bytecodeArtifacts returns the hostile jax.export artifacts of testdata/bytecode_artifacts.json
// (written by gen_bytecode_artifacts.py): the oracle's "misc" artifact with its module replaced
// by the bytecode of a module the text path refuses.
func bytecodeArtifacts(h *H) map[string][]byte {
	raw, err := os.ReadFile(filepath.Join("testdata", "bytecode_artifacts.json"))
	h.Must(err)
	var f struct{ Artifacts map[string]string }
	h.Must(json.Unmarshal(raw, &f))
	out := map[string][]byte{}
	for name, s := range f.Artifacts {
		b, err := base64.StdEncoding.DecodeString(s)
		h.Must(err)
		out[name] = b
	}
	return out
}

// bytecodeClasses are the module classes of bytecodeArtifacts and the mlir sentinel each must
// be refused with.
var bytecodeClasses = []struct {
	artifact, sentinel string
	err                error
	cl                 class
}{
	{"self-recursive function", "mlir.ErrRecursion", mlir.ErrRecursion, classPrograms},
	{"tensor size overflow", "mlir.ErrTensorSize", mlir.ErrTensorSize, classPrograms},
	{"sdy axis name with an escape", "mlir.ErrName", mlir.ErrName, classNames},
	{"sdy axis name with non-ASCII bytes", "mlir.ErrName", mlir.ErrName, classNames},
	{"infeed", "mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp, classHangs},
	{"topk with a string k", "mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp, classPrograms},
	{"Sharding with two operands", "mlir.ErrUnsupportedOp", mlir.ErrUnsupportedOp, classPrograms},
}

// bytecodeCompileCases compiles the module of each hostile artifact as jit.FromExported does
// (its bytecode, for the artifact's 8 devices): the bytecode is read as text and checked
// before XLA sees it.
func bytecodeCompileCases() []*hcase {
	var cases []*hcase
	for _, bc := range bytecodeClasses {
		cases = append(cases, &hcase{
			name: "Client.Compile: a jax.export module in bytecode: " + bc.artifact, class: bc.cl, entry: "pjrt Compile", group: "compile",
			want: is("pjrt.ErrCompile", pjrt.ErrCompile, bc.sentinel, bc.err), as: as[*mlir.Error]("*mlir.Error"),
			run: func(h *H) error {
				e, err := jaxexport.Read(bytecodeArtifacts(h)[bc.artifact])
				h.Must(err)
				exe, err := h.Client().Compile(string(e.Module()), pjrt.CompileOptions{DeviceAssignment: ids(h.Client(), e.NrDevices())})
				if err == nil {
					exe.Close()
				}
				return err
			},
		})
	}
	return cases
}

// otherCPUPlugin is the pinned CPU plugin the child's default client does not run.
func otherCPUPlugin() (string, error) { return pjrttest.OtherCPUPlugin() }
