package pjrt

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xmlir "github.com/xlamesh/xlamesh/mlir"
)

// TestCheckedProgramMeshAxesGroups: JAX 0.12's psum text keeps its mesh-axes replica groups for a
// plugin of API 0.115 and has them written as dense groups for one of API 0.81.
func TestCheckedProgramMeshAxesGroups(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", "export012.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Programs []struct{ Name, StableHLO string }
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	var text string
	for _, p := range f.Programs {
		if p.Name == "shard_map_psum" {
			text = p.StableHLO
		}
	}
	const attr = `#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "Y">]>`
	if !strings.Contains(text, attr) {
		t.Fatalf("the psum's text lacks %s", attr)
	}
	got, err := checkedProgram(text, 8, MeshAxesReplicaGroupsMinor)
	if err != nil || got != text {
		t.Errorf("API 0.%d: changed the text or failed: %v", MeshAxesReplicaGroupsMinor, err)
	}
	got, err = checkedProgram(text, 8, 81)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(text, attr, `dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>`, 1); got != want {
		t.Errorf("API 0.81: got\n%s", got)
	}
	bad := strings.Replace(text, `"Y"=4]> {stablehlo`, `"Y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]> {stablehlo`, 2)
	if _, err := checkedProgram(bad, 8, 81); !errors.Is(err, ErrCompile) || !errors.Is(err, xmlir.ErrReplicaGroups) {
		t.Errorf("device_ids: err = %v, want ErrCompile and mlir.ErrReplicaGroups", err)
	}
}

// TestTwoBitRefusedOnOldPlugins: a program with 2-bit integer types anywhere is refused, with
// ErrCompile, for plugins older than TwoBitMinor, and passed on for newer ones; 4-bit and
// 32-bit types are not caught.
func TestTwoBitRefusedOnOldPlugins(t *testing.T) {
	prog := func(elem string) string {
		return "module @m {\n  func.func public @main(%arg0: tensor<4x" + elem + ">) -> tensor<4x" + elem + "> {\n" +
			"    return %arg0 : tensor<4x" + elem + ">\n  }\n}\n"
	}
	for _, elem := range []string{"i2", "ui2"} {
		if _, err := checkedProgram(prog(elem), 1, TwoBitMinor-1); !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), "2-bit integers") {
			t.Errorf("%s on API 0.%d: %v", elem, TwoBitMinor-1, err)
		}
		if _, err := checkedProgram(prog(elem), 1, TwoBitMinor); err != nil {
			t.Errorf("%s on API 0.%d: %v", elem, TwoBitMinor, err)
		}
	}
	for _, elem := range []string{"i4", "ui4", "i32", "f32"} {
		if _, err := checkedProgram(prog(elem), 1, 81); err != nil {
			t.Errorf("%s on API 0.81: %v", elem, err)
		}
	}
}

// TestFourBitTransposeRefusedOnOldPlugins: a transpose of a 4-bit type, in the pretty or the
// generic form, is refused with ErrCompile for plugins older than TwoBitMinor and passed on for
// newer ones; a transpose of 8-bit integers and other ops on 4-bit ones are not caught.
func TestFourBitTransposeRefusedOnOldPlugins(t *testing.T) {
	pretty := func(elem string) string {
		return "module @m {\n  func.func public @main(%arg0: tensor<8x4x" + elem + ">) -> tensor<4x8x" + elem + "> {\n" +
			"    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x4x" + elem + ">) -> tensor<4x8x" + elem + ">\n" +
			"    return %0 : tensor<4x8x" + elem + ">\n  }\n}\n"
	}
	generic := func(elem string) string {
		return "module @m {\n  func.func public @main(%arg0: tensor<8x4x" + elem + ">) -> tensor<4x8x" + elem + "> {\n" +
			"    %0 = \"stablehlo.transpose\"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<8x4x" + elem + ">) -> tensor<4x8x" + elem + ">\n" +
			"    return %0 : tensor<4x8x" + elem + ">\n  }\n}\n"
	}
	negate := "module @m {\n  func.func public @main(%arg0: tensor<8x4xi4>) -> tensor<8x4xi4> {\n" +
		"    %0 = stablehlo.negate %arg0 : tensor<8x4xi4>\n    return %0 : tensor<8x4xi4>\n  }\n}\n"
	for _, elem := range []string{"i4", "ui4", "f4E2M1FN"} {
		for _, p := range []string{pretty(elem), generic(elem)} {
			_, err := checkedProgram(p, 1, TwoBitMinor-1)
			if !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), "the program transposes a 4-bit type (i4, ui4, f4E2M1FN)") {
				t.Errorf("%s on API 0.%d: %v", elem, TwoBitMinor-1, err)
			}
			if _, err := checkedProgram(p, 1, TwoBitMinor); err != nil {
				t.Errorf("%s on API 0.%d: %v", elem, TwoBitMinor, err)
			}
		}
	}
	for _, p := range []string{pretty("i8"), generic("ui8"), pretty("f8E4M3FN"), negate} {
		if _, err := checkedProgram(p, 1, 81); err != nil {
			t.Errorf("on API 0.81: %v\n%s", err, p)
		}
	}
}

// TestMemorySpacesRefusedOnOldPlugins: a program that moves values between memory spaces (an
// annotate_device_placement call) is refused with ErrCompile and ErrUnimplemented, naming the
// call, on plugins older than MemorySpacesMinor, and passed on for newer ones; memory kinds on
// arguments and results alone are not caught (the old plugin compiles them, making its results
// in device memory).
func TestMemorySpacesRefusedOnOldPlugins(t *testing.T) {
	prog := func(argAttr, body string) string {
		return "module @m {\n  func.func public @main(%arg0: tensor<4xf32>" + argAttr + ") -> tensor<4xf32> {\n" + body +
			"    return %arg0 : tensor<4xf32>\n  }\n}\n"
	}
	placement := prog("", `    %0 = stablehlo.custom_call @annotate_device_placement(%arg0) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<4xf32>) -> tensor<4xf32>`+"\n")
	_, err := checkedProgram(placement, 1, MemorySpacesMinor-1)
	if !errors.Is(err, ErrCompile) || !errors.Is(err, ErrUnimplemented) || !strings.Contains(err.Error(), "memory spaces (annotate_device_placement)") {
		t.Errorf("placement call on API 0.%d: %v", MemorySpacesMinor-1, err)
	}
	if _, err := checkedProgram(placement, 1, MemorySpacesMinor); err != nil {
		t.Errorf("placement call on API 0.%d: %v", MemorySpacesMinor, err)
	}
	for _, kind := range []string{"device", "pinned_host", "unpinned_host"} {
		if _, err := checkedProgram(prog(` {mhlo.memory_kind = "`+kind+`"}`, ""), 1, 81); err != nil {
			t.Errorf("an argument in %s on API 0.81: %v", kind, err)
		}
	}
}
