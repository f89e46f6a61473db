package mesh

import (
	"errors"
	"slices"
	"testing"
)

// procDevs returns fake devices with ids 0..len(procs)-1 in the given processes.
func procDevs(procs ...int) []Device {
	out := make([]Device, len(procs))
	for i, p := range procs {
		out[i] = fakeDev{id: i, proc: p}
	}
	return out
}

func TestLocalMesh(t *testing.T) {
	tests := []struct {
		name    string
		procs   []int // process of each device, mesh order
		shape   []int
		process int
		str     string
		ids     []int
		multi   bool
		err     string
		is      error
	}{
		// jax_mesh.py _get_local_mesh: per axis, the [min, max] hull of local coordinates.
		{name: "rows", procs: []int{0, 0, 0, 0, 1, 1, 1, 1}, shape: []int{4, 2}, process: 1,
			str: "Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))", ids: []int{4, 5, 6, 7}, multi: true},
		{name: "columns", procs: []int{0, 1, 0, 1, 0, 1, 0, 1}, shape: []int{4, 2}, process: 0,
			str: "Mesh('x': 4, 'y': 1, axis_types=(Auto, Auto))", ids: []int{0, 2, 4, 6}, multi: true},
		{name: "single process", procs: []int{0, 0, 0, 0}, shape: []int{2, 2}, process: 0,
			str: "Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))", ids: []int{0, 1, 2, 3}, multi: false},
		{name: "block", procs: []int{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}, shape: []int{4, 4}, process: 3,
			str: "Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))", ids: []int{10, 11, 14, 15}, multi: true},
		// jax_semantics.md §1: the hull holds a non-local device.
		{name: "not contiguous", procs: []int{0, 1, 1, 0}, shape: []int{2, 2}, process: 0,
			err: "mesh: devices not contiguous: when passing host local inputs, devices connected to a single host must form a contiguous subcube of the global device mesh, but the hull [0:2, 0:2] of process 0's devices in Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)) also holds device 1 of process 1",
			is:  ErrNotContiguous},
		{name: "absent process", procs: []int{0, 0}, shape: []int{2, 1}, process: 7,
			err: "process 7 has no device", is: ErrNoDevices},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(procDevs(tc.procs...), tc.shape, []string{"x", "y"}[:len(tc.shape)]...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.err == "" && m.IsMultiProcess() != tc.multi {
				t.Errorf("IsMultiProcess = %v", m.IsMultiProcess())
			}
			lm, err := m.LocalMesh(tc.process)
			if wantErr(t, err, tc.err) {
				if !errors.Is(err, tc.is) {
					t.Errorf("error does not wrap %v", tc.is)
				}
				return
			}
			if lm.String() != tc.str || !slices.Equal(lm.DeviceIDs(), tc.ids) {
				t.Errorf("LocalMesh = %v %v, want %s %v", lm, lm.DeviceIDs(), tc.str, tc.ids)
			}
			var local []int
			for _, d := range m.LocalDevices(tc.process) {
				local = append(local, d.ID())
			}
			if !slices.Equal(local, tc.ids) {
				t.Errorf("LocalDevices = %v, want %v", local, tc.ids)
			}
		})
	}
	var zero Mesh
	if lm, err := zero.LocalMesh(0); err != nil || !lm.Empty() {
		t.Errorf("empty LocalMesh = %v, %v", lm, err)
	}
}

func TestAddressableShards(t *testing.T) {
	// Two processes own the two rows of a 2x4 mesh; P('y') on shape (8,).
	m, err := New(procDevs(0, 0, 0, 0, 1, 1, 1, 1), []int{2, 4}, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	s := MustNamedSharding(m, P("y"))
	shards, err := s.AddressableShards([]int{8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sh := range shards {
		got = append(got, sh.Index.String())
		if sh.ReplicaID != 1 {
			t.Errorf("device %d replica id %d, want 1", sh.Device.ID(), sh.ReplicaID)
		}
	}
	if want := []string{"[0:2]", "[2:4]", "[4:6]", "[6:8]"}; !slices.Equal(got, want) {
		t.Errorf("AddressableShards = %v, want %v", got, want)
	}
	if !slices.Equal(m.ProcessIndices(), []int{0, 1}) {
		t.Errorf("ProcessIndices = %v", m.ProcessIndices())
	}
}
