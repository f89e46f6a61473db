package gpt_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/examples/gpt"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// BenchmarkGPTStep times one train step of the example as its loop runs it: put the batch,
// call the step (parameters and state donated), read the loss back. Tiny's size on the 2x4
// (data, model) mesh of 8 CPU devices.
//
// Counterpart: tools/bench/jax_bench.py's "GPTStep", the same step of tools/oracle/gpt.py under
// jax.jit, with device_put of the batch and float() of the loss.
func BenchmarkGPTStep(b *testing.B) {
	c := pjrttest.Client(b)
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	if err != nil {
		b.Fatal(err)
	}
	tr, err := gpt.Tiny.NewTrainer(c, m, gpt.Text)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Step(0); err != nil { // compile outside the timing
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if _, err := tr.Step(i % gpt.Tiny.Steps); err != nil {
			b.Fatal(err)
		}
	}
}
