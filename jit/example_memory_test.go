package jit_test

import (
	"errors"
	"fmt"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// A training step that offloads its activation: the forward pass puts the layer's output in
// pinned host memory and brings it back only where the loss uses it, as a remat policy that
// offloads saved activations does (jax.checkpoint_policies.save_and_offload_only_these_names).
// On an accelerator XLA moves the value out of device memory while other work runs; the
// gradient flows back through both moves. The weights live in host memory between steps (a
// Put with a pinned_host sharding, OutMemoryKinds for the updated ones), as offloaded
// optimizer state does. A plugin
// that cannot place values in memories (PJRT API before 0.115) refuses the step with
// pjrt.ErrUnimplemented, and the step runs without the moves, to the same numbers.
func Example_offloadActivation() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{4, 2}, "batch", "model")
	inDevice := mesh.MustNamedSharding(m, mesh.P())
	inHost, _ := inDevice.WithMemoryKind(mesh.MemoryPinnedHost)

	step := func(offload bool) *jit.Function {
		kinds := []string{mesh.MemoryPinnedHost, mesh.MemoryDevice}
		if !offload {
			kinds = nil
		}
		return jit.New("step", func(f *lower.Function, a []lower.Value) []lower.Value {
			w, x := a[0], a[1]
			if offload {
				w = f.PutInMemory(w, mesh.MemoryDevice) // the weights come from host memory
			}
			h := f.Tanh(f.MatMul(x, w)) // the activation the backward pass needs
			if offload {
				h = f.PutInMemory(f.PutInMemory(h, mesh.MemoryPinnedHost), mesh.MemoryDevice)
			}
			loss, g := autodiff.ValueAndGrad(f.Function, f.Sum(f.Mul(h, h)), w)
			w = f.Sub(w, f.Mul(g[0], f.Constant(0.125)))
			if offload {
				w = f.PutInMemory(w, mesh.MemoryPinnedHost) // back to host until the next step
			}
			return []lower.Value{w, loss}
		}, jit.OutSpecs(mesh.P(), mesh.P()), jit.OutMemoryKinds(kinds...))
	}
	train := func(offload bool) ([]float32, error) {
		s := inDevice
		if offload {
			s = inHost
		}
		w, err := jit.Put(c, []float32{0.5, -0.25, 0.125, 0.75}, []int{2, 2}, s)
		if err != nil {
			return nil, err
		}
		x, _ := jit.Put(c, []float32{1, 0, 0, 1, 1, 1, -1, 0.5}, []int{4, 2}, inDevice)
		defer x.Close()
		f := step(offload)
		defer f.Close()
		var losses []float32
		for range 3 {
			out, err := f.Call(c, w, x)
			w.Close()
			if err != nil {
				return nil, err
			}
			w = out[0]
			l, _ := out[1].ToHost()
			out[1].Close()
			losses = append(losses, l.([]float32)[0])
		}
		w.Close()
		return losses, nil
	}
	losses, err := train(true)
	if errors.Is(err, pjrt.ErrUnimplemented) {
		losses, err = train(false) // this plugin keeps everything in device memory
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, l := range losses {
		fmt.Printf("step %d: loss %.4f\n", i, l)
	}
	// Output:
	// step 0: loss 1.6905
	// step 1: loss 0.6981
	// step 2: loss 0.2268
}
