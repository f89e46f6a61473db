package optim_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shapes"
)

// Three Adam steps on the loss sum((w - 1)^2), as jitted functions: one builds the initial
// state, the other is the train step, taking the parameters and the state and returning the
// loss, the new parameters and the new state. The state is Adam's step count, then the first
// and second moments; Layout says which leaf goes with which parameter and how it is shaped. The numbers are
// optax.adam's, bit for bit.
func Example() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{1}, "x")
	s, _ := mesh.NewNamedSharding(m, mesh.P())

	opt, err := optim.Adam(optim.Constant(0.1), optim.AdamDefaults())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("layout:", opt.Layout([]shapes.Shape{shapes.Make(dtypes.Float32, 3)}))
	init := jit.New("init", func(f *lower.Function, a []lower.Value) []lower.Value {
		return opt.Init(f.Function, a)
	})
	defer init.Close()
	step := jit.New("step", func(f *lower.Function, a []lower.Value) []lower.Value {
		params, state := a[:1], a[1:]
		d := f.Sub(params[0], f.Constant(1.0))
		loss, grads := autodiff.ValueAndGrad(f.Function, f.Sum(f.Mul(d, d)), params...)
		updates, next := opt.Update(f.Function, grads, state, params)
		out := append([]lower.Value{loss}, optim.ApplyUpdates(f.Function, params, updates)...)
		return append(out, next...)
	})
	defer step.Close()

	w, err := jit.Put(c, []float32{0, 2, 1.5}, []int{3}, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	state, err := init.Call(c, w)
	if err != nil {
		fmt.Println(err)
		return
	}
	args := append([]*jit.Array{w}, state...)
	for range 3 {
		out, err := step.Call(c, args...)
		if err != nil {
			fmt.Println(err)
			return
		}
		loss, _ := out[0].ToHost()
		v, _ := out[1].ToHost()
		fmt.Println("loss", loss, "w", v)
		for _, a := range append(args, out[0]) {
			a.Close()
		}
		args = out[1:]
	}
	for _, a := range args {
		a.Close()
	}
	// Output:
	// layout: [Count Like(0) Like(0)]
	// loss [2.25] w [0.09999934 1.9000007 1.4000007]
	// loss [1.7800031] w [0.19958611 1.800414 1.3011891]
	// loss [1.3720397] w [0.29841173 1.7015884 1.2048732]
}

// The partition specs of Adafactor's state for an FSDP-sharded weight matrix and a bias: the
// factored second moments of the matrix keep the sharding of the dimension they span, the
// bias's full second moment is sharded as the bias, counts and dummies are replicated.
func ExampleStateSpecs() {
	opt, err := optim.Adafactor(optim.Constant(1e-2), optim.AdafactorDefaults())
	if err != nil {
		fmt.Println(err)
		return
	}
	params := []shapes.Shape{shapes.Make(dtypes.Float32, 512, 1024), shapes.Make(dtypes.Float32, 1024)}
	specs, err := optim.StateSpecs(opt, params, []mesh.PartitionSpec{mesh.P("fsdp", "model"), mesh.P("model")})
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, l := range opt.Layout(params) {
		fmt.Println(l, l.Shape, specs[k])
	}
	// Output:
	// Count tensor<i32> P()
	// Row(0, -dim 1) tensor<512xf32> P('fsdp',)
	// Dummy(1) tensor<1xf32> P()
	// Col(0, -dim 0) tensor<1024xf32> P('model',)
	// Dummy(1) tensor<1xf32> P()
	// Dummy(0) tensor<1xf32> P()
	// Like(1) tensor<1024xf32> P('model',)
}
