package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

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
	st, err := openStore(dir)
	if err != nil {
		return zero, fmt.Errorf("checkpoint: restore %s: %w", dir, err)
	}
	defer st.close()
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
		a, err := restoreArray(ctx, st, names[i], c, s)
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

// readMeta reads and checks the metadata of the array named name in st: .zarray (zarr v2)
// or zarr.json (zarr3).
func readMeta(st store, name string) (layout, error) {
	for _, file := range []string{zarr2Meta, zarr3Meta} {
		key := keyIn(name, file)
		text, err := st.read(key, maxMeta)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return layout{}, err
		}
		parse := parseZarray
		if file == zarr3Meta {
			parse = parseZarr3
		}
		l, err := parse(text)
		if err != nil {
			return l, fmt.Errorf("%s: %w", st.where(key), err)
		}
		return l, nil
	}
	return layout{}, fmt.Errorf("%w: no %s or %s at %s", ErrFormat, zarr2Meta, zarr3Meta, st.where(name))
}

// restoreArray reads the zarr array named name in st onto sharding s.
func restoreArray(ctx context.Context, st store, name string, c *pjrt.Client, s mesh.NamedSharding) (*jit.Array, error) {
	l, err := readMeta(st, name)
	if err != nil {
		return nil, err
	}
	if err := s.CheckShape(l.shape); err != nil {
		return nil, fmt.Errorf("%s: %w: stored shape %v: %w", st.where(name), ErrShape, l.shape, err)
	}
	r := &chunkReader{store: st, name: name, layout: l, elem: shapes.ElementBytes(l.dtype), size: l.chunkBytes(), cache: map[string][]byte{}}
	if l.zstd {
		r.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(uint64(max(r.size, 1<<16)))) // a chunk never decodes past its size
		if err != nil {
			return nil, err
		}
		defer r.dec.Close()
	}
	mine, err := s.AddressableShards(l.shape, c.ProcessIndex())
	if err != nil {
		return nil, err
	}
	indices := make([]mesh.Index, len(mine))
	for i, sh := range mine {
		indices[i] = sh.Index
	}
	if err := r.prefetch(indices); err != nil {
		return nil, err
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
	mu     sync.Mutex // guards cache
	store  store
	name   string // the array's name in store
	layout layout
	elem   int // bytes per element
	size   int // bytes per chunk
	dec    *zstd.Decoder
	cache  map[string][]byte
}

// overlapping calls visit with the grid position of every chunk that overlaps index, the last
// dimension fastest, until visit returns an error.
func (r *chunkReader) overlapping(index mesh.Index, visit func(pos []int) error) error {
	rank := len(index)
	chunks := r.layout.chunks
	lo, hi := make([]int, rank), make([]int, rank)
	for d, rg := range index {
		if rg.Len() == 0 {
			return nil
		}
		lo[d], hi[d] = rg.Start/chunks[d], (rg.Stop-1)/chunks[d]
	}
	for pos := slices.Clone(lo); ; {
		if err := visit(pos); err != nil {
			return err
		}
		if !step(pos, lo, hi) {
			return nil
		}
	}
}

// step advances pos, a position in the box from lo to hi (both included), to the next one in
// row-major order, and reports false once it has passed the last.
func step(pos, lo, hi []int) bool {
	for d := len(pos) - 1; d >= 0; d-- {
		if pos[d] < hi[d] {
			pos[d]++
			return true
		}
		pos[d] = lo[d]
	}
	return false
}

// prefetch reads and decompresses, on all cores, every chunk that the given parts of the
// array overlap.
func (r *chunkReader) prefetch(indices []mesh.Index) error {
	seen := map[string]bool{}
	var want [][]int
	for _, index := range indices {
		_ = r.overlapping(index, func(pos []int) error {
			if key := r.layout.key(pos); !seen[key] {
				seen[key] = true
				want = append(want, slices.Clone(pos))
			}
			return nil
		})
	}
	work := make(chan []int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(want)) {
		wg.Go(func() {
			for pos := range work {
				if _, err := r.chunk(pos); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	var err error
feed:
	for _, pos := range want {
		select {
		case work <- pos:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// block returns the row-major bytes of the global array's part index, from the chunks that
// overlap it: the chunk itself when index is exactly one chunk.
func (r *chunkReader) block(index mesh.Index) ([]byte, error) {
	rank := len(index)
	shape := make([]int, rank)
	size := r.elem
	whole := true
	for d, rg := range index {
		shape[d] = rg.Len()
		size *= shape[d]
		whole = whole && shape[d] == r.layout.chunks[d] && rg.Start%shape[d] == 0
	}
	if size == 0 {
		return []byte{}, nil
	}
	if whole {
		pos := make([]int, rank)
		for d, rg := range index {
			pos[d] = rg.Start / shape[d]
		}
		return r.chunk(pos)
	}
	out := make([]byte, size)
	chunks := r.layout.chunks
	err := r.overlapping(index, func(pos []int) error {
		data, err := r.chunk(pos)
		if err != nil {
			return err
		}
		// The overlap of chunk pos and index, in global coordinates.
		srcAt, dstAt, count := make([]int, rank), make([]int, rank), make([]int, rank)
		for d, rg := range index {
			start := max(rg.Start, pos[d]*chunks[d])
			stop := min(rg.Stop, (pos[d]+1)*chunks[d])
			srcAt[d], dstAt[d], count[d] = start-pos[d]*chunks[d], start-rg.Start, stop-start
		}
		copyBox(out, shape, dstAt, data, chunks, srcAt, count, r.elem)
		return nil
	})
	return out, err
}

// chunk returns the uncompressed bytes of the chunk at grid position pos.
func (r *chunkReader) chunk(pos []int) ([]byte, error) {
	key := r.layout.key(pos)
	r.mu.Lock()
	data, ok := r.cache[key]
	r.mu.Unlock()
	if ok {
		return data, nil
	}
	path := r.store.where(keyIn(r.name, key))
	limit := r.size // a raw chunk is the chunk; a zstd frame of it is at most a little longer
	if r.layout.zstd {
		limit = r.size + r.size/64 + 1<<16
	}
	raw, err := r.store.read(keyIn(r.name, key), limit)
	if errors.Is(err, fs.ErrNotExist) && r.layout.sparse {
		return r.keep(key, make([]byte, r.size)), nil // a chunk of the fill value, zero, is not written
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrMissingChunk, path)
		}
		return nil, err
	}
	data = raw
	if r.layout.zstd {
		data, err = r.dec.DecodeAll(raw, make([]byte, 0, r.size))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		}
	}
	if len(data) != r.size {
		return nil, fmt.Errorf("%w: %s holds %d bytes, a chunk of %v is %d", ErrCorrupt, path, len(data), r.layout.chunks, r.size)
	}
	return r.keep(key, data), nil
}

// keep caches a chunk's bytes.
func (r *chunkReader) keep(key string, data []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cache[key] = data
	return data
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
	zero, last := make([]int, rank-1), make([]int, rank-1)
	for d := range rank - 1 {
		last[d] = count[d] - 1
	}
	for idx := make([]int, rank-1); ; {
		do, so := dstAt[rank-1]*elem, srcAt[rank-1]*elem
		for d := range rank - 1 {
			do += (dstAt[d] + idx[d]) * dstStride[d]
			so += (srcAt[d] + idx[d]) * srcStride[d]
		}
		copy(dst[do:do+row], src[so:so+row])
		if !step(idx, zero, last) {
			return
		}
	}
}
