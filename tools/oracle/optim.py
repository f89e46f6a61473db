"""The optim group: optax's optimizers and schedules, for package optim.

generate() returns the document generate.py writes to OUTDIR/optim.json:

- "optimizers": one case per optax gradient transformation (sgd with and
  without momentum and Nesterov, adam with its options, adamw and lion with and
  without weight-decay masks, adafactor with its options, factored or not,
  schedules as learning rates, clip_by_global_norm in chains). Each starts from the
  parameters PARAMS (a 4x3 matrix, a vector of 5 and a scalar, the params
  pattern with k = 0, 1, 2 and scale 8) and runs STEPS steps of
  optax's update and apply_updates with the gradients of grads(step): the
  pattern with k = 5*leaf + step + 1 and scale 8, independent of the
  parameters, in float32 or (the _bf16 cases) bfloat16, each step one jitted function of the parameters, gradients
  and state (optax's update, then apply_updates), as a train step is and as
  the Go test compiles it. It records the parameters after each step and the leaves of
  the final optimizer state (jax.tree.leaves: counts and moments, in optax's
  order, which package optim's flat State keeps).
  internal/oracletest/optim_test.go builds the same optimizer with package
  optim (its table is keyed by case name), runs the steps on the CPU plugin
  and compares.
- "schedules": optax schedules evaluated at the counts 0..COUNTS-1 (int32
  counts, as scale_by_schedule passes them), float32 values.

Inputs are small dyadic floats from formulas Go repeats (pattern, as in
vjp.py), never from a random generator.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from vjp import arr, pattern

STEPS = 5
COUNTS = 10
SHAPES = [(4, 3), (5,), ()]


class OptimError(Exception):
    pass


def params(dtype):
    return [jnp.asarray(pattern(s, k, 8)).astype(dtype) for k, s in enumerate(SHAPES)]


def grads(step, dtype):
    return [jnp.asarray(pattern(s, 5 * k + step + 1, 8)).astype(dtype) for k, s in enumerate(SHAPES)]


def warmup_cosine():
    return optax.warmup_cosine_decay_schedule(0.0, 0.01, 2, 5, 0.001)


def linear():
    return optax.linear_schedule(0.1, 0.01, 3, 1)


# Each case: name, a function returning the optax transformation and the parameters' and
# gradients' type (the pattern values are exact in bfloat16 too). The Go test has a builder
# for each name.
OPTIMIZERS = [
    ("sgd", lambda: optax.sgd(0.1)),
    ("sgd_momentum", lambda: optax.sgd(0.1, momentum=0.9)),
    ("sgd_nesterov", lambda: optax.sgd(0.1, momentum=0.9, nesterov=True)),
    ("sgd_linear_schedule", lambda: optax.sgd(linear(), momentum=0.5)),
    ("adam", lambda: optax.adam(0.01)),
    ("adam_eps_root", lambda: optax.adam(0.01, b1=0.8, b2=0.99, eps=1e-3, eps_root=1e-4)),
    ("adam_nesterov", lambda: optax.adam(0.01, nesterov=True)),
    ("adam_warmup_cosine", lambda: optax.adam(warmup_cosine())),
    ("adamw", lambda: optax.adamw(0.01, weight_decay=0.1)),
    ("adamw_default_decay", lambda: optax.adamw(0.01)),
    ("lion", lambda: optax.lion(0.001)),
    ("lion_no_decay", lambda: optax.lion(0.003, b1=0.8, b2=0.95, weight_decay=0.0)),
    ("clip_adam", lambda: optax.chain(optax.clip_by_global_norm(1.0), optax.adam(0.01))),
    ("clip_sgd_untriggered", lambda: optax.chain(optax.clip_by_global_norm(100.0), optax.sgd(0.1))),
    ("clip_adamw_schedule", lambda: optax.chain(optax.clip_by_global_norm(0.5),
                                                optax.adamw(warmup_cosine(), weight_decay=0.05))),
    ("adamw_mask", lambda: optax.adamw(0.01, weight_decay=0.1, mask=[True, False, True])),
    ("lion_mask", lambda: optax.lion(0.001, mask=[False, True, True])),
    # adafactor: with min_dim_size_to_factor lowered to 3 the 4x3 matrix has factored
    # second moments (a row of 3, a column of 4); at the default 128 nothing is factored.
    ("adafactor", lambda: optax.adafactor(0.01)),
    ("adafactor_factored", lambda: optax.adafactor(0.01, min_dim_size_to_factor=3)),
    ("adafactor_momentum", lambda: optax.adafactor(0.01, min_dim_size_to_factor=2, momentum=0.9)),
    ("adafactor_weight_decay", lambda: optax.adafactor(0.01, min_dim_size_to_factor=3, weight_decay_rate=0.1,
                                                       weight_decay_mask=[True, True, False])),
    ("adafactor_plain_schedule", lambda: optax.adafactor(linear(), min_dim_size_to_factor=3, decay_rate=0.5,
                                                         decay_offset=-2, multiply_by_parameter_scale=False,
                                                         clipping_threshold=None, eps=1e-3)),
    ("adafactor_unfactored_clip", lambda: optax.adafactor(0.05, min_dim_size_to_factor=3, factored=False,
                                                          clipping_threshold=0.5)),
    ("sgd_nesterov_bf16", lambda: optax.sgd(0.1, momentum=0.9, nesterov=True), jnp.bfloat16),
    ("lion_bf16", lambda: optax.lion(0.001), jnp.bfloat16),
    ("adafactor_momentum_bf16", lambda: optax.adafactor(0.01, min_dim_size_to_factor=2, momentum=0.9),
     jnp.bfloat16),
    ("clip_adamw_schedule_bf16", lambda: optax.chain(optax.clip_by_global_norm(0.5),
                                                     optax.adamw(warmup_cosine(), weight_decay=0.05)),
     jnp.bfloat16),
]

SCHEDULES = [
    ("constant", lambda: optax.constant_schedule(0.25)),
    ("linear", linear),
    ("linear_increasing", lambda: optax.linear_schedule(0.0, 1.0, 4)),
    ("cosine_decay", lambda: optax.cosine_decay_schedule(0.1, 5, alpha=0.1)),
    ("cosine_decay_exponent", lambda: optax.cosine_decay_schedule(0.1, 6, alpha=0.0, exponent=2.0)),
    ("warmup_cosine_decay", warmup_cosine),
    ("warmup_cosine_decay_no_warmup", lambda: optax.warmup_cosine_decay_schedule(0.0, 0.02, 0, 4, 0.002)),
]


def run(make, dtype=jnp.float32):
    opt = make()

    @jax.jit
    def step(p, g, state):
        updates, state = opt.update(g, state, p)
        return optax.apply_updates(p, updates), state

    p = params(dtype)
    state = jax.jit(opt.init)(p)
    steps = []
    for s in range(STEPS):
        p, state = step(p, grads(s, dtype), state)
        steps.append([arr(x) for x in p])
    return {"dtype": jnp.dtype(dtype).name, "steps": steps,
            "state": [arr(x) for x in jax.tree.leaves(state)]}


def schedule(make):
    f = jax.jit(make())
    return arr(np.array([f(jnp.int32(c)) for c in range(COUNTS)], dtype=np.float32))


def generate():
    if optax.__version__ != "0.2.8":
        raise OptimError("optim: want optax 0.2.8, have %s" % optax.__version__)
    return {
        "optax_version": optax.__version__,
        "steps": STEPS,
        "optimizers": [dict(name=c[0], **run(*c[1:])) for c in OPTIMIZERS],
        "schedules": [{"name": n, "values": schedule(m)} for n, m in SCHEDULES],
    }
