"""The gpt group: the JAX twin of examples/gpt.

A character-level GPT (embedding, LAYERS pre-norm blocks of causal attention and a GELU MLP,
a tied output head) trained for STEPS steps of AdamW with warmup + cosine decay and global-norm
clipping on examples/gpt/testdata/tiny.txt, data-parallel over "data" and tensor-parallel over
"model" on a 2x4 mesh of CPU devices, from the same initial parameters and batches as the Go
program. generate() returns the document generate.py writes to OUTDIR/gpt.json: the loss
before each step, and the number of lines of the model and the step (between the BEGIN and
END markers below, blank lines and comments left out), which examples/gpt compares its own
against.

The four helpers after the first marker pair write out what xlamesh's package nn computes for
LayerNorm, Softmax, LogSoftmax and Gelu (flax's variance and epsilon, the maximum differentiated through,
the cube as x*(x*x)), so that both programs differentiate the same ops; they stand for
library calls (jax.nn.*, flax's LayerNorm) and are not counted.
"""

import math
import os
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from vjp import pattern

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TEXT = os.path.join(ROOT, "examples", "gpt", "testdata", "tiny.txt")
DIM, HEADS, LAYERS, SEQ, BATCH, STEPS = 32, 4, 2, 16, 8, 50


# BEGIN helpers (package nn's LayerNorm, Softmax, LogSoftmax and Gelu; not counted)
def layer_norm(x, scale, bias):
    mean, mean2 = jnp.mean(x, -1, keepdims=True), jnp.mean(x * x, -1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - mean * mean)
    return (x - mean) * (jax.lax.rsqrt(var + 1e-6) * scale) + bias


def softmax(x):
    e = jnp.exp(x - jnp.max(x, -1, keepdims=True))
    return e / jnp.sum(e, -1, keepdims=True)


def log_softmax(x):
    s = x - jnp.max(x, -1, keepdims=True)
    return s - jnp.log(jnp.sum(jnp.exp(s), -1, keepdims=True))


def gelu(x):
    return x * (0.5 * (1.0 + jnp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x * (x * x))))))
# END helpers


# BEGIN model
Block = namedtuple("Block", "ln1_scale ln1_bias wq wk wv wo ln2_scale ln2_bias w1 b1 w2 b2")
Params = namedtuple("Params", "embed pos ln_scale ln_bias blocks")


def logits(p, tokens):
    b, t = tokens.shape
    d = p.embed.shape[1]
    h = jax.nn.one_hot(tokens, p.embed.shape[0]) @ p.embed + p.pos
    mask = jnp.tril(jnp.ones((t, t), bool))
    heads = lambda x: x.reshape(b, t, HEADS, d // HEADS)  # noqa: E731
    for l in p.blocks:
        a = layer_norm(h, l.ln1_scale, l.ln1_bias)
        q, k, v = heads(a @ l.wq), heads(a @ l.wk), heads(a @ l.wv)
        s = jnp.einsum("bthd,bshd->bhts", q, k) * (1 / math.sqrt(d // HEADS))
        w = softmax(jnp.where(mask, s, -1e9))
        h = h + jnp.einsum("bhts,bshd->bthd", w, v).reshape(b, t, d) @ l.wo
        m = gelu(layer_norm(h, l.ln2_scale, l.ln2_bias) @ l.w1 + l.b1)
        h = h + (m @ l.w2 + l.b2)
    return layer_norm(h, p.ln_scale, p.ln_bias) @ p.embed.T


def loss_fn(p, x, y):
    return -jnp.mean(jnp.sum(jax.nn.one_hot(y, p.embed.shape[0]) * log_softmax(logits(p, x)), -1))


def make_step(opt):
    def step(p, opt_state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        updates, opt_state = opt.update(g, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, loss
    return step
# END model


def optimizer():
    lr = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 5, STEPS, 1e-3)
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(lr, weight_decay=0.01))


def tokens():
    """The text as indices into its sorted characters (examples/gpt.Tokens)."""
    with open(TEXT, encoding="utf-8") as fh:
        text = fh.read()
    vocab = sorted(set(text))
    return np.array([vocab.index(c) for c in text], np.int32), len(vocab)


def batch(toks, step):
    """Rows start at ((step*BATCH + row) * 37) mod (len - SEQ - 1) (examples/gpt.Config.Sample)."""
    starts = [((step * BATCH + r) * 37) % (len(toks) - SEQ - 1) for r in range(BATCH)]
    x = np.stack([toks[s:s + SEQ] for s in starts])
    y = np.stack([toks[s + 1:s + SEQ + 1] for s in starts])
    return x, y


def init(vocab):
    """Leaf k (in tree order) is pattern(shape, k, 32); layer-norm scales are ones and their
    biases zeros (examples/gpt.Init)."""
    block = Block(ln1_scale=(DIM,), ln1_bias=(DIM,), wq=(DIM, DIM), wk=(DIM, DIM), wv=(DIM, DIM), wo=(DIM, DIM),
                  ln2_scale=(DIM,), ln2_bias=(DIM,), w1=(DIM, 4 * DIM), b1=(4 * DIM,), w2=(4 * DIM, DIM), b2=(DIM,))
    shapes = Params(embed=(vocab, DIM), pos=(SEQ, DIM), ln_scale=(DIM,), ln_bias=(DIM,), blocks=[block] * LAYERS)
    paths, treedef = jax.tree_util.tree_flatten_with_path(shapes, is_leaf=lambda x: isinstance(x, tuple) and all(isinstance(d, int) for d in x))
    leaves = []
    for k, (path, shape) in enumerate(paths):
        name = jax.tree_util.keystr(path)
        if name.endswith("scale"):
            leaves.append(np.ones(shape, np.float32))
        elif name.endswith("ln1_bias") or name.endswith("ln2_bias") or name.endswith("ln_bias"):
            leaves.append(np.zeros(shape, np.float32))
        else:
            leaves.append(pattern(shape, k, 32))
    return jax.tree_util.tree_unflatten(treedef, leaves)


def specs():
    """The parameters' partition specs (examples/gpt.Specs)."""
    col, row, rep = P(None, "model"), P("model", None), P()
    block = Block(ln1_scale=rep, ln1_bias=rep, wq=col, wk=col, wv=col, wo=row, ln2_scale=rep, ln2_bias=rep,
                  w1=col, b1=P("model"), w2=row, b2=rep)
    return Params(embed=rep, pos=rep, ln_scale=rep, ln_bias=rep, blocks=[block] * LAYERS)


def setup():
    """The twin's training on a 2x4 ("data", "model") mesh of the first 8 devices: the jitted step
    (parameters and state donated), the initial parameters and optimizer state on the devices,
    the tokens and the batch's sharding."""
    devices = np.array(jax.devices()[:8]).reshape(2, 4)
    mesh = Mesh(devices, ("data", "model"))
    toks, vocab = tokens()
    opt = optimizer()
    is_spec = lambda x: isinstance(x, P)  # noqa: E731
    p_sh = jax.tree.map(lambda s: NamedSharding(mesh, s), specs(), is_leaf=is_spec)
    params = jax.device_put(init(vocab), p_sh)
    opt_state = jax.jit(opt.init)(params)
    o_sh = optax.tree_map_params(opt, lambda _, s: s, opt_state, p_sh,
                                 transform_non_params=lambda _: NamedSharding(mesh, P()))
    opt_state = jax.device_put(opt_state, o_sh)
    d_sh = NamedSharding(mesh, P("data", None))
    step = jax.jit(make_step(opt), in_shardings=(p_sh, o_sh, d_sh, d_sh),
                   out_shardings=(p_sh, o_sh, NamedSharding(mesh, P())), donate_argnums=(0, 1))
    return step, params, opt_state, toks, vocab, d_sh


def generate():
    step, params, opt_state, toks, vocab, d_sh = setup()
    losses = []
    for s in range(STEPS):
        x, y = batch(toks, s)
        params, opt_state, loss = step(params, opt_state, jax.device_put(x, d_sh), jax.device_put(y, d_sh))
        losses.append(float(loss))
    return {"steps": STEPS, "vocab": vocab, "losses": losses, "model_lines": model_lines()}


def export(path):
    """Writes the StableHLO text of the twin's step, as JAX lowers it, to path (for the benchmark
    that runs JAX's program on xlamesh's plugin)."""
    step, params, opt_state, toks, _, _ = setup()
    x, y = batch(toks, 0)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(step.lower(params, opt_state, x, y).as_text())


def model_lines():
    """The lines between "# BEGIN model" and "# END model" of this file that are neither blank
    nor comments."""
    with open(os.path.abspath(__file__), encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    body = lines[lines.index("# BEGIN model") + 1:lines.index("# END model")]
    return sum(1 for line in body if line.strip() and not line.strip().startswith("#"))


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--export":
        export(sys.argv[2])
    else:
        out = generate()
        print(out["model_lines"], out["losses"][:3], out["losses"][-3:])
