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

// Adam fits y = w x + b to three points, its parameters a tree: the step differentiates with
// respect to the tree, updates it with StepTree, and donates the old parameters and state.
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
	step := jit.NewTree("step", func(f *lower.Function, p line[lower.Value], state []lower.Value) (lower.Value, line[lower.Value], []lower.Value) {
		x, y := f.Array([]float32{0, 1, 2}, 3), f.Array([]float32{1, 3, 5}, 3)
		r := f.Sub(f.Add(f.Mul(p.W, x), p.B), y)
		loss, g := autodiff.ValueAndGradTree(f.Function, f.Sum(f.Mul(r, r)), p)
		p, state = optim.StepTree(f.Function, opt, g, state, p)
		return loss, p, state
	}, jit.Donate(0, 1))
	defer step.Close()

	w, _ := jit.Put(c, []float32{0}, nil, s)
	b, _ := jit.Put(c, []float32{0}, nil, s)
	p := line[*jit.Array]{W: w, B: b}
	var state []*jit.Array
	if err := init.Call(c, []any{p}, &state); err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		var loss *jit.Array
		if err := step.Call(c, []any{p, state}, &loss, &p, &state); err != nil {
			fmt.Println(err)
			return
		}
		l, _ := jit.Item[float32](loss)
		fmt.Println("loss", l)
		loss.Close()
	}
	wv, _ := jit.Item[float32](p.W)
	bv, _ := jit.Item[float32](p.B)
	fmt.Println("w", wv, "b", bv)
	jit.CloseTree([]any{p, state})
	// Output:
	// loss 35
	// loss 24.87506
	// loss 16.561693
	// w 0.7422542 b 0.7411381
}
