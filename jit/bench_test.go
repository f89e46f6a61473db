package jit_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// BenchmarkCall measures call + wait of a small jitted function (x*2 on an 8x2 f32 array
// sharded P('x', 'y') over 8 CPU devices): argument checks, cache lookups, dispatch, execution on
// 8 devices and waiting for the result. Counterpart: tools/bench/jax_bench.py "call"
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

// BenchmarkPut256MiB puts a 256 MiB float32 array sharded P('x', 'y') on 8 devices.
// Counterpart: jax.device_put in tools/bench/jax_bench.py "put".
func BenchmarkPut256MiB(b *testing.B) {
	c := pjrttest.Client(b)
	s := sharding(b, mesh42(b, c), mesh.P("x", "y"))
	x := bigArray()
	b.SetBytes(int64(len(x) * 4))
	b.ReportAllocs()
	for b.Loop() {
		a, err := jit.Put(c, x, []int{big, big}, s)
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}

// BenchmarkToHost256MiB gathers a 256 MiB float32 array sharded P('x', 'y') from 8 devices.
// Counterpart: np.asarray(array) in tools/bench/jax_bench.py "to_host".
func BenchmarkToHost256MiB(b *testing.B) {
	c := pjrttest.Client(b)
	a, err := jit.Put(c, bigArray(), []int{big, big}, sharding(b, mesh42(b, c), mesh.P("x", "y")))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.SetBytes(big * big * 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.ToHostBytes(); err != nil {
			b.Fatal(err)
		}
	}
}
