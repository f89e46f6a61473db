package jit_test

import (
	"fmt"
	"testing"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// benchCallArgs is call + wait of the sum of n 8x2 f32 arrays, each sharded P('x') over 8
// devices: what a call costs per argument. Counterparts: "CallArgs<n>" (a jitted sum of n
// arrays). With the per-argument cost flat, CallArgs256 takes about 32 times CallArgs8 less
// the fixed cost of a call.
func benchCallArgs(b *testing.B, n int) {
	c := pjrttest.Client(b)
	s := sharding(b, meshOf(b, 8), mesh.P("x"))
	args := make([]*jit.Array, n)
	for i := range args {
		x, err := jit.Put(c, arange[float32](16), []int{8, 2}, s)
		if err != nil {
			b.Fatal(err)
		}
		defer x.Close()
		args[i] = x
	}
	f := jit.New(fmt.Sprintf("bench_sum_%d", n), func(f *lower.Function, a []lower.Value) []lower.Value {
		y := a[0]
		for _, x := range a[1:] {
			y = f.Add(y, x)
		}
		return []lower.Value{y}
	}, jit.OutSpecs(mesh.P("x")))
	warmCall(b, c, f, args...)
	b.ReportAllocs()
	for b.Loop() {
		outs, err := f.Call(c, args...)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0].Wait(); err != nil {
			b.Fatal(err)
		}
		outs[0].Close()
	}
}

// BenchmarkCallArgs1 .. 256: counterparts "CallArgs1" .. "CallArgs256".
func BenchmarkCallArgs1(b *testing.B)   { benchCallArgs(b, 1) }
func BenchmarkCallArgs8(b *testing.B)   { benchCallArgs(b, 8) }
func BenchmarkCallArgs64(b *testing.B)  { benchCallArgs(b, 64) }
func BenchmarkCallArgs256(b *testing.B) { benchCallArgs(b, 256) }

// BenchmarkToHostFlat256MiB is BenchmarkToHost256MiB through Array.ToHost, a new []float32 each
// time. Counterpart: "ToHostFlat256MiB" (np.asarray of a fresh jax.Array, as for ToHost256MiB).
func BenchmarkToHostFlat256MiB(b *testing.B) {
	c := pjrttest.Client(b)
	a, err := jit.Put(c, bigArray(), []int{big, big}, sharding(b, mesh42(b, c), mesh.P("x", "y")))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	if _, err := a.ToHost(); err != nil { // warm-up
		b.Fatal(err)
	}
	b.SetBytes(big * big * 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.ToHost(); err != nil {
			b.Fatal(err)
		}
	}
}

// freshSink keeps BenchmarkMemcpyFresh256MiB's copies alive past the loop body.
var freshSink []byte

// BenchmarkMemcpyFresh256MiB is the anchor for ToHost into fresh memory: Go's copy of 256 MiB
// into a new slice each time (make + copy, as `dst := slices.Clone(src)` does). Counterpart:
// "MemcpyFresh256MiB" (np.copy into a new array).
func BenchmarkMemcpyFresh256MiB(b *testing.B) {
	src := make([]byte, big*big*4)
	for i := range src {
		src[i] = byte(i)
	}
	freshSink = append([]byte(nil), src...) // warm-up
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst := make([]byte, len(src))
		copy(dst, src)
		freshSink = dst
	}
	freshSink = nil
}
