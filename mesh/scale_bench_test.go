package mesh

import (
	"io"
	"runtime"
	"strconv"
	"testing"
)

// The scale benchmarks of issue 31 (tools/bench.sh's scale table): each operation at 8, 512,
// 8,192 and 65,536 simulated devices, as BenchmarkScale<Op>/N=<devices>, beside
// tools/bench/jax_scale.py's JAX counterparts on fake devices. The mesh is (N/8, 8) with axes
// "x", "y" and device i in process i/8 (one process for N = 8); arrays are (N, 16) and sharded
// P("x", "y").

var scaleSizes = []int{8, 512, 8192, 65536}

// scaleBallast is live heap held while the scale benchmarks run (64 MiB, pointer-free, never
// touched). Any process that holds a PJRT client and a mesh of thousands of devices has more than
// that; without it Go's 4 MiB minimum heap target would collect rarely at 512 devices and every
// few calls at 8,192, a step in the growth exponent that is the runtime's, not the operation's.
// The collections an operation's allocations cause are still paid, at GOGC=100.
var scaleBallast []byte

func holdScaleBallast() {
	if scaleBallast == nil {
		scaleBallast = make([]byte, 64<<20)
	}
}

// scaleDevices returns n SimDevices, device i in process i/8.
func scaleDevices(n int) []Device {
	out := make([]Device, n)
	for i := range out {
		out[i] = SimDevice{Id: i, Process: i / 8}
	}
	return out
}

// scaleSetup returns the devices, mesh and sharding of one size.
func scaleSetup(b *testing.B, n int) ([]Device, Mesh, NamedSharding) {
	b.Helper()
	devices := scaleDevices(n)
	m, err := New(devices, []int{n / 8, 8}, "x", "y")
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewNamedSharding(m, P("x", "y"))
	if err != nil {
		b.Fatal(err)
	}
	return devices, m, s
}

// scaleRun runs op as BenchmarkScale…/N=n for every size, with scaleBallast held.
func scaleRun(b *testing.B, op func(b *testing.B, devices []Device, m Mesh, s NamedSharding, n int)) {
	holdScaleBallast()
	for _, n := range scaleSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			devices, m, s := scaleSetup(b, n)
			b.ReportAllocs()
			op(b, devices, m, s, n)
		})
	}
}

func BenchmarkScaleNewMesh(b *testing.B) {
	scaleRun(b, func(b *testing.B, devices []Device, _ Mesh, _ NamedSharding, n int) {
		for b.Loop() {
			if _, err := New(devices, []int{n / 8, 8}, "x", "y"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScaleNewNamedSharding(b *testing.B) {
	scaleRun(b, func(b *testing.B, _ []Device, m Mesh, _ NamedSharding, _ int) {
		for b.Loop() {
			if _, err := NewNamedSharding(m, P("x", "y")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScaleMeshEqual compares two meshes made apart from the same devices.
func BenchmarkScaleMeshEqual(b *testing.B) {
	scaleRun(b, func(b *testing.B, devices []Device, m Mesh, _ NamedSharding, n int) {
		o, err := New(devices, []int{n / 8, 8}, "x", "y")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if !m.Equal(o) {
				b.Fatal("equal meshes differ")
			}
		}
	})
}

func BenchmarkScaleDevicesIndicesMap(b *testing.B) {
	scaleRun(b, func(b *testing.B, _ []Device, _ Mesh, s NamedSharding, n int) {
		shape := []int{n, 16}
		for b.Loop() {
			if _, err := s.DevicesIndicesMap(shape); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScaleShards(b *testing.B) {
	scaleRun(b, func(b *testing.B, _ []Device, _ Mesh, s NamedSharding, n int) {
		shape := []int{n, 16}
		for b.Loop() {
			if _, err := s.Shards(shape); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScaleAddressableShards(b *testing.B) {
	scaleRun(b, func(b *testing.B, _ []Device, _ Mesh, s NamedSharding, n int) {
		shape := []int{n, 16}
		for b.Loop() {
			if _, err := s.AddressableShards(shape, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkScaleProcessIndices(b *testing.B) {
	scaleRun(b, func(b *testing.B, _ []Device, m Mesh, _ NamedSharding, _ int) {
		for b.Loop() {
			_ = m.ProcessIndices()
		}
	})
}

func BenchmarkScaleProcessIndexAndCount(b *testing.B) {
	scaleRun(b, func(b *testing.B, _ []Device, _ Mesh, s NamedSharding, _ int) {
		for b.Loop() {
			if _, _, err := s.ProcessIndexAndCount(0, 2, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScaleVisualize: a 1-D array of N elements over a 1-D mesh of the N devices.
func BenchmarkScaleVisualize(b *testing.B) {
	scaleRun(b, func(b *testing.B, devices []Device, _ Mesh, _ NamedSharding, n int) {
		m1, err := New(devices, []int{n}, "x")
		if err != nil {
			b.Fatal(err)
		}
		s1 := MustNamedSharding(m1, P("x"))
		for b.Loop() {
			if err := Visualize(io.Discard, s1, []int{n}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScaleMemory reports, as held-B/op, the heap one mesh, one sharding over it and its
// DevicesIndicesMap for an (N, 16) array hold once made (the devices themselves excluded, as
// they exist before any mesh). The time is that of making the three.
func BenchmarkScaleMemory(b *testing.B) {
	scaleRun(b, func(b *testing.B, devices []Device, _ Mesh, _ NamedSharding, n int) {
		var held float64
		var kept []any
		for b.Loop() {
			b.StopTimer()
			kept = nil
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.StartTimer()
			m, err := New(devices, []int{n / 8, 8}, "x", "y")
			if err != nil {
				b.Fatal(err)
			}
			s := MustNamedSharding(m, P("x", "y"))
			idx, err := s.DevicesIndicesMap([]int{n, 16})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			kept = []any{m, s, idx}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held = float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(kept)
			b.StartTimer()
		}
		b.ReportMetric(held, "held-B/op")
	})
}
