package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// benchValue is element i of the benchmarks' array: a multiplicative hash of i scaled to
// [-1, 1), as incompressible as trained weights are nearly (zstd saves about a tenth).
func benchValue(i int) float32 {
	return float32(float64(uint64(i)*2654435761%(1<<32))/(1<<31) - 1)
}

// benchArray puts the benchmarks' array on 8 devices, split 8 ways by rows: float32,
// benchValue(i) for element i (what tools/bench/checkpoint_jax.py saves),
// XLAMESH_CKPT_BENCH_MIB MiB (default 1024). Checkpoints go under XLAMESH_CKPT_BENCH_DIR
// (default a temporary directory).
func benchArray(b *testing.B) (*pjrt.Client, *jit.Array, mesh.NamedSharding, string) {
	mib := 1024
	if v := os.Getenv("XLAMESH_CKPT_BENCH_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n%8 != 0 {
			b.Fatalf("XLAMESH_CKPT_BENCH_MIB=%q: want a positive multiple of 8", v)
		}
		mib = n
	}
	dir := os.Getenv("XLAMESH_CKPT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	c := pjrttest.ClientWithDevices(b, 8)
	m, err := mesh.New(jit.Devices(c), []int{8}, "x")
	if err != nil {
		b.Fatal(err)
	}
	s := mesh.MustNamedSharding(m, mesh.P("x"))
	rows, cols := mib*64, 4096 // 64 rows of 16 KiB per MiB
	a, err := jit.FromCallback(c, []int{rows, cols}, dtypes.Float32, s, func(index mesh.Index) (any, error) {
		out := make([]float32, index[0].Len()*cols)
		for i := range out {
			out[i] = benchValue(index[0].Start*cols + i)
		}
		return out, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	b.SetBytes(int64(mib) << 20)
	return c, a, s, dir
}

// BenchmarkSave1GiB saves a 1 GiB array sharded 8 ways (zarr v2, zstd level 1, synced to
// disk), as serialization.async_serialize does in tools/bench/checkpoint_jax.py. With
// XLAMESH_CKPT_BENCH_KEEP=PATH its first save is kept at PATH, for JAX to check.
func BenchmarkSave1GiB(b *testing.B) {
	_, a, _, root := benchArray(b)
	ctx := context.Background()
	keep := os.Getenv("XLAMESH_CKPT_BENCH_KEEP")
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(root, "save_"+strconv.Itoa(i))
		if err := checkpoint.Save(ctx, dir, a); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		var err error
		if i == 0 && keep != "" {
			err = os.Rename(dir, keep)
		} else {
			err = os.RemoveAll(dir)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkRestore1GiB restores that checkpoint onto the same sharding.
func BenchmarkRestore1GiB(b *testing.B) {
	c, a, s, root := benchArray(b)
	ctx := context.Background()
	dir := filepath.Join(root, "restore")
	if err := checkpoint.Save(ctx, dir, a); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	for b.Loop() {
		got, err := checkpoint.Restore[*jit.Array](ctx, dir, c, s)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = got.Close()
		b.StartTimer()
	}
}
