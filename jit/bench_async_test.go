package jit_test

import (
	"fmt"
	"testing"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// meshOf returns a 1-D mesh "x" over the client's first n devices; with fewer devices the
// benchmark is skipped (pjrttest.NeedDevices).
func meshOf(b *testing.B, n int) mesh.Mesh {
	c := pjrttest.NeedDevices(b, n)
	m, err := mesh.New(jit.Devices(c)[:n], []int{n}, "x")
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkCall1Device is BenchmarkCall on a single device (x*2 on an 8x2 f32 array).
// Counterpart: "Call1Device".
func BenchmarkCall1Device(b *testing.B) {
	c := pjrttest.Client(b)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(b, meshOf(b, 1), mesh.P()))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	f := jit.New("bench_double_1", double)
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

// benchChained runs 1,000 calls of x*1 chained (each consumes the previous result) without
// waiting in between, then waits once: the dispatch rate. One op is the 1,000 calls.
func benchChained(b *testing.B, devices int, spec mesh.PartitionSpec) {
	c := pjrttest.Client(b)
	s := sharding(b, meshOf(b, devices), spec)
	f := jit.New(fmt.Sprintf("bench_chain_%d", devices), func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(1))}
	}, jit.OutSpecs(spec))
	x0, err := jit.Put(c, arange[float32](16), []int{8, 2}, s)
	if err != nil {
		b.Fatal(err)
	}
	defer x0.Close()
	warmCall(b, c, f, x0)
	b.ReportAllocs()
	for b.Loop() {
		x := x0
		for i := range 1000 {
			outs, err := f.Call(c, x)
			if err != nil {
				b.Fatal(err)
			}
			if i > 0 {
				x.Close() // in use by the queued execution; PJRT frees it after
			}
			x = outs[0]
		}
		if err := x.Wait(); err != nil {
			b.Fatal(err)
		}
		x.Close()
	}
}

// BenchmarkChained1000x1Device: 1,000 chained calls on one device.
// Counterpart: "Chained1000x1Device".
func BenchmarkChained1000x1Device(b *testing.B) { benchChained(b, 1, mesh.P()) }

// BenchmarkChained1000x8Devices: 1,000 chained calls, 8x2 f32 sharded P('x') on 8 devices.
// Counterpart: "Chained1000x8Devices".
func BenchmarkChained1000x8Devices(b *testing.B) { benchChained(b, 8, mesh.P("x")) }

// benchMatmul times call + wait of a 2048x2048 f32 matmul with A split by rows over n devices
// (P('x', None)), B replicated, the result P('x', None).
func benchMatmul(b *testing.B, n int) {
	c := pjrttest.Client(b)
	m := meshOf(b, n)
	const k = 2048
	host := make([]float32, k*k)
	for i := range host {
		host[i] = float32(i%7) * 0.25
	}
	a, err := jit.Put(c, host, []int{k, k}, sharding(b, m, mesh.P("x", nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	bb, err := jit.Put(c, host, []int{k, k}, sharding(b, m, mesh.P()))
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	f := jit.New(fmt.Sprintf("bench_matmul_%d", n), func(f *lower.Function, x []lower.Value) []lower.Value {
		return []lower.Value{f.MatMul(x[0], x[1])}
	}, jit.OutSpecs(mesh.P("x", nil)))
	warmCall(b, c, f, a, bb)
	b.SetBytes(2 * k * k * k) // "bytes" = flops, so MB/s reads as MFLOP/s
	b.ReportAllocs()
	for b.Loop() {
		outs, err := f.Call(c, a, bb)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0].Wait(); err != nil {
			b.Fatal(err)
		}
		outs[0].Close()
	}
}

// BenchmarkMatmul2048x1 .. x8: counterparts "Matmul2048x1", "Matmul2048x2", "Matmul2048x8".
func BenchmarkMatmul2048x1(b *testing.B) { benchMatmul(b, 1) }
func BenchmarkMatmul2048x2(b *testing.B) { benchMatmul(b, 2) }
func BenchmarkMatmul2048x8(b *testing.B) { benchMatmul(b, 8) }

// BenchmarkMemcpy256MiB is the anchor for Put and ToHost: Go's copy of 256 MiB. Counterpart:
// "Memcpy256MiB" (np.copyto of 256 MiB); fixed iteration count as for Put.
func BenchmarkMemcpy256MiB(b *testing.B) {
	src := make([]byte, big*big*4)
	dst := make([]byte, len(src))
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src) // fault the pages in
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		copy(dst, src)
	}
}
