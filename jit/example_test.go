package jit_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// Put an array on a 4x2 mesh, run a jitted function on it and look at the shards.
func Example() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{4, 2}, "x", "y")
	s, _ := mesh.NewNamedSharding(m, mesh.P("x"))

	x, err := jit.Put(c, []int32{0, 1, 2, 3, 4, 5, 6, 7}, []int{4, 2}, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	square := jit.New("square", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], a[0])}
	}, jit.OutSpecs(mesh.P("x")))
	ys, err := square.Call(c, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	y := ys[0]
	defer y.Close()
	for _, sh := range y.AddressableShards()[:4] {
		v, _ := sh.Data.ToHost()
		fmt.Println(sh.Device, sh.Index, "replica", sh.ReplicaID, v)
	}
	all, _ := y.ToHost()
	fmt.Println(all)
	// Output:
	// CpuDevice(id=0) [0:1, 0:2] replica 0 [0 1]
	// CpuDevice(id=1) [0:1, 0:2] replica 1 [0 1]
	// CpuDevice(id=2) [1:2, 0:2] replica 0 [4 9]
	// CpuDevice(id=3) [1:2, 0:2] replica 1 [4 9]
	// [0 1 4 9 16 25 36 49]
}

// FromCallback asks for each device's block by its index, as jax.make_array_from_callback does.
func ExampleFromCallback() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(4))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{4}, "x")
	s, _ := mesh.NewNamedSharding(m, mesh.P("x"))
	a, err := jit.FromCallback(c, []int{8}, dtypes.Float64, s, func(idx mesh.Index) (any, error) {
		fmt.Println("callback for", idx)
		return []float64{float64(idx[0].Start), float64(idx[0].Start) + 0.5}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	v, _ := a.ToHost()
	fmt.Println(v)
	// Output:
	// callback for [0:2]
	// callback for [2:4]
	// callback for [4:6]
	// callback for [6:8]
	// [0 0.5 2 2.5 4 4.5 6 6.5]
}
