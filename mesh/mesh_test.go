package mesh

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestNewMesh(t *testing.T) {
	tests := []struct {
		name    string
		devices []Device
		shape   []int
		names   []string
		str     string
		ids     []int
		err     string
		is      error
	}{
		// jax_semantics.md §1: str(Mesh) is Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)).
		{name: "2d", devices: devs(seq(8)...), shape: []int{4, 2}, names: []string{"x", "y"},
			str: "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))", ids: seq(8)},
		{name: "1d", devices: devs(3, 1, 2, 0), shape: []int{4}, names: []string{"data"},
			str: "Mesh('data': 4, axis_types=(Auto,))", ids: []int{3, 1, 2, 0}},
		{name: "size-1 axes", devices: devs(0, 1), shape: []int{1, 2, 1}, names: []string{"a", "b", "c"},
			str: "Mesh('a': 1, 'b': 2, 'c': 1, axis_types=(Auto, Auto, Auto))", ids: []int{0, 1}},
		{name: "empty", devices: nil, shape: nil, names: nil, str: "Mesh()", ids: nil},
		// §1 error 2: ndim of devices must equal len(axis_names).
		{name: "rank mismatch", devices: devs(seq(8)...), shape: []int{4, 2}, names: []string{"x"},
			err: "mesh: invalid mesh: mesh requires the number of dims of its shape to equal the number of axis names, but got shape (4, 2) (2 dims) and axis names ('x',) (1 names)", is: ErrInvalidMesh},
		{name: "duplicate axis", devices: devs(seq(4)...), shape: []int{2, 2}, names: []string{"x", "x"},
			err: `mesh: duplicate axis "x": axes 0 and 1 of ('x', 'x')`, is: ErrDuplicateAxis},
		{name: "empty name", devices: devs(seq(4)...), shape: []int{2, 2}, names: []string{"x", ""},
			err: "axis 1 has an empty name", is: ErrInvalidMesh},
		{name: "size 0", devices: nil, shape: []int{0, 2}, names: []string{"x", "y"},
			err: `axis "x" has size 0, want >= 1`, is: ErrInvalidMesh},
		// mesh_utils wording (§7): Number of devices 8 must equal the product of mesh_shape (3, 3).
		{name: "device count", devices: devs(seq(8)...), shape: []int{3, 3}, names: []string{"x", "y"},
			err: "mesh: device count mismatch: number of devices 8 must equal the product of mesh shape (3, 3)", is: ErrDeviceCount},
		{name: "duplicate device", devices: devs(0, 1, 2, 1), shape: []int{4}, names: []string{"x"},
			err: "mesh: duplicate device: device 1 is at positions 1 and 3", is: ErrDuplicateDevice},
		{name: "nil device", devices: []Device{fakeDev{id: 0}, nil}, shape: []int{2}, names: []string{"x"},
			err: "device at position 1 is nil", is: ErrInvalidMesh},
		{name: "devices for empty mesh", devices: devs(0), shape: nil, names: nil,
			err: "number of devices 1", is: ErrDeviceCount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.devices, tc.shape, tc.names...)
			if wantErr(t, err, tc.err) {
				if !errors.Is(err, tc.is) {
					t.Fatalf("error %v does not wrap %v", err, tc.is)
				}
				return
			}
			if got := m.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
			if got := m.DeviceIDs(); !slices.Equal(got, tc.ids) {
				t.Errorf("DeviceIDs() = %v, want %v", got, tc.ids)
			}
			if !slices.Equal(m.AxisSizes(), tc.shape) || !slices.Equal(m.AxisNames(), tc.names) {
				t.Errorf("axes = %v %v, want %v %v", m.AxisNames(), m.AxisSizes(), tc.names, tc.shape)
			}
		})
	}
}

func TestMeshProperties(t *testing.T) {
	m := mustMesh(t, nil, []int{4, 2}, "x", "y")
	if m.Size() != 8 || m.NumAxes() != 2 || m.Empty() {
		t.Fatalf("Size=%d NumAxes=%d Empty=%v", m.Size(), m.NumAxes(), m.Empty())
	}
	if i := m.AxisIndex("y"); i != 1 {
		t.Errorf("AxisIndex(y) = %d", i)
	}
	if i := m.AxisIndex("w"); i != -1 {
		t.Errorf("AxisIndex(w) = %d", i)
	}
	if s, ok := m.AxisSize("x"); !ok || s != 4 {
		t.Errorf("AxisSize(x) = %d, %v", s, ok)
	}
	if _, ok := m.AxisSize("w"); ok {
		t.Errorf("AxisSize(w) found")
	}
	if got := fmt.Sprint(m.Shape()); got != "[{x 4 Auto} {y 2 Auto}]" {
		t.Errorf("Shape() = %s", got)
	}
	d, err := m.Device(2, 1)
	if err != nil || d.ID() != 5 {
		t.Errorf("Device(2, 1) = %v, %v", d, err)
	}
	if _, err := m.Device(4, 0); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("Device(4, 0) err = %v", err)
	}
	if c, ok := m.Coords(5); !ok || !slices.Equal(c, []int{2, 1}) {
		t.Errorf("Coords(5) = %v, %v", c, ok)
	}
	// Accessors return copies.
	names := m.AxisNames()
	names[0] = "zzz"
	ds := m.Devices()
	ds[0] = fakeDev{id: 99}
	if m.AxisNames()[0] != "x" || m.Devices()[0].ID() != 0 {
		t.Errorf("mesh mutated through accessor")
	}
	if got := fmt.Sprintf("%#v", m); got != `mesh.Mesh{"x":4, "y":2, DeviceIDs: [[0 1] [2 3] [4 5] [6 7]]}` {
		t.Errorf("GoString = %s", got)
	}
	var zero Mesh
	if zero.Size() != 0 || !zero.Empty() || zero.String() != "Mesh()" || zero.DeviceIDs() != nil {
		t.Errorf("zero mesh: %v %v %q", zero.Size(), zero.Empty(), zero)
	}
}

func TestMeshEqual(t *testing.T) {
	a := mustMesh(t, nil, []int{4, 2}, "x", "y")
	b := mustMesh(t, nil, []int{4, 2}, "x", "y")
	perm := mustMesh(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, []int{4, 2}, "x", "y")
	other := mustMesh(t, nil, []int{2, 4}, "x", "y")
	exp, err := a.WithAxisTypes(Explicit, Auto)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Equal(b) || a.Key() != b.Key() {
		t.Errorf("equal meshes differ")
	}
	for _, o := range []Mesh{perm, other, exp} {
		if a.Equal(o) || a.Key() == o.Key() {
			t.Errorf("%v equals %v", a, o)
		}
	}
	if !a.Abstract().Equal(perm.Abstract()) {
		t.Errorf("abstract meshes of permuted devices differ")
	}
	if a.Abstract().Equal(exp.Abstract()) {
		t.Errorf("abstract meshes with different types equal")
	}
	if got := exp.String(); got != "Mesh('x': 4, 'y': 2, axis_types=(Explicit, Auto))" {
		t.Errorf("String() = %s", got)
	}
	if _, err := a.WithAxisTypes(Explicit); !errors.Is(err, ErrInvalidMesh) {
		t.Errorf("WithAxisTypes(1 type) err = %v", err)
	}
	set := map[string]Mesh{a.Key(): a}
	if _, ok := set[b.Key()]; !ok {
		t.Errorf("Key not usable as map key")
	}
}

func TestAbstract(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		names []string
		types []AxisType
		str   string
		size  int
		err   string
	}{
		// jax_semantics.md §2: AbstractMesh holds sizes, names and types.
		{name: "2d", sizes: []int{2, 4}, names: []string{"x", "y"}, str: "AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto))", size: 8},
		{name: "types", sizes: []int{2, 4}, names: []string{"x", "y"}, types: []AxisType{Explicit, Manual},
			str: "AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Manual))", size: 8},
		{name: "one explicit", sizes: []int{8}, names: []string{"x"}, types: []AxisType{Explicit},
			str: "AbstractMesh('x': 8, axis_types=(Explicit,))", size: 8},
		{name: "empty", str: "AbstractMesh((), axis_types=())", size: 0},
		// §1 error 3: number of axis names should match the number of axis_types.
		{name: "type count", sizes: []int{2, 4}, names: []string{"x", "y"}, types: []AxisType{Auto},
			err: "mesh: invalid mesh: number of axis names should match the number of axis types, got axis names ('x', 'y') and 1 axis types [Auto]"},
		{name: "bad type", sizes: []int{2}, names: []string{"x"}, types: []AxisType{0},
			err: `mesh: invalid mesh: axis "x" has invalid type AxisType(0)`},
		{name: "count", sizes: []int{2}, names: []string{"x", "y"},
			err: "mesh: invalid mesh: got 1 axis sizes (2,) but 2 axis names ('x', 'y')"},
		{name: "nul", sizes: []int{2}, names: []string{"a\x00b"}, err: "contains a NUL byte"},
		{name: "negative", sizes: []int{2, -1}, names: []string{"x", "y"}, err: `axis "y" has size -1, want >= 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAbstract(tc.sizes, tc.names, tc.types...)
			if wantErr(t, err, tc.err) {
				return
			}
			if a.String() != tc.str || a.Size() != tc.size {
				t.Errorf("got %q size %d, want %q size %d", a, a.Size(), tc.str, tc.size)
			}
		})
	}
	if got := fmt.Sprint(Auto, Explicit, Manual); got != "Auto Explicit Manual" {
		t.Errorf("AxisType strings: %s", got)
	}
}

func TestMeshConcurrent(t *testing.T) {
	m := mustMesh(t, nil, []int{4, 2}, "x", "y")
	s := MustNamedSharding(m, P("x", "y"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_ = m.String()
				_ = m.DeviceIDs()
				if _, err := s.DevicesIndicesMap([]int{8, 4}); err != nil {
					t.Error(err)
				}
				_, _ = s.ReplicaIDs()
			}
		})
	}
	wg.Wait()
}
