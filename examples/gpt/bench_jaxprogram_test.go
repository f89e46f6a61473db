package gpt

import (
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/tree"
)

// BenchmarkGPTStepJAXProgram times JAX's own program of the twin's train step (the StableHLO
// text `python tools/oracle/gpt.py --export FILE` writes; XLAMESH_GPT_JAX_MLIR names the file)
// run on this plugin through jit.FromText, as BenchmarkGPTStep runs xlamesh's: put the batch,
// the step fed back its own parameters and state, read the loss. Against BenchmarkGPTStep it
// compares the two programs on one XLA build; against JAX's GPTStep, the XLA builds. tools/bench.sh
// exports the file and sets the variable.
func BenchmarkGPTStepJAXProgram(b *testing.B) {
	path := os.Getenv("XLAMESH_GPT_JAX_MLIR")
	if path == "" {
		b.Skip("XLAMESH_GPT_JAX_MLIR is not set: export the twin's step with `python tools/oracle/gpt.py --export FILE` (tools/bench.sh does)")
	}
	text, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	c := pjrttest.Client(b)
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	if err != nil {
		b.Fatal(err)
	}
	tr, err := Tiny.NewTrainer(c, m, Text)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	step, err := jit.FromText("gpt_step_jax", string(text))
	if err != nil {
		b.Fatal(err)
	}
	defer step.Close()
	// JAX's step takes the parameters' leaves (its namedtuples flatten in the order of Params'
	// fields), the optimizer state's (optax's order, package optim's), x and y, and returns the
	// new parameters, the new state and the loss.
	p, _, err := tree.Flatten[*jit.Array](tr.params)
	if err != nil {
		b.Fatal(err)
	}
	state := append(p, tr.state...)
	tr.params, tr.state = Params[*jit.Array]{}, nil
	defer func() { _ = jit.CloseTree(state) }()
	run := func(i int) {
		xs, ys := Tiny.Sample(tr.tokens, i%Tiny.Steps)
		x, err := jit.Put(c, xs, []int{Tiny.Batch, Tiny.Seq}, tr.data)
		if err != nil {
			b.Fatal(err)
		}
		defer x.Close()
		y, err := jit.Put(c, ys, []int{Tiny.Batch, Tiny.Seq}, tr.data)
		if err != nil {
			b.Fatal(err)
		}
		defer y.Close()
		outs, err := step.Call(c, append(state[:len(state):len(state)], x, y)...)
		if err != nil {
			b.Fatal(err)
		}
		loss := outs[len(outs)-1]
		defer loss.Close()
		if _, err := jit.Item[float32](loss); err != nil {
			b.Fatal(err)
		}
		_ = jit.CloseTree(state) // the old state, which the program may have donated
		state = outs[:len(outs)-1]
	}
	run(0) // compile outside the timing
	for i := 1; b.Loop(); i++ {
		run(i)
	}
}
