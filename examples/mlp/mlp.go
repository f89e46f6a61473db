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
	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
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

// Adam returns the Body of one Adam step (Kingma and Ba; optax.adam's update with eps added
// to the root of the second moment): arguments w1, b1, w2, b2, then their first moments,
// their second moments, the step count t (a float32 scalar, 1 at the first step), x, y;
// results the loss and the new parameters, first and second moments.
func Adam(lr, b1, b2, eps float64) jit.Body {
	return func(f *lower.Function, a []lower.Value) []lower.Value {
		p, m, v, t, x, y := a[0:4], a[4:8], a[8:12], a[12], a[13], a[14]
		loss, g := autodiff.ValueAndGrad(f.Function, Loss(f, p[0], p[1], p[2], p[3], x, y), p...)
		one := f.ConstantOf(dtypes.Float32, 1)
		c1 := f.Sub(one, f.Pow(f.ConstantOf(dtypes.Float32, float32(b1)), t)) // 1 - b1^t
		c2 := f.Sub(one, f.Pow(f.ConstantOf(dtypes.Float32, float32(b2)), t))
		ps, ms, vs := make([]lower.Value, 4), make([]lower.Value, 4), make([]lower.Value, 4)
		for i := range p {
			ms[i] = f.Add(f.Mul(f.Constant(b1), m[i]), f.Mul(f.Constant(1-b1), g[i]))
			vs[i] = f.Add(f.Mul(f.Constant(b2), v[i]), f.Mul(f.Constant(1-b2), f.Mul(g[i], g[i])))
			mhat := f.Div(ms[i], c1)
			vhat := f.Div(vs[i], c2)
			ps[i] = f.Sub(p[i], f.Mul(f.Constant(lr), f.Div(mhat, f.Add(f.Sqrt(vhat), f.Constant(eps)))))
		}
		return append(append(append([]lower.Value{loss}, ps...), ms...), vs...)
	}
}

// StepOptions returns the jit options of an SGD step: parameters and data laid out by Specs,
// the loss replicated, the new parameters laid out as the old ones, whose memory they reuse
// (Donate).
func StepOptions() []jit.Option {
	s := Specs()
	return []jit.Option{jit.InSpecs(s...), jit.OutSpecs(append([]mesh.PartitionSpec{mesh.P()}, s[:4]...)...), jit.Donate(0, 1, 2, 3)}
}

// AdamOptions returns the jit options of an Adam step: as StepOptions, with each moment laid
// out (and donated) like its parameter, and the step count replicated.
func AdamOptions() []jit.Option {
	s := Specs()
	p := s[:4]
	in := append(append(append(append([]mesh.PartitionSpec{}, p...), p...), p...), mesh.P())
	in = append(in, s[4:]...)
	out := append(append(append([]mesh.PartitionSpec{mesh.P()}, p...), p...), p...)
	return []jit.Option{jit.InSpecs(in...), jit.OutSpecs(out...), jit.Donate(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)}
}
