package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/tree"
)

// Restore reads the checkpoint in dir onto the devices of c: shardings is a tree of
// mesh.NamedSharding with the structure of the saved tree (one sharding for a lone array), and
// the result is the tree of type T (the same structure, *jit.Array leaves: a
// Params[*jit.Array] for a Params[mesh.NamedSharding]) of the arrays laid out so. Any sharding
// works, whatever the mesh, device count or spec at save time: each addressable device's shard
// is read from the chunks that overlap it, and only those. On error no array is left open.
func Restore[T any](ctx context.Context, dir string, c *pjrt.Client, shardings any) (T, error) {
	var zero T
	specs, def, err := tree.Flatten[mesh.NamedSharding](shardings)
	if err != nil {
		return zero, fmt.Errorf("checkpoint: restore %s: %w", dir, err)
	}
	names, err := arrayNames(def)
	if err != nil {
		return zero, fmt.Errorf("checkpoint: restore %s: %w", dir, err)
	}
	if err := checkComplete(dir); err != nil {
		return zero, fmt.Errorf("checkpoint: restore %s: %w", dir, err)
	}
	arrays := make([]*jit.Array, 0, len(specs))
	fail := func(err error) (T, error) {
		for _, a := range arrays {
			_ = a.Close()
		}
		return zero, fmt.Errorf("checkpoint: restore %s: %w", dir, err)
	}
	for i, s := range specs {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		a, err := restoreArray(ctx, filepath.Join(dir, names[i]), c, s)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", show(names[i]), err))
		}
		arrays = append(arrays, a)
	}
	out, err := tree.Build[T](def, arrays)
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// checkComplete refuses a directory that is not there or is a save in progress.
func checkComplete(dir string) error {
	if strings.Contains(filepath.Base(filepath.Clean(dir)), tmpMark) {
		return fmt.Errorf("%w: %s in its name marks a save that did not finish", ErrIncomplete, tmpMark)
	}
	if st, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: no such directory", ErrIncomplete)
		}
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("%w: not a directory", ErrIncomplete)
	}
	return nil
}

// readMeta reads and checks an array directory's metadata: .zarray (zarr v2) or zarr.json
// (zarr3).
func readMeta(dir string) (layout, error) {
	for _, name := range []string{zarr2Meta, zarr3Meta} {
		path := filepath.Join(dir, name)
		text, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return layout{}, err
		}
		parse := parseZarray
		if name == zarr3Meta {
			parse = parseZarr3
		}
		l, err := parse(text)
		if err != nil {
			return l, fmt.Errorf("%s: %w", path, err)
		}
		return l, nil
	}
	return layout{}, fmt.Errorf("%w: no %s or %s in %s", ErrFormat, zarr2Meta, zarr3Meta, dir)
}

// restoreArray reads the zarr array in dir onto sharding s.
func restoreArray(ctx context.Context, dir string, c *pjrt.Client, s mesh.NamedSharding) (*jit.Array, error) {
	l, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	if err := s.CheckShape(l.shape); err != nil {
		return nil, fmt.Errorf("%s: %w: stored shape %v: %w", dir, ErrShape, l.shape, err)
	}
	r := &chunkReader{dir: dir, layout: l, elem: shapes.ElementBytes(l.dtype), size: l.chunkBytes(), cache: map[string][]byte{}}
	if l.zstd {
		r.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(max(r.size, 1<<16)))) // a chunk never decodes past its size
		if err != nil {
			return nil, err
		}
		defer r.dec.Close()
	}
	return jit.FromCallbackBytes(c, l.shape, l.dtype, s, func(index mesh.Index) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return r.block(index)
	})
}

// chunkReader reads the chunks of one zarr array, each once.
type chunkReader struct {
	dir    string
	layout layout
	elem   int // bytes per element
	size   int // bytes per chunk
	dec    *zstd.Decoder
	cache  map[string][]byte
}

// block returns the row-major bytes of the global array's part index, from the chunks that
// overlap it.
func (r *chunkReader) block(index mesh.Index) ([]byte, error) {
	rank := len(index)
	shape := make([]int, rank)
	size := r.elem
	for d, rg := range index {
		shape[d] = rg.Len()
		size *= shape[d]
	}
	out := make([]byte, size)
	if size == 0 {
		return out, nil
	}
	chunks := r.layout.chunks
	// Walk the grid positions of the chunks that overlap index, last dimension fastest.
	lo, hi := make([]int, rank), make([]int, rank)
	for d, rg := range index {
		lo[d], hi[d] = rg.Start/chunks[d], (rg.Stop-1)/chunks[d]
	}
	pos := append([]int(nil), lo...)
	for {
		data, err := r.chunk(pos)
		if err != nil {
			return nil, err
		}
		// The overlap of chunk pos and index, in global coordinates.
		srcAt, dstAt, count := make([]int, rank), make([]int, rank), make([]int, rank)
		for d, rg := range index {
			start := max(rg.Start, pos[d]*chunks[d])
			stop := min(rg.Stop, (pos[d]+1)*chunks[d])
			srcAt[d], dstAt[d], count[d] = start-pos[d]*chunks[d], start-rg.Start, stop-start
		}
		copyBox(out, shape, dstAt, data, chunks, srcAt, count, r.elem)
		d := rank - 1
		for ; d >= 0; d-- {
			if pos[d] < hi[d] {
				pos[d]++
				break
			}
			pos[d] = lo[d]
		}
		if d < 0 {
			return out, nil
		}
	}
}

// chunk returns the uncompressed bytes of the chunk at grid position pos.
func (r *chunkReader) chunk(pos []int) ([]byte, error) {
	key := r.layout.key(pos)
	if data, ok := r.cache[key]; ok {
		return data, nil
	}
	path := filepath.Join(r.dir, filepath.FromSlash(key))
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && r.layout.sparse {
		data := make([]byte, r.size) // a chunk equal to the fill value, zero, is not written
		r.cache[key] = data
		return data, nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrMissingChunk, path)
		}
		return nil, err
	}
	data := raw
	if r.layout.zstd {
		data, err = r.dec.DecodeAll(raw, make([]byte, 0, r.size))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		}
	}
	if len(data) != r.size {
		return nil, fmt.Errorf("%w: %s holds %d bytes, a chunk of %v is %d", ErrCorrupt, path, len(data), r.layout.chunks, r.size)
	}
	r.cache[key] = data
	return data, nil
}

// copyBox copies the box of count elements per dimension from src (row-major, of shape
// srcShape) at srcAt into dst (of shape dstShape) at dstAt; elem is the bytes per element.
func copyBox(dst []byte, dstShape, dstAt []int, src []byte, srcShape, srcAt []int, count []int, elem int) {
	rank := len(count)
	if rank == 0 {
		copy(dst[:elem], src[:elem])
		return
	}
	dstStride, srcStride := make([]int, rank), make([]int, rank)
	ds, ss := elem, elem
	for d := rank - 1; d >= 0; d-- {
		dstStride[d], srcStride[d] = ds, ss
		ds *= dstShape[d]
		ss *= srcShape[d]
	}
	row := count[rank-1] * elem
	idx := make([]int, rank-1)
	for {
		do, so := dstAt[rank-1]*elem, srcAt[rank-1]*elem
		for d := range rank - 1 {
			do += (dstAt[d] + idx[d]) * dstStride[d]
			so += (srcAt[d] + idx[d]) * srcStride[d]
		}
		copy(dst[do:do+row], src[so:so+row])
		d := rank - 2
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// exists reports whether path names a file.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// readDirSizes returns the sizes of the files in dir and below it (a zarr array with "/" as
// its dimension separator keeps chunks in subdirectories), by path relative to dir.
func readDirSizes(dir string) (map[string]int64, error) {
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = st.Size()
		return nil
	})
	return out, err
}
