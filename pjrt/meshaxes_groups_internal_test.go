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

// TestMemorySpacesRefusedOnOldPlugins: a program that places values in memory spaces (an
// annotate_device_placement call, or an argument or result in host memory) is refused with
// ErrCompile and ErrUnimplemented, naming what it found, on plugins older than
// MemorySpacesMinor, and passed on for newer ones; device memory alone is not caught.
func TestMemorySpacesRefusedOnOldPlugins(t *testing.T) {
	prog := func(argAttr, body string) string {
		return "module @m {\n  func.func public @main(%arg0: tensor<4xf32>" + argAttr + ") -> tensor<4xf32> {\n" + body +
			"    return %arg0 : tensor<4xf32>\n  }\n}\n"
	}
	placement := `    %0 = stablehlo.custom_call @annotate_device_placement(%arg0) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<4xf32>) -> tensor<4xf32>` + "\n"
	refused := map[string]string{
		"placement call": prog("", placement),
		"pinned_host":    prog(` {mhlo.memory_kind = "pinned_host"}`, ""),
		"unpinned_host":  prog(` {mhlo.memory_kind = "unpinned_host"}`, ""),
	}
	for name, p := range refused {
		_, err := checkedProgram(p, 1, MemorySpacesMinor-1)
		if !errors.Is(err, ErrCompile) || !errors.Is(err, ErrUnimplemented) || !strings.Contains(err.Error(), "memory spaces") {
			t.Errorf("%s on API 0.%d: %v", name, MemorySpacesMinor-1, err)
		}
		if _, err := checkedProgram(p, 1, MemorySpacesMinor); err != nil {
			t.Errorf("%s on API 0.%d: %v", name, MemorySpacesMinor, err)
		}
	}
	if _, err := checkedProgram(prog(` {mhlo.memory_kind = "device"}`, ""), 1, 81); err != nil {
		t.Errorf("device memory on API 0.81: %v", err)
	}
}
