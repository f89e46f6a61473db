package mesh_test

import (
	"errors"
	"fmt"

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
	// Mesh('x': 4, 'y': 2)
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
	// NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P('x', None))
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
