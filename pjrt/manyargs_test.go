package pjrt_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// sumModule is the sum of n f32[parts] arguments sharded over a 1-D mesh of parts devices (8,
// or fewer where pjrttest.Client has fewer): per device, n f32[1] arguments and one f32[1] result.
func sumModule(n, parts int) string {
	var b strings.Builder
	ty := fmt.Sprintf("tensor<%dxf32>", parts)
	fmt.Fprintf(&b, `module @jit_sum attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=%d]>
  func.func public @main(`, parts, parts)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `%%arg%d: %s {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}`, i, ty)
	}
	fmt.Fprintf(&b, `) -> (%s {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
`, ty)
	last := "%arg0"
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "    %%s%d = stablehlo.add %s, %%arg%d : %s\n", i, last, i, ty)
		last = fmt.Sprintf("%%s%d", i)
	}
	fmt.Fprintf(&b, "    return %s : %s\n  }\n}", last, ty)
	return b.String()
}

// sumArgs compiles sumModule(n) on 8 devices (fewer where pjrttest.Client has fewer) and puts n
// distinct buffers on each device, argument i on device d holding i + 10*d.
func sumArgs(t testing.TB, n int) (*pjrt.Executable, [][]*pjrt.Buffer) {
	c := pjrttest.Client(t)
	parts := pjrttest.FitShape([]int{8}, len(c.Devices()))[0]
	exe, err := c.Compile(sumModule(n, parts), pjrt.CompileOptions{NumPartitions: parts})
	require.NoError(t, err)
	t.Cleanup(func() { exe.Close() })
	args := make([][]*pjrt.Buffer, parts)
	for d, dev := range exe.Devices() {
		args[d] = make([]*pjrt.Buffer, n)
		for i := range n {
			x, err := c.BufferFromHost(dev, []float32{float32(i + 10*d)}, []int{1})
			require.NoError(t, err)
			t.Cleanup(func() { x.Close() })
			args[d][i] = x
		}
	}
	return exe, args
}

// TestExecuteManyArguments runs a program of 300 arguments on 8 devices, with distinct
// buffers and with one buffer passed at every position, and waits for the results with WaitAll
// given every result many times: each buffer is held once per call (no deadlock, no double
// unlock) and the sums are exact.
func TestExecuteManyArguments(t *testing.T) {
	const n = 300
	exe, args := sumArgs(t, n)
	check := func(t *testing.T, args [][]*pjrt.Buffer, want func(d int) float32) {
		outs, err := exe.Execute(args)
		require.NoError(t, err)
		var all []*pjrt.Buffer
		for range 20 {
			for _, o := range outs {
				all = append(all, o[0])
			}
		}
		require.NoError(t, pjrt.WaitAll(all...))
		for d, o := range outs {
			got, err := o[0].ToHost()
			require.NoError(t, err)
			assert.Equal(t, []float32{want(d)}, got, "device %d", d)
			require.NoError(t, o[0].Close())
		}
		require.ErrorIs(t, pjrt.WaitAll(all...), pjrt.ErrClosed)
	}
	t.Run("distinct", func(t *testing.T) {
		// sum over i of (i + 10d) = n(n-1)/2 + 10dn
		check(t, args, func(d int) float32 { return float32(n*(n-1)/2 + 10*d*n) })
	})
	t.Run("repeated", func(t *testing.T) {
		same := make([][]*pjrt.Buffer, len(args))
		for d := range same {
			same[d] = make([]*pjrt.Buffer, n)
			for i := range same[d] {
				same[d][i] = args[d][7] // 7 + 10d at every position
			}
		}
		check(t, same, func(d int) float32 { return float32(n * (7 + 10*d)) })
	})
	t.Run("donated twice", func(t *testing.T) {
		dup := make([][]*pjrt.Buffer, len(args))
		for d := range dup {
			dup[d] = append([]*pjrt.Buffer(nil), args[d]...)
			dup[d][200] = args[d][100]
		}
		_, err := exe.Execute(dup, pjrt.Donate(200))
		require.ErrorIs(t, err, pjrt.ErrExecute)
		assert.ErrorContains(t, err, "donated argument 200 on device 0 is passed twice")
		assert.False(t, args[0][100].IsClosed())
	})
}

// benchExecuteArgs is execute + wait of sumModule(n) from Go: the binding's cost per argument
// (8n buffers per call), without the jit layer.
func benchExecuteArgs(b *testing.B, n int) {
	exe, args := sumArgs(b, n)
	flat := make([]*pjrt.Buffer, len(args))
	b.ReportAllocs()
	for b.Loop() {
		outs, err := exe.Execute(args)
		if err != nil {
			b.Fatal(err)
		}
		for d, o := range outs {
			flat[d] = o[0]
		}
		if err := pjrt.WaitAll(flat...); err != nil {
			b.Fatal(err)
		}
		for _, o := range flat {
			o.Close()
		}
	}
}

// BenchmarkExecuteArgs1 .. 256: execute + wait with 1 .. 256 arguments on 8 devices; jit's
// BenchmarkCallArgs* without the jit layer.
func BenchmarkExecuteArgs1(b *testing.B)   { benchExecuteArgs(b, 1) }
func BenchmarkExecuteArgs8(b *testing.B)   { benchExecuteArgs(b, 8) }
func BenchmarkExecuteArgs64(b *testing.B)  { benchExecuteArgs(b, 64) }
func BenchmarkExecuteArgs256(b *testing.B) { benchExecuteArgs(b, 256) }

// TestConcurrentManyArguments runs the 300-argument program from 4 goroutines at once on the
// same buffers (each call holds them shared through its own pooled index) and checks every sum.
func TestConcurrentManyArguments(t *testing.T) {
	const n, calls = 300, 10
	exe, args := sumArgs(t, n)
	var wg sync.WaitGroup
	errs := make(chan error, 4*calls)
	for range 4 {
		wg.Go(func() {
			for range calls {
				outs, err := exe.Execute(args)
				if err != nil {
					errs <- err
					return
				}
				flat := make([]*pjrt.Buffer, 0, 3*len(outs))
				for range 3 {
					for _, o := range outs {
						flat = append(flat, o[0])
					}
				}
				if err := pjrt.WaitAll(flat...); err != nil {
					errs <- err
				}
				for d, o := range outs {
					got, err := o[0].ToHost()
					if err != nil {
						errs <- err
					} else if want := float32(n*(n-1)/2 + 10*d*n); got.([]float32)[0] != want {
						errs <- fmt.Errorf("device %d: got %v, want %v", d, got, want)
					}
					o[0].Close()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// benchFloorArgs is the floor of benchExecuteArgs: the same executions of sumModule(n) from
// floor.c's C loop, with the binding's xm_execute ("binding") and the bare PJRT execute ("bare").
// ExecuteArgs<n> over FloorArgs<n>/bare is what the binding adds per call at n arguments.
func benchFloorArgs(b *testing.B, n int) {
	for _, raw := range []bool{false, true} {
		name := "binding"
		if raw {
			name = "bare"
		}
		b.Run(name, func(b *testing.B) {
			exe, args := sumArgs(b, n)
			if err := pjrt.FloorLoop(exe, args, 1, raw, false); err != nil { // warm up
				b.Fatal(err)
			}
			for b.Loop() {
				if err := pjrt.FloorLoop(exe, args, 1, raw, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFloorArgs1 .. 256: the floors of BenchmarkExecuteArgs1 .. 256.
func BenchmarkFloorArgs1(b *testing.B)   { benchFloorArgs(b, 1) }
func BenchmarkFloorArgs8(b *testing.B)   { benchFloorArgs(b, 8) }
func BenchmarkFloorArgs64(b *testing.B)  { benchFloorArgs(b, 64) }
func BenchmarkFloorArgs256(b *testing.B) { benchFloorArgs(b, 256) }
