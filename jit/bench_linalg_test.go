package jit_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// BenchmarkLinalgJAXProgram times call + wait of JAX's own jnp.linalg programs on one device,
// exported for CPU by `tools/bench/linalg_jax.py --export DIR` (XLAMESH_LINALG_BENCH_DIR names
// DIR; tools/bench/linalg.sh sets it): Cholesky1024 (jnp.linalg.cholesky of a 1024x1024 float32
// positive definite matrix: lapack_spotrf_ffi) and SVD1024 (jnp.linalg.svd, reduced, of a
// 1024x1024 float32 matrix: lapack_sgesdd_ffi), over the LAPACK kernels pjrt registers.
// Counterparts: the same functions jitted by JAX on the same inputs (linalg_jax.py).
func BenchmarkLinalgJAXProgram(b *testing.B) {
	dir := os.Getenv("XLAMESH_LINALG_BENCH_DIR")
	if dir == "" {
		b.Skip("XLAMESH_LINALG_BENCH_DIR is not set: export the programs with `python tools/bench/linalg_jax.py --export DIR` (tools/bench/linalg.sh does)")
	}
	for _, name := range []string{"Cholesky1024", "SVD1024"} {
		b.Run(name, func(b *testing.B) { benchLinalgProgram(b, dir, name) })
	}
}

func benchLinalgProgram(b *testing.B, dir, name string) {
	code, err := os.ReadFile(filepath.Join(dir, name+".exported"))
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".f32"))
	if err != nil {
		b.Fatal(err)
	}
	e, err := jaxexport.Read(code)
	if err != nil {
		b.Fatal(err)
	}
	c := pjrttest.Client(b)
	m := meshOf(b, 1)
	host := make([]float32, len(raw)/4)
	for i := range host {
		host[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	x, err := jit.Put(c, host, e.InAvals()[0].Dims(), sharding(b, m, mesh.P()))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	f, err := jit.FromExported(e, jit.WithMesh(m))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	warmCall(b, c, f, x)
	for b.Loop() {
		outs, err := f.Call(c, x)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if err := o.Wait(); err != nil {
				b.Fatal(err)
			}
			o.Close()
		}
	}
}
