package pjrt_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// BenchmarkExecute1Device is the binding's own per-call cost: one f32[4] add on one device,
// execute + wait, no jit layer.
func BenchmarkExecute1Device(b *testing.B) {
	c := pjrttest.Client(b)
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer exe.Close()
	x, err := c.BufferFromHost(exe.Devices()[0], []float32{0, 1, 2, 3}, []int{4})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	args := [][]*pjrt.Buffer{{x}}
	b.ReportAllocs()
	for b.Loop() {
		outs, err := exe.Execute(args)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0][0].Wait(); err != nil {
			b.Fatal(err)
		}
		outs[0][0].Close()
	}
}

// BenchmarkExecuteChained1Device: executions that consume the previous result, waited once per
// 100.
func BenchmarkExecuteChained1Device(b *testing.B) {
	c := pjrttest.Client(b)
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer exe.Close()
	x0, err := c.BufferFromHost(exe.Devices()[0], []float32{0, 1, 2, 3}, []int{4})
	if err != nil {
		b.Fatal(err)
	}
	defer x0.Close()
	b.ReportAllocs()
	for b.Loop() {
		x := x0
		for i := range 100 {
			outs, err := exe.Execute([][]*pjrt.Buffer{{x}})
			if err != nil {
				b.Fatal(err)
			}
			if i > 0 {
				x.Close()
			}
			x = outs[0][0]
		}
		if err := x.Wait(); err != nil {
			b.Fatal(err)
		}
		x.Close()
	}
}

// The modules of jit's call benchmarks, lowered by hand: x*2 on 8x2 f32, P("x", "y") on a 4x2
// mesh (BenchmarkCall), and x*1 on 8x2 f32 on one device and P("x") on 8 (BenchmarkChained*).
var (
	seedF32Module = seedF32(seedMesh{4, 2})
	chain1Module  = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x2xf32>) -> tensor<8x2xf32> {
    %c = stablehlo.constant dense<1.0> : tensor<8x2xf32>
    %0 = stablehlo.multiply %arg0, %c : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}`
	chain8Module = chainModuleOn(8)
)

// seedF32 returns the seed program on the mesh s in f32: seedF32Module on (4, 2).
func seedF32(s seedMesh) string {
	return strings.ReplaceAll(strings.ReplaceAll(s.module(), "xi64", "xf32"), "dense<2>", "dense<2.0>")
}

// chainModuleOn returns x*1 on 8x2 f32 sharded P("x") over a mesh of n devices: chain8Module on 8.
func chainModuleOn(n int) string {
	return fmt.Sprintf(`module @jit_f attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=%d]>
  func.func public @main(%%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %%c = stablehlo.constant dense<1.0> : tensor<8x2xf32>
    %%0 = stablehlo.multiply %%arg0, %%c : tensor<8x2xf32>
    return %%0 : tensor<8x2xf32>
  }
}`, n, n)
}

// benchProgram compiles module on n devices and puts one shard of the given dims on each.
func benchProgram(b testing.TB, module string, n int, dims ...int) (*pjrt.Executable, [][]*pjrt.Buffer) {
	c := pjrttest.Client(b)
	exe, err := c.Compile(module, pjrt.CompileOptions{NumPartitions: n})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { exe.Close() })
	size := 1
	for _, d := range dims {
		size *= d
	}
	args := make([][]*pjrt.Buffer, n)
	for d, dev := range exe.Devices() {
		host := make([]float32, size)
		for i := range host {
			host[i] = float32(d*size + i)
		}
		x, err := c.BufferFromHost(dev, host, dims)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { x.Close() })
		args[d] = []*pjrt.Buffer{x}
	}
	return exe, args
}

// BenchmarkExecute8Devices is jit's BenchmarkCall without the jit layer: execute + wait of x*2
// on 8 devices, driven from Go through Executable.Execute and WaitAll.
func BenchmarkExecute8Devices(b *testing.B) {
	exe, args := benchProgram(b, seedF32Module, 8, 2, 1)
	b.ReportAllocs()
	flat := make([]*pjrt.Buffer, 8)
	defer reportCPU(b)()
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

// reportCPU starts counting the process's CPU time (user and system, every thread) and returns
// the function that reports it per op as "cpu-ns/op": on a loaded machine a steadier figure of
// the work a call costs than wall time, which waiting for a core inflates.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchFloor times the binding's floor (pjrt's floor.c) on exe: per op, calls executions in a C
// loop, with xm_execute as Executable.Execute calls it ("binding") and with the bare PJRT
// execute, without completion events or in-flight accounting ("bare"). No binding goes below
// these figures on the same plugin: they are the plugin's own cost.
func benchFloor(b *testing.B, module string, n, calls int, chain bool, dims ...int) {
	for _, raw := range []bool{false, true} {
		name := "binding"
		if raw {
			name = "bare"
		}
		b.Run(name, func(b *testing.B) {
			exe, args := benchProgram(b, module, n, dims...)
			if err := pjrt.FloorLoop(exe, args, calls, raw, chain); err != nil { // warm up
				b.Fatal(err)
			}
			defer reportCPU(b)()
			for b.Loop() {
				if err := pjrt.FloorLoop(exe, args, calls, raw, chain); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFloorCall8Devices: the floor of jit's BenchmarkCall, one execute + wait per op.
func BenchmarkFloorCall8Devices(b *testing.B) { benchFloor(b, seedF32Module, 8, 1, false, 2, 1) }

// BenchmarkFloorChained1000x1Device: the floor of jit's BenchmarkChained1000x1Device, 1,000
// chained executions and one wait per op.
func BenchmarkFloorChained1000x1Device(b *testing.B) {
	benchFloor(b, chain1Module, 1, 1000, true, 8, 2)
}

// BenchmarkFloorChained1000x8Devices: the floor of jit's BenchmarkChained1000x8Devices.
func BenchmarkFloorChained1000x8Devices(b *testing.B) {
	benchFloor(b, chain8Module, 8, 1000, true, 1, 2)
}

// TestFloorLoop runs the floor benchmarks' C loop in each mode and checks that the arguments come
// out unchanged and that no buffer is left behind. "call8" and "chain8" run on 8 devices, or on
// fewer where pjrttest.Client has fewer.
func TestFloorLoop(t *testing.T) {
	s := seedFor(pjrttest.Client(t))
	m := pjrttest.FitShape([]int{8}, len(pjrttest.Client(t).Devices()))[0]
	for _, tc := range []struct {
		name   string
		module string
		n      int
		chain  bool
		dims   []int
	}{
		{"call8", seedF32(s), s.parts(), false, s.dims()},
		{"chain1", chain1Module, 1, true, []int{8, 2}},
		{"chain8", chainModuleOn(m), m, true, []int{8 / m, 2}},
	} {
		for _, raw := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/raw=%v", tc.name, raw), func(t *testing.T) {
				exe, args := benchProgram(t, tc.module, tc.n, tc.dims...)
				before := pjrt.LiveBuffers()
				require.NoError(t, pjrt.FloorLoop(exe, args, 5, raw, tc.chain))
				assert.Equal(t, before, pjrt.LiveBuffers())
				got, err := args[tc.n-1][0].ToHost()
				require.NoError(t, err)
				size := len(got.([]float32))
				want := make([]float32, size)
				for i := range want {
					want[i] = float32((tc.n-1)*size + i)
				}
				assert.Equal(t, want, got)
			})
		}
	}
	// A chain needs as many results as arguments, and at most 64 devices.
	exe, args := benchProgram(t, chain1Module, 1, 8, 2)
	require.ErrorIs(t, pjrt.FloorLoop(exe, [][]*pjrt.Buffer{args[0], args[0]}, 1, false, false), pjrt.ErrExecute)
}
