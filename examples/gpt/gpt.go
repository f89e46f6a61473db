package gpt

import (
	"math"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/optim"
)

// Heads is the number of attention heads of every block.
const Heads = 4

// BEGIN model

// Block is one pre-norm transformer block: causal self-attention, then a GELU MLP, each
// after a layer norm and added to the residual stream.
type Block[T any] struct{ LN1Scale, LN1Bias, Wq, Wk, Wv, Wo, LN2Scale, LN2Bias, W1, B1, W2, B2 T }

// Params are the model's parameters: the token embedding (also the output head), the
// position embedding, the final layer norm and the blocks.
type Params[T any] struct {
	Embed, Pos, LNScale, LNBias T
	Blocks                      []Block[T]
}

// Logits returns the next-token logits [batch, seq, vocab] of the int32 tokens [batch, seq].
func Logits(f *lower.Function, p Params[lower.Value], tokens lower.Value) lower.Value {
	b, t, d := tokens.Shape().Dim(0), tokens.Shape().Dim(1), p.Embed.Shape().Dim(1)
	h := f.Add(f.MatMul(nn.OneHot(f.Function, tokens, p.Embed.Shape().Dim(0), dtypes.Float32), p.Embed), p.Pos)
	heads := func(x lower.Value) lower.Value { return f.Reshape(x, b, t, Heads, d/Heads) }
	for _, l := range p.Blocks {
		a := nn.LayerNorm(f.Function, h, nn.LayerNormOptions{Scale: l.LN1Scale, Bias: l.LN1Bias})
		q, k, v := heads(f.MatMul(a, l.Wq)), heads(f.MatMul(a, l.Wk)), heads(f.MatMul(a, l.Wv))
		s := f.Mul(f.Einsum("bthd,bshd->bhts", q, k), f.Constant(1/math.Sqrt(float64(d/Heads))))
		w := nn.Softmax(f.Function, jnp.Where(f.Function, jnp.Tril(f.Function, f.Full(lower.NewShape(dtypes.Bool, t, t), true), 0), s, f.Constant(-1e9)))
		h = f.Add(h, f.MatMul(f.Reshape(f.Einsum("bhts,bshd->bthd", w, v), b, t, d), l.Wo))
		m := nn.Gelu(f.Function, f.Add(f.MatMul(nn.LayerNorm(f.Function, h, nn.LayerNormOptions{Scale: l.LN2Scale, Bias: l.LN2Bias}), l.W1), l.B1), true)
		h = f.Add(h, f.Add(f.MatMul(m, l.W2), l.B2))
	}
	return f.MatMul(nn.LayerNorm(f.Function, h, nn.LayerNormOptions{Scale: p.LNScale, Bias: p.LNBias}), f.Transpose(p.Embed, 1, 0))
}

// Loss is the mean cross-entropy of the logits of x against the next tokens y.
func Loss(f *lower.Function, p Params[lower.Value], x, y lower.Value) lower.Value {
	return f.Neg(jnp.Mean(f.Function, f.Sum(f.Mul(nn.OneHot(f.Function, y, p.Embed.Shape().Dim(0), dtypes.Float32), nn.LogSoftmax(f.Function, Logits(f, p, x))), 2)))
}

// Step returns the body of one train step with optimizer opt: from the parameters, the
// optimizer's state and a batch to the loss, the new parameters and the new state.
func Step(opt optim.Transformation) func(*lower.Function, Params[lower.Value], []lower.Value, lower.Value, lower.Value) (lower.Value, Params[lower.Value], []lower.Value) {
	return func(f *lower.Function, p Params[lower.Value], s []lower.Value, x, y lower.Value) (lower.Value, Params[lower.Value], []lower.Value) {
		loss, g := autodiff.ValueAndGradTree(f.Function, Loss(f, p, x, y), p)
		p, s = optim.StepTree(f.Function, opt, g, s, p)
		return loss, p, s
	}
}

// END model
