package examples_test

import (
	"fmt"

	"github.com/xlamesh/xlamesh/examples/mlp"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
)

// Sharded training with gradients from package autodiff: 20 SGD steps of the 2-layer MLP of
// package mlp on a 2x4 mesh, the batch split over "data" and the hidden units over "model".
// The step is jitted with the parameters' shardings in and out and the old parameters donated;
// the partitioner adds the collectives, among them the all-reduce of the weight gradients over
// "data". The losses equal JAX's step by step (internal/oracletest checks them against
// jax.value_and_grad's, to 1e-5). The losses printed, to 6 places, are those of the 2x4 mesh
// (on 1 device step 3's is 0.536952), so it needs a host with 8 devices.
func Example_trainMLP() {
	c, devs := openN(8)
	defer c.Close()
	m := must(mesh.New(devs[:8], []int{2, 4}, "data", "model"))
	step := jit.New("sgd_step", mlp.SGD(0.1), mlp.StepOptions()...)
	defer step.Close()

	size := mlp.Small
	shapes, specs := size.Shapes(), mlp.Specs()
	args := make([]*jit.Array, 6)
	for i, v := range size.Init() {
		args[i] = must(jit.Put(c, v, shapes[i], must(mesh.NewNamedSharding(m, specs[i]))))
	}
	defer func() {
		for _, a := range args {
			a.Close()
		}
	}()
	for s := range 20 {
		out, err := step.Call(c, args...)
		if err != nil {
			fmt.Println(err)
			return
		}
		loss := must(out[0].ToHost()).([]float32)[0]
		out[0].Close()
		copy(args, out[1:]) // the old parameters were donated (and closed) by the call
		fmt.Printf("step %2d loss %.6f\n", s, loss)
	}
	fmt.Println("w1:", args[0].Sharding().Spec())
	// Output:
	// step  0 loss 0.796230
	// step  1 loss 0.698864
	// step  2 loss 0.613003
	// step  3 loss 0.536951
	// step  4 loss 0.469419
	// step  5 loss 0.409394
	// step  6 loss 0.356061
	// step  7 loss 0.308743
	// step  8 loss 0.266864
	// step  9 loss 0.229918
	// step 10 loss 0.197451
	// step 11 loss 0.169046
	// step 12 loss 0.144312
	// step 13 loss 0.122886
	// step 14 loss 0.104421
	// step 15 loss 0.088591
	// step 16 loss 0.075091
	// step 17 loss 0.063636
	// step 18 loss 0.053962
	// step 19 loss 0.045829
	// w1: P(None, 'model')
}
