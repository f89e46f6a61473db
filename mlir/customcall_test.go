package mlir

import (
	"errors"
	"strings"
	"testing"
)

// ccModule is a module whose @main runs one custom call (or any body) on a 4x8 argument.
func ccModule(result, body string) string {
	return "module @m attributes {mhlo.num_partitions = 1 : i32} {\n  func.func @main(%arg0: tensor<4x8xf32>) -> " + result + " {\n" + body + "  }\n}\n"
}

func topkModule(attrs string) string {
	return ccModule("tensor<4x2xf32>", "    %0:2 = stablehlo.custom_call @mhlo.topk(%arg0) "+attrs+
		" : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)\n    return %0#0 : tensor<4x2xf32>\n")
}

func unaryModule(target, attrs string) string {
	return ccModule("tensor<4x8xf32>", "    %0 = stablehlo.custom_call @"+target+"(%arg0) "+attrs+
		" : (tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n")
}

func binaryModule(target, attrs string) string {
	return ccModule("tensor<4x8xf32>", "    %0 = stablehlo.custom_call @"+target+"(%arg0, %arg0) "+attrs+
		" : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n")
}

// fullToShardModule makes a Sharding call's result manual with an SPMDFullToShardShape call of
// the given attributes, as JAX does (XLA takes the operand's sharding from the Sharding call).
func fullToShardModule(attrs string) string {
	return ccModule("tensor<4x8xf32>", "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"+
		"    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) "+attrs+" : (tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %1 : tensor<4x8xf32>\n")
}

// TestCustomCallAccepted: the custom calls JAX and xlamesh write pass.
func TestCustomCallAccepted(t *testing.T) {
	for name, text := range map[string]string{
		"topk":                   topkModule("{mhlo.attributes = {k = 2 : i64, largest = true}, mhlo.version = 1 : i64}"),
		"topk untyped k":         topkModule("{mhlo.attributes = {k = 2}}"),
		"erf as JAX exports it":  unaryModule("mhlo.erf", "{mhlo.attributes = {}, mhlo.version = 1 : i64}"),
		"Sharding":               unaryModule("Sharding", `{mhlo.sharding = "{replicated}"}`),
		"full to shard":          fullToShardModule(`{backend_config = "", mhlo.sharding = "{manual}"}`),
		"partly manual":          fullToShardModule(`{mhlo.sharding = "{devices=[1,1,1]<=[1] last_tile_dims={manual}}"}`),
		"func result, escaped":   unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}]>]>"}}`),
		"func result sharding":   unaryModule("xla.sdy.FuncResultSharding", `{has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>"}}`),
		"device placement":       unaryModule("annotate_device_placement", `{has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}}`),
		"a target XLA looks up":  binaryModule("my_ffi_kernel", `{api_version = 4 : i32, backend_config = {alpha = 1.0 : f32}}`),
		"generic form":           ccModule("tensor<4x8xf32>", "    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"mhlo.erf\"}> {mhlo.attributes = {}, mhlo.version = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n"),
		"generic Sharding":       ccModule("tensor<4x8xf32>", "    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"Sharding\"}> {mhlo.sharding = \"{replicated}\"} : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(#loc)\n    return %0 : tensor<4x8xf32>\n"),
		"no results":             ccModule("tensor<4x8xf32>", "    stablehlo.custom_call @xla.sdy.ShardingGroup(%arg0) {has_side_effect = true} : (tensor<4x8xf32>) -> ()\n    return %arg0 : tensor<4x8xf32>\n"),
		"token result":           ccModule("tensor<4x8xf32>", "    %0 = stablehlo.custom_call @foo(%arg0) : (tensor<4x8xf32>) -> !stablehlo.token\n    return %arg0 : tensor<4x8xf32>\n"),
		"quoted attribute names": topkModule(`{"mhlo.attributes" = {"k" = 2 : i64}}`),
	} {
		if err := Check(text); err != nil {
			t.Errorf("%s: %v\n%s", name, err, text)
		}
	}
}

// TestCustomCallRefused: each custom call here killed the pinned CPU plugin (segfault or
// abort), or has a shape XLA was never measured on; Check refuses it with ErrUnsupportedOp
// naming the target and the attribute.
func TestCustomCallRefused(t *testing.T) {
	for _, c := range []struct {
		name, text, what, msg string
	}{
		{"topk k a string (segfault)", topkModule(`{mhlo.attributes = {k = "2", largest = true}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.k must be a non-negative integer"},
		{"topk k a float (segfault)", topkModule(`{mhlo.attributes = {k = 2.0 : f32}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.k must be a non-negative integer"},
		{"topk k negative", topkModule(`{mhlo.attributes = {k = -2 : i64}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.k must be a non-negative integer"},
		{"topk k typed as a float", topkModule(`{mhlo.attributes = {k = 2 : f32}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.k must be"},
		{"topk largest a string", topkModule(`{mhlo.attributes = {k = 2, largest = "yes"}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.largest must be true or false"},
		{"topk without k", topkModule(`{mhlo.attributes = {largest = true}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.k is missing"},
		{"topk without attributes", topkModule(""), `custom_call "mhlo.topk"`, "attribute mhlo.attributes is missing"},
		{"topk attributes not a dictionary", topkModule(`{mhlo.attributes = 3 : i64}`), `custom_call "mhlo.topk"`, "attribute mhlo.attributes must be a dictionary"},
		{"topk unknown attribute", topkModule(`{mhlo.attributes = {k = 2, sorted = true}}`), `custom_call "mhlo.topk"`, "mhlo.attributes.sorted: an attribute XLA does not expect"},
		{"topk version a string", topkModule(`{mhlo.attributes = {k = 2}, mhlo.version = "1"}`), `custom_call "mhlo.topk"`, "attribute mhlo.version must be an integer"},
		{"erf with attributes", unaryModule("mhlo.erf", `{mhlo.attributes = {x = "y"}}`), `custom_call "mhlo.erf"`, "mhlo.attributes.x: an attribute XLA does not expect"},
		{"erf with two operands", binaryModule("mhlo.erf", `{mhlo.attributes = {}}`), `custom_call "mhlo.erf"`, "2 operands; XLA needs exactly 1"},
		{"Sharding with two operands (abort)", binaryModule("Sharding", `{mhlo.sharding = "{replicated}"}`), `custom_call "Sharding"`, "2 operands; XLA needs exactly 1"},
		{"Sharding with no operand (abort)", ccModule("tensor<4x8xf32>", "    %0 = stablehlo.custom_call @Sharding() {mhlo.sharding = \"{replicated}\"} : () -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n"), `custom_call "Sharding"`, "0 operands"},
		{"Sharding with a number", unaryModule("Sharding", `{mhlo.sharding = 3 : i64}`), `custom_call "Sharding"`, "attribute mhlo.sharding must be a string"},
		{"full to shard with two operands (abort)", binaryModule("SPMDFullToShardShape", `{mhlo.sharding = "{manual}"}`), `custom_call "SPMDFullToShardShape"`, "2 operands"},
		{"shard to full with two operands (abort)", binaryModule("SPMDShardToFullShape", `{mhlo.sharding = "{replicated}"}`), `custom_call "SPMDShardToFullShape"`, "2 operands"},
		{"func result sharding with two operands (abort)", binaryModule("xla.sdy.FuncResultSharding", ""), `custom_call "xla.sdy.FuncResultSharding"`, "2 operands"},
		{"sharding group with two operands (abort)", ccModule("tensor<4x8xf32>", "    stablehlo.custom_call @xla.sdy.ShardingGroup(%arg0, %arg0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> ()\n    return %arg0 : tensor<4x8xf32>\n"), `custom_call "xla.sdy.ShardingGroup"`, "2 operands"},
		{"frontend attributes not strings", unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {xla.sdy.sharding = 3 : i64}}`), `custom_call "xla.sdy.FuncResultSharding"`, "attribute mhlo.frontend_attributes must be a dictionary of strings"},
		{"placement a number", unaryModule("annotate_device_placement", `{mhlo.frontend_attributes = {_xla_buffer_placement = "5"}}`), `custom_call "annotate_device_placement"`, `_xla_buffer_placement "5"`},
		{"placement missing", unaryModule("annotate_device_placement", `{has_side_effect = true}`), `custom_call "annotate_device_placement"`, "attribute mhlo.frontend_attributes is missing"},
		{"unknown mhlo target", unaryModule("mhlo.frobnicate", ""), `custom_call "mhlo.frobnicate"`, "a target of XLA's own mhlo family"},
		{"unknown xla.sdy target", unaryModule("xla.sdy.Frob", ""), `custom_call "xla.sdy.Frob"`, "xla.sdy family"},
		{"ragged dot", unaryModule("chlo.ragged_dot", ""), `custom_call "chlo.ragged_dot"`, "ragged dot"},
		{"generic topk k a string", ccModule("tensor<4x2xf32>", "    %0:2 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"mhlo.topk\"}> {mhlo.attributes = {k = \"2\"}} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)\n    return %0#0 : tensor<4x2xf32>\n"), `custom_call "mhlo.topk"`, "mhlo.attributes.k must be"},
		{"erf without mhlo.attributes", unaryModule("mhlo.erf", "{mhlo.version = 1 : i64}"), `custom_call "mhlo.erf"`, "attribute mhlo.attributes is missing"},
		{"erf with a misspelt attribute (segfault on 8 partitions)", unaryModule("mhlo.erf", "{mhlo.attbibutes = {}, mhlo.attributes = {}, mhlo.version = 1 : i64}"), `custom_call "mhlo.erf"`, `attribute "mhlo.attbibutes": XLA would not rebuild`},
		{"sinh with a name of bytes", unaryModule("mhlo.sinh", `{mhlo.attributes = {}, "mhlo.versio\FE" = 1 : i64}`), `custom_call "mhlo.sinh"`, `attribute "mhlo.versio\FE"`},
		{"cosh with has_side_effect", unaryModule("mhlo.cosh", `{has_side_effect = true, mhlo.attributes = {}}`), `custom_call "mhlo.cosh"`, `attribute "has_side_effect"`},
		{"topk with a backend config", topkModule(`{backend_config = "x", mhlo.attributes = {k = 2}}`), `custom_call "mhlo.topk"`, `attribute backend_config must be "" or {}`},
		{"full to shard not manual (abort)", unaryModule("SPMDFullToShardShape", `{mhlo.sharding = "{replicated}"}`), `custom_call "SPMDFullToShardShape"`, "is not manual"},
		{"full to shard without a sharding (abort)", unaryModule("SPMDFullToShardShape", ""), `custom_call "SPMDFullToShardShape"`, "attribute mhlo.sharding is missing"},
		{"global to local (abort)", unaryModule("xla.sdy.GlobalToLocalShape", ""), `custom_call "xla.sdy.GlobalToLocalShape"`, "round-trip shard_map"},
		{"local to global (abort)", unaryModule("xla.sdy.LocalToGlobalShape", ""), `custom_call "xla.sdy.LocalToGlobalShape"`, "round-trip shard_map"},
		{"func result sharding, junk (segfault)", unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {xla.sdy.sharding = "junk<"}}`), `custom_call "xla.sdy.FuncResultSharding"`, "is not a #sdy.sharding_per_value"},
		{"func result sharding, none (segfault)", unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {foo = "bar"}}`), `custom_call "xla.sdy.FuncResultSharding"`, "xla.sdy.sharding is missing"},
		{"func result sharding, empty list (segfault)", unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[]>"}}`), `custom_call "xla.sdy.FuncResultSharding"`, "is not a #sdy.sharding_per_value"},
		{"func result sharding, not per value (segfault)", unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}]>"}}`), `custom_call "xla.sdy.FuncResultSharding"`, "is not a #sdy.sharding_per_value"},
		{"func result sharding, two (segfault)", unaryModule("xla.sdy.FuncResultSharding", `{mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{}]>]>"}}`), `custom_call "xla.sdy.FuncResultSharding"`, "is not a #sdy.sharding_per_value"},
		{"unreadable custom call", ccModule("tensor<4x8xf32>", "    %0 = stablehlo.custom_call @foo(%arg0) [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n"), "custom_call", "cannot read its operands, attributes and type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.text)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrUnsupportedOp) {
				t.Fatalf("got %v, want ErrUnsupportedOp\n%s", err, c.text)
			}
			if e.What != c.what || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("got %q %q, want %q %q", e.What, e.Msg, c.what, c.msg)
			}
			if l, col := Position(c.text, e.Off); e.Line != l || e.Col != col || e.Off < 0 {
				t.Errorf("position %d:%d, offset %d", e.Line, e.Col, e.Off)
			}
		})
	}
}

func compositeModule(name, attrs, version string) string {
	return ccModule("tensor<4x2xf32>", "    %0:2 = stablehlo.composite \""+name+"\" %arg0 {composite_attributes = "+attrs+
		", decomposition = @impl, version = "+version+"} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)\n    return %0#0 : tensor<4x2xf32>\n")
}

// TestComposite: a composite XLA recomposes into a CHLO op (chlo.top_k at version 1) must
// carry that op's attributes; k a string or a float segfaulted the pinned CPU plugin.
func TestComposite(t *testing.T) {
	for name, text := range map[string]string{
		"top_k":                         compositeModule("chlo.top_k", "{k = 2 : i64, largest = true}", "1 : i32"),
		"top_k version 2":               compositeModule("chlo.top_k", `{k = "2"}`, "2 : i32"), // not recomposed: decomposed
		"a composite of its own":        compositeModule("my.op", `{k = "2", anything = [1, 2]}`, "1 : i32"),
		"generic top_k":                 ccModule("tensor<4x2xf32>", "    %0:2 = \"stablehlo.composite\"(%arg0) <{composite_attributes = {k = 2 : i64}, decomposition = @impl, name = \"chlo.top_k\", version = 1 : i32}> : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)\n    return %0#0 : tensor<4x2xf32>\n"),
		"two operands, a result number": ccModule("tensor<4x8xf32>", "    %0 = stablehlo.composite \"my.add\" %arg0, %1#0 {decomposition = @impl} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n"),
	} {
		if err := Check(text); err != nil {
			t.Errorf("%s: %v\n%s", name, err, text)
		}
	}
	for _, c := range []struct{ name, text, what, msg string }{
		{"k a string", compositeModule("chlo.top_k", `{k = "2", largest = true}`, "1 : i32"), `composite "chlo.top_k"`, "composite_attributes.k must be a non-negative integer"},
		{"k a float", compositeModule("chlo.top_k", `{k = 2.0 : f32}`, "1 : i32"), `composite "chlo.top_k"`, "composite_attributes.k must be"},
		{"no k", compositeModule("chlo.top_k", `{}`, "1 : i32"), `composite "chlo.top_k"`, "composite_attributes.k is missing"},
		{"generic k a string", ccModule("tensor<4x2xf32>", "    %0:2 = \"stablehlo.composite\"(%arg0) <{composite_attributes = {k = \"2\"}, decomposition = @impl, name = \"chlo.top_k\", version = 1 : i32}> : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)\n    return %0#0 : tensor<4x2xf32>\n"),
			`composite "chlo.top_k"`, "composite_attributes.k must be"},
		{"erf with an attribute", ccModule("tensor<4x8xf32>", "    %0 = stablehlo.composite \"chlo.erf\" %arg0 {composite_attributes = {x = 1}, decomposition = @impl, version = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n    return %0 : tensor<4x8xf32>\n"),
			`composite "chlo.erf"`, "composite_attributes.x: an attribute XLA does not expect"},
	} {
		err := Check(c.text)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrUnsupportedOp) || e.What != c.what || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: got %v, want %s: ...%s", c.name, err, c.what, c.msg)
		}
	}
}
