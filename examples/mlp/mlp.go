// Package mlp is the 2-layer perceptron that xlamesh's gradient examples, tests and benchmark
// train, on a 2x4 mesh of axes "data" (the batch) and "model" (the hidden units), and that
// tools/oracle/vjp.py trains the same way in JAX:
//
//	h = tanh(x W1 + b1); p = h W2 + b2; loss = mean((p - y)^2)
//
// W1 is split by columns and W2 by rows over "model" (Megatron's column- then row-parallel
// pair), x and y by rows over "data"; the partitioner adds the collectives, among them the
// all-reduce over "data" of the weight gradients. Init gives every array values that are
// exact in float32, so Go and JAX start from the same bits.
package mlp

import (
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/shapes"
)

// Sizes of the model and its batch.
type Sizes struct {
	Batch, In, Hidden, Out int
}

// Small is the size the example and the oracle train: batch 16, 8 inputs, 32 hidden units,
// 4 outputs.
var Small = Sizes{Batch: 16, In: 8, Hidden: 32, Out: 4}

// Bench is the size of the training-step benchmark (BenchmarkTrainStep and
// tools/bench/jax_bench.py's "TrainStep"): batch 256, 512 inputs, 1024 hidden units, 256
// outputs; about 1.2 GFLOP per step.
var Bench = Sizes{Batch: 256, In: 512, Hidden: 1024, Out: 256}

// Params are the parameter arrays' names in argument order.
var Params = []string{"w1", "b1", "w2", "b2"}

// Specs returns the partition specs of the arguments w1, b1, w2, b2, x, y.
func Specs() []mesh.PartitionSpec {
	return []mesh.PartitionSpec{
		mesh.P(nil, "model"), // w1 [in, hidden]
		mesh.P("model"),      // b1 [hidden]
		mesh.P("model", nil), // w2 [hidden, out]
		mesh.P(),             // b2 [out]
		mesh.P("data", nil),  // x [batch, in]
		mesh.P("data", nil),  // y [batch, out]
	}
}

// Shapes returns the dimensions of w1, b1, w2, b2, x, y.
func (s Sizes) Shapes() [][]int {
	return [][]int{{s.In, s.Hidden}, {s.Hidden}, {s.Hidden, s.Out}, {s.Out}, {s.Batch, s.In}, {s.Batch, s.Out}}
}

// Init returns the starting values of w1, b1, w2, b2, x, y, row-major: multiples of 1/64
// (parameters) or 1/8 (data) from a fixed pattern, exact in float32; tools/oracle/vjp.py
// makes the same.
func (s Sizes) Init() [][]float32 {
	out := make([][]float32, 6)
	for k, dims := range s.Shapes() {
		n := 1
		for _, d := range dims {
			n *= d
		}
		v := make([]float32, n)
		scale := float32(64)
		if k >= 4 {
			scale = 8
		}
		for i := range v {
			v[i] = float32((i*(7+2*k)+3*k)%17-8) / scale
		}
		out[k] = v
	}
	return out
}

// Loss builds the mean squared error of the model with parameters w1, b1, w2, b2 on the batch
// x, y.
func Loss(f *lower.Function, w1, b1, w2, b2, x, y lower.Value) lower.Value {
	batch, hidden, out := x.Shape().Dim(0), w1.Shape().Dim(1), w2.Shape().Dim(1)
	h := f.Tanh(f.Add(f.MatMul(x, w1), f.BroadcastInDim(b1, []int{batch, hidden}, []int{1})))
	p := f.Add(f.MatMul(h, w2), f.BroadcastInDim(b2, []int{batch, out}, []int{1}))
	d := f.Sub(p, y)
	return f.Div(f.Sum(f.Mul(d, d)), f.Constant(float64(batch*out)))
}

// SGD returns the Body of one SGD step with learning rate lr: arguments w1, b1, w2, b2, x,
// y; results the loss (before the step) and the new w1, b1, w2, b2.
func SGD(lr float64) jit.Body {
	return func(f *lower.Function, a []lower.Value) []lower.Value {
		loss, g := autodiff.ValueAndGrad(f.Function, Loss(f, a[0], a[1], a[2], a[3], a[4], a[5]), a[:4]...)
		out := []lower.Value{loss}
		for i, w := range a[:4] {
			out = append(out, f.Sub(w, f.Mul(g[i], f.Constant(lr))))
		}
		return out
	}
}

// Adam returns the Body of one optax.adam step (package optim's Adam with a constant
// learning rate): arguments w1, b1, w2, b2, then the optimizer's state (Sizes.AdamState: Adam's
// int32 step count, 0 before the first step, then the first and the second moment of each
// parameter), then x, y; results the loss (before the step), the new parameters and the new
// state. A hyperparameter out of range makes the step fail to lower, with an error wrapping
// optim.ErrHyperparameter.
func Adam(lr, b1, b2, eps float64) jit.Body {
	opt, err := adam(lr, b1, b2, eps)
	return func(f *lower.Function, a []lower.Value) []lower.Value {
		if err != nil {
			f.Fail("mlp.adam", -1, lower.Value{}, err)
			return nil
		}
		n := len(Params)
		k := n + len(opt.Layout(paramShapes(a[:n])))
		p, state, x, y := a[:n], a[n:k], a[k], a[k+1]
		loss, g := autodiff.ValueAndGrad(f.Function, Loss(f, p[0], p[1], p[2], p[3], x, y), p...)
		updates, next := opt.Update(f.Function, g, state, p)
		out := append([]lower.Value{loss}, optim.ApplyUpdates(f.Function, p, updates)...)
		return append(out, next...)
	}
}

func adam(lr, b1, b2, eps float64) (optim.Transformation, error) {
	return optim.Adam(optim.Constant(lr), optim.AdamParams{B1: b1, B2: b2, Eps: eps})
}

// paramShapes returns the shapes of the parameter values ps.
func paramShapes(ps []lower.Value) []shapes.Shape {
	out := make([]shapes.Shape, len(ps))
	for i, p := range ps {
		out[i] = p.Shape()
	}
	return out
}

// ParamShapes returns the float32 shapes of w1, b1, w2, b2.
func (s Sizes) ParamShapes() []shapes.Shape {
	out := make([]shapes.Shape, len(Params))
	for i, d := range s.Shapes()[:len(Params)] {
		out[i] = shapes.Make(dtypes.Float32, d...)
	}
	return out
}

// AdamState returns the layout of an Adam step's state for parameters of these sizes (see
// optim.Transformation.Layout): the int32 step count, then a leaf shaped like each of w1,
// b1, w2, b2 for the first moments and again for the second.
func (s Sizes) AdamState() []optim.Leaf {
	opt, _ := adam(0, 0, 0, 0)
	return opt.Layout(s.ParamShapes())
}

// StepOptions returns the jit options of an SGD step: parameters and data laid out by Specs,
// the loss replicated, the new parameters laid out as the old ones, whose memory they reuse
// (Donate).
func StepOptions() []jit.Option {
	s := Specs()
	return []jit.Option{jit.InSpecs(s...), jit.OutSpecs(append([]mesh.PartitionSpec{mesh.P()}, s[:4]...)...), jit.Donate(0, 1, 2, 3)}
}

// AdamOptions returns the jit options of an Adam step for parameters of these sizes: as
// StepOptions, with the state laid out by optim.StateSpecs (each moment like its parameter,
// the step count replicated) and the parameters and state donated. Its error is
// optim.StateSpecs's.
func (s Sizes) AdamOptions() ([]jit.Option, error) {
	specs := Specs()
	p := specs[:4]
	opt, _ := adam(0, 0, 0, 0)
	state, err := optim.StateSpecs(opt, s.ParamShapes(), p)
	if err != nil {
		return nil, err
	}
	in := append(append(slices.Clone(p), state...), specs[4:]...)
	out := append(append([]mesh.PartitionSpec{mesh.P()}, p...), state...)
	donate := make([]int, len(p)+len(state))
	for i := range donate {
		donate[i] = i
	}
	return []jit.Option{jit.InSpecs(in...), jit.OutSpecs(out...), jit.Donate(donate...)}, nil
}
