package mesh_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/xlamesh/xlamesh/mesh"
)

func ExampleNew() {
	m, err := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	fmt.Println(m.DeviceIDs())
	fmt.Printf("%#v\n", m)
	// Output:
	// Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))
	// [0 1 2 3 4 5 6 7]
	// mesh.Mesh{"x":4, "y":2, DeviceIDs: [[0 1] [2 3] [4 5] [6 7]]}
}

func ExampleP() {
	fmt.Println(mesh.P("x", nil, mesh.Axes("x", "y")))
	fmt.Println(mesh.P([]string{"x"}, []string{}))
	fmt.Println(mesh.P(3).Err())
	// Output:
	// P('x', None, ('x', 'y'))
	// P('x', None)
	// mesh: invalid partition spec: entry 0 has unsupported type int, want nil, string, []string or Dim
}

func ExampleNamedSharding() {
	m, _ := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	s, err := mesh.NewNamedSharding(m, mesh.P("x", nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	idx, _ := s.DevicesIndicesMap([]int{8, 8})
	rids, _ := s.ReplicaIDs()
	shard, _ := s.ShardShape([]int{8, 8})
	fmt.Println(s)
	fmt.Println(idx[0], idx[1], idx[2])
	fmt.Println(rids, shard)

	err = s.CheckShape([]int{6, 8})
	var ie *mesh.IndivisibleError
	fmt.Println(errors.As(err, &ie), ie.Dim, ie.Parts, ie.Size)
	// Output:
	// NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', None), memory_kind=device)
	// [0:2, 0:8] [0:2, 0:8] [2:4, 0:8]
	// [0 1 0 1 0 1 0 1] [2 8]
	// true 0 4 6
}

func ExampleNewNamedSharding_unknownAxis() {
	m, _ := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	_, err := mesh.NewNamedSharding(m, mesh.P("x", "w"))
	fmt.Println(err)
	fmt.Println(errors.Is(err, mesh.ErrUnknownAxis))
	// Output:
	// mesh: resource axis w of P('x', 'w') (dim 1) is not found in mesh: ('x', 'y')
	// true
}

func ExampleVisualize() {
	m, _ := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	s, _ := mesh.NewNamedSharding(m, mesh.P("x", "y"))
	if err := mesh.Visualize(os.Stdout, s, []int{8, 8}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// ┌──────────┬──────────┐
	// │  CPU 0   │  CPU 1   │
	// ├──────────┼──────────┤
	// │  CPU 2   │  CPU 3   │
	// ├──────────┼──────────┤
	// │  CPU 4   │  CPU 5   │
	// ├──────────┼──────────┤
	// │  CPU 6   │  CPU 7   │
	// └──────────┴──────────┘
}

func ExampleLogicalToMesh() {
	rules := []mesh.Rule{
		mesh.R("batch", "data"),
		mesh.R("embed", "model"),
		mesh.R("heads", "model"), // model is taken by embed when both appear
		mesh.R("length"),         // never sharded
	}
	spec, err := mesh.LogicalToMesh([]string{"batch", "length", "embed", "heads"}, rules)
	fmt.Println(spec, err)

	m, _ := mesh.New(mesh.SimDevices(8), []int{4, 2}, "data", "model")
	s, err := mesh.LogicalSharding(m, []string{"batch", "heads"}, rules)
	fmt.Println(s, err)

	_, _, err = mesh.LogicalConstraint([]string{"batch", "mlp"}, rules, mesh.RaiseError)
	fmt.Println(err)
	// Output:
	// P('data', None, 'model', None) <nil>
	// NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), spec=P('data', 'model'), memory_kind=device) <nil>
	// mesh: logical axis rule: axis names ('batch', 'mlp') did not match a rule
}

func ExampleCreate() {
	// Four TPU v4 chips in a 2x2x1 slice, listed in id order.
	var devices []mesh.Device
	for id, c := range [][]int{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}} {
		devices = append(devices, mesh.SimDevice{Id: id, PlatformName: "tpu", KindName: "TPU v4", Coordinates: c})
	}
	ring, _ := mesh.Create(devices, []int{4}, []string{"x"})
	grid, _ := mesh.Create(devices, []int{2, 2}, []string{"data", "model"})
	fmt.Println(ring.DeviceIDs(), grid.DeviceIDs())
	// Output: [0 2 1 3] [0 1 2 3]
}
