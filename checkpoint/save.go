package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/xlamesh/xlamesh/checkpoint/ocdbt"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/tree"
)

// tmpMark is in the name of a save in progress: Orbax's mark, which Orbax also reads as
// "incomplete".
const tmpMark = ".orbax-checkpoint-tmp"

// Option configures Save and SaveAsync.
type Option func(*options)

type options struct {
	format Format
	job    Job
}

// WithFormat writes the arrays in format f (ZarrV2 by default). Restore reads every format.
func WithFormat(f Format) Option { return func(o *options) { o.format = f } }

// Job is what a save across the processes of a job needs of it; *distributed.Job has it.
type Job interface {
	ProcessID() int
	NumProcesses() int
	// Barrier waits for every process at the named barrier (each name counted per call).
	Barrier(ctx context.Context, name string) error
	// PutContext and GetContext set and wait for a key of the job's store.
	PutContext(ctx context.Context, key string, value []byte) error
	GetContext(ctx context.Context, key string) ([]byte, error)
}

// WithJob saves across the processes of j: every process calls Save with the same directory
// (on a file system they share) and a tree of the same structure, and writes the chunks of
// the shards whose first replica it holds; process 0 writes the metadata. Process 0 commits
// (renames the temporary directory) once every process has written and said so through the
// job's store, and the others return once it has: with nil when it committed, with an error
// otherwise. A process lost mid-save fails the save on every other process (the barriers
// end); the checkpoint is then not committed, and the temporary directory is removed by
// process 0 or, if process 0 is the one lost, left for Restore to refuse (ErrIncomplete).
// Without WithJob every shard must be addressable by this process.
func WithJob(j Job) Option { return func(o *options) { o.job = j } }

// Save writes the arrays of t, a tree of *jit.Array (package tree: a struct, slice or map of
// them, or one array), to the new directory dir, as described in the package doc. It returns
// once the checkpoint is committed (renamed to dir) or the save failed, in which case dir does
// not exist. Save is SaveAsync followed by Wait.
func Save(ctx context.Context, dir string, t any, opts ...Option) error {
	p, err := SaveAsync(ctx, dir, t, opts...)
	if err != nil {
		return err
	}
	return p.Wait()
}

// Pending is a save whose files are being written: Wait for its end. The arrays it was given
// may be used, donated or closed as soon as SaveAsync returns.
type Pending struct {
	dir  string
	done chan struct{}
	err  error
}

// Wait blocks until the save is committed or failed, and returns its error.
func (p *Pending) Wait() error {
	<-p.done
	return p.err
}

// Done is closed when the save ends; Wait then returns at once.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Dir returns the directory the save commits to.
func (p *Pending) Dir() string { return p.dir }

// SaveAsync starts Save: it checks t, copies every shard it writes from the devices to host
// memory, and returns while the files are compressed and written in the background, so a
// training loop can run its next steps meanwhile. Cancelling ctx stops the writing; the
// temporary directory is removed and Wait returns ctx's error.
func SaveAsync(ctx context.Context, dir string, t any, opts ...Option) (*Pending, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.format != ZarrV2 && o.format != Zarr3 && o.format != Orbax {
		return nil, fmt.Errorf("checkpoint: save %s: %w: %v", dir, ErrFormat, o.format)
	}
	if o.format == Orbax && o.job != nil {
		return nil, fmt.Errorf("checkpoint: save %s: %w: the Orbax layout across processes (one OCDBT database per process) is not written yet", dir, ErrFormat)
	}
	arrays, def, err := tree.Flatten[*jit.Array](t)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: save %s: %w", dir, err)
	}
	names, err := arrayNames(def)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: save %s: %w", dir, err)
	}
	if o.format == Orbax && slices.Contains(names, "") {
		return nil, fmt.Errorf("checkpoint: save %s: %w: Orbax's layout holds a tree of named arrays, not one array at its root", dir, ErrName)
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("checkpoint: save %s: %w", dir, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: save: %w", err)
	}
	if strings.Contains(filepath.Base(dir), tmpMark) {
		return nil, fmt.Errorf("checkpoint: save %s: %w: %s in a name marks a save in progress", dir, ErrName, tmpMark)
	}
	items := make([]item, len(arrays))
	for i, a := range arrays {
		if items[i], err = hostCopy(a, names[i], o.format, o.job != nil); err != nil {
			return nil, fmt.Errorf("checkpoint: save %s: %s: %w", dir, show(names[i]), err)
		}
	}
	p := &Pending{dir: dir, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if o.job == nil {
			p.err = write(ctx, dir, items, o.format == Orbax)
		} else {
			p.err = writeJob(ctx, dir, items, o.job, attempt(dir))
		}
		if p.err != nil {
			p.err = fmt.Errorf("checkpoint: save %s: %w", dir, p.err)
		}
	}()
	return p, nil
}

// show returns an array name as errors print it.
func show(name string) string {
	if name == "" {
		return "the array"
	}
	return fmt.Sprintf("array %q", name)
}

// item is one array of a save, in host memory: its metadata and the chunks this process writes.
type item struct {
	name     string
	metaName string // .zarray or zarr.json
	meta     []byte
	layout   layout
	chunks   []chunk
}

// chunk is one chunk's key and uncompressed bytes.
type chunk struct {
	key  string
	data []byte
}

// hostCopy copies the shards of a whose first replica this process holds to host memory and
// cuts them into the chunks of format f.
func hostCopy(a *jit.Array, name string, f Format, multi bool) (item, error) {
	if a == nil {
		return item{}, fmt.Errorf("%w: a nil array", jit.ErrNil)
	}
	shape, s := a.Shape(), a.Sharding()
	shardShape, err := s.ShardShape(shape)
	if err != nil {
		return item{}, err
	}
	l, metaName, meta, err := newLayout(f, a.DType(), shape, shardShape)
	if err != nil {
		return item{}, err
	}
	it := item{name: name, metaName: metaName, meta: meta, layout: l}
	all, err := s.Shards(shape)
	if err != nil {
		return item{}, err
	}
	firsts := 0
	for _, sh := range all {
		if sh.ReplicaID == 0 {
			firsts++
		}
	}
	elem := shapes.ElementBytes(a.DType())
	size := shapes.Make(a.DType(), shardShape...).Bytes()
	var mine []jit.Shard
	for _, sh := range a.AddressableShards() {
		if sh.ReplicaID == 0 {
			mine = append(mine, sh)
		}
	}
	if size > 0 {
		// The copies run on all cores: on CPU devices each is a memory copy.
		blocks := make([][]byte, len(mine))
		errs := make([]error, len(mine))
		var wg sync.WaitGroup
		next := make(chan int)
		for range min(runtime.GOMAXPROCS(0), len(mine)) {
			wg.Go(func() {
				for i := range next {
					blocks[i] = make([]byte, size)
					if err := mine[i].Data.CopyToHost(blocks[i]); err != nil {
						errs[i] = fmt.Errorf("shard %v on %s: %w", mine[i].Index, mine[i].Device, err)
					}
				}
			})
		}
		for i := range mine {
			next <- i
		}
		close(next)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return item{}, err
		}
		for i, sh := range mine {
			it.chunks = append(it.chunks, l.cut(sh.Index, shardShape, blocks[i], elem)...)
		}
	}
	if !multi && len(mine) != firsts {
		return item{}, fmt.Errorf("%w: this process holds %d of its %d shards (a save across processes needs WithJob)",
			ErrIncomplete, len(mine), firsts)
	}
	return it, nil
}

// cut returns the chunks of the shard at index (of shape shardShape, row-major bytes data):
// the shard itself when it is one chunk, else each chunk copied out; in a sparse layout,
// chunks of zero bytes (the fill value) are left out.
func (l layout) cut(index mesh.Index, shardShape []int, data []byte, elem int) []chunk {
	rank := len(shardShape)
	lo, n := make([]int, rank), make([]int, rank)
	for d, r := range index {
		lo[d], n[d] = r.Start/l.chunks[d], shardShape[d]/l.chunks[d]
	}
	var out []chunk
	zero, last := make([]int, rank), make([]int, rank)
	for d := range rank {
		last[d] = n[d] - 1
	}
	for pos := make([]int, rank); ; {
		grid := make([]int, rank)
		for d := range rank {
			grid[d] = lo[d] + pos[d]
		}
		block := data
		if !slices.Equal(shardShape, l.chunks) {
			block = make([]byte, len(data)/product(n))
			at := make([]int, rank)
			for d := range rank {
				at[d] = pos[d] * l.chunks[d]
			}
			copyBox(block, l.chunks, make([]int, rank), data, shardShape, at, l.chunks, elem)
		}
		if !l.sparse || !allZero(block) {
			out = append(out, chunk{key: l.key(grid), data: block})
		}
		if !step(pos, zero, last) {
			return out
		}
	}
}

func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// write writes the items into a temporary directory beside dir, syncs it and renames it to
// dir.
func write(ctx context.Context, dir string, items []item, orbax bool) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	tmp := filepath.Join(parent, base+tmpMark+"-"+hex.EncodeToString(r[:]))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	var err error
	if orbax {
		err = writeOrbax(ctx, tmp, items)
	} else {
		err = writeItems(ctx, tmp, items, true)
	}
	if err == nil {
		err = syncDir(tmp)
	}
	if err == nil {
		if _, statErr := os.Lstat(dir); statErr == nil {
			err = ErrExists // made while this save was writing
		} else if err = os.Rename(tmp, dir); err == nil {
			return syncOne(parent)
		}
	}
	_ = os.RemoveAll(tmp)
	return err
}

// attempts counts this process's saves per directory: every process of a job counts the same,
// so the keys of a save's statuses are fresh even when a failed save is tried again.
var attempts = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func attempt(dir string) int {
	attempts.Lock()
	defer attempts.Unlock()
	attempts.n[dir]++
	return attempts.n[dir]
}

// writeJob is write across the processes of job: process 0 makes the temporary directory,
// every process writes its chunks into it and puts its status, and process 0 commits if every
// status is ok and puts whether it did.
func writeJob(ctx context.Context, dir string, items []item, job Job, try int) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	tmp := filepath.Join(parent, base+tmpMark+"-job")
	me, lead := job.ProcessID(), job.ProcessID() == 0
	sum := sha256.Sum256([]byte(filepath.Clean(dir)))
	key := fmt.Sprintf("checkpoint/%s/%d/", hex.EncodeToString(sum[:12]), try)
	barrier := func(step string) error { return job.Barrier(ctx, key+step) }

	var err error
	if lead {
		_ = os.RemoveAll(tmp) // a job's save that died before
		if err = os.MkdirAll(parent, 0o755); err == nil {
			err = os.Mkdir(tmp, 0o755)
		}
	}
	if berr := barrier("start"); berr != nil {
		return cleanUp(lead, tmp, berr)
	}
	if _, serr := os.Stat(tmp); err == nil && serr != nil {
		err = fmt.Errorf("process 0's temporary directory: %w", serr)
	}
	if err == nil {
		err = writeItems(ctx, tmp, items, lead)
	}
	if err == nil {
		err = syncDir(tmp)
	}
	status := "ok"
	if err != nil {
		status = err.Error()
	}
	if perr := job.PutContext(ctx, key+"status/"+strconv.Itoa(me), []byte(status)); perr != nil {
		return cleanUp(lead, tmp, errors.Join(err, perr))
	}
	if berr := barrier("written"); berr != nil {
		return cleanUp(lead, tmp, errors.Join(err, berr))
	}
	if lead {
		for p := 0; p < job.NumProcesses() && err == nil; p++ {
			v, gerr := job.GetContext(ctx, key+"status/"+strconv.Itoa(p))
			switch {
			case gerr != nil:
				err = gerr
			case string(v) != "ok":
				err = fmt.Errorf("process %d: %s", p, v)
			}
		}
		if err == nil {
			if _, statErr := os.Lstat(dir); statErr == nil {
				err = ErrExists // made while this save was writing
			} else if err = os.Rename(tmp, dir); err == nil {
				err = syncOne(parent)
			}
		}
		commit := "ok"
		if err != nil {
			_ = os.RemoveAll(tmp)
			commit = err.Error()
		}
		if perr := job.PutContext(ctx, key+"commit", []byte(commit)); perr != nil && err == nil {
			err = perr
		}
	}
	if berr := barrier("committed"); berr != nil && err == nil {
		err = berr
	}
	if !lead && err == nil {
		v, gerr := job.GetContext(ctx, key+"commit")
		switch {
		case gerr != nil:
			err = gerr
		case string(v) != "ok":
			err = fmt.Errorf("%w: process 0 did not commit: %s", ErrIncomplete, v)
		}
	}
	return err
}

// cleanUp removes a job's temporary directory on process 0 and returns err.
func cleanUp(lead bool, tmp string, err error) error {
	if lead {
		_ = os.RemoveAll(tmp)
	}
	return err
}

// encoder compresses chunks as JAX does: zstd level 1 (klauspost's fastest level is zstd's
// level 1), with the frame's content size and checksum. EncodeAll is safe for concurrent use.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel)),
		zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // the options are constants
	}
	return e
})

// writeItems writes every array's directory and files under root, chunks compressed on all
// cores; only the lead process writes metadata.
func writeItems(ctx context.Context, root string, items []item, lead bool) error {
	return encodeItems(ctx, items, lead, func(key string, data []byte) error {
		p := filepath.Join(root, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return writeFile(p, data)
	})
}

// orbaxInlineBytes is Orbax's OCDBT max_inline_value_bytes: larger values go to data files.
const orbaxInlineBytes = 1024

// writeOrbax writes the items as Orbax does: an OCDBT database of every array's files under
// root, and _METADATA.
func writeOrbax(ctx context.Context, root string, items []item) error {
	entries := map[string][]byte{}
	var mu sync.Mutex
	err := encodeItems(ctx, items, true, func(key string, data []byte) error {
		mu.Lock()
		defer mu.Unlock()
		entries[key] = data
		return nil
	})
	if err == nil {
		err = ocdbt.Write(root, entries, ocdbt.WithMaxInlineValueBytes(orbaxInlineBytes))
	}
	if err == nil {
		err = writeFile(filepath.Join(root, "_METADATA"), orbaxMetadata(items))
	}
	return err
}

// orbaxMetadata returns Orbax's _METADATA for the items: each name split at "." into
// dictionary keys (key_type 2), a jax.Array written in chunks of its layout's shape.
func orbaxMetadata(items []item) []byte {
	type key struct {
		Key     string `json:"key"`
		KeyType int    `json:"key_type"`
	}
	type value struct {
		ValueType       string `json:"value_type"`
		SkipDeserialize bool   `json:"skip_deserialize"`
		WriteShape      []int  `json:"write_shape"`
	}
	type leaf struct {
		KeyMetadata   []key `json:"key_metadata"`
		ValueMetadata value `json:"value_metadata"`
	}
	tree := map[string]leaf{}
	for _, it := range items {
		var keys []key
		var quoted []string
		for _, k := range strings.Split(it.name, ".") {
			keys = append(keys, key{Key: k, KeyType: 2})
			quoted = append(quoted, "'"+strings.ReplaceAll(strings.ReplaceAll(k, `\`, `\\`), "'", `\'`)+"'")
		}
		tuple := "(" + strings.Join(quoted, ", ") + ")"
		if len(quoted) == 1 {
			tuple = "(" + quoted[0] + ",)"
		}
		tree[tuple] = leaf{KeyMetadata: keys, ValueMetadata: value{ValueType: "jax.Array", WriteShape: it.layout.chunks}}
	}
	return encodeJSON(struct {
		TreeMetadata                   map[string]leaf `json:"tree_metadata"`
		UseOCDBT                       bool            `json:"use_ocdbt"`
		UseZarr3                       bool            `json:"use_zarr3"`
		StoreArrayDataEqualToFillValue bool            `json:"store_array_data_equal_to_fill_value"`
		CustomMetadata                 any             `json:"custom_metadata"`
	}{tree, true, false, true, nil})
}

// encodeItems hands put every file of the items (its slash-separated path below the
// checkpoint, and its bytes), chunks compressed on all cores; only the lead process's
// metadata. It stops at the first error of put or at ctx's end.
func encodeItems(ctx context.Context, items []item, lead bool, put func(key string, data []byte) error) error {
	type job struct {
		key  string
		data []byte
		raw  bool
	}
	var jobs []job
	for _, it := range items {
		if lead {
			jobs = append(jobs, job{key: keyIn(it.name, it.metaName), data: it.meta, raw: true})
		}
		for _, c := range it.chunks {
			jobs = append(jobs, job{key: keyIn(it.name, c.key), data: c.data, raw: !it.layout.zstd})
		}
	}
	// Compression runs on every core; writing (and its fsync, which waits on the disk) in
	// other goroutines, so that the disk and the cores work at the same time.
	work := make(chan job)
	writes := make(chan job, 2)
	errs := make(chan error, 1)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	var compressing, writing sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		compressing.Go(func() {
			for j := range work {
				if !j.raw {
					j.data = encoder().EncodeAll(j.data, make([]byte, 0, encoder().MaxEncodedSize(len(j.data))))
				}
				writes <- j
			}
		})
	}
	for range writers {
		writing.Go(func() {
			for j := range writes {
				if err := put(j.key, j.data); err != nil {
					fail(err)
				}
			}
		})
	}
	var err error
feed:
	for _, j := range jobs {
		select {
		case work <- j:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	compressing.Wait()
	close(writes)
	writing.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
			err = ctx.Err()
		}
	}
	return err
}

// writers is how many files a save writes at once.
const writers = 4

// writeFile writes data to a new file and syncs it.
func writeFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir syncs a directory's entries, and those of every directory under it.
func syncDir(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncOne(path)
	})
}

// syncOne syncs one directory's entries.
func syncOne(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
