package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/gomlx/gopjrt/dtypes/bfloat16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/tree"
)

// params is the tree the tests save: a struct with a slice and a map, leaves of any type.
type params[T any] struct {
	Embed  T
	Blocks []block[T]
	Norms  map[string]T
}

type block[T any] struct{ W, B T }

// sharding returns spec on the first n devices of c as a mesh of the given shape and axes.
func sharding(t *testing.T, c *pjrt.Client, shape []int, axes []string, spec mesh.PartitionSpec) mesh.NamedSharding {
	t.Helper()
	n := 1
	for _, s := range shape {
		n *= s
	}
	m, err := mesh.New(jit.Devices(c)[:n], shape, axes...)
	require.NoError(t, err)
	s, err := mesh.NewNamedSharding(m, spec)
	require.NoError(t, err)
	return s
}

// iota returns 0, 1, ... n-1 scaled by k, as float32.
func iota(n int, k float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i)*k - 3
	}
	return out
}

func put(t *testing.T, c *pjrt.Client, flat any, shape []int, s mesh.NamedSharding) *jit.Array {
	t.Helper()
	a, err := jit.Put(c, flat, shape, s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func host(t *testing.T, a *jit.Array) any {
	t.Helper()
	v, err := a.ToHost()
	require.NoError(t, err)
	return v
}

// files returns the files under dir, relative, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	}))
	sort.Strings(out)
	return out
}

// TestSaveRestoreTree saves a tree sharded on a 4x2 mesh and restores it onto other meshes
// and specs: the values come back exactly, and the files are JAX's layout.
func TestSaveRestoreTree(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	axes := []string{"x", "y"}
	xy := func(spec mesh.PartitionSpec) mesh.NamedSharding { return sharding(t, c, []int{4, 2}, axes, spec) }
	bf := make([]bfloat16.BFloat16, 16)
	for i := range bf {
		bf[i] = bfloat16.FromFloat32(float32(i) / 4)
	}
	saved := params[*jit.Array]{
		Embed: put(t, c, iota(48, 0.5), []int{8, 6}, xy(mesh.P("x", nil))),
		Blocks: []block[*jit.Array]{
			{W: put(t, c, bf, []int{4, 4}, xy(mesh.P("x", "y"))), B: put(t, c, []int32{7, -1, 0, 5}, []int{4}, xy(mesh.P()))},
		},
		Norms: map[string]*jit.Array{"final": put(t, c, []float32{2.5}, []int{}, xy(mesh.P()))},
	}
	dir := filepath.Join(t.TempDir(), "step_1")
	require.NoError(t, checkpoint.Save(ctx, dir, saved))
	assert.Equal(t, []string{
		"Blocks.0.B/.zarray", "Blocks.0.B/0",
		"Blocks.0.W/.zarray", "Blocks.0.W/0.0", "Blocks.0.W/0.1", "Blocks.0.W/1.0", "Blocks.0.W/1.1",
		"Blocks.0.W/2.0", "Blocks.0.W/2.1", "Blocks.0.W/3.0", "Blocks.0.W/3.1",
		"Embed/.zarray", "Embed/0.0", "Embed/1.0", "Embed/2.0", "Embed/3.0",
		"Norms.final/.zarray", "Norms.final/0",
	}, files(t, dir))
	meta, err := os.ReadFile(filepath.Join(dir, "Embed", ".zarray"))
	require.NoError(t, err)
	assert.Equal(t, `{"chunks":[2,6],"compressor":{"id":"zstd","level":1},"dimension_separator":".","dtype":"<f4",`+
		`"fill_value":null,"filters":null,"order":"C","shape":[8,6],"zarr_format":2}`, string(meta))
	meta, err = os.ReadFile(filepath.Join(dir, "Blocks.0.W", ".zarray"))
	require.NoError(t, err)
	assert.Contains(t, string(meta), `"dtype":"bfloat16"`)
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the temporary directory is gone")

	for _, target := range []struct {
		name string
		s    func(rank int) mesh.NamedSharding
	}{
		{"same", nil},
		{"replicated on 3 devices", func(int) mesh.NamedSharding { return sharding(t, c, []int{3}, []string{"d"}, mesh.P()) }},
		{"4 ways on the first dimension", func(rank int) mesh.NamedSharding {
			if rank == 0 {
				return sharding(t, c, []int{4}, []string{"d"}, mesh.P())
			}
			return sharding(t, c, []int{4}, []string{"d"}, mesh.P("d"))
		}},
		{"2x2, transposed", func(rank int) mesh.NamedSharding {
			switch rank {
			case 0:
				return sharding(t, c, []int{2, 2}, []string{"a", "b"}, mesh.P())
			case 1:
				return sharding(t, c, []int{2, 2}, []string{"a", "b"}, mesh.P("b"))
			}
			return sharding(t, c, []int{2, 2}, []string{"a", "b"}, mesh.P("b", "a"))
		}},
	} {
		t.Run(target.name, func(t *testing.T) {
			leaves, def, err := tree.Flatten[*jit.Array](saved)
			require.NoError(t, err)
			specs := make([]mesh.NamedSharding, len(leaves))
			for i, a := range leaves {
				specs[i] = a.Sharding()
				if target.s != nil {
					specs[i] = target.s(len(a.Shape()))
				}
			}
			want, err := tree.Build[params[mesh.NamedSharding]](def, specs)
			require.NoError(t, err)
			got, err := checkpoint.Restore[params[*jit.Array]](ctx, dir, c, want)
			require.NoError(t, err)
			restored, _, err := tree.Flatten[*jit.Array](got)
			require.NoError(t, err)
			for i, a := range restored {
				assert.True(t, a.Sharding().Equal(specs[i]), "%s", a)
				assert.Equal(t, leaves[i].Shape(), a.Shape())
				assert.Equal(t, leaves[i].DType(), a.DType())
				assert.Equal(t, host(t, leaves[i]), host(t, a), "%s", def.Paths()[i])
				require.NoError(t, a.Close())
			}
		})
	}
}

// TestLoneArray: a checkpoint of one array is that array's zarr directory, as
// serialization.get_tensorstore_spec(dir) opens it.
func TestLoneArray(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{2, 4}, []string{"x", "y"}, mesh.P(nil, mesh.Axes("x", "y")))
	a := put(t, c, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, []int{2, 8}, s)
	dir := filepath.Join(t.TempDir(), "a")
	require.NoError(t, checkpoint.Save(ctx, dir, a))
	assert.Equal(t, []string{".zarray", "0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"}, files(t, dir))
	b, err := checkpoint.Restore[*jit.Array](ctx, dir, c, sharding(t, c, []int{2}, []string{"r"}, mesh.P("r")))
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, host(t, a), host(t, b))
	info, err := checkpoint.Info(dir)
	require.NoError(t, err)
	require.Len(t, info, 1)
	assert.Equal(t, "", info[0].Name)
	assert.Equal(t, dtypes.Int64, info[0].DType)
	assert.Equal(t, []int{2, 8}, info[0].Shape)
	assert.Equal(t, []int{2, 1}, info[0].Chunks)
	assert.Equal(t, 8, info[0].Files)
}

// TestSaveAsync: the arrays may be closed as soon as SaveAsync returns; Wait ends the save.
func TestSaveAsync(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{8}, []string{"x"}, mesh.P("x"))
	a, err := jit.Put(c, iota(64, 1), []int{64}, s)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "ck")
	p, err := checkpoint.SaveAsync(ctx, dir, map[string]*jit.Array{"a": a})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, p.Wait())
	<-p.Done()
	assert.Equal(t, dir, p.Dir())
	got, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, map[string]mesh.NamedSharding{"a": s})
	require.NoError(t, err)
	defer got["a"].Close()
	assert.Equal(t, iota(64, 1), host(t, got["a"]))

	// A cancelled save leaves neither the checkpoint nor its temporary directory.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	b := put(t, c, iota(64, 1), []int{64}, s)
	parent := t.TempDir()
	p, err = checkpoint.SaveAsync(cancelled, filepath.Join(parent, "ck"), b)
	require.NoError(t, err)
	assert.ErrorIs(t, p.Wait(), context.Canceled)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestErrors: bad trees, names, directories and files are typed errors naming what is wrong.
func TestErrors(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{4}, []string{"x"}, mesh.P("x"))
	a := put(t, c, iota(8, 1), []int{8}, s)
	root := t.TempDir()
	dir := filepath.Join(root, "ck")
	require.NoError(t, checkpoint.Save(ctx, dir, map[string]*jit.Array{"a": a}))
	restore := func(dir string, specs any) error {
		got, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, specs)
		for _, a := range got {
			_ = a.Close()
		}
		return err
	}
	ok := map[string]mesh.NamedSharding{"a": s}

	t.Run("exists", func(t *testing.T) {
		err := checkpoint.Save(ctx, dir, map[string]*jit.Array{"a": a})
		assert.ErrorIs(t, err, checkpoint.ErrExists)
		assert.ErrorContains(t, err, dir)
	})
	t.Run("names", func(t *testing.T) {
		for _, key := range []string{"", ".", "..", "a/b", `a\b`} {
			err := checkpoint.Save(ctx, filepath.Join(root, "n"), map[string]*jit.Array{key: a})
			assert.ErrorIs(t, err, checkpoint.ErrName, "%q", key)
		}
		err := checkpoint.Save(ctx, filepath.Join(root, "n"), map[string]any{"a.b": a, "a": map[string]*jit.Array{"b": a}})
		assert.ErrorIs(t, err, checkpoint.ErrName)
		assert.ErrorContains(t, err, `stored as "a.b"`)
	})
	t.Run("no tree", func(t *testing.T) {
		err := checkpoint.Save(ctx, filepath.Join(root, "n"), 3)
		var pe *tree.PathError
		assert.ErrorAs(t, err, &pe)
		err = checkpoint.Save(ctx, filepath.Join(root, "n"), map[string]*jit.Array{"a": nil})
		assert.ErrorIs(t, err, jit.ErrNil)
		assert.ErrorContains(t, err, `array "a"`)
	})
	t.Run("dtype", func(t *testing.T) {
		u4, err := jit.PutBytes(c, dtypes.U4, []int{4}, []byte{1, 2, 3, 4}, s)
		require.NoError(t, err)
		defer u4.Close()
		err = checkpoint.Save(ctx, filepath.Join(root, "n"), u4)
		assert.ErrorIs(t, err, checkpoint.ErrDType)
	})
	t.Run("incomplete", func(t *testing.T) {
		assert.ErrorIs(t, restore(filepath.Join(root, "none"), ok), checkpoint.ErrIncomplete)
		tmp := filepath.Join(root, "ck.orbax-checkpoint-tmp-1")
		require.NoError(t, os.CopyFS(tmp, os.DirFS(dir)))
		assert.ErrorIs(t, restore(tmp, ok), checkpoint.ErrIncomplete)
		err := checkpoint.Save(ctx, filepath.Join(root, "x.orbax-checkpoint-tmp"), a)
		assert.ErrorIs(t, err, checkpoint.ErrName)
	})
	t.Run("shape", func(t *testing.T) {
		three := sharding(t, c, []int{3}, []string{"x"}, mesh.P("x"))
		err := restore(dir, map[string]mesh.NamedSharding{"a": three})
		assert.ErrorIs(t, err, checkpoint.ErrShape)
		assert.ErrorIs(t, err, mesh.ErrIndivisible)
	})
	t.Run("missing array", func(t *testing.T) {
		err := restore(dir, map[string]mesh.NamedSharding{"a": s, "b": s})
		assert.ErrorIs(t, err, checkpoint.ErrFormat)
		assert.ErrorContains(t, err, "no .zarray or zarr.json at "+filepath.Join(dir, "b"))
	})
	broken := func(t *testing.T, edit func(dir string)) string {
		d := filepath.Join(t.TempDir(), "ck")
		require.NoError(t, os.CopyFS(d, os.DirFS(dir)))
		edit(d)
		return d
	}
	t.Run("missing chunk", func(t *testing.T) {
		d := broken(t, func(d string) { require.NoError(t, os.Remove(filepath.Join(d, "a", "2"))) })
		err := restore(d, ok)
		assert.ErrorIs(t, err, checkpoint.ErrMissingChunk)
		assert.ErrorContains(t, err, filepath.Join(d, "a", "2"))
	})
	t.Run("corrupt chunk", func(t *testing.T) {
		for name, edit := range map[string]func([]byte) []byte{
			"truncated":   func(b []byte) []byte { return b[:len(b)-3] },
			"a byte flip": func(b []byte) []byte { b[len(b)-6] ^= 0x40; return b },
			"empty":       func([]byte) []byte { return nil },
			"too long":    func(b []byte) []byte { return append(b, make([]byte, 1<<20)...) }, // refused before it is read
		} {
			d := broken(t, func(d string) {
				p := filepath.Join(d, "a", "1")
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, edit(b), 0o644))
			})
			err := restore(d, ok)
			assert.ErrorIs(t, err, checkpoint.ErrCorrupt, name)
			assert.ErrorContains(t, err, filepath.Join(d, "a", "1"), name)
		}
	})
	t.Run("metadata", func(t *testing.T) {
		for name, text := range map[string]string{
			"zarr 3":         `{"chunks":[2],"compressor":null,"dtype":"<f4","order":"C","shape":[8],"zarr_format":3}`,
			"blosc":          `{"chunks":[2],"compressor":{"id":"blosc"},"dtype":"<f4","order":"C","shape":[8],"zarr_format":2}`,
			"fortran":        `{"chunks":[2],"compressor":null,"dtype":"<f4","order":"F","shape":[8],"zarr_format":2}`,
			"big-endian":     `{"chunks":[2],"compressor":null,"dtype":">f4","order":"C","shape":[8],"zarr_format":2}`,
			"unknown dtype":  `{"chunks":[2],"compressor":null,"dtype":"<q9","order":"C","shape":[8],"zarr_format":2}`,
			"chunk rank":     `{"chunks":[2,1],"compressor":null,"dtype":"<f4","order":"C","shape":[8],"zarr_format":2}`,
			"zero chunk":     `{"chunks":[0],"compressor":null,"dtype":"<f4","order":"C","shape":[8],"zarr_format":2}`,
			"huge chunk":     `{"chunks":[1099511627776],"compressor":null,"dtype":"<f4","order":"C","shape":[8],"zarr_format":2}`,
			"not JSON":       `{"chunks":`,
			"filters":        `{"chunks":[2],"compressor":null,"dtype":"<f4","filters":[{"id":"delta"}],"order":"C","shape":[8],"zarr_format":2}`,
			"separator":      `{"chunks":[2],"compressor":null,"dimension_separator":"-","dtype":"<f4","order":"C","shape":[8],"zarr_format":2}`,
			"another shape":  `{"chunks":[2],"compressor":null,"dtype":"<f4","order":"C","shape":[6],"zarr_format":2}`,
			"negative shape": `{"chunks":[2],"compressor":null,"dtype":"<f4","order":"C","shape":[-8],"zarr_format":2}`,
		} {
			d := broken(t, func(d string) {
				require.NoError(t, os.WriteFile(filepath.Join(d, "a", ".zarray"), []byte(text), 0o644))
			})
			err := restore(d, ok)
			require.Error(t, err, name)
			assert.True(t, errors.Is(err, checkpoint.ErrFormat) || errors.Is(err, checkpoint.ErrDType) ||
				errors.Is(err, checkpoint.ErrShape), "%s: %v", name, err)
			assert.ErrorContains(t, err, filepath.Join(d, "a"), name)
		}
	})
}

// TestUncompressedAndNested reads zarr v2 arrays other writers make: no compressor, "/" as the
// dimension separator, edge chunks past the array's end.
func TestUncompressedAndNested(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	dir := filepath.Join(t.TempDir(), "z")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".zarray"), []byte(
		`{"chunks":[2,2],"compressor":null,"dimension_separator":"/","dtype":"<i2","fill_value":0,"filters":null,"order":"C","shape":[3,2],"zarr_format":2}`), 0o644))
	// Rows 0-1 in chunk 0/0; row 2 (and a padding row) in chunk 1/0.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0", "0"), []byte{1, 0, 2, 0, 3, 0, 4, 0}, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1", "0"), []byte{5, 0, 6, 0, 99, 0, 99, 0}, 0o644))
	s := sharding(t, c, []int{1}, []string{"x"}, mesh.P())
	a, err := checkpoint.Restore[*jit.Array](context.Background(), dir, c, s)
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, []int16{1, 2, 3, 4, 5, 6}, host(t, a))
}

// TestEmptyAndScalar: zero-size arrays have metadata and no chunk; scalars one chunk "0".
func TestEmptyAndScalar(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{2}, []string{"x"}, mesh.P("x"))
	empty := put(t, c, []float32{}, []int{4, 0}, s)
	scalar := put(t, c, []bool{true}, []int{}, sharding(t, c, []int{2}, []string{"x"}, mesh.P()))
	dir := filepath.Join(t.TempDir(), "ck")
	require.NoError(t, checkpoint.Save(ctx, dir, []*jit.Array{empty, scalar}))
	assert.Equal(t, []string{"0/.zarray", "1/.zarray", "1/0"}, files(t, dir))
	got, err := checkpoint.Restore[[]*jit.Array](ctx, dir, c, []mesh.NamedSharding{s, scalar.Sharding()})
	require.NoError(t, err)
	for _, a := range got {
		defer a.Close()
	}
	assert.Equal(t, []int{4, 0}, got[0].Shape())
	assert.Equal(t, []bool{true}, host(t, got[1]))
	info, err := checkpoint.Info(dir)
	require.NoError(t, err)
	names := make([]string, len(info))
	for i, in := range info {
		names[i] = in.Name
	}
	assert.Equal(t, []string{"0", "1"}, names)
	assert.True(t, slices.Equal([]int{2, 1}, info[0].Chunks), "%v", info[0].Chunks)
}

// TestZarr3 saves in JAX's zarr3 layout: zarr.json as tensorstore writes it, chunks raw under
// c/, chunks of zeros left out, and restores onto other shardings.
func TestZarr3(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	xy := func(spec mesh.PartitionSpec) mesh.NamedSharding {
		return sharding(t, c, []int{4, 2}, []string{"x", "y"}, spec)
	}
	half := iota(48, 1)
	for i := range 24 {
		half[i] = 0 // rows 0-3: the shards of x=0 and x=1 are zeros
	}
	arrays := map[string]*jit.Array{
		"half":   put(t, c, half, []int{8, 6}, xy(mesh.P("x", nil))),
		"zeros":  put(t, c, make([]int32, 16), []int{4, 4}, xy(mesh.P("x", "y"))),
		"scalar": put(t, c, []bool{true}, []int{}, xy(mesh.P())),
	}
	dir := filepath.Join(t.TempDir(), "ck")
	require.NoError(t, checkpoint.Save(ctx, dir, arrays, checkpoint.WithFormat(checkpoint.Zarr3)))
	assert.Equal(t, []string{"half/c/2/0", "half/c/3/0", "half/zarr.json", "scalar/c", "scalar/zarr.json", "zeros/zarr.json"},
		files(t, dir))
	meta, err := os.ReadFile(filepath.Join(dir, "half", "zarr.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},`+
		`"chunk_key_encoding":{"name":"default"},"codecs":[{"configuration":{"endian":"little"},"name":"bytes"}],`+
		`"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`, string(meta))
	raw, err := os.ReadFile(filepath.Join(dir, "half", "c", "3", "0"))
	require.NoError(t, err)
	assert.Len(t, raw, 2*6*4, "zarr3 chunks are stored raw")

	targets := map[string]mesh.NamedSharding{
		"half":   sharding(t, c, []int{2}, []string{"d"}, mesh.P(nil, "d")),
		"zeros":  sharding(t, c, []int{8}, []string{"d"}, mesh.P()),
		"scalar": sharding(t, c, []int{1}, []string{"d"}, mesh.P()),
	}
	got, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, targets)
	require.NoError(t, err)
	for name, a := range got {
		assert.Equal(t, host(t, arrays[name]), host(t, a), name)
		assert.True(t, a.Sharding().Equal(targets[name]))
		require.NoError(t, a.Close())
	}
	info, err := checkpoint.Info(dir)
	require.NoError(t, err)
	require.Len(t, info, 3)
	assert.Equal(t, checkpoint.Zarr3, info[0].Format)
	assert.Equal(t, 2, info[0].Files)
	assert.Equal(t, 0, info[2].Files)

	// Other zarr3 metadata is refused by name.
	for name, text := range map[string]string{
		"sharding codec": `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"name":"sharding_indexed"}],"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		"fill 1":         `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"name":"bytes"}],"data_type":"float32","fill_value":1.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		"fill -0":        `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"name":"bytes"}],"data_type":"float32","fill_value":-0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		"big-endian":     `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"configuration":{"endian":"big"},"name":"bytes"}],"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		"a group":        `{"node_type":"group","zarr_format":3}`,
		"bad chunks":     `{"chunk_grid":{"configuration":{"chunk_shape":[2.5,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"name":"bytes"}],"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		"key encoding":   `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"other"},"codecs":[{"name":"bytes"}],"data_type":"float32","fill_value":0.0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
		"data type":      `{"chunk_grid":{"configuration":{"chunk_shape":[2,6]},"name":"regular"},"chunk_key_encoding":{"name":"default"},"codecs":[{"name":"bytes"}],"data_type":"uint4","fill_value":0,"node_type":"array","shape":[8,6],"zarr_format":3}`,
	} {
		d := filepath.Join(t.TempDir(), "ck")
		require.NoError(t, os.CopyFS(d, os.DirFS(dir)))
		require.NoError(t, os.WriteFile(filepath.Join(d, "half", "zarr.json"), []byte(text), 0o644))
		_, err := checkpoint.Restore[map[string]*jit.Array](ctx, d, c, targets)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, checkpoint.ErrFormat) || errors.Is(err, checkpoint.ErrDType), "%s: %v", name, err)
		assert.ErrorContains(t, err, filepath.Join(d, "half", "zarr.json"), name)
	}
}

// TestOrbaxLayout saves in Orbax's layout: one OCDBT database and _METADATA, which this
// package restores and lists; a lone array and a save across processes are refused.
func TestOrbaxLayout(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{4, 2}, []string{"x", "y"}, mesh.P("x", "y"))
	w := put(t, c, iota(48, 0.5), []int{8, 6}, s)
	step := put(t, c, []int32{3}, []int{}, sharding(t, c, []int{2}, []string{"x"}, mesh.P()))
	dir := filepath.Join(t.TempDir(), "ck")
	saved := map[string]*jit.Array{"params.w": w, "step": step}
	require.NoError(t, checkpoint.Save(ctx, dir, saved, checkpoint.WithFormat(checkpoint.Orbax)))
	got := files(t, dir)
	require.Len(t, got, 3, "%v", got)
	assert.Equal(t, "_METADATA", got[0])
	assert.Regexp(t, `^d/[0-9a-f]{32}$`, got[1], "the data file of the B+tree")
	assert.Equal(t, "manifest.ocdbt", got[2])
	meta, err := os.ReadFile(filepath.Join(dir, "_METADATA"))
	require.NoError(t, err)
	assert.Equal(t, `{"tree_metadata":{"('params', 'w')":{"key_metadata":[{"key":"params","key_type":2},{"key":"w","key_type":2}],`+
		`"value_metadata":{"value_type":"jax.Array","skip_deserialize":false,"write_shape":[2,3]}},`+
		`"('step',)":{"key_metadata":[{"key":"step","key_type":2}],"value_metadata":{"value_type":"jax.Array","skip_deserialize":false,"write_shape":[]}}},`+
		`"use_ocdbt":true,"use_zarr3":false,"store_array_data_equal_to_fill_value":true,"custom_metadata":null}`, string(meta))
	back, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, map[string]mesh.NamedSharding{
		"params.w": sharding(t, c, []int{8}, []string{"d"}, mesh.P("d")), "step": step.Sharding()})
	require.NoError(t, err)
	for name, a := range back {
		assert.Equal(t, host(t, saved[name]), host(t, a), name)
		require.NoError(t, a.Close())
	}
	info, err := checkpoint.Info(dir)
	require.NoError(t, err)
	require.Len(t, info, 2)
	assert.True(t, info[0].OCDBT)
	assert.Equal(t, "params.w", info[0].Name)
	assert.Equal(t, 8, info[0].Files)

	err = checkpoint.Save(ctx, filepath.Join(t.TempDir(), "lone"), w, checkpoint.WithFormat(checkpoint.Orbax))
	assert.ErrorIs(t, err, checkpoint.ErrName)
	err = checkpoint.Save(ctx, filepath.Join(t.TempDir(), "bad"), saved, checkpoint.WithFormat(checkpoint.Format(9)))
	assert.ErrorIs(t, err, checkpoint.ErrFormat)
}

// TestOversizedFiles: a chunk or metadata file larger than it can be is refused before it is
// read, naming it.
func TestOversizedFiles(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	dir := filepath.Join(t.TempDir(), "z")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	meta := `{"chunks":[2],"compressor":null,"dtype":"<i4","fill_value":0,"filters":null,"order":"C","shape":[4],"zarr_format":2}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".zarray"), []byte(meta), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0"), make([]byte, 8), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1"), make([]byte, 9), 0o644))
	s := sharding(t, c, []int{1}, []string{"x"}, mesh.P())
	_, err := checkpoint.Restore[*jit.Array](context.Background(), dir, c, s)
	assert.ErrorIs(t, err, checkpoint.ErrCorrupt)
	assert.ErrorContains(t, err, filepath.Join(dir, "1")+" has 9 bytes, more than the 8 it can hold")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".zarray"), append([]byte(meta), make([]byte, 2<<20)...), 0o644))
	_, err = checkpoint.Restore[*jit.Array](context.Background(), dir, c, s)
	assert.ErrorIs(t, err, checkpoint.ErrCorrupt)
	assert.ErrorContains(t, err, filepath.Join(dir, ".zarray"))
}

// TestLargeChunks saves shards larger than zstd's blocks and writeZstd's pieces (2.5 MiB each,
// as incompressible as the benchmark's): Save, reading the shards where they lie in device
// memory, and SaveAsync, copying them, write the same files, and both restore exactly. Save
// allocates less than the array (no copy of it, compressed or not; at most its encoders, when
// a collection emptied their pool), which is checked without the race detector.
func TestLargeChunks(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{4}, []string{"x"}, mesh.P("x"))
	const rows, cols = 4 * 640, 1024 // 2.5 MiB per shard
	values := make([]float32, rows*cols)
	for i := range values {
		values[i] = float32(float64(uint64(i)*2654435761%(1<<32))/(1<<31) - 1)
	}
	a := put(t, c, values, []int{rows, cols}, s)
	root := t.TempDir()
	require.NoError(t, checkpoint.Save(ctx, filepath.Join(root, "warm"), a)) // the encoders' pool
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, checkpoint.Save(ctx, filepath.Join(root, "save"), a))
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; !raceEnabled {
		assert.Less(t, allocated, uint64(rows*cols*4), "Save allocated %d bytes for a %d-byte array", allocated, rows*cols*4)
	}
	p, err := checkpoint.SaveAsync(ctx, filepath.Join(root, "async"), a)
	require.NoError(t, err)
	require.NoError(t, p.Wait())
	assert.Equal(t, []string{".zarray", "0.0", "1.0", "2.0", "3.0"}, files(t, filepath.Join(root, "save")))
	for _, f := range files(t, filepath.Join(root, "save")) {
		want, err := os.ReadFile(filepath.Join(root, "save", f))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(root, "async", f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "file %s differs between Save and SaveAsync", f)
	}
	for _, dir := range []string{"save", "async"} {
		b, err := checkpoint.Restore[*jit.Array](ctx, filepath.Join(root, dir), c, sharding(t, c, []int{2, 4}, []string{"a", "b"}, mesh.P("b", "a")))
		require.NoError(t, err)
		assert.Equal(t, values, host(t, b), dir)
		require.NoError(t, b.Close())
	}
}

// TestRestoreIntoReusedMemory restores shards of 64 KiB, which on CPU are read straight into
// the staging memory the devices use, after that memory held other values: the chunks of
// zeros a zarr3 save leaves out come back as zeros, the others exactly.
func TestRestoreIntoReusedMemory(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	s := sharding(t, c, []int{4}, []string{"x"}, mesh.P("x"))
	const rows, cols = 4, 16384 // one row per shard: 64 KiB
	values := make([]float32, rows*cols)
	for i := range values {
		if r := i / cols; r%2 == 0 {
			values[i] = float32(i) + 0.25 // rows 1 and 3 are zeros
		}
	}
	a := put(t, c, values, []int{rows, cols}, s)
	for _, f := range []checkpoint.Format{checkpoint.Zarr3, checkpoint.ZarrV2} {
		dir := filepath.Join(t.TempDir(), "ck")
		require.NoError(t, checkpoint.Save(ctx, dir, a, checkpoint.WithFormat(f)))
		if f == checkpoint.Zarr3 {
			assert.Equal(t, []string{"c/0/0", "c/2/0", "zarr.json"}, files(t, dir))
		}
		for range 3 {
			junk := put(t, c, slices.Repeat([]float32{7}, rows*cols), []int{rows, cols}, s)
			require.NoError(t, junk.Close()) // its memory goes back to be used again
			b, err := checkpoint.Restore[*jit.Array](ctx, dir, c, s)
			require.NoError(t, err)
			assert.Equal(t, values, host(t, b), "format %v", f)
			require.NoError(t, b.Close())
		}
	}
}

// TestSaveRestoreOnEveryDevice saves and restores on the tests' shared client, whatever its
// platform and device count (the test a GPU host runs: there Save copies the shards to host
// and Restore hands the plugin host memory to copy): a row of 1.1 MB (streamed) on each
// device, in each format, through Save and SaveAsync (the same files, or for Orbax's random
// file names the same values), restored exactly onto the same sharding and replicated.
func TestSaveRestoreOnEveryDevice(t *testing.T) {
	c := pjrttest.Client(t)
	ctx := context.Background()
	n := len(c.Devices())
	split := sharding(t, c, []int{n}, []string{"x"}, mesh.P("x"))
	replicated := sharding(t, c, []int{n}, []string{"x"}, mesh.P())
	rows, cols := n, 280_000
	values := make([]float32, rows*cols)
	for i := range values {
		values[i] = float32(float64(uint64(i)*2654435761%(1<<32))/(1<<31) - 1)
	}
	a := put(t, c, values, []int{rows, cols}, split)
	restore := func(dir string, s mesh.NamedSharding) {
		t.Helper()
		got, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, map[string]mesh.NamedSharding{"params.w": s})
		require.NoError(t, err)
		assert.Equal(t, values, host(t, got["params.w"]), "%s onto %v", dir, s.Spec())
		require.NoError(t, got["params.w"].Close())
	}
	for _, f := range []checkpoint.Format{checkpoint.ZarrV2, checkpoint.Zarr3, checkpoint.Orbax} {
		root := t.TempDir()
		saved, async := filepath.Join(root, "save"), filepath.Join(root, "async")
		tree := map[string]*jit.Array{"params.w": a}
		require.NoError(t, checkpoint.Save(ctx, saved, tree, checkpoint.WithFormat(f)))
		p, err := checkpoint.SaveAsync(ctx, async, tree, checkpoint.WithFormat(f))
		require.NoError(t, err)
		require.NoError(t, p.Wait())
		restore(saved, split)
		restore(saved, replicated)
		if f == checkpoint.Orbax { // OCDBT names its data files at random
			restore(async, split)
			continue
		}
		names := files(t, saved)
		require.Equal(t, names, files(t, async))
		for _, name := range names {
			want, err := os.ReadFile(filepath.Join(saved, name))
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(async, name))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "%v: %s differs between Save and SaveAsync", f, name)
		}
	}
}
