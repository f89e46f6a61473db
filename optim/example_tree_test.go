package optim_test

import (
	"fmt"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/pjrt"
)

// line is the model of ExampleStepTree, generic in its leaves: line[*jit.Array] on the
// devices, line[lower.Value] in the jitted step.
type line[T any] struct{ W, B T }

// train is the step's argument and, with the loss, its result: the parameters and Adam's
// state (a flat list, as optim builds it).
type train[T any] struct {
	P   line[T]
	Opt []T
}

// Adam fits y = w x + b to three points, its parameters a tree: the step differentiates with
// respect to the tree, updates it with StepTree and donates the old state by path.
func ExampleStepTree() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{1}, "x")
	s, _ := mesh.NewNamedSharding(m, mesh.P())
	opt, err := optim.Adam(optim.Constant(0.25), optim.AdamDefaults())
	if err != nil {
		fmt.Println(err)
		return
	}
	init := jit.NewTree("init", func(f *lower.Function, p line[lower.Value]) []lower.Value {
		return optim.InitTree(f.Function, opt, p)
	})
	defer init.Close()
	type out struct {
		Loss lower.Value
		Next train[lower.Value]
	}
	step := jit.NewTree("step", func(f *lower.Function, in train[lower.Value]) out {
		x, y := f.Array([]float32{0, 1, 2}, 3), f.Array([]float32{1, 3, 5}, 3)
		r := f.Sub(f.Add(f.Mul(in.P.W, x), in.P.B), y)
		loss, g := autodiff.ValueAndGradTree(f.Function, f.Sum(f.Mul(r, r)), in.P)
		p, state := optim.StepTree(f.Function, opt, g, in.Opt, in.P)
		return out{Loss: loss, Next: train[lower.Value]{P: p, Opt: state}}
	}, jit.DonatePaths(".P", ".Opt"))
	defer step.Close()

	w, _ := jit.Put(c, []float32{0}, nil, s)
	b, _ := jit.Put(c, []float32{0}, nil, s)
	st := train[*jit.Array]{P: line[*jit.Array]{W: w, B: b}}
	if err := init.Call(c, st.P, &st.Opt); err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		var o struct {
			Loss *jit.Array
			Next train[*jit.Array]
		}
		if err := step.Call(c, st, &o); err != nil {
			fmt.Println(err)
			return
		}
		loss, _ := jit.Item[float32](o.Loss)
		fmt.Println("loss", loss)
		o.Loss.Close()
		st = o.Next
	}
	wv, _ := jit.Item[float32](st.P.W)
	bv, _ := jit.Item[float32](st.P.B)
	fmt.Println("w", wv, "b", bv)
	jit.CloseTree(st)
	// Output:
	// loss 35
	// loss 24.87506
	// loss 16.561693
	// w 0.7422542 b 0.7411381
}
