"""The pretty_forms group: modules as JAX prints them and as their bytecode, for the parser of
package refine.

JAX's Exported.mlir_module() writes each op in its custom ("pretty") form; package refine reads
that text (refine/pretty.go). This group holds small modules whose ops have the custom forms
the other corpora lack (a convolution's window with padding and dilations, dot_general's
precision and algorithm, reduce_precision, composite, rng_bit_generator, fft, cholesky, ...),
exported for TPU where that makes JAX write a StableHLO op rather than a CPU library call (an
export needs no TPU; nothing here runs). generate.py writes OUTDIR/pretty_forms.json:

    {"modules": [{"name", "platform", "exported" (base64 jax.export artifact), "text"}]}

refine's TestPrettyForms reads each text and each artifact's bytecode and requires the same
module.
"""

import base64
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import export, lax

from programs import _config


def _s(*shape, dtype=np.float32):
    return jax.ShapeDtypeStruct(shape, dtype)


def _conv(x, k):
    return lax.conv_general_dilated(x, k, (2, 1), ((1, 2), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"), feature_group_count=2,
                                    precision=lax.Precision.HIGHEST)


@partial(lax.composite, name="my.tanh")
def _tanh(x):
    return jnp.tanh(x)


def _misc(x, p, i):
    return (lax.optimization_barrier((x, x + 1)), jnp.where(p, x, 2 * x), jnp.clip(x, 0.0, 1.0), lax.erf_inv(x),
            lax.top_k(x, 2), lax.lgamma(x), x[1:4:2], lax.dynamic_slice(x, (i,), (2,)),
            lax.dynamic_update_slice(x, x[:2], (i,)), lax.pad(x, 0.0, ((1, 2, 1),)), jnp.flip(x), lax.sort(x),
            lax.cond(p[0], lambda: x, lambda: -x), lax.cumsum(x), jnp.argmax(x), lax.bitcast_convert_type(x, np.int32),
            lax.shift_left(i, np.int32(2)), lax.clz(i), lax.population_count(i))


MODULES = [
    ("conv_window", "tpu", _conv, [_s(2, 4, 7, 6), _s(6, 2, 3, 2)]),
    ("dot_precision", "tpu", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                        precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT),
                                                        preferred_element_type=np.float32), [_s(3, 4), _s(4, 5)]),
    ("dot_algorithm", "tpu", lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset.F32_F32_F32),
     [_s(3, 4), _s(4, 5)]),
    ("reduce_precision", "tpu", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2), [_s(4)]),
    ("composite", "tpu", _tanh, [_s(4)]),
    ("rng_bit_generator", "tpu", lambda k: lax.rng_bit_generator(k, (2, 3), algorithm=lax.RandomAlgorithm.RNG_DEFAULT),
     [_s(4, dtype=np.uint32)]),
    ("fft", "tpu", lambda x: (jnp.fft.fft(x), jnp.fft.irfft(x)), [_s(8, dtype=np.complex64)]),
    ("cholesky", "tpu", jnp.linalg.cholesky, [_s(3, 3)]),
    ("misc", "tpu", _misc, [_s(5), _s(5, dtype=bool), _s(dtype=np.int32)]),
    ("misc_cpu", "cpu", _misc, [_s(5), _s(5, dtype=bool), _s(dtype=np.int32)]),
]


def generate():
    out = []
    with _config(jax_traceback_in_locations_limit=0):
        for name, platform, fn, args in MODULES:
            e = export.export(jax.jit(fn), platforms=[platform])(*args)
            out.append({"name": name, "platform": platform,
                        "exported": base64.b64encode(e.serialize()).decode("ascii"), "text": e.mlir_module()})
    return out
