"""Writes OUTDIR/linalg.json: jnp.linalg and lax.linalg functions exported by JAX 0.12 for CPU,
where they lower to jaxlib's LAPACK kernels (stablehlo.custom_call @lapack_*_ffi and
@tridiagonal_solve_perturbed_ffi), with their inputs and JAX's outputs, for
internal/oracletest's TestLinalgCPUOnly, which runs them through jit.FromExported and
jit.FromText over the kernels of package pjrt.

Each function runs on float32, float64, complex64 and complex128, on one matrix and on a batch of
two. Inputs come from numpy's PCG64 generator with fixed seeds and are well conditioned, so that
two LAPACK builds agree to their tolerance. Where a result is not unique (eigenvectors and
singular vectors, each up to a sign or a phase; Schur vectors), the program returns what is:
the magnitudes of the vectors' entries, or A rebuilt from its factors, as JAX's own linalg tests
check them. For the functions package linalg differentiates, "grads" holds jax.grad of
sum(real(f(inputs) * weights)) with respect to every input. Outputs are written by value only (no raw bytes): LAPACK rounds by the processor it
runs on, and tools/oracle/compare.py compares this file's float arrays within a tolerance.

    {"group": "linalg", "jax_version", "generator", "artifacts": [{"name", "function", "dtype",
      "batched", "platform", "nr_devices", "custom_call_targets", "exported" (base64 of
      jax.export's serialization), "text" (its module as JAX prints it; for one matrix only,
      since a batch's module is the same but for its shapes), "inputs", "outputs"}],
     "grads": [{"name", "function", "inputs", "weights", "grads"}]}

The file is written compact (no indentation): it holds some 100,000 numbers.

generate.sh runs it in the oracle venv. Usage: linalg.py OUTDIR
"""

import base64
import json
import os
import re
import sys

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
# No Python source locations in the modules (they would hold this file's absolute path).
jax.config.update("jax_traceback_in_locations_limit", 0)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax import export, lax  # noqa: E402
from jax._src.lax import linalg as lax_linalg  # noqa: E402

from programs import enc_array  # noqa: E402

if jax.__version__ != "0.12.0.1":
    sys.exit(f"xlamesh: oracle: linalg.py needs JAX 0.12.0.1, found {jax.__version__}")

DTYPES = ("float32", "float64", "complex64", "complex128")
N = 4  # square matrices are N x N
M, K = 4, 3  # rectangular ones M x K


def rand(rng, dtype, shape):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def ct(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def eye_like(x):
    return np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape)


def general(rng, dt, b):
    """A well-conditioned general square matrix (b: batch shape)."""
    x = rand(rng, dt, b + (N, N))
    return (x + N * eye_like(x)).astype(dt)


def pivoting(rng, dt, b):
    """A general square matrix without diagonal dominance, so that partial pivoting swaps rows
    (its rows are a fixed rotation of a dominant matrix's: the pivots make a 4-cycle)."""
    return np.roll(general(rng, dt, b), 1, axis=-2).astype(dt)


def hermitian(rng, dt, b):
    x = rand(rng, dt, b + (N, N))
    return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dt)


def positive(rng, dt, b):
    x = rand(rng, dt, b + (N, N))
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + N * eye_like(x)).astype(dt)


def rect(rng, dt, b):
    return rand(rng, dt, b + (M, K))


def tridiagonal_operands(rng, dt, b):
    """dl, d, du (first dl and last du zero, as JAX wants) and a right-hand side of 2 columns;
    d dominates, so the system is regular."""
    dl, du = rand(rng, dt, b + (N,)), rand(rng, dt, b + (N,))
    dl[..., 0] = 0
    du[..., -1] = 0
    d = (rand(rng, dt, b + (N,)) + 4).astype(dt)
    return [dl, d, du, rand(rng, dt, b + (N, 2))]


def tridiagonal_pivoting(rng, dt, b):
    """dl, d, du and b of a general tridiagonal system: no diagonal dominance, so that
    elimination swaps rows."""
    dl, d, du = (rand(rng, dt, b + (N,)) for _ in range(3))
    dl[..., 0] = 0
    du[..., -1] = 0
    return [dl, d, du, rand(rng, dt, b + (N, 2))]


def tridiagonal_singular(rng, dt, b):
    """A singular system (ones on the three diagonals but the last of d, a zero: the determinant
    is 0), each matrix of a batch the same; tridiagonal_solve_perturbed perturbs the zero pivot."""
    dl = np.broadcast_to(np.array([0, 1, 1, 1], dtype=dt), b + (N,)).copy()
    d = np.broadcast_to(np.array([1, 1, 1, 0], dtype=dt), b + (N,)).copy()
    du = np.broadcast_to(np.array([1, 1, 1, 0], dtype=dt), b + (N,)).copy()
    return [dl, d, du, rand(rng, dt, b + (N, 2))]


def schur_outputs(a):
    """Schur's T and Z are not unique: T's eigenvalues (sorted), Z T Z^H and Z^H Z. Real
    inputs are symmetric, so that T is diagonal."""
    complex_ = jnp.iscomplexobj(a)
    t, z = jsl.schur(a, output="complex" if complex_ else "real")
    return jnp.sort(jnp.diagonal(t, axis1=-2, axis2=-1), axis=-1), z @ t @ ct(z), ct(z) @ z


def householder(a, c, left, transpose):
    h, taus = lax_linalg.geqrf(a)
    return lax.linalg.ormqr(h, taus, c, left=left, transpose=transpose)


# name: (function, input makers, about). Each input maker takes (rng, dtype, batch shape).
FUNCTIONS = {
    "cholesky": (jnp.linalg.cholesky, [positive], "jnp.linalg.cholesky (potrf)"),
    "solve": (jnp.linalg.solve, [pivoting, lambda r, dt, b: rand(r, dt, b + (N, 2))],
              "jnp.linalg.solve (getrf, trsm)"),
    "triangular_solve": (
        lambda a, y: lax.linalg.triangular_solve(a, y, left_side=True, lower=True, transpose_a=True),
        [lambda r, dt, b: np.tril(general(r, dt, b)), lambda r, dt, b: rand(r, dt, b + (N, 2))],
        "lax.linalg.triangular_solve, left side, lower, transposed (trsm)"),
    "triangular_solve_adjoint": (
        lambda a, y: lax.linalg.triangular_solve(a, y, left_side=False, lower=False, transpose_a=True,
                                                 conjugate_a=True, unit_diagonal=True),
        [lambda r, dt, b: np.triu(general(r, dt, b)), lambda r, dt, b: rand(r, dt, b + (2, N))],
        "lax.linalg.triangular_solve, right side, upper, conjugate transposed, unit diagonal (trsm)"),
    "lu": (lax.linalg.lu, [pivoting], "lax.linalg.lu: the factors, pivots and permutation (getrf)"),
    "qr": (lambda a: jnp.linalg.qr(a, mode="reduced"), [rect], "jnp.linalg.qr, reduced (geqrf, orgqr/ungqr)"),
    "qr_complete": (lambda a: jnp.linalg.qr(a, mode="complete"), [rect],
                    "jnp.linalg.qr, complete (geqrf, orgqr/ungqr)"),
    "qr_pivoting": (lambda a: jsl.qr(a, mode="economic", pivoting=True), [rect],
                    "jax.scipy.linalg.qr with column pivoting (geqp3, orgqr/ungqr)"),
    "ormqr_left": (lambda a, c: householder(a, c, True, False), [rect, lambda r, dt, b: rand(r, dt, b + (M, 2))],
                   "lax.linalg.ormqr: Q c from geqrf's reflectors (geqrf, ormqr/unmqr)"),
    "ormqr_right_transposed": (lambda a, c: householder(a, c, False, True),
                               [rect, lambda r, dt, b: rand(r, dt, b + (2, M))],
                               "lax.linalg.ormqr: c Q^H (geqrf, ormqr/unmqr)"),
    "eigh": (lambda a: (lambda w, v: (w, jnp.abs(v)))(*jnp.linalg.eigh(a)), [hermitian],
             "jnp.linalg.eigh: eigenvalues and |eigenvectors| (syevd/heevd)"),
    "eigvalsh": (jnp.linalg.eigvalsh, [hermitian], "jnp.linalg.eigvalsh (syevd/heevd, no vectors)"),
    "eig": (lambda a: (lambda w, v: (w, jnp.abs(v)))(*jnp.linalg.eig(a)), [general],
            "jnp.linalg.eig: eigenvalues and |right eigenvectors| (geev)"),
    "eigvals": (jnp.linalg.eigvals, [general], "jnp.linalg.eigvals (geev, no vectors)"),
    "svd": (lambda a: (lambda u, s, vh: (jnp.abs(u), s, jnp.abs(vh)))(*jnp.linalg.svd(a, full_matrices=False)),
            [rect], "jnp.linalg.svd, reduced: |u|, s, |vh| (gesdd)"),
    "svd_wide": (lambda a: (lambda u, s, vh: (jnp.abs(u), s, jnp.abs(vh)))(*jnp.linalg.svd(a, full_matrices=False)),
                 [lambda r, dt, b: rand(r, dt, b + (K, M))], "jnp.linalg.svd of wide matrices, reduced: |u|, s, |vh| (gesdd)"),
    "svd_full": (lambda a: (lambda u, s, vh: (jnp.abs(u), s, jnp.abs(vh)))(*jnp.linalg.svd(a)), [rect],
                 "jnp.linalg.svd, full matrices: |u|, s, |vh| (gesdd)"),
    "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), [rect], "jnp.linalg.svd without u and vh (gesdd)"),
    "svd_qr": (lambda a: (lambda u, s, vh: (jnp.abs(u), s, jnp.abs(vh)))(
        *lax.linalg.svd(a, full_matrices=False, algorithm=lax.linalg.SvdAlgorithm.QR)),
        [rect], "lax.linalg.svd with algorithm QR: |u|, s, |vh| (gesvd)"),
    "schur": (schur_outputs, [lambda r, dt, b: hermitian(r, dt, b) if np.dtype(dt).kind == "f" else general(r, dt, b)],
              "jax.scipy.linalg.schur: eigenvalues, Z T Z^H, Z^H Z (gees)"),
    "hessenberg": (lambda a: jsl.hessenberg(a, calc_q=True), [general],
                   "jax.scipy.linalg.hessenberg with Q (gehrd, orgqr/ungqr)"),
    "tridiagonal": (lambda a: lax.linalg.tridiagonal(a, lower=True), [hermitian],
                    "lax.linalg.tridiagonal, lower (sytrd/hetrd)"),
    "tridiagonal_solve": (lax.linalg.tridiagonal_solve, [tridiagonal_operands], "lax.linalg.tridiagonal_solve (gtsv)"),
    "tridiagonal_solve_perturbed": (lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b,
                                                                                     perturb_singular=True),
                                    [tridiagonal_pivoting],
                                    "lax.linalg.tridiagonal_solve, perturb_singular (tridiagonal_solve_perturbed)"),
    "tridiagonal_solve_singular": (lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b,
                                                                                    perturb_singular=True),
                                   [tridiagonal_singular],
                                   "lax.linalg.tridiagonal_solve, perturb_singular, of a singular system "
                                   "(tridiagonal_solve_perturbed)"),
}


# The kernels JAX 0.12 has no compatibility guarantee for yet: export refuses them unless told.
UNSTABLE = [export.DisabledSafetyCheck.custom_call(t) for t in
            ["lapack_%s%s_ffi" % (p, r) for p in "sdcz" for r in ("geqp3", "gesvd")] +
            ["lapack_sormqr_ffi", "lapack_dormqr_ffi", "lapack_cunmqr_ffi", "lapack_zunmqr_ffi",
             "tridiagonal_solve_perturbed_ffi"]]


def make_inputs(makers, rng, dt, batched):
    """The inputs the makers draw from rng, for one matrix or a batch of two."""
    b = (2,) if batched else ()
    inputs = []
    for make in makers:
        x = make(rng, dt, b)
        inputs.extend(x if isinstance(x, list) else [x])
    return [np.ascontiguousarray(x) for x in inputs]


# Gradients: jax.grad of sum(real(f(*inputs) * w)) with respect to every input, w fixed, for the
# functions package linalg differentiates (their names in FUNCTIONS).
GRADS = ["cholesky", "triangular_solve", "triangular_solve_adjoint", "lu", "solve", "eigh", "svd", "svd_wide", "qr"]


def gradient(name, dt, batched, seed):
    fn, makers, _ = FUNCTIONS[name]
    rng = np.random.default_rng(1000 + seed)
    inputs = make_inputs(makers, rng, dt, batched)
    outs = jax.tree.leaves(fn(*inputs))
    weights = [rand(rng, o.dtype, o.shape) for o in outs]

    def loss(*args):
        return sum(jnp.sum(jnp.real(o * w)) for o, w in zip(jax.tree.leaves(fn(*args)), weights))
    grads = jax.jit(jax.grad(loss, argnums=tuple(range(len(inputs)))))(*inputs)
    for g in grads:
        if not np.all(np.isfinite(np.asarray(g))):
            raise SystemExit(f"xlamesh: oracle: linalg gradient of {name} {dt}: not finite")
    return {
        "name": "%s/%s%s" % (name, dt, "/batched" if batched else ""),
        "function": name,
        "inputs": [enc_array(x) for x in inputs],
        "weights": [enc_array(np.asarray(w)) for w in weights],
        "grads": [{k: v for k, v in enc_array(np.asarray(g)).items() if k != "hex"} for g in grads],
    }


def targets(text):
    return sorted(set(re.findall(r"stablehlo\.custom_call @([\w.]+)", text)))


def artifact(name, fn, makers, about, dt, batched, seed):
    inputs = make_inputs(makers, np.random.default_rng(seed), dt, batched)
    # Named tuples (jnp.linalg's results) have no serialization: the leaves as a plain tuple.
    flat = jax.jit(lambda *a: tuple(jax.tree.leaves(fn(*a))))
    exp = export.export(flat, platforms=("cpu",), disabled_checks=UNSTABLE)(*inputs)
    outs = exp.call(*inputs)
    if not isinstance(outs, (tuple, list)):
        outs = [outs]
    text = exp.mlir_module()
    cc = targets(text)
    if not any(t.startswith("lapack_") or t.startswith("tridiagonal_") for t in cc):
        raise SystemExit(f"xlamesh: oracle: linalg {name} {dt} calls no LAPACK kernel ({cc})")
    for o in outs:
        if not np.all(np.isfinite(np.asarray(o))):
            raise SystemExit(f"xlamesh: oracle: linalg {name} {dt}: JAX returns a value that is not finite")
    full = "%s/%s%s" % (name, dt, "/batched" if batched else "")
    return {
        "name": full,
        "function": name,
        "about": about,
        "dtype": dt,
        "batched": batched,
        "platform": "cpu",
        "nr_devices": 1,
        "custom_call_targets": cc,
        "exported": base64.b64encode(exp.serialize()).decode("ascii"),
        "text": "" if batched else text,
        "inputs": [enc_array(x) for x in inputs],
        # By value only: the raw bytes of a LAPACK result differ between processors.
        "outputs": [{k: v for k, v in enc_array(np.asarray(o)).items() if k != "hex"} for o in outs],
    }


def generate():
    out, grads = [], []
    seed = 0
    for name, (fn, makers, about) in FUNCTIONS.items():
        for dt in DTYPES:
            for batched in (False, True):
                seed += 1
                out.append(artifact(name, fn, makers, about, dt, batched, seed))
                if name in GRADS:
                    grads.append(gradient(name, dt, batched, seed))
    return out, grads


def main():
    outdir = sys.argv[1]
    arts, grads = generate()
    with open(os.path.join(outdir, "linalg.json"), "w", encoding="utf-8") as f:
        json.dump({"group": "linalg", "jax_version": jax.__version__, "numpy_version": np.__version__,
                   "generator": "tools/oracle/linalg.py", "artifacts": arts, "grads": grads}, f,
                  separators=(",", ":"), sort_keys=True)
        f.write("\n")
    print("oracle: %-14s %4d artifacts, %d gradients" % ("linalg", len(arts), len(grads)))


if __name__ == "__main__":
    main()
