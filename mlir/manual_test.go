package mlir

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// manualModule is a module for 8 partitions whose @main takes an 8x2 argument and runs body;
// extra is more functions.
func manualModule(extra, body string) string {
	return "module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n  sdy.mesh @mesh = <[\"x\"=8]>\n" +
		"  func.func public @main(%arg0: tensor<8x2xf32>) -> tensor<8x2xf32> {\n" + body + "  }\n" + extra + "}\n"
}

const (
	// toManual makes %1, the manual 1x2 shard of %arg0.
	toManual = "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n" +
		"    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<1x2xf32>\n"
	// shmapBody is JAX's shard_map body function.
	shmapBody = "  func.func private @shmap_body(%arg0: tensor<1x2xf32>) -> tensor<1x2xf32> {\n" +
		"    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{manual}\"} : (tensor<1x2xf32>) -> tensor<1x2xf32>\n" +
		"    return %0 : tensor<1x2xf32>\n  }\n"
)

// fromManual makes the full value of the manual 1x2 value v and returns it.
func fromManual(v string) string {
	return "    %m = stablehlo.custom_call @Sharding(" + v + ") {mhlo.sharding = \"{manual}\"} : (tensor<1x2xf32>) -> tensor<1x2xf32>\n" +
		"    %f = stablehlo.custom_call @SPMDShardToFullShape(%m) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<1x2xf32>) -> tensor<8x2xf32>\n" +
		"    return %f : tensor<8x2xf32>\n"
}

// TestManualAccepted: the shard_map patterns JAX and xlamesh write in GSPMD mode pass: a
// manual Sharding call and SPMDShardToFullShape on values computed from SPMDFullToShardShape.
func TestManualAccepted(t *testing.T) {
	for name, text := range map[string]string{
		"shard_map inline":  manualModule("", toManual+"    %2 = stablehlo.add %1, %1 : tensor<1x2xf32>\n"+fromManual("%2")),
		"through a body":    manualModule(shmapBody, toManual+"    %2 = call @shmap_body(%1) : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+fromManual("%2")),
		"body with results": manualModule(strings.Replace(shmapBody, "@shmap_body", "@b", 1), toManual+"    %2:2 = func.call @b2(%1, %1) : (tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)\n"+fromManual("%2#1")+"  }\n  func.func private @b2(%a: tensor<1x2xf32>, %b: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {\n    %0 = call @b(%b) : (tensor<1x2xf32>) -> tensor<1x2xf32>\n    return %a, %0 : tensor<1x2xf32>, tensor<1x2xf32>\n"),
		"mixed with full":   manualModule("", toManual+"    %c = stablehlo.constant dense<1.0> : tensor<1x2xf32>\n    %2 = stablehlo.add %c, %1 : tensor<1x2xf32>\n"+fromManual("%2")),
		"generic form": manualModule("", toManual+
			"    %m = \"stablehlo.custom_call\"(%1) <{call_target_name = \"Sharding\"}> {\"mhlo.sharding\" = \"{manual}\"} : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+
			"    %f = \"stablehlo.custom_call\"(%m) <{call_target_name = \"SPMDShardToFullShape\"}> {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<1x2xf32>) -> tensor<8x2xf32>\n    return %f : tensor<8x2xf32>\n"),
		"captured in a region": manualModule("", toManual+"    %c = stablehlo.constant dense<true> : tensor<i1>\n"+
			"    %2 = \"stablehlo.if\"(%c) ({\n      stablehlo.return %1 : tensor<1x2xf32>\n    }, {\n      %z = stablehlo.constant dense<0.0> : tensor<1x2xf32>\n      stablehlo.return %z : tensor<1x2xf32>\n    }) : (tensor<i1>) -> tensor<1x2xf32>\n"+fromManual("%2")),
		"partly manual": manualModule("", "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dim_replicate}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
			"    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dims={manual}}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
			"    %m = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dims={manual}}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
			"    %f = stablehlo.custom_call @SPMDShardToFullShape(%m) {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dim_replicate}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %f : tensor<8x2xf32>\n"),
		"uneven tiles": strings.ReplaceAll(manualModule("", "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
			"    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<1x2xf32>\n"+fromManual("%1")), "8x2", "7x2"),
		"full Sharding on a full value": manualModule("", "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
	} {
		if err := Check(text, Partitions(8)); err != nil {
			t.Errorf("%s: %v\n%s", name, err, text)
		}
	}
}

// TestManualRefused: each module here killed the pinned CPU plugin on 8 partitions (an abort in
// hlo_sharding.cc "!IsManual()" or custom_call_handler.cc "IsManual()"), or is of the shape that
// did; Check refuses it with ErrUnsupportedOp naming the call and the value.
func TestManualRefused(t *testing.T) {
	const notManual = " is not manual (not computed from an SPMDFullToShardShape result); XLA's SPMD partitioner aborts on it"
	const notSharding = " is not the result of a Sharding call with a manual mhlo.sharding (XLA's SPMD partitioner aborts on other operands)"
	const onArg = `custom_call "Sharding": mhlo.sharding "{manual}" on %arg0, which` + notManual
	use := "    %u = stablehlo.add %0, %0 : tensor<8x2xf32>\n    return %u : tensor<8x2xf32>\n"
	for _, c := range []struct{ name, text, msg string }{
		{"manual Sharding on an argument", manualModule("", "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+use),
			"mlir: 4:42: unsupported op: " + onArg},
		{"manual Sharding on a computed full value", manualModule("", "    %a = stablehlo.add %arg0, %arg0 : tensor<8x2xf32>\n"+
			"    %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+use),
			`mlir: 5:42: unsupported op: custom_call "Sharding": mhlo.sharding "{manual}" on %a, which` + notManual},
		{"shard to full on an argument", manualModule("", "    %0 = stablehlo.custom_call @SPMDShardToFullShape(%arg0) {mhlo.sharding = \"{replicated}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n"),
			`mlir: 4:54: unsupported op: custom_call "SPMDShardToFullShape": operand %arg0` + notSharding},
		{"shard to full without a manual Sharding", manualModule("", toManual+"    %f = stablehlo.custom_call @SPMDShardToFullShape(%1) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<1x2xf32>) -> tensor<8x2xf32>\n    return %f : tensor<8x2xf32>\n"),
			`mlir: 6:54: unsupported op: custom_call "SPMDShardToFullShape": operand %1` + notSharding},
		{"manual again after shard to full", manualModule("", toManual+
			"    %m = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = \"{manual}\"} : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+
			"    %f = stablehlo.custom_call @SPMDShardToFullShape(%m) {mhlo.sharding = \"{devices=[8,1]<=[8]}\"} : (tensor<1x2xf32>) -> tensor<8x2xf32>\n"+
			"    %g = stablehlo.custom_call @Sharding(%f) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+
			"    %u = stablehlo.add %g, %g : tensor<8x2xf32>\n    return %u : tensor<8x2xf32>\n"),
			`mlir: 8:42: unsupported op: custom_call "Sharding": mhlo.sharding "{manual}" on %f, which` + notManual},
		{"full to shard on an argument", manualModule("", "    %1 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<1x2xf32>\n"+fromManual("%1")),
			`mlir: 4:54: unsupported op: custom_call "SPMDFullToShardShape": operand %arg0 is not a Sharding call's result (XLA's SPMD partitioner aborts on other operands)`},
		{"full to shard of the wrong shape", manualModule("", strings.Replace(toManual, "-> tensor<1x2xf32>", "-> tensor<2x2xf32>", 1)+
			strings.ReplaceAll(fromManual("%1"), "1x2", "2x2")),
			`mlir: 5:32: unsupported op: custom_call "SPMDFullToShardShape": each device holds [1 2] of operand %0 but [2 2] of the result; XLA's SPMD partitioner aborts on it`},
		{"shard to full of the wrong shape", manualModule("", toManual+strings.Replace(fromManual("%1"), "-> tensor<8x2xf32>", "-> tensor<16x2xf32>", 1)),
			`mlir: 7:32: unsupported op: custom_call "SPMDShardToFullShape": each device holds [1 2] of operand %m but [2 2] of the result; XLA's SPMD partitioner aborts on it`},
		{"full to shard of an unknown sharding", manualModule("", strings.Replace(toManual, "{devices=[8,1]<=[8]}", "{unknown}", 1)+fromManual("%1")),
			`mlir: 5:54: unsupported op: custom_call "SPMDFullToShardShape": operand %0: its mhlo.sharding "{unknown}" does not fix what each device holds`},
		{"full to shard tiling another rank", manualModule("", strings.Replace(toManual, "{devices=[8,1]<=[8]}", "{devices=[8]<=[8]}", 1)+fromManual("%1")),
			`mlir: 5:54: unsupported op: custom_call "SPMDFullToShardShape": operand %0: its mhlo.sharding "{devices=[8]<=[8]}" tiles 1 dimensions of a rank-2 value`},
		{"a body called with a full value", manualModule(shmapBody, toManual+"    %2 = call @shmap_body(%1) : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+
			"    %s = stablehlo.slice %arg0 [0:1, 0:2] : (tensor<8x2xf32>) -> tensor<1x2xf32>\n    %3 = call @shmap_body(%s) : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+fromManual("%2")),
			`mlir: 14:42: unsupported op: custom_call "Sharding": mhlo.sharding "{manual}" on %arg0, which` + notManual},
		{"values are named per function", manualModule(shmapBody+strings.Replace(shmapBody, "@shmap_body", "@g", 1),
			toManual+"    %2 = call @shmap_body(%1) : (tensor<1x2xf32>) -> tensor<1x2xf32>\n"+fromManual("%2")),
			"mlir: 16:42: unsupported op: " + onArg},
		{"generic form", manualModule("", "    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"Sharding\"}> {\"mhlo.sharding\" = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+use),
			"mlir: 4:34: unsupported op: " + onArg},
		{"partly manual", manualModule("", "    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{devices=[4,1,2]<=[8] last_tile_dims={manual}}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n"+use),
			`mlir: 4:42: unsupported op: custom_call "Sharding": mhlo.sharding "{devices=[4,1,2]<=[8] last_tile_dims={manual}}" on %arg0, which` + notManual},
	} {
		err := Check(c.text, Partitions(8))
		if !errors.Is(err, ErrUnsupportedOp) {
			t.Errorf("%s: got %v, want ErrUnsupportedOp\n%s", c.name, err, c.text)
			continue
		}
		if err.Error() != c.msg {
			t.Errorf("%s:\n got %s\nwant %s", c.name, err, c.msg)
		}
	}
}

// TestManualLinear: the manual-value analysis stays linear on hostile text: 200 nested ops
// over a list of 100,000 uses (105 s before uses were recorded once and result-list lookaheads
// remembered where they ended; 0.4 s after).
func TestManualLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("module @m attributes {mhlo.num_partitions = 8 : i32} {\n  func.func public @main(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {\n")
	b.WriteString(strings.Repeat("%a = stablehlo.foo (", 200) + strings.Repeat("%x, ", 100000) + "%x" + strings.Repeat(")", 200))
	b.WriteString("\n    %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = \"{manual}\"} : (tensor<8x2xf32>) -> tensor<8x2xf32>\n    return %0 : tensor<8x2xf32>\n  }\n}\n")
	start := time.Now()
	err := Check(b.String(), Partitions(8))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Check took %v", d)
	}
	const want = `mlir: 4:42: unsupported op: custom_call "Sharding": mhlo.sharding "{manual}" on %a, which is not manual (not computed from an SPMDFullToShardShape result); XLA's SPMD partitioner aborts on it`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
