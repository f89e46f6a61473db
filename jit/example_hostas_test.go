package jit_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// Read a loss computed in bfloat16 as a float32, without type assertions.
func ExampleItem() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{2}, "x")
	s, _ := mesh.NewNamedSharding(m, mesh.P("x"))
	x, err := jit.Put(c, []float32{0.5, 1.5, 2, 4}, []int{4}, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	meanSquare := jit.New("mean_square", func(f *lower.Function, a []lower.Value) []lower.Value {
		h := f.Convert(a[0], dtypes.BFloat16)
		return []lower.Value{jnp.Mean(f.Function, f.Mul(h, h))}
	})
	out, err := meanSquare.Call(c, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out[0].Close()
	loss, err := jit.Item[float32](out[0])
	fmt.Println(loss, err)
	// Output: 5.625 <nil>
}
