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
		text, err := st.read(key, maxMeta, nil)
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
	// A chunk that is exactly one shard's part, and overlaps no other's, is read straight into
	// that shard (on CPU, into the device's memory); the others are read into memory first,
	// on all cores, each once.
	var indices []mesh.Index
	seen := map[string]bool{}
	for _, sh := range mine {
		if key := sh.Index.String(); !seen[key] {
			seen[key] = true
			indices = append(indices, sh.Index)
		}
	}
	r.direct = r.exclusive(indices)
	if err := r.prefetch(indices); err != nil {
		return nil, err
	}
	return jit.FromCallbackInto(c, l.shape, l.dtype, s, func(index mesh.Index, dst []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return r.fill(index, dst)
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
	direct map[string]bool // the chunks read straight into their shard, not cached
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
			if key := r.layout.key(pos); !seen[key] && !r.direct[key] {
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

// exclusive returns the keys of the chunks that are exactly one of the parts indices (all
// distinct) and overlap no other.
func (r *chunkReader) exclusive(indices []mesh.Index) map[string]bool {
	uses := map[string]int{}
	whole := map[string]bool{}
	for _, index := range indices {
		if pos, ok := r.wholeChunk(index); ok {
			whole[r.layout.key(pos)] = true
		}
		_ = r.overlapping(index, func(pos []int) error {
			uses[r.layout.key(pos)]++
			return nil
		})
	}
	out := map[string]bool{}
	for key := range whole {
		if uses[key] == 1 {
			out[key] = true
		}
	}
	return out
}

// wholeChunk returns the grid position of the chunk that is exactly the part index, if one is.
func (r *chunkReader) wholeChunk(index mesh.Index) ([]int, bool) {
	pos := make([]int, len(index))
	for d, rg := range index {
		n := r.layout.chunks[d]
		if rg.Len() != n || n == 0 || rg.Start%n != 0 {
			return nil, false
		}
		pos[d] = rg.Start / n
	}
	return pos, true
}

// fill writes the row-major bytes of the global array's part index into dst, every byte:
// from the chunk itself when index is exactly one, else from the chunks that overlap it.
func (r *chunkReader) fill(index mesh.Index, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if pos, ok := r.wholeChunk(index); ok {
		if r.direct[r.layout.key(pos)] {
			return r.readInto(pos, dst)
		}
		data, err := r.chunk(pos)
		if err == nil {
			copy(dst, data)
		}
		return err
	}
	rank := len(index)
	shape := make([]int, rank)
	for d, rg := range index {
		shape[d] = rg.Len()
	}
	chunks := r.layout.chunks
	return r.overlapping(index, func(pos []int) error {
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
		copyBox(dst, shape, dstAt, data, chunks, srcAt, count, r.elem)
		return nil
	})
}

// chunk returns the uncompressed bytes of the chunk at grid position pos, read once.
func (r *chunkReader) chunk(pos []int) ([]byte, error) {
	key := r.layout.key(pos)
	r.mu.Lock()
	data, ok := r.cache[key]
	r.mu.Unlock()
	if ok {
		return data, nil
	}
	data = make([]byte, r.size)
	if err := r.readInto(pos, data); err != nil {
		return nil, err
	}
	return r.keep(key, data), nil
}

// raws holds the buffers compressed chunks are read into, between reads.
var raws = sync.Pool{New: func() any { return new([]byte) }}

// readInto reads the chunk at grid position pos into dst (exactly a chunk's size), every byte.
func (r *chunkReader) readInto(pos []int, dst []byte) error {
	key := keyIn(r.name, r.layout.key(pos))
	path := r.store.where(key)
	limit := r.size // a raw chunk is the chunk; a zstd frame of it is at most a little longer
	into := dst[:0]
	if r.layout.zstd {
		limit = r.size + r.size/64 + 1<<16
		buf := raws.Get().(*[]byte)
		defer raws.Put(buf)
		into = (*buf)[:0]
		defer func() { *buf = into[:0] }() // a larger buffer read into is kept
	}
	raw, err := r.store.read(key, limit, into)
	if errors.Is(err, fs.ErrNotExist) && r.layout.sparse {
		clear(dst) // a chunk of the fill value, zero, is not written
		return nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrMissingChunk, path)
		}
		return err
	}
	data := raw
	if r.layout.zstd {
		into = raw
		if data, err = r.dec.DecodeAll(raw, dst[:0]); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		}
	}
	if len(data) != r.size {
		return fmt.Errorf("%w: %s holds %d bytes, a chunk of %v is %d", ErrCorrupt, path, len(data), r.layout.chunks, r.size)
	}
	if len(data) > 0 && &data[0] != &dst[0] {
		copy(dst, data) // read or decoded elsewhere (a value of an OCDBT database)
	}
	return nil
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
