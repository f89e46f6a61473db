package oracletest

import (
	"fmt"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

// The mesh_utils comparison uses mesh.Create and mesh.CreateHybrid.
func init() {
	createMesh = func(_ *testing.T, c meshUtilsCase) ([]int, error) {
		m, err := mesh.Create(utilsDevices(c), c.Shape, axisNames(len(c.Shape)), createOptions(c)...)
		if err != nil {
			return nil, err
		}
		return m.DeviceIDs(), nil
	}
	createHybrid = func(_ *testing.T, c meshUtilsCase) ([]int, error) {
		m, err := mesh.CreateHybrid(utilsDevices(c), c.Shape, c.DCN, axisNames(len(c.Shape)), createOptions(c)...)
		if err != nil {
			return nil, err
		}
		return m.DeviceIDs(), nil
	}
}

// utilsDevices returns the case's devices in the order JAX got them: the
// golden's TPU-like devices as mesh.SimDevices, or the 8 CPU devices.
func utilsDevices(c meshUtilsCase) []mesh.Device {
	if c.CPU {
		return cpuDevices
	}
	out := make([]mesh.Device, len(c.JAX.InputDevices))
	for i, d := range c.JAX.InputDevices {
		out[i] = mesh.SimDevice{Id: d.ID, Process: d.ProcessIndex, PlatformName: d.Platform, KindName: d.Kind,
			Coordinates: d.Coords, Core: d.CoreOnChip, Slice: d.SliceIndex}
	}
	return out
}

func createOptions(c meshUtilsCase) []mesh.CreateOption {
	var opts []mesh.CreateOption
	if c.ContiguousSubmeshes {
		opts = append(opts, mesh.ContiguousSubmeshes())
	}
	if c.AllowSplitPhysicalAxes {
		opts = append(opts, mesh.AllowSplitPhysicalAxes())
	}
	return opts
}

// axisNames returns n distinct axis names; mesh_utils works on shapes only.
func axisNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("a%d", i)
	}
	return out
}
