package jit_test

import (
	"fmt"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// Sharding in types: an MLP trained on a 2x4 mesh of Explicit axes, JAX's default since
// 0.9. The batch is sharded over X; the first layer's weight is stored FSDP-style (over X and
// Y) and gathered over X by Reshard before use; the second layer's contraction is sharded on
// both sides over Y, so its einsum states its result's sharding (EinsumOut), as JAX asks. Every
// value has a type (TypeOf prints jax.typeof's), jit.ValueAndGrad's gradients have their
// parameters', and a second function applies plain SGD. The same program in JAX 0.12 (jax.make_mesh, jax.sharding.reshard,
// jnp.einsum(..., out_sharding=P('X', None)), jax.value_and_grad) prints the same types and
// losses.
func Example_explicitSharding() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, err := mesh.MakeMesh(jit.Devices(c), []int{2, 4}, []string{"X", "Y"}, mesh.Explicit, mesh.Explicit)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	put := func(shape []int, spec mesh.PartitionSpec, scale float32) *jit.Array {
		v := make([]float32, shape[0]*shape[1])
		for i := range v {
			v[i] = float32(i%7-3) * scale
		}
		s, _ := mesh.NewNamedSharding(m, spec)
		a, err := jit.Put(c, v, shape, s)
		if err != nil {
			panic(err)
		}
		return a
	}
	x := put([]int{8, 4}, mesh.P("X", nil), 0.25)
	w1 := put([]int{4, 16}, mesh.P("X", "Y"), 0.0625) // FSDP: stored over both axes
	w2 := put([]int{16, 2}, mesh.P("Y", nil), 0.125)
	defer x.Close()

	show := func(f *lower.Function, name string, v lower.Value) lower.Value {
		fmt.Printf("%-8s %v\n", name, f.TypeOf(v))
		return v
	}
	loss := func(f *lower.Function, a []lower.Value) lower.Value {
		x, w1, w2 := show(f, "x", a[0]), show(f, "w1", a[1]), a[2]
		g1 := show(f, "gathered", f.Reshard(w1, mustSharding(m, mesh.P(nil, "Y"))))
		h := show(f, "h", f.Tanh(f.Einsum("bi,ih->bh", x, g1)))
		y := show(f, "y", f.EinsumOut("bh,ho->bo", lower.Out(mesh.P("X", nil)), h, w2))
		return show(f, "loss", f.Sum(f.Mul(y, y)))
	}
	grad := jit.New("grad", jit.ValueAndGrad(loss, 1, 2))
	defer grad.Close()
	sgd := jit.New("sgd", func(f *lower.Function, a []lower.Value) []lower.Value {
		lr := f.Constant(float32(0.01))
		return []lower.Value{
			f.Sub(a[0], f.Mul(lr, show(f, "dw1", a[2]))),
			f.Sub(a[1], f.Mul(lr, show(f, "dw2", a[3]))),
		}
	})
	defer sgd.Close()
	for i := range 3 {
		out, err := grad.Call(c, x, w1, w2)
		if err != nil {
			fmt.Println(err)
			return
		}
		l, _ := out[0].ToHost()
		ws, err := sgd.Call(c, w1, w2, out[1], out[2])
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d: loss %.4f, w1 %v, w2 %v\n", i, l.([]float32)[0], ws[0].Sharding().Spec(), ws[1].Sharding().Spec())
		for _, a := range append(out, w1, w2) {
			a.Close()
		}
		w1, w2 = ws[0], ws[1]
	}
	w1.Close()
	w2.Close()
	// Output:
	// Mesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit))
	// x        float32[8@X,4]
	// w1       float32[4@X,16@Y]
	// gathered float32[4,16@Y]
	// h        float32[8@X,16@Y]
	// y        float32[8@X,2]
	// loss     float32[]
	// dw1      float32[4@X,16@Y]
	// dw2      float32[16@Y,2]
	// step 0: loss 0.5880, w1 P('X', 'Y'), w2 P('Y', None)
	// step 1: loss 0.5031, w1 P('X', 'Y'), w2 P('Y', None)
	// step 2: loss 0.4344, w1 P('X', 'Y'), w2 P('Y', None)
}

func mustSharding(m mesh.Mesh, spec mesh.PartitionSpec) mesh.NamedSharding {
	s, err := mesh.NewNamedSharding(m, spec)
	if err != nil {
		panic(err)
	}
	return s
}
