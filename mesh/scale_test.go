package mesh

import (
	"bytes"
	"runtime"
	"testing"
)

// The growth tests of issue 31: each runs a hot path at 512 and 8,192 devices and compares the
// work it did (set lookups counted in scaleProbes, Device method calls) or the bytes it
// allocated, never the time it took. Linear or N·log N work grows by at most 16×1.5 = 24 from
// 512 to 8,192 devices; quadratic work by 256.
const (
	scaleSmall = 512
	scaleLarge = 8192
	maxGrowth  = 24
)

// countDev is a Device that counts the calls of ProcessIndex on it.
type countDev struct {
	id, proc int
	calls    *int
}

func (d countDev) ID() int           { return d.id }
func (d countDev) ProcessIndex() int { *d.calls++; return d.proc }
func (d countDev) Platform() string  { return "cpu" }
func (d countDev) Kind() string      { return "cpu" }

// scaleMesh returns an (n/8, 8) mesh ("x", "y") whose rows are processes: device i is in
// process i/8. ProcessIndex calls on its devices are counted in *calls.
func scaleMesh(t testing.TB, n int, calls *int) Mesh {
	t.Helper()
	devices := make([]Device, n)
	for i := range devices {
		devices[i] = countDev{id: i, proc: i / 8, calls: calls}
	}
	m, err := New(devices, []int{n / 8, 8}, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// probes returns the scaleProbes counted while op runs.
func probes(op func()) int64 {
	before := scaleProbes.Load()
	op()
	return scaleProbes.Load() - before
}

// bytesPerRun returns the bytes op allocates per run, averaged over runs: the least of five
// trials. runtime.MemStats counts every goroutine's allocations, and a finalizer or a
// goroutine left by another test can allocate during a trial; such noise only adds bytes, so
// the least trial is the one nearest op's own.
func bytesPerRun(runs int, op func()) float64 {
	var a, b runtime.MemStats
	op() // warm up
	least := -1.0
	for range 5 {
		runtime.GC()
		runtime.ReadMemStats(&a)
		for range runs {
			op()
		}
		runtime.ReadMemStats(&b)
		if per := float64(b.TotalAlloc-a.TotalAlloc) / float64(runs); least < 0 || per < least {
			least = per
		}
	}
	return least
}

func checkGrowth(t *testing.T, what string, small, large float64, limit float64) {
	t.Helper()
	if small <= 0 {
		t.Fatalf("%s: nothing counted at %d devices", what, scaleSmall)
	}
	g := large / small
	t.Logf("%s: %.0f at %d devices, %.0f at %d: growth %.2f×", what, small, scaleSmall, large, scaleLarge, g)
	if g > limit {
		t.Errorf("%s grows %.2f× from %d to %d devices, more than %.2f×", what, g, scaleSmall, scaleLarge, limit)
	}
}

// TestScaleProcessIndices: the process indices are found once, when the mesh is made, with
// one ProcessIndex call per device; ProcessIndices and IsMultiProcess then call no Device
// method and allocate one slice, whatever the size of the mesh.
func TestScaleProcessIndices(t *testing.T) {
	work := map[int]float64{}
	for _, n := range []int{scaleSmall, scaleLarge} {
		calls := 0
		m := scaleMesh(t, n, &calls)
		if calls != n {
			t.Errorf("%d devices: New made %d ProcessIndex calls, want %d", n, calls, n)
		}
		work[n] = float64(calls)
		calls = 0
		var got []int
		allocs := testing.AllocsPerRun(10, func() { got = m.ProcessIndices() })
		if !m.IsMultiProcess() {
			t.Errorf("%d devices: IsMultiProcess is false", n)
		}
		if calls != 0 || allocs != 1 {
			t.Errorf("%d devices: ProcessIndices made %d ProcessIndex calls and %v allocations per call, want 0 and 1", n, calls, allocs)
		}
		if len(got) != n/8 || got[0] != 0 || got[len(got)-1] != n/8-1 {
			t.Errorf("%d devices: ProcessIndices = %d indices from %d to %d, want %d from 0 to %d", n, len(got), got[0], got[len(got)-1], n/8, n/8-1)
		}
	}
	checkGrowth(t, "ProcessIndex calls of New", work[scaleSmall], work[scaleLarge], maxGrowth)
}

// TestScaleProcessIndexAndCount: the distinct blocks of n/8 processes are found with one set
// lookup per process, not one comparison per pair of processes.
func TestScaleProcessIndexAndCount(t *testing.T) {
	work := map[int]float64{}
	for _, n := range []int{scaleSmall, scaleLarge} {
		calls := 0
		s, err := NewNamedSharding(scaleMesh(t, n, &calls), P("x"))
		if err != nil {
			t.Fatal(err)
		}
		var idx, count int
		work[n] = float64(probes(func() { idx, count, err = s.ProcessIndexAndCount(0, 2, 3) }))
		if err != nil || idx != 3 || count != n/8 {
			t.Errorf("%d devices: ProcessIndexAndCount(0, 2, 3) = %d, %d, %v; want 3, %d, nil", n, idx, count, err, n/8)
		}
	}
	checkGrowth(t, "set lookups of ProcessIndexAndCount", work[scaleSmall], work[scaleLarge], maxGrowth)
}

// TestScaleProcessLocalShards: the block starts of a process's shards are sorted once, not
// searched linearly for each shard.
func TestScaleProcessLocalShards(t *testing.T) {
	work := map[int]float64{}
	for _, n := range []int{scaleSmall, scaleLarge} {
		// One process holds every device: its local array is the global one.
		s, err := NewNamedSharding(MustNew(SimDevices(n), []int{n / 8, 8}, "x", "y"), P("x", "y"))
		if err != nil {
			t.Fatal(err)
		}
		var got []LocalShard
		work[n] = float64(probes(func() { got, err = s.ProcessLocalShards([]int{n, 16}, []int{n, 16}, 0) }))
		if err != nil || len(got) != n || got[n-1].Local.String() != (Index{{n - 8, n}, {14, 16}}).String() {
			t.Fatalf("%d devices: ProcessLocalShards gave %d shards, err %v", n, len(got), err)
		}
	}
	checkGrowth(t, "set lookups of ProcessLocalShards", work[scaleSmall], work[scaleLarge], maxGrowth)
}

// TestScaleKeys: a mesh's key, and so a sharding's, has the same length at every size (but for
// the digits of the sizes), and
// NewNamedSharding allocates the same bytes at 512 and 8,192 devices: a sharding refers to its
// mesh instead of copying it.
func TestScaleKeys(t *testing.T) {
	keyLen := map[int]int{}
	alloc := map[int]float64{}
	for _, n := range []int{scaleSmall, scaleLarge} {
		m := MustNew(SimDevices(n), []int{n / 8, 8}, "x", "y")
		s := MustNamedSharding(m, P("x", "y"))
		keyLen[n] = len(s.Key())
		alloc[n] = bytesPerRun(100, func() { _, _ = NewNamedSharding(m, P("x", "y")) })
		o := MustNew(SimDevices(n), []int{n / 8, 8}, "x", "y")
		if !o.Equal(m) || o.Key() != m.Key() || !MustNamedSharding(o, P("x", "y")).Equal(s) {
			t.Errorf("%d devices: equal meshes or shardings do not compare equal", n)
		}
		ids := SimDevices(n)
		ids[0], ids[1] = ids[1], ids[0]
		if p := MustNew(ids, []int{n / 8, 8}, "x", "y"); p.Equal(m) || p.Key() == m.Key() {
			t.Errorf("%d devices: meshes with devices 0 and 1 swapped compare equal", n)
		}
	}
	// The keys differ in length only by the digits of the sizes they name.
	if keyLen[scaleLarge]-keyLen[scaleSmall] != 3 {
		t.Errorf("sharding keys are %d bytes at %d devices and %d at %d; want 3 more (the digits of 1024 and 8192 over 64 and 512)",
			keyLen[scaleSmall], scaleSmall, keyLen[scaleLarge], scaleLarge)
	}
	// Constant but for the digits in the key and the allocator's size classes; a copy of the
	// mesh's ids would grow 16×.
	checkGrowth(t, "bytes allocated by NewNamedSharding", alloc[scaleSmall], alloc[scaleLarge], 1.5)
}

// TestScaleShards: Shards allocates its result once (one Shard per device and one backing
// array of ranges), computing each index once; AddressableShards allocates only the shards of
// the process.
func TestScaleShards(t *testing.T) {
	const shardBytes = int(24 + 16 + 8) // Device + Index + ReplicaID
	alloc := map[int]float64{}
	addr := map[int]float64{}
	for _, n := range []int{scaleSmall, scaleLarge} {
		calls := 0
		s := MustNamedSharding(scaleMesh(t, n, &calls), P("x", "y"))
		shape := []int{n, 16}
		alloc[n] = bytesPerRun(10, func() { _, _ = s.Shards(shape) })
		// The result, with 10% for the allocator's size classes: computing the indices twice
		// would take twice as much.
		if want := 1.1*float64(n*(shardBytes+2*16)) + 1024; alloc[n] > want {
			t.Errorf("%d devices: Shards allocates %.0f bytes, more than its result (%.0f)", n, alloc[n], want)
		}
		addr[n] = bytesPerRun(10, func() { _, _ = s.AddressableShards(shape, 1) })
		got, err := s.AddressableShards(shape, 1)
		if err != nil || len(got) != 8 || got[0].Device.ID() != 8 || got[0].Index.String() != "[8:16, 0:2]" {
			t.Errorf("%d devices: AddressableShards(1) = %v, %v", n, got, err)
		}
	}
	checkGrowth(t, "bytes allocated by Shards", alloc[scaleSmall], alloc[scaleLarge], 16*1.1)
	checkGrowth(t, "bytes allocated by AddressableShards of one process", addr[scaleSmall], addr[scaleLarge], 1.1)
}

// TestScaleVisualize: a 1-D array over 512 or 8,192 devices prints JAX's 3 lines of 80
// columns, and the work grows linearly.
func TestScaleVisualize(t *testing.T) {
	alloc := map[int]float64{}
	for _, n := range []int{scaleSmall, scaleLarge} {
		s := MustNamedSharding(MustNew(SimDevices(n), []int{n}, "x"), P("x"))
		var b bytes.Buffer
		alloc[n] = bytesPerRun(3, func() {
			b.Reset()
			if err := Visualize(&b, s, []int{n}); err != nil {
				t.Fatal(err)
			}
		})
		if got := b.Len(); got != 3*(80*3+1) {
			t.Errorf("%d devices: Visualize wrote %d bytes, want %d", n, got, 3*(80*3+1))
		}
	}
	checkGrowth(t, "bytes allocated by Visualize", alloc[scaleSmall], alloc[scaleLarge], maxGrowth)
}
