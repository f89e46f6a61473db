package mlir

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// module wraps a @main body (and extra top-level ops) in a module for 8 partitions.
func module(extra, args, body string) string {
	return `module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
` + extra + `  func.func public @main(` + args + `) -> tensor<8x2xf32> {
` + body + `  }
}
`
}

const goodBody = "    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"

const arg = "%arg0: tensor<8x2xf32>"

func TestCheckAccepts(t *testing.T) {
	tests := map[string]string{
		"seed": module(`  sdy.mesh @mesh = <["x"=4, "y"=2]>`+"\n", `%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}`, goodBody),
		"names of every accepted class": module(`  sdy.mesh @"m e-s.h$" = <["a b"=2, "\22q"=2, "{}[]<>()=,:"=2]>`+"\n",
			`%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@"m e-s.h$", [{"a b", "\22q"}, {"{}[]<>()=,:"}]>}`, goodBody),
		"gspmd": module("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}", jax.arg_info = "x"}`,
			"    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dim_replicate}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
		"manual sharding inside the body": module("", arg,
			"    %s = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
				"    %0 = stablehlo.custom_call @SPMDFullToShardShape(%s) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
		"calls without a cycle": module(`  func.func private @g(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    return %x : tensor<8x2xf32>
  }
  func.func private @f(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = func.call @g(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    %1 = call @g(%0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
`, arg, "    %0 = func.call @f(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    %1 = func.call @g(%0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %1 : tensor<8x2xf32>\n"),
		"a custom call named like a function": module(`  func.func private @f(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = stablehlo.custom_call @f(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
`, arg, "    %0 = func.call @f(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
		"strings and comments are not code": module(`  // func.func private @f() { func.call @f() } "stablehlo.infeed"( tensor<99999999999999999999xf32>
`, `%arg0: tensor<8x2xf32> {jax.arg_info = "stablehlo.infeed( @main(\\ tensor<4611686018427387904xf32> \22x\22=4 {manual}"}`, goodBody),
		"largest tensor":       module("", "%arg0: tensor<8x2xf32>, %big: tensor<2305843009213693951xf32>, %dyn: tensor<?x4xf32>, %enc: tensor<8xf32, #enc>, %c: tensor<4xcomplex<f64>>", goodBody),
		"regions at the limit": nestedRegions(MaxRegionDepth - 2), // module and @main are two
		"types at the limit":   module("", "%arg0: tensor<8x2xf32>, %t: "+strings.Repeat("tuple<", MaxTypeDepth-1)+"tensor<f32>"+strings.Repeat(">", MaxTypeDepth-1), goodBody),
		"empty":                "",
		"file metadata":        module("", arg, goodBody) + "{-#\n  dialect_resources: {\n    builtin: {\n      r: \"0x0400\"\n    }\n  }\n#-}\n",
		"generic func.func": `"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "main"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
`,
	}
	for name, text := range tests {
		if err := Check(text, Partitions(8)); err != nil {
			t.Errorf("%s: %v\n%s", name, err, text)
		}
	}
}

// nestedRegions returns a module whose innermost stablehlo.case region is depth regions
// below @main's body.
func nestedRegions(depth int) string {
	body := `"stablehlo.return"(%arg0) : (tensor<8x2xf32>) -> ()`
	for d := 1; d <= depth; d++ {
		body = fmt.Sprintf("%%r%d = \"stablehlo.case\"(%%i) ({\n%s\n}) : (tensor<i32>) -> tensor<8x2xf32>\n\"stablehlo.return\"(%%r%d) : (tensor<8x2xf32>) -> ()", d, body, d)
	}
	body = body[:strings.LastIndex(body, `"stablehlo.return"`)] + fmt.Sprintf("return %%r%d : tensor<8x2xf32>\n", depth)
	return module("", "%i: tensor<i32>, "+arg, body)
}

func TestCheckRejects(t *testing.T) {
	tests := []struct {
		name, text string
		kind       error
		line, col  int
		what, msg  string
	}{
		{"syntax", module("", arg, "    %0 = \"unterminated\n"), ErrSyntax, 3, 10, "", "unterminated string literal"},
		{"regions too deep", nestedRegions(MaxRegionDepth - 1), ErrNesting, 65, 29, "", "regions nest deeper than 64"},
		{"types too deep", module("", "%t: "+strings.Repeat("tuple<", MaxTypeDepth+1)+"tensor<f32>"+strings.Repeat(">", MaxTypeDepth+1), goodBody),
			ErrNesting, 2, 419, "", "types and attributes nest deeper than 64"},
		{"10,000-deep type", module("", "%t: "+strings.Repeat("tuple<", 10000)+"tensor<f32>"+strings.Repeat(">", 10000), goodBody),
			ErrNesting, 2, 419, "", "types and attributes nest deeper than 64"},
		{"axis with a backslash", module(`  sdy.mesh @mesh = <["a\\b"=8]>`+"\n", arg, goodBody), ErrName, 2, 22, `axis "a\\b"`, "byte 1 is a backslash"},
		{"axis outside ASCII", module(`  sdy.mesh @mesh = <["\C3\A9"=8]>`+"\n", arg, goodBody), ErrName, 2, 22, `axis "\C3\A9"`, "byte 0 is 0xC3, outside ASCII"},
		{"raw UTF-8 axis", module(`  sdy.mesh @mesh = <["é"=8]>`+"\n", arg, goodBody), ErrName, 2, 22, `axis "\C3\A9"`, "outside ASCII"},
		{"inline mesh axis", module("", `%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<mesh<["x\0A"=8]>, [{}, {}]>}`, goodBody), ErrName, 2, 85, `axis "x\0A"`, "the control byte 0x0A"},
		{"old mesh form", module(`  sdy.mesh @mesh = <"a\\"=8>`+"\n", arg, goodBody), ErrName, 2, 21, `axis "a\\"`, "backslash"},
		{"mesh symbol", module(`  sdy.mesh @"m\\" = <["x"=8]>`+"\n", arg, goodBody), ErrName, 2, 12, `symbol "m\\"`, "backslash"},
		{"module name", strings.Replace(module("", arg, goodBody), "@m ", `@"\FF" `, 1), ErrName, 1, 8, `symbol "\FF"`, "0xFF"},
		{"empty function name", module(`  func.func private @""() {
    return
  }
`, arg, goodBody), ErrName, 2, 21, `symbol ""`, "the name is empty"},
		{"self recursion", module(`  func.func private @f(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = func.call @f(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
`, arg, "    %0 = func.call @f(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
			ErrRecursion, 3, 20, "@f", "@f calls @f; XLA cannot compile recursion"},
		{"indirect recursion", module(`  func.func private @"f-1"(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = call @g(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
  func.func private @g(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = func.call @h(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
  func.func private @h(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %0 = func.call @"f-1"(%x) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
`, arg, "    %0 = func.call @\"f-1\"(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
			ErrRecursion, 3, 15, `@"f-1"`, `@"f-1" calls @g calls @h calls @"f-1"`},
		{"public recursion", module("", arg, "    %0 = func.call @main(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
			ErrRecursion, 3, 20, "@main", "@main calls @main"},
		{"generic recursion", `"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "f"}> ({
    "func.call"() <{callee = @f}> : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
`, ErrRecursion, 3, 30, "@f", "@f calls @f"},
		{"element count", module("", "%arg0: tensor<8x2xf32>, %t: tensor<4294967296x4294967296xf32>", goodBody), ErrTensorSize, 2, 72,
			"tensor<4294967296x4294967296xf32>", "the element count overflows int64 at dimension 4294967296"},
		{"byte size", module("", "%t: tensor<4611686018427387904xf32>", goodBody), ErrTensorSize, 2, 30,
			"tensor<4611686018427387904xf32>", "4611686018427387904 elements of 4 bytes overflow int64 bytes"},
		{"unknown element type", module("", "%t: tensor<1152921504606846976x!quant.any>", goodBody), ErrTensorSize, 2, 30,
			"tensor<1152921504606846976x!quant.any>", "of 16 bytes"},
		{"dimension too large", module("", "%t: tensor<99999999999999999999xf32>", goodBody), ErrTensorSize, 2, 37,
			"tensor<99999999999999999999xf32>", "dimension 99999999999999999999 does not fit int64"},
		{"tensor in a body", module("", arg, "    %0 = stablehlo.iota dim = 0 : tensor<3037000500x3037000500xi8>\n"+goodBody), ErrTensorSize, 3, 53,
			"tensor<3037000500x3037000500xi8>", "overflows"},
		{"num_partitions against devices", module("", arg, goodBody), ErrPartitions, 1, 23, "mhlo.num_partitions",
			"the module is annotated for 8 partitions but is compiled for 1 device; pass a device assignment of 8 devices"},
		{"num_partitions 0", strings.Replace(module("", arg, goodBody), "= 8 :", "= 0 :", 1), ErrPartitions, 1, 23, "mhlo.num_partitions", "0 partitions, want >= 1"},
		{"num_partitions -1", strings.Replace(module("", arg, goodBody), "= 8 :", "= -1 :", 1), ErrPartitions, 1, 23, "mhlo.num_partitions", "-1 partitions, want >= 1"},
		{"num_replicas", strings.Replace(module("", arg, goodBody), "num_replicas = 1", "num_replicas = 2", 1), ErrPartitions, 1, 54, "mhlo.num_replicas", "2 replicas"},
		{"num_replicas 0", strings.Replace(module("", arg, goodBody), "num_replicas = 1", "num_replicas = 0", 1), ErrPartitions, 1, 54, "mhlo.num_replicas", "asks for 0 replicas"},
		{"num_replicas -1", strings.Replace(module("", arg, goodBody), "num_replicas = 1", "num_replicas = -1", 1), ErrPartitions, 1, 54, "mhlo.num_replicas", "asks for -1 replicas"},
		{"unparsable sharding", module("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,2]<=[4,2]}"}`, goodBody), ErrSharding, 2, 66,
			`"{devices=[4,2]<=[4,2]}"`, "expected 'T(' after an iota tile assignment"},
		{"sharding for other devices", module("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}`, goodBody), ErrSharding, 2, 66,
			`"{devices=[2,1]0,1}"`, "has 2 devices, for 8 partitions"},
		{"manual argument", module("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dims={manual}}"}`, goodBody), ErrSharding, 2, 66,
			`"{devices=[2,1,4]<=[8] last_tile_dims={manual}}"`, "an argument of @main cannot have a manual sharding"},
		{"infeed", module("", "%t: !stablehlo.token", "    %0:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<8x2xf32>, !stablehlo.token)\n    return %0#0 : tensor<8x2xf32>\n"),
			ErrUnsupportedOp, 3, 12, "stablehlo.infeed", "the runtime cannot serve it"},
		{"outfeed", module("", arg, "    %0 = stablehlo.outfeed %arg0, %t : (tensor<8x2xf32>, !stablehlo.token) -> !stablehlo.token\n"+goodBody),
			ErrUnsupportedOp, 3, 10, "stablehlo.outfeed", "never return"},
		{"send", module("", arg, "    %0 = \"mhlo.send\"(%arg0) : (tensor<8x2xf32>) -> !mhlo.token\n"+goodBody), ErrUnsupportedOp, 3, 10, "mhlo.send", ""},
		{"recv", module("", arg, "    %0:2 = stablehlo.recv(%t) : (!stablehlo.token) -> (tensor<8x2xf32>, !stablehlo.token)\n"+goodBody), ErrUnsupportedOp, 3, 12, "stablehlo.recv", ""},
		{"python callback", module("", arg, "    %0 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) {has_side_effect = true} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+goodBody),
			ErrUnsupportedOp, 3, 32, `custom_call "xla_python_cpu_callback"`, "host callbacks"},
		{"ffi callback, generic", module("", arg, "    %0 = \"stablehlo.custom_call\"(%arg0) <{api_version = 4 : i32, call_target_name = \"xla_ffi_python_cpu_callback\"}> : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+goodBody),
			ErrUnsupportedOp, 3, 85, `custom_call "xla_ffi_python_cpu_callback"`, "host callbacks"},
		{"bytecode", "ML\xefR\x00anything", ErrBytecode, 1, 1, "", "read bytecode as text with mlir/bytecode.ToText"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := []Option{Partitions(8)}
			if tc.name == "num_partitions against devices" {
				opts = []Option{Partitions(1)}
			}
			err := Check(tc.text, opts...)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			if e.Line != tc.line || e.Col != tc.col || e.What != tc.what || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got %d:%d %q %q, want %d:%d %q %q", e.Line, e.Col, e.What, e.Msg, tc.line, tc.col, tc.what, tc.msg)
			}
			if l, c := Position(tc.text, e.Off); l != e.Line || c != e.Col {
				t.Errorf("offset %d is %d:%d", e.Off, l, c)
			}
		})
	}
}

// TestCheckPartitionsFromModule: without Partitions, tile assignments are checked against
// the module's own mhlo.num_partitions.
func TestCheckPartitionsFromModule(t *testing.T) {
	text := module("", `%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}`, goodBody)
	if err := Check(text); !errors.Is(err, ErrSharding) {
		t.Errorf("got %v", err)
	}
	if err := Check(strings.Replace(text, "= 8 :", "= 2 :", 1)); err != nil {
		t.Errorf("got %v", err)
	}
	if err := Check(strings.Replace(text, "mhlo.num_partitions = 8 : i32, ", "", 1)); err != nil {
		t.Errorf("no partition count known: %v", err)
	}
}

// BenchmarkCheck checks a module of 10,000 ops (about 700 KB).
func BenchmarkCheck(b *testing.B) {
	var body strings.Builder
	body.WriteString("    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xf32>\n")
	for i := 1; i < 10000; i++ {
		fmt.Fprintf(&body, "    %%%d = \"stablehlo.multiply\"(%%%d, %%arg0) {mhlo.sharding = \"{devices=[4,2]<=[8]}\"} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>\n", i, i-1)
	}
	body.WriteString("    return %9999 : tensor<8x2xf32>\n")
	text := module("", arg, body.String())
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if err := Check(text, Partitions(8)); err != nil {
			b.Fatal(err)
		}
	}
}
