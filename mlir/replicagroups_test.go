package mlir

import (
	"errors"
	"strings"
	"testing"
)

func TestDenseReplicaGroups(t *testing.T) {
	const head = `sdy.mesh @mesh_0 = <["X"=2, "Y"=4]> {stablehlo.mesh = {axes = [{name = "X", size = 2 : i64}, {name = "Y", size = 4 : i64}]}}
%1 = "stablehlo.all_reduce"(%arg1) <{replica_groups = `
	for _, tc := range []struct{ name, attr, want string }{
		{"Y", `#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "Y">]>`,
			`dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>`},
		{"X", `#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "X">]>`,
			`dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>`},
		{"Y, X", `#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "Y">, #stablehlo.axis_ref<name = "X">]>`,
			`dense<[[0, 4, 1, 5, 2, 6, 3, 7]]> : tensor<1x8xi64>`},
		{"none", `#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = []>`,
			`dense<[[0], [1], [2], [3], [4], [5], [6], [7]]> : tensor<8x1xi64>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DenseReplicaGroups(head + tc.attr + `, use_global_device_ids}> : (tensor<4x1xf32>) -> tensor<4x1xf32>`)
			if err != nil {
				t.Fatal(err)
			}
			if want := head + tc.want + `, use_global_device_ids}> : (tensor<4x1xf32>) -> tensor<4x1xf32>`; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	for _, tc := range []struct{ name, text, msg string }{
		{"unknown mesh", `x = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = []>`, "mesh @m is not defined"},
		{"unknown axis", `sdy.mesh @m = <["X"=2]> x = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "Z">]>`, `axis "Z" is not in the mesh`},
		{"sub-axis", `sdy.mesh @m = <["X"=4]> x = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "X", sub_axis_info = #stablehlo.sub_axis_info<pre_size = 1, size = 2>>]>`, "sub-axes are not rewritten"},
		{"device ids", `sdy.mesh @m = <["X"=2], device_ids=[1, 0]> x = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = []>`, "has its own device_ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DenseReplicaGroups(tc.text)
			if !errors.Is(err, ErrReplicaGroups) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, ErrReplicaGroups, tc.msg)
			}
		})
	}
	if got, err := DenseReplicaGroups("module {}"); err != nil || got != "module {}" {
		t.Errorf("no groups: %q, %v", got, err)
	}
}

// FuzzDenseReplicaGroups checks DenseReplicaGroups on any text: no panic, errors are *Error, and
// text without mesh-axes groups comes back as it is.
func FuzzDenseReplicaGroups(f *testing.F) {
	f.Add(`sdy.mesh @m = <["X"=2, "Y"=4]> x = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "Y">]>`)
	f.Add(`sdy.mesh @m = <["X"=1048576, "Y"=17592186044416]> x = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = []>`)
	f.Add(`#stablehlo.replica_group_mesh_axes<`)
	f.Fuzz(func(t *testing.T, text string) {
		got, err := DenseReplicaGroups(text)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if !HasMeshAxesReplicaGroups(text) && got != text {
			t.Fatalf("text without groups changed")
		}
	})
}
