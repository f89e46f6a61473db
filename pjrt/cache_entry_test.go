package pjrt_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// Two programs of one signature, so that the entry of one loaded as the other's would run and
// give the other's numbers: x+1 and 2x on a tensor<4xf32>.
const (
	plusOneModule = `module @plus_one attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %x, %c : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`
	twiceModule = `module @twice attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %x, %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`
)

var (
	cacheInput   = []float32{1, 2, 3, 4}
	plusOneWant  = []float32{2, 3, 4, 5}
	twiceWant    = []float32{2, 4, 6, 8}
	cacheOptions = pjrt.CompileOptions{DeviceAssignment: []int{0}}
)

// cacheClient opens a client of the test platform with its compile cache in dir, logging into
// log: one CPU device on "cpu", every GPU on "gpu" (the programs run on device 0).
func cacheClient(dir string, log *bytes.Buffer, opts ...pjrt.Option) (*pjrt.Client, error) {
	platform, err := pjrttest.Options(1)
	if err != nil {
		return nil, err
	}
	return pjrt.Open(append(append(platform, pjrt.WithCompileCache(dir),
		pjrt.WithLogger(slog.New(slog.NewTextHandler(log, nil)))), opts...)...)
}

// runCached compiles text on c (through its cache), runs it on cacheInput and checks the
// result is exactly want.
func runCached(c *pjrt.Client, text string, want []float32) error {
	exe, err := c.Compile(text, cacheOptions)
	if err != nil {
		return err
	}
	defer exe.Close()
	in, err := c.BufferFromHost(exe.Devices()[0], cacheInput, []int{4})
	if err != nil {
		return err
	}
	defer in.Close()
	outs, err := exe.Execute([][]*pjrt.Buffer{{in}})
	if err != nil {
		return err
	}
	got, err := outs[0][0].ToHost()
	outs[0][0].Close()
	if err != nil {
		return err
	}
	if g, ok := got.([]float32); !ok || !slices.Equal(g, want) {
		return fmt.Errorf("wrong result %v, want %v", got, want)
	}
	return nil
}

// statsDelta returns what c's compile stats gained since before.
func statsDelta(c *pjrt.Client, before pjrt.CompileStats) pjrt.CompileStats {
	now := c.CompileStats()
	return pjrt.CompileStats{Compiles: now.Compiles - before.Compiles, CacheHits: now.CacheHits - before.CacheHits,
		CacheMisses: now.CacheMisses - before.CacheMisses, CacheWrites: now.CacheWrites - before.CacheWrites,
		CacheRejects: now.CacheRejects - before.CacheRejects}
}

var (
	hitStats    = pjrt.CompileStats{CacheHits: 1}
	rejectStats = pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheWrites: 1, CacheRejects: 1}
)

// cacheRig is a one-device client with a cache directory and the entry path of plusOneModule.
type cacheRig struct {
	t     *testing.T
	c     *pjrt.Client
	log   bytes.Buffer
	entry string // plusOneModule's entry
	good  []byte // plusOneModule's entry as the client wrote it
}

func newCacheRig(t *testing.T) *cacheRig {
	r := &cacheRig{t: t}
	c, err := cacheClient(t.TempDir(), &r.log)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	r.c = c
	r.entry, err = pjrt.CacheEntryPath(c, plusOneModule, cacheOptions)
	require.NoError(t, err)
	require.NoError(t, runCached(c, plusOneModule, plusOneWant))
	r.good, err = os.ReadFile(r.entry)
	require.NoError(t, err)
	return r
}

// check runs plusOneModule through the cache and asserts its exact result and stats delta.
func (r *cacheRig) check(name string, want pjrt.CompileStats) {
	r.t.Helper()
	before := r.c.CompileStats()
	done := make(chan error, 1)
	go func() { done <- runCached(r.c, plusOneModule, plusOneWant) }()
	select {
	case err := <-done:
		require.NoError(r.t, err, name)
	case <-time.After(60 * time.Second):
		r.t.Fatalf("%s: Compile hangs", name)
	}
	assert.Equal(r.t, want, statsDelta(r.c, before), name)
}

// put replaces plusOneModule's entry with data.
func (r *cacheRig) put(data []byte) {
	r.t.Helper()
	require.NoError(r.t, os.RemoveAll(r.entry))
	require.NoError(r.t, os.WriteFile(r.entry, data, 0o644))
}

// TestCompileCacheSwappedEntries swaps the entries of x+1 and 2x: each program still gives its
// own exact result, the swapped entries being refused and rewritten.
func TestCompileCacheSwappedEntries(t *testing.T) {
	r := newCacheRig(t)
	require.NoError(t, runCached(r.c, twiceModule, twiceWant))
	other, err := pjrt.CacheEntryPath(r.c, twiceModule, cacheOptions)
	require.NoError(t, err)
	tmp := r.entry + ".swap"
	require.NoError(t, os.Rename(r.entry, tmp))
	require.NoError(t, os.Rename(other, r.entry))
	require.NoError(t, os.Rename(tmp, other))

	before := r.c.CompileStats()
	require.NoError(t, runCached(r.c, plusOneModule, plusOneWant))
	require.NoError(t, runCached(r.c, twiceModule, twiceWant))
	assert.Equal(t, pjrt.CompileStats{Compiles: 2, CacheMisses: 2, CacheWrites: 2, CacheRejects: 2}, statsDelta(r.c, before))
	assert.Contains(t, r.log.String(), "the entry is of another key")
	r.check("the rewritten entry", hitStats)
}

// TestCompileCacheDamagedEntries: a single-bit flip in each byte of the header, a sample of the
// payload's, truncations, an old-format entry (no header) and appended bytes are each a logged
// miss, and the program gives its exact result.
func TestCompileCacheDamagedEntries(t *testing.T) {
	r := newCacheRig(t)
	r.check("the entry as written", hitStats)
	hdr := pjrt.CacheEntryHeaderLen
	require.Greater(t, len(r.good), hdr)
	flip := func(bit int) []byte {
		d := slices.Clone(r.good)
		d[bit/8] ^= 1 << (bit % 8)
		return d
	}
	// One bit of each header byte here (TestDecodeEntryBitFlips flips every bit of the header
	// through the decoder alone).
	for i := range hdr {
		bit := i*8 + i%8
		r.put(flip(bit))
		r.check(fmt.Sprintf("header bit %d flipped", bit), rejectStats)
	}
	payloadBits := (len(r.good) - hdr) * 8
	for i := range 16 {
		bit := hdr*8 + i*payloadBits/16 + i // spread over the payload
		r.put(flip(bit))
		r.check(fmt.Sprintf("payload bit %d flipped", bit), rejectStats)
	}
	r.put(flip(len(r.good)*8 - 1))
	r.check("the last bit flipped", rejectStats)
	for _, n := range []int{0, 1, hdr - 1, hdr, hdr + 1, len(r.good) / 2, len(r.good) - 1} {
		r.put(r.good[:n])
		r.check(fmt.Sprintf("truncated to %d bytes", n), rejectStats)
	}
	r.put(append(slices.Clone(r.good), 0))
	r.check("one byte appended", rejectStats)
	r.put(r.good[hdr:])
	r.check("an old-format entry (the serialized executable alone)", rejectStats)
	assert.Contains(t, r.log.String(), "no entry header")
	r.check("the rewritten entry", hitStats)
}

// TestCompileCacheSpecialFiles: a FIFO, a symbolic link to /dev/null, a dangling link, a
// directory and a file over the size cap in an entry's place are misses, and nothing blocks.
func TestCompileCacheSpecialFiles(t *testing.T) {
	r := newCacheRig(t)
	require.NoError(t, os.Remove(r.entry))
	require.NoError(t, syscall.Mkfifo(r.entry, 0o644))
	r.check("a FIFO", rejectStats)
	r.check("the FIFO replaced by the rewritten entry", hitStats)

	require.NoError(t, os.Remove(r.entry))
	require.NoError(t, os.Symlink("/dev/null", r.entry))
	r.check("a link to /dev/null", rejectStats)
	r.check("the link replaced by the rewritten entry", hitStats)

	require.NoError(t, os.Remove(r.entry))
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "nowhere"), r.entry))
	r.check("a dangling link", pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheWrites: 1})

	require.NoError(t, os.Remove(r.entry))
	require.NoError(t, os.Mkdir(r.entry, 0o755))
	r.check("a directory (the rewrite fails, logged)", pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheRejects: 1})
	assert.Contains(t, r.log.String(), "compile cache: cannot write entry")
	require.NoError(t, os.Remove(r.entry))

	// A sparse file one byte over the cap: refused by its size, never read.
	f, err := os.Create(r.entry)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(pjrt.MaxCompileCacheEntry+1))
	require.NoError(t, f.Close())
	r.check("an entry over the size cap", rejectStats)
	assert.Contains(t, r.log.String(), fmt.Sprintf("%d bytes, more than the limit of %d", pjrt.MaxCompileCacheEntry+1, pjrt.MaxCompileCacheEntry))
	r.check("the rewritten entry", hitStats)
}

// TestCompileCacheTwoPlugins compiles one program with both CPU plugins into one cache
// directory: neither reuses the other's entry, and the other plugin's entry put in a plugin's
// place is a miss.
func TestCompileCacheTwoPlugins(t *testing.T) {
	// Both plugins by name, whatever XLAMESH_PJRT_PLUGIN says.
	first, err := pjrttest.CPUPlugin("cpu")
	require.NoError(t, err)
	other, err := pjrttest.CPUPlugin("cpu-0.81")
	require.NoError(t, err)
	dir := t.TempDir()
	var logA, logB bytes.Buffer
	a, err := cacheClient(dir, &logA, pjrt.WithPlugin(first))
	require.NoError(t, err)
	defer a.Close()
	b, err := cacheClient(dir, &logB, pjrt.WithPlugin(other))
	require.NoError(t, err)
	defer b.Close()
	require.NotEqual(t, a.Plugin().Path(), b.Plugin().Path())

	require.NoError(t, runCached(a, plusOneModule, plusOneWant))
	require.NoError(t, runCached(b, plusOneModule, plusOneWant))
	assert.Equal(t, pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheWrites: 1}, a.CompileStats())
	assert.Equal(t, pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheWrites: 1}, b.CompileStats(), "b must not load a's entry")
	pathA, err := pjrt.CacheEntryPath(a, plusOneModule, cacheOptions)
	require.NoError(t, err)
	pathB, err := pjrt.CacheEntryPath(b, plusOneModule, cacheOptions)
	require.NoError(t, err)
	require.NotEqual(t, pathA, pathB, "the key covers the plugin")
	entries, err := filepath.Glob(filepath.Join(dir, "*.xlaexec"))
	require.NoError(t, err)
	assert.Len(t, entries, 2)

	// Each plugin's entry in the other's place.
	dataA, err := os.ReadFile(pathA)
	require.NoError(t, err)
	dataB, err := os.ReadFile(pathB)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pathA, dataB, 0o644))
	require.NoError(t, os.WriteFile(pathB, dataA, 0o644))
	for _, c := range []*pjrt.Client{a, b} {
		before := c.CompileStats()
		require.NoError(t, runCached(c, plusOneModule, plusOneWant))
		assert.Equal(t, rejectStats, statsDelta(c, before), c.Plugin().Path())
		before = c.CompileStats()
		require.NoError(t, runCached(c, plusOneModule, plusOneWant))
		assert.Equal(t, hitStats, statsDelta(c, before), c.Plugin().Path())
	}
}
