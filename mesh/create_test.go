package mesh

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// mockTPUDevices reproduces mock_tpu_devices from JAX's
// tests/mesh_utils_test.py: hosts own 2x2x1 blocks of chips, devices are
// listed slice, zp, yp, xp, zd, yd, xd, core (outer to inner).
func mockTPUDevices(x, y, z int, kind string, onePerChip bool, numSlices int) []Device {
	cores := 2
	if onePerChip {
		cores = 1
	}
	const nxd, nyd, nzd = 2, 2, 1
	nxp, nyp, nzp := x/nxd, y/nyd, z/nzd
	var out []Device
	for s := range numSlices {
		for zp := range nzp {
			for yp := range nyp {
				for xp := range nxp {
					for zd := range nzd {
						for yd := range nyd {
							for xd := range nxd {
								for c := range cores {
									proc := xp + nxp*(yp+nyp*(zp+nzp*s))
									id := c + cores*(xd+nxd*(xp+nxp*(yd+nyd*(yp+nyp*(zd+nzd*(zp+nzp*s))))))
									out = append(out, SimDevice{Id: id, Process: proc, PlatformName: "tpu", KindName: kind,
										Coordinates: []int{xd + nxd*xp, yd + nyd*yp, zd + nzd*zp}, Core: c, Slice: s})
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func axisNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("a", i)
	}
	return out
}

func TestCreate(t *testing.T) {
	gpu := []Device{SimDevice{Id: 3, PlatformName: "cuda", KindName: "NVIDIA H100"}, SimDevice{Id: 1, PlatformName: "cuda"},
		SimDevice{Id: 2, PlatformName: "cuda"}, SimDevice{Id: 0, PlatformName: "cuda"}}
	// v5e / v4 lite / v5p fakes: coords listed in the order given.
	chips := func(kind string, coords ...[3]int) []Device {
		out := make([]Device, len(coords))
		for i, c := range coords {
			out[i] = SimDevice{Id: i, PlatformName: "tpu", KindName: kind, Coordinates: c[:]}
		}
		return out
	}
	grid := func(kind string, x, y, z int) []Device {
		var cs [][3]int
		for k := range z {
			for j := range y {
				for i := range x {
					cs = append(cs, [3]int{i, j, k})
				}
			}
		}
		return chips(kind, cs...)
	}
	tests := []struct {
		name    string
		devices []Device
		shape   []int
		opts    []CreateOption
		ids     []int
		err     string
		is      error
	}{
		// §7: CPU and other platforms keep the given order.
		{name: "cpu", devices: devs(3, 1, 2, 0), shape: []int{2, 2}, ids: []int{3, 1, 2, 0}},
		// GPU: §7: JAX 0.11+ (the oracle's 0.12) sorts by id; JAX 0.8.1 kept the
		// given order (GPUsInGivenOrder).
		{name: "gpu", devices: gpu, shape: []int{4}, ids: []int{0, 1, 2, 3}},
		{name: "gpu given order", devices: gpu, shape: []int{2, 2}, opts: []CreateOption{GPUsInGivenOrder()}, ids: []int{3, 1, 2, 0}},
		{name: "cpu not sorted", devices: devs(3, 1, 2, 0), shape: []int{4}, ids: []int{3, 1, 2, 0}},
		// mesh_utils_test test_v3_create_device_mesh 2x2_1d: physical ring order over a tray.
		{name: "v3 2x2 1d", devices: mockTPUDevices(2, 2, 1, "TPU v3", false, 1), shape: []int{8},
			ids: []int{0, 1, 2, 3, 6, 7, 4, 5}},
		// test_v3_create_device_mesh 2x2_2d.
		{name: "v3 2x2 2d", devices: mockTPUDevices(2, 2, 1, "TPU v3", false, 1), shape: []int{2, 4},
			ids: []int{0, 1, 2, 3, 6, 7, 4, 5}},
		// test_v3_create_device_mesh 4x4_2d: 4 per-tray rings.
		{name: "v3 4x4 2d", devices: mockTPUDevices(4, 4, 1, "TPU v3", false, 1), shape: []int{4, 8},
			ids: []int{0, 1, 2, 3, 10, 11, 8, 9, 4, 5, 6, 7, 14, 15, 12, 13, 16, 17, 18, 19, 26, 27, 24, 25, 20, 21, 22, 23, 30, 31, 28, 29}},
		// §7: mock v4 2x2x1, [4] gives [0,2,1,3].
		{name: "v4 2x2x1 [4]", devices: mockTPUDevices(2, 2, 1, "TPU v4", true, 1), shape: []int{4}, ids: []int{0, 2, 1, 3}},
		// §7: v4 2x2x1 [2,2]: model axis (last) takes x and z, data takes y.
		{name: "v4 2x2x1 [2,2]", devices: mockTPUDevices(2, 2, 1, "TPU v4", true, 1), shape: []int{2, 2}, ids: []int{0, 1, 2, 3}},
		// §7: v4 lite, 4 devices, ring (0,1,3,2).
		{name: "v4 lite", devices: grid("TPU v4 lite", 2, 2, 1), shape: []int{4}, ids: []int{0, 1, 3, 2}},
		// §7: v5e 2x2x1 sorted by reversed coords, ring (0,1,3,2).
		{name: "v5e 2x2x1", devices: chips("TPU v5 lite", [3]int{0, 1, 0}, [3]int{1, 1, 0}, [3]int{0, 0, 0}, [3]int{1, 0, 0}),
			shape: []int{2, 2}, ids: []int{2, 3, 1, 0}},
		// §7: v5e 8 devices, 2x4x1: ring (0,1,2,3,7,6,5,4).
		{name: "v5e 2x4", devices: grid("TPU v5 lite", 2, 4, 1), shape: []int{8}, ids: []int{0, 1, 2, 3, 7, 6, 5, 4}},
		// §7: v5e 8 devices, 2x2x2: (0,4,2,6,1,5,3,7).
		{name: "v5e 2x2x2", devices: grid("TPU v6 lite", 2, 2, 2), shape: []int{2, 4}, ids: []int{0, 4, 2, 6, 1, 5, 3, 7}},
		// §7: v5e 4x4: a 16-ring only when max(shape) == 16.
		{name: "v5e 4x4 ring", devices: grid("TPU v5e", 4, 4, 1), shape: []int{1, 16},
			ids: []int{0, 1, 2, 3, 7, 6, 5, 9, 10, 11, 15, 14, 13, 12, 8, 4}},
		// §7: v5p 2x2x2: (0,1,3,2,6,7,5,4).
		{name: "v5p 2x2x2", devices: grid("TPU v5p", 2, 2, 2), shape: []int{8}, ids: []int{0, 1, 3, 2, 6, 7, 5, 4}},
		// §7: Number of devices 8 must equal the product of mesh_shape (3, 3).
		{name: "count", devices: devs(seq(8)...), shape: []int{3, 3},
			err: "mesh: device count mismatch: number of devices 8 must equal the product of mesh shape (3, 3)", is: ErrDeviceCount},
		// §7: NotImplementedError when whole physical axes cannot form the logical axis.
		{name: "no assignment", devices: mockTPUDevices(4, 4, 4, "TPU v4", true, 1), shape: []int{2, 32},
			err: "mesh: no device assignment: failed to find assignment for logical_axis_index 1 of size 32 with remaining assignable mesh [4, 4, 4]", is: ErrNoAssignment},
		{name: "megacore", devices: mockTPUDevices(2, 2, 1, "TPU v4", false, 1), shape: []int{8},
			err: `requires one device per chip ("megacore" mode), got core 1 for device 1 of kind TPU v4`, is: ErrNoAssignment},
		{name: "hole", devices: chips("TPU v4", [3]int{0, 0, 0}, [3]int{1, 0, 0}, [3]int{0, 1, 0}, [3]int{0, 1, 0}), shape: []int{4},
			err: "constructed mesh contains a hole", is: ErrNoAssignment},
		{name: "no coords", devices: []Device{SimDevice{Id: 0, PlatformName: "tpu", KindName: "TPU v4"}}, shape: []int{1},
			err: "TPU device 0 has no (x, y, z) coordinates", is: ErrNoAssignment},
		// mesh_utils_test test_create_contiguous_submeshes_errors.
		{name: "contiguous topology", devices: mockTPUDevices(4, 4, 8, "TPU v4", true, 1), shape: []int{1, 16, 8}, opts: []CreateOption{ContiguousSubmeshes()},
			err: "create_device_mesh cannot create contiguous submeshes for physical mesh topology (4, 4, 8)", is: ErrNoAssignment},
		{name: "contiguous shape", devices: mockTPUDevices(4, 8, 8, "TPU v4", true, 1), shape: []int{1, 128, 2}, opts: []CreateOption{ContiguousSubmeshes()},
			err: "create_device_mesh cannot create contiguous submeshes for mesh shape (1, 128, 2) and physical mesh topology (4, 8, 8); available mesh shapes: [(64, 4), (4, 64)]", is: ErrNoAssignment},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Create(tc.devices, tc.shape, axisNames(len(tc.shape)), tc.opts...)
			if wantErr(t, err, tc.err) {
				if !errors.Is(err, tc.is) {
					t.Errorf("error does not wrap %v", tc.is)
				}
				return
			}
			if got := m.DeviceIDs(); !slices.Equal(got, tc.ids) {
				t.Errorf("ids = %v, want %v", got, tc.ids)
			}
		})
	}
}

// TestAssignAxes: mesh_utils_test test_create_device_mesh_for_nd_torus.
func TestAssignAxes(t *testing.T) {
	tests := []struct {
		name   string
		phys   []int
		shape  []int
		expect [][]int // physical axes per logical axis
	}{
		{"2x2x1", []int{2, 2, 1}, []int{1, 1, 4}, [][]int{{}, {}, {0, 1, 2}}},
		{"2x2x4", []int{2, 2, 4}, []int{1, 4, 4}, [][]int{{}, {2}, {0, 1}}},
		{"4x4x4", []int{4, 4, 4}, []int{1, 16, 4}, [][]int{{}, {1, 2}, {0}}},
		{"4x4x8a", []int{4, 4, 8}, []int{1, 16, 8}, [][]int{{}, {0, 1}, {2}}},
		{"4x4x8b", []int{4, 4, 8}, []int{1, 8, 16}, [][]int{{}, {2}, {0, 1}}},
		{"4x4x8c", []int{4, 4, 8}, []int{16, 8, 1}, [][]int{{0, 1}, {2}, {}}},
		{"4x8x8", []int{4, 8, 8}, []int{1, 32, 8}, [][]int{{}, {0, 2}, {1}}},
		{"8x8x8", []int{8, 8, 8}, []int{1, 64, 8}, [][]int{{}, {1, 2}, {0}}},
		{"8x8x16", []int{8, 8, 16}, []int{1, 64, 16}, [][]int{{}, {0, 1}, {2}}},
		// v3 8x8 one device per chip: physical (8, 8, 1).
		{"8x8", []int{8, 8, 1}, []int{8, 8}, [][]int{{1}, {0, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := assignAxes(tc.phys, tc.shape, false)
			if err != nil {
				t.Fatal(err)
			}
			for l, axes := range tc.expect {
				for p := range tc.phys {
					want := 1
					if slices.Contains(axes, p) {
						want = tc.phys[p]
					}
					if got[p][l] != want {
						t.Fatalf("assignment[%d][%d] = %d, want %d (full %v)", p, l, got[p][l], want, got)
					}
				}
			}
		})
	}
}

func TestCreateSplit(t *testing.T) {
	devices := mockTPUDevices(4, 4, 4, "TPU v4", true, 1)
	m, err := Create(devices, []int{2, 32}, []string{"data", "model"}, AllowSplitPhysicalAxes())
	if err != nil {
		t.Fatal(err)
	}
	// The model axis (32) takes (4, 4, 2): whole x and y plus half of z
	// (preferred over (4,2,4) and (2,4,4) by reverse lexicographic order);
	// data takes the other half of z, as the major part of z.
	for _, tc := range []struct {
		c      []int
		coords []int
	}{
		{[]int{0, 0}, []int{0, 0, 0}}, {[]int{0, 1}, []int{0, 0, 1}}, {[]int{0, 2}, []int{0, 1, 0}},
		{[]int{0, 8}, []int{1, 0, 0}}, {[]int{1, 0}, []int{0, 0, 2}}, {[]int{1, 31}, []int{3, 3, 3}},
	} {
		d, _ := m.Device(tc.c...)
		if got := d.(CoordsDevice).Coords(); !slices.Equal(got, tc.coords) {
			t.Errorf("device at %v has coords %v, want %v", tc.c, got, tc.coords)
		}
	}
	// Splitting on a 4x4 (JAX docstring: "Creating 2x2x4 from 4x4").
	m, err = Create(mockTPUDevices(4, 4, 1, "TPU v4", true, 1), []int{2, 2, 4}, axisNames(3), AllowSplitPhysicalAxes())
	if err != nil {
		t.Fatal(err)
	}
	if m.Size() != 16 {
		t.Errorf("size %d", m.Size())
	}
}

// TestCreateContiguous: mesh_utils_test test_create_contiguous_submeshes_for_tpu_v4
// (and the leading/trailing size-1 dims variant): every process's devices
// form a contiguous sub-mesh.
func TestCreateContiguous(t *testing.T) {
	for topo, shapes := range transposeTricks {
		var x, y, z int
		fmt.Sscanf(topo, "(%d, %d, %d)", &x, &y, &z)
		devices := mockTPUDevices(x, y, z, "TPU v4", true, 1)
		for _, tr := range shapes {
			var a, b int
			fmt.Sscanf(tr.shape, "(%d, %d)", &a, &b)
			for _, full := range [][]int{{a, b}, {1, 1, a, b, 1, 1}} {
				m, err := Create(devices, full, axisNames(len(full)), ContiguousSubmeshes())
				if err != nil {
					t.Fatalf("%s %v: %v", topo, full, err)
				}
				for _, p := range m.ProcessIndices() {
					if _, err := m.LocalMesh(p); err != nil {
						t.Fatalf("%s %v: process %d: %v", topo, full, p, err)
					}
				}
			}
		}
	}
}

func TestCreateHybrid(t *testing.T) {
	// §7: two v4 2x2x1 slices with (2,2) x (1,2) give [[0,1,4,5],[2,3,6,7]].
	devices := mockTPUDevices(2, 2, 1, "TPU v4", true, 2)
	m, err := CreateHybrid(devices, []int{2, 2}, []int{1, 2}, []string{"data", "model"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.DeviceIDs(); !slices.Equal(got, []int{0, 1, 4, 5, 2, 3, 6, 7}) || m.String() != "Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto))" {
		t.Errorf("hybrid = %v %v", m, got)
	}
	// mesh_utils_test test_create_hybrid_device_mesh: 2 slices of 4x4x4; the
	// DCN axis is major, so [0,0,0] and the first device of the next slice
	// along the DCN axis share coords.
	devices = mockTPUDevices(4, 4, 4, "TPU v4", true, 2)
	for _, tc := range []struct{ shape, dcn []int }{{[]int{1, 16, 4}, []int{2, 1, 1}}, {[]int{1, 4, 16}, []int{1, 2, 1}}} {
		m, err := CreateHybrid(devices, tc.shape, tc.dcn, []string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		i2 := []int{0, 0, 0}
		i2[slices.Index(tc.dcn, 2)] = tc.shape[slices.Index(tc.dcn, 2)]
		d1, _ := m.Device(0, 0, 0)
		d2, _ := m.Device(i2...)
		s1, s2 := d1.(SimDevice), d2.(SimDevice)
		if !slices.Equal(s1.Coordinates, s2.Coordinates) || s1.Slice == s2.Slice {
			t.Errorf("%v x %v: %v and %v", tc.shape, tc.dcn, s1, s2)
		}
	}
	// Errors.
	_, err = CreateHybrid(devices, []int{1, 16, 4}, []int{3, 1, 1}, []string{"a", "b", "c"})
	wantErr(t, err, "mesh: device count mismatch: number of slices 2 must equal the product of dcn mesh shape (3, 1, 1)")
	_, err = CreateHybrid(devs(0, 1), []int{1}, []int{2}, []string{"a"})
	wantErr(t, err, "device 0 does not have a slice index; see ProcessIsGranule")
	m, err = CreateHybrid(procDevs(0, 0, 1, 1), []int{2}, []int{2}, []string{"a"}, ProcessIsGranule())
	if err != nil || !slices.Equal(m.DeviceIDs(), []int{0, 1, 2, 3}) {
		t.Errorf("process granules: %v, %v", m.DeviceIDs(), err)
	}
	_, err = CreateHybrid(devs(0, 1), []int{1, 1}, []int{2}, []string{"a"})
	wantErr(t, err, "different ranks")
}

func TestMakeMesh(t *testing.T) {
	tests := []struct {
		name    string
		devices []Device
		shape   []int
		names   []string
		types   []AxisType
		ids     []int
		str     string
		err     string
	}{
		// JAX 0.12 make_mesh (oracle make_mesh group): takes a prefix of the devices; Explicit
		// axes unless told otherwise.
		{name: "4x2", devices: SimDevices(8), shape: []int{4, 2}, names: []string{"x", "y"}, ids: seq(8), str: "Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit))"},
		{name: "prefix", devices: SimDevices(8), shape: []int{2, 2}, names: []string{"x", "y"}, ids: seq(4), str: "Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit))"},
		{name: "auto", devices: SimDevices(8), shape: []int{4, 2}, names: []string{"x", "y"}, types: []AxisType{Auto, Auto},
			ids: seq(8), str: "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))"},
		{name: "types", devices: SimDevices(8), shape: []int{8}, names: []string{"x"}, types: []AxisType{Explicit},
			ids: seq(8), str: "Mesh('x': 8, axis_types=(Explicit,))"},
		// "Number of devices 8 must be >= the product of mesh_shape (4, 4)".
		{name: "too few", devices: SimDevices(8), shape: []int{4, 4}, names: []string{"x", "y"},
			err: "mesh: device count mismatch: number of devices 8 must be >= the product of mesh shape (4, 4)"},
		{name: "names", devices: SimDevices(8), shape: []int{4}, names: []string{"x", "y"}, err: "invalid mesh"},
		{name: "multi-slice", devices: mockTPUDevices(2, 2, 1, "TPU v4", true, 2), shape: []int{8}, names: []string{"x"},
			err: "MakeMesh does not support multi-slice TPU (devices span 2 slices)"},
		{name: "tpu", devices: mockTPUDevices(2, 2, 1, "TPU v4", true, 1), shape: []int{4}, names: []string{"x"},
			ids: []int{0, 2, 1, 3}, str: "Mesh('x': 4, axis_types=(Explicit,))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MakeMesh(tc.devices, tc.shape, tc.names, tc.types...)
			if wantErr(t, err, tc.err) {
				return
			}
			if !slices.Equal(m.DeviceIDs(), tc.ids) || m.String() != tc.str {
				t.Errorf("got %v %v, want %s %v", m, m.DeviceIDs(), tc.str, tc.ids)
			}
		})
	}
}
