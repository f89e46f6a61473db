package mlp_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/examples/mlp"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// BenchmarkTrainStep times one SGD step of the MLP at size mlp.Bench on the 2x4 (data, model)
// mesh of 8 CPU devices (fitted by meshShape to a host with fewer), call + wait for every
// result, the old parameters donated.
// Counterpart: tools/bench/jax_bench.py's "TrainStep", the same step under jax.jit with the
// same shardings and donation.
func BenchmarkTrainStep(b *testing.B) {
	c := pjrttest.Client(b)
	shape := pjrttest.FitShape([]int{2, 4}, len(c.Devices()))
	m, err := mesh.New(jit.Devices(c)[:shape[0]*shape[1]], shape, "data", "model")
	if err != nil {
		b.Fatal(err)
	}
	step := jit.New("train_step", mlp.SGD(0.01), mlp.StepOptions()...)
	defer step.Close()
	shapes, specs := mlp.Bench.Shapes(), mlp.Specs()
	args := make([]*jit.Array, 6)
	for i, v := range mlp.Bench.Init() {
		s, err := mesh.NewNamedSharding(m, specs[i])
		if err != nil {
			b.Fatal(err)
		}
		if args[i], err = jit.Put(c, v, shapes[i], s); err != nil {
			b.Fatal(err)
		}
	}
	defer func() {
		for _, a := range args {
			a.Close()
		}
	}()
	once := func() {
		out, err := step.Call(c, args...)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range out {
			if err := o.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		out[0].Close()
		copy(args, out[1:])
	}
	once() // compile
	b.ReportAllocs()
	for b.Loop() {
		once()
	}
}
