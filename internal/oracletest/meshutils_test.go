package oracletest

import "testing"

type tpuDeviceJSON struct {
	ID           int    `json:"id"`
	Kind         string `json:"kind"`
	Platform     string `json:"platform"`
	ProcessIndex int    `json:"process_index"`
	Coords       []int  `json:"coords"`
	CoreOnChip   int    `json:"core_on_chip"`
	SliceIndex   int    `json:"slice_index"`
}

type meshUtilsCase struct {
	caseHead
	CPU                    bool  `json:"cpu"`
	Shape                  []int `json:"shape"`
	DCN                    []int `json:"dcn"`
	ContiguousSubmeshes    bool  `json:"contiguous_submeshes"`
	AllowSplitPhysicalAxes bool  `json:"allow_split_physical_axes"`
	JAX                    struct {
		Shape        []int           `json:"shape"`
		IDs          []int           `json:"ids"`
		InputDevices []tpuDeviceJSON `json:"input_devices"`
		Error        *jaxError       `json:"error,omitempty"`
	} `json:"jax"`
}

// createMesh and createHybrid wrap xlamesh's mesh creation from a device
// list (mesh_utils.create_device_mesh / create_hybrid_device_mesh); they are
// set in create_test.go (nil records the cases as not compared).
var (
	createMesh   func(t *testing.T, c meshUtilsCase) ([]int, error)
	createHybrid func(t *testing.T, c meshUtilsCase) ([]int, error)
)

// TestMeshUtils compares xlamesh's mesh creation with
// jax.experimental.mesh_utils on TPU-like simulated devices and CPU devices.
func TestMeshUtils(t *testing.T) {
	runMeshUtils(t, "mesh_utils", createMesh)
}

// TestHybridMesh compares xlamesh's hybrid (ICI x DCN) mesh creation with
// mesh_utils.create_hybrid_device_mesh.
func TestHybridMesh(t *testing.T) {
	runMeshUtils(t, "hybrid_mesh", createHybrid)
}

func runMeshUtils(t *testing.T, group string, create func(*testing.T, meshUtilsCase) ([]int, error)) {
	g := loadGolden[meshUtilsCase](t, group)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if create == nil {
				report.skip(group, c.Name, "mesh has no device-mesh creation from physical device attributes yet (mesh.Create in the contract); compare when it lands")
				return
			}
			ids, err := create(t, c)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil {
				eq(&d, "device ids (mesh order)", c.JAX.IDs, ids)
			}
			report.check(t, group, c.Name, d)
		})
	}
}
