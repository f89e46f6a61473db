package gpt

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/tree"
)

// Text is the tiny text the model learns, testdata/tiny.txt.
//
//go:embed testdata/tiny.txt
var Text string

// Config sizes a model and its training: the width Dim (a multiple of Heads), the number of
// blocks, the sequence length, the batch size and the number of steps.
type Config struct{ Dim, Layers, Seq, Batch, Steps int }

// Tiny is the configuration tools/oracle/gpt.py trains: width 32, 2 blocks, sequences of 16,
// batches of 8, 50 steps.
var Tiny = Config{Dim: 32, Layers: 2, Seq: 16, Batch: 8, Steps: 50}

// Tokens returns text as indices into its distinct bytes in sorted order, and their number
// (the vocabulary).
func Tokens(text string) ([]int32, int) {
	vocab := []byte(text)
	slices.Sort(vocab)
	vocab = slices.Compact(vocab)
	out := make([]int32, len(text))
	for i := range len(text) {
		out[i] = int32(strings.IndexByte(string(vocab), text[i]))
	}
	return out, len(vocab)
}

// Sample returns the inputs and targets of a step, [Batch, Seq] row-major: row r starts at
// ((step*Batch + r) * 37) mod (len(tokens) - Seq - 1), and its targets are the inputs shifted
// by one. It returns nothing for a text of Seq + 1 tokens or fewer, or a negative step.
func (c Config) Sample(tokens []int32, step int) (x, y []int32) {
	if len(tokens)-c.Seq-1 <= 0 || step < 0 || c.Seq < 1 {
		return nil, nil
	}
	for r := range c.Batch {
		s := ((step*c.Batch + r) * 37) % (len(tokens) - c.Seq - 1)
		x = append(x, tokens[s:s+c.Seq]...)
		y = append(y, tokens[s+1:s+c.Seq+1]...)
	}
	return x, y
}

// Shapes returns the dimensions of each parameter.
func (c Config) Shapes(vocab int) Params[[]int] {
	v, sq := []int{c.Dim}, []int{c.Dim, c.Dim}
	block := Block[[]int]{LN1Scale: v, LN1Bias: v, Wq: sq, Wk: sq, Wv: sq, Wo: sq, LN2Scale: v, LN2Bias: v,
		W1: []int{c.Dim, 4 * c.Dim}, B1: []int{4 * c.Dim}, W2: []int{4 * c.Dim, c.Dim}, B2: v}
	return Params[[]int]{Embed: []int{vocab, c.Dim}, Pos: []int{c.Seq, c.Dim}, Blocks: slices.Repeat([]Block[[]int]{block}, c.Layers), LNScale: v, LNBias: v}
}

// check refuses a configuration the model cannot be built or trained with on a text of n
// tokens, naming the field.
func (c Config) check(n int) error {
	switch {
	case c.Dim < Heads || c.Dim%Heads != 0:
		return fmt.Errorf("gpt: Dim = %d: want a positive multiple of the %d heads", c.Dim, Heads)
	case c.Layers < 0:
		return fmt.Errorf("gpt: Layers = %d: want 0 or more", c.Layers)
	case c.Seq < 1 || c.Batch < 1 || c.Steps < 0:
		return fmt.Errorf("gpt: Seq = %d, Batch = %d, Steps = %d: want Seq and Batch positive, Steps 0 or more", c.Seq, c.Batch, c.Steps)
	case n <= c.Seq+1:
		return fmt.Errorf("gpt: the text has %d tokens: want more than Seq + 1 = %d", n, c.Seq+1)
	}
	return nil
}

// Specs returns the layout of the parameters on a mesh of axes "data" and "model": the query,
// key, value and first MLP matrices split by columns over "model" (one group of heads or
// units per device), the attention output and second MLP matrices by rows, the first MLP
// bias with its units; everything else replicated.
func (c Config) Specs() Params[mesh.PartitionSpec] {
	col, row, rep := mesh.P(nil, "model"), mesh.P("model", nil), mesh.P()
	block := Block[mesh.PartitionSpec]{LN1Scale: rep, LN1Bias: rep, Wq: col, Wk: col, Wv: col, Wo: row,
		LN2Scale: rep, LN2Bias: rep, W1: col, B1: mesh.P("model"), W2: row, B2: rep}
	return Params[mesh.PartitionSpec]{Embed: rep, Pos: rep, Blocks: slices.Repeat([]Block[mesh.PartitionSpec]{block}, c.Layers), LNScale: rep, LNBias: rep}
}

// Init returns the starting parameters, row-major: layer-norm scales 1 and layer-norm biases
// 0; every other parameter, the k-th leaf in tree order, float32(((i*(7+2k) + 3k) % 17) - 8)
// / 32 for its i-th element, as tools/oracle/gpt.py makes them.
func (c Config) Init(vocab int) (Params[[]float32], error) {
	dims, d, err := tree.Flatten[[]int](c.Shapes(vocab))
	if err != nil {
		return Params[[]float32]{}, err
	}
	values := make([][]float32, len(dims))
	for k, path := range d.Paths() {
		v := make([]float32, shapes.Make(dtypes.Float32, dims[k]...).Size())
		for i := range v {
			switch {
			case strings.HasSuffix(path, "Scale"):
				v[i] = 1
			case strings.HasSuffix(path, "LN1Bias") || strings.HasSuffix(path, "LN2Bias") || strings.HasSuffix(path, "LNBias"):
			default:
				v[i] = float32((i*(7+2*k)+3*k)%17-8) / 32
			}
		}
		values[k] = v
	}
	return tree.Build[Params[[]float32]](d, values)
}

// Optimizer returns optax.chain(clip_by_global_norm(1), adamw(warmup_cosine_decay_schedule(0,
// 1e-2, 5, Steps, 1e-3), weight_decay=0.01)).
func (c Config) Optimizer() (optim.Transformation, error) {
	lr, err := optim.WarmupCosineDecay(0, 1e-2, 5, c.Steps, 1e-3)
	if err != nil {
		return nil, err
	}
	clip, err := optim.ClipByGlobalNorm(1)
	if err != nil {
		return nil, err
	}
	adamw, err := optim.AdamW(lr, optim.AdamDefaults(), 0.01, nil)
	if err != nil {
		return nil, err
	}
	return optim.Chain(clip, adamw), nil
}

// Train trains the model for c.Steps steps on text over m, a mesh of axes "data" and "model"
// of c's client, and returns the loss before each step. Nothing stays on the devices after it
// returns.
func (c Config) Train(client *pjrt.Client, m mesh.Mesh, text string) (losses []float32, err error) {
	tr, err := c.NewTrainer(client, m, text)
	if err != nil {
		return nil, err
	}
	defer func() { err = closeAlso(err, tr.Close()) }()
	for i := range c.Steps {
		l, err := tr.Step(i)
		if err != nil {
			return nil, err
		}
		losses = append(losses, l)
	}
	return losses, nil
}

// Trainer holds a model's state on the devices and its compiled steps. It is not safe for
// concurrent use; Close frees it.
type Trainer struct {
	c          Config
	client     *pjrt.Client
	tokens     []int32
	data       mesh.NamedSharding
	init, step *jit.TreeFunction
	params     Params[*jit.Array]
	state      []*jit.Array
}

// NewTrainer puts the initial parameters and optimizer state of c on m, a mesh of axes "data"
// and "model" of client, to train on text. A configuration that does not fit the model or the
// text is an error naming the field; a mesh the arrays cannot be laid out on is jit's error.
func (c Config) NewTrainer(client *pjrt.Client, m mesh.Mesh, text string) (_ *Trainer, err error) {
	toks, vocab := Tokens(text)
	if err := c.check(len(toks)); err != nil {
		return nil, err
	}
	opt, err := c.Optimizer()
	if err != nil {
		return nil, err
	}
	shapes, _, _ := tree.Flatten[[]int](c.Shapes(vocab))
	specs, _, _ := tree.Flatten[mesh.PartitionSpec](c.Specs())
	stateShapes := make([]lower.Shape, len(shapes))
	for i, d := range shapes {
		stateShapes[i] = lower.NewShape(dtypes.Float32, d...)
	}
	stateSpecs, err := optim.StateSpecs(opt, stateShapes, specs)
	if err != nil {
		return nil, err
	}
	data, err := mesh.NewNamedSharding(m, mesh.P("data"))
	if err != nil {
		return nil, err
	}
	tr := &Trainer{c: c, client: client, tokens: toks, data: data}
	tr.init = jit.NewTree("gpt_init", func(f *lower.Function, p Params[lower.Value]) []lower.Value {
		return optim.InitTree(f.Function, opt, p)
	}, jit.InTree(c.Specs()), jit.OutTree(stateSpecs))
	tr.step = jit.NewTree("gpt_step", Step(opt), jit.InTree(c.Specs(), stateSpecs, data.Spec(), data.Spec()),
		jit.OutTree(mesh.P(), c.Specs(), stateSpecs), jit.Donate(0, 1))
	defer func() {
		if err != nil {
			err = closeAlso(err, tr.Close())
		}
	}()
	if tr.params, err = c.put(client, m, vocab); err != nil {
		return nil, err
	}
	if err := tr.init.Call(client, []any{tr.params}, &tr.state); err != nil {
		return nil, err
	}
	return tr, nil
}

// Step runs train step i on its batch (Config.Sample) and returns the loss before it.
func (tr *Trainer) Step(i int) (float32, error) {
	c := tr.c
	xs, ys := c.Sample(tr.tokens, i)
	x, err := jit.Put(tr.client, xs, []int{c.Batch, c.Seq}, tr.data)
	var y, loss *jit.Array
	if err == nil {
		if y, err = jit.Put(tr.client, ys, []int{c.Batch, c.Seq}, tr.data); err == nil {
			err = tr.step.Call(tr.client, []any{tr.params, tr.state, x, y}, &loss, &tr.params, &tr.state)
		}
	}
	if err = closeAlso(err, jit.CloseTree([]any{x, y})); err != nil {
		return 0, fmt.Errorf("gpt: step %d: %w", i, err)
	}
	l, err := jit.Item[float32](loss)
	if err = closeAlso(err, loss.Close()); err != nil {
		return 0, fmt.Errorf("gpt: step %d: %w", i, err)
	}
	return l, nil
}

// Close frees the state and the compiled steps.
func (tr *Trainer) Close() error {
	err := jit.CloseTree([]any{tr.params, tr.state})
	err = closeAlso(err, tr.init.Close())
	return closeAlso(err, tr.step.Close())
}

// put puts the initial parameters on m, laid out by Specs.
func (c Config) put(client *pjrt.Client, m mesh.Mesh, vocab int) (Params[*jit.Array], error) {
	var zero Params[*jit.Array]
	init, err := c.Init(vocab)
	if err != nil {
		return zero, err
	}
	values, d, _ := tree.Flatten[[]float32](init)
	dims, _, _ := tree.Flatten[[]int](c.Shapes(vocab))
	specs, _, _ := tree.Flatten[mesh.PartitionSpec](c.Specs())
	arrays := make([]*jit.Array, len(values))
	for i, v := range values {
		s, err := mesh.NewNamedSharding(m, specs[i])
		if err == nil {
			arrays[i], err = jit.Put(client, v, dims[i], s)
		}
		if err != nil {
			return zero, closeAlso(fmt.Errorf("gpt: parameter %s: %w", d.Paths()[i], err), jit.CloseTree(arrays))
		}
	}
	return tree.Build[Params[*jit.Array]](d, arrays)
}

// closeAlso returns err, or else the error of a close.
func closeAlso(err, closeErr error) error {
	if err != nil {
		return err
	}
	return closeErr
}
