package jit_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// Benchmarks and their JAX counterparts in tools/bench/jax_bench.py (same names) are run
// interleaved by tools/bench.sh (make bench). Each benchmark warms up (compiles, touches its
// memory) before b.Loop, as the JAX side does, since b.Loop times its very first iteration.

// warmCall calls f once and waits, outside the timed loop: it compiles f and runs it once.
func warmCall(b *testing.B, c *pjrt.Client, f *jit.Function, args ...*jit.Array) {
	b.Helper()
	outs, err := f.Call(c, args...)
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

// BenchmarkCall measures call + wait of a small jitted function (x*2 on an 8x2 f32 array
// sharded P('x', 'y') over 8 CPU devices, or the mesh42 mesh of fewer): argument checks, cache
// lookups, dispatch, execution on 8 devices and waiting for the result. Counterpart: "Call"
// (f(x).block_until_ready()).
func BenchmarkCall(b *testing.B) {
	c := pjrttest.Client(b)
	m := mesh42(b, c)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(b, m, mesh.P("x", "y")))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	f := jit.New("bench_double", double, jit.InSpecs(mesh.P("x", "y")), jit.OutSpecs(mesh.P("x", "y")))
	warmCall(b, c, f, x)
	b.ReportAllocs()
	for b.Loop() {
		outs, err := f.Call(c, x)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0].Wait(); err != nil {
			b.Fatal(err)
		}
		outs[0].Close()
	}
}

// BenchmarkLoweringCacheHit measures a lowering-cache hit (Function.Lower for a cached key).
func BenchmarkLoweringCacheHit(b *testing.B) {
	a, err := mesh.NewAbstract([]int{4, 2}, []string{"x", "y"})
	if err != nil {
		b.Fatal(err)
	}
	f := jit.New("bench_hit", double)
	arg := jit.ArgType{Shape: lower.NewShape(dtypes.Float32, 8, 2), Spec: mesh.P("x", "y")}
	if _, err := f.Lower(a, arg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Lower(a, arg); err != nil {
			b.Fatal(err)
		}
	}
}

const big = 8192 // 8192 x 8192 float32 = 256 MiB

func bigArray() []float32 {
	x := make([]float32, big*big)
	for i := range x {
		x[i] = float32(i % 1000)
	}
	return x
}

// BenchmarkPut256MiB puts a 256 MiB float32 array sharded P('x', 'y') on 8 devices (mesh42: fewer
// on a smaller host) and waits until it is ready. Counterpart: "Put256MiB" (jax.device_put(x, s).block_until_ready()).
// tools/bench.sh runs it for a fixed number of iterations (-benchtime=Nx), the same N as JAX's.
func BenchmarkPut256MiB(b *testing.B) {
	c := pjrttest.Client(b)
	s := sharding(b, mesh42(b, c), mesh.P("x", "y"))
	x := bigArray()
	put := func() {
		a, err := jit.Put(c, x, []int{big, big}, s)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Wait(); err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
	put() // warm-up: the plugin's allocator and the pages of x
	b.SetBytes(int64(len(x) * 4))
	b.ReportAllocs()
	for b.Loop() {
		put()
	}
}

// BenchmarkToHost256MiB gathers a 256 MiB float32 array sharded P('x', 'y') from 8 devices (mesh42:
// fewer on a smaller host).
// Counterpart: "ToHost256MiB" (np.asarray of a fresh jax.Array, so JAX's cached host copy is
// not used); fixed iteration count as for Put.
func BenchmarkToHost256MiB(b *testing.B) {
	c := pjrttest.Client(b)
	a, err := jit.Put(c, bigArray(), []int{big, big}, sharding(b, mesh42(b, c), mesh.P("x", "y")))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	if _, err := a.ToHostBytes(); err != nil { // warm-up
		b.Fatal(err)
	}
	b.SetBytes(big * big * 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.ToHostBytes(); err != nil {
			b.Fatal(err)
		}
	}
}
