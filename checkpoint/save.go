package checkpoint

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
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
	"github.com/xlamesh/xlamesh/pjrt"
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
// not exist. Save holds the arrays while it writes: where device memory is host memory (the
// CPU plugin), it compresses and writes the shards straight from it, as JAX does on CPU, with
// no copy; elsewhere it is SaveAsync followed by Wait.
func Save(ctx context.Context, dir string, t any, opts ...Option) error {
	s, err := prepare(dir, t, opts)
	if err != nil {
		return err
	}
	if read, err := s.writeInPlace(ctx); read || err != nil {
		return err
	}
	items, err := s.hostCopies()
	if err != nil {
		return err
	}
	return s.write(ctx, items)
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
	s, err := prepare(dir, t, opts)
	if err != nil {
		return nil, err
	}
	items, err := s.hostCopies()
	if err != nil {
		return nil, err
	}
	p := &Pending{dir: dir, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = s.write(ctx, items)
	}()
	return p, nil
}

// saving is a save whose arguments are checked.
type saving struct {
	dir    string
	o      options
	arrays []*jit.Array
	names  []string
}

// prepare checks a save's arguments.
func prepare(dir string, t any, opts []Option) (*saving, error) {
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
	return &saving{dir: dir, o: o, arrays: arrays, names: names}, nil
}

// plans returns each array's item, without chunks yet, and the shards this process writes.
func (s *saving) plans() ([]item, [][]jit.Shard, error) {
	items := make([]item, len(s.arrays))
	mine := make([][]jit.Shard, len(s.arrays))
	for i, a := range s.arrays {
		var err error
		if items[i], mine[i], err = plan(a, s.names[i], s.o.format, s.o.job != nil); err != nil {
			return nil, nil, fmt.Errorf("checkpoint: save %s: %s: %w", s.dir, show(s.names[i]), err)
		}
	}
	return items, mine, nil
}

// hostCopies returns the items with the chunks of every shard this process writes, copied to
// host memory.
func (s *saving) hostCopies() ([]item, error) {
	items, mine, err := s.plans()
	if err != nil {
		return nil, err
	}
	for i := range items {
		if err := items[i].copyShards(mine[i]); err != nil {
			return nil, fmt.Errorf("checkpoint: save %s: %s: %w", s.dir, show(s.names[i]), err)
		}
	}
	return items, nil
}

// writeInPlace writes the save with the chunks read where the shards lie in device memory,
// and reports whether it could (every array on one client whose device memory is host
// memory, as pjrt.Client.ReadInPlace allows); when it could not, it has written nothing.
func (s *saving) writeInPlace(ctx context.Context) (bool, error) {
	items, mine, err := s.plans()
	if err != nil {
		return false, err
	}
	var client *pjrt.Client
	var bufs []*pjrt.Buffer
	for _, shards := range mine {
		for _, sh := range shards {
			if c := sh.Device.Client(); client == nil {
				client = c
			} else if c != client {
				return false, nil
			}
			bufs = append(bufs, sh.Data)
		}
	}
	if client == nil {
		return false, nil // nothing to read
	}
	read, err := client.ReadInPlace(bufs, func(views [][]byte) error {
		for i := range items {
			items[i].cutShards(mine[i], views[:len(mine[i])])
			views = views[len(mine[i]):]
		}
		return s.write(ctx, items)
	})
	if !read && err != nil {
		err = fmt.Errorf("checkpoint: save %s: %w", s.dir, err)
	}
	return read, err
}

// write writes the items (every array's metadata and the chunks this process writes) and
// commits the checkpoint.
func (s *saving) write(ctx context.Context, items []item) error {
	var err error
	if s.o.job == nil {
		err = write(ctx, s.dir, items, s.o.format == Orbax)
	} else {
		err = writeJob(ctx, s.dir, items, s.o.job, attempt(s.dir))
	}
	if err != nil {
		return fmt.Errorf("checkpoint: save %s: %w", s.dir, err)
	}
	return nil
}

// show returns an array name as errors print it.
func show(name string) string {
	if name == "" {
		return "the array"
	}
	return fmt.Sprintf("array %q", name)
}

// item is one array of a save: its metadata and the chunks this process writes, in host
// memory (copies, or during Save on CPU the devices' own memory).
type item struct {
	name       string
	metaName   string // .zarray or zarr.json
	meta       []byte
	layout     layout
	shardShape []int
	elem       int // bytes per element
	chunks     []chunk
}

// chunk is one chunk's key and uncompressed bytes.
type chunk struct {
	key  string
	data []byte
}

// plan returns a's item, without its chunks, and the shards of a whose first replica this
// process holds: all of them unless multi.
func plan(a *jit.Array, name string, f Format, multi bool) (item, []jit.Shard, error) {
	if a == nil {
		return item{}, nil, fmt.Errorf("%w: a nil array", jit.ErrNil)
	}
	shape, s := a.Shape(), a.Sharding()
	shardShape, err := s.ShardShape(shape)
	if err != nil {
		return item{}, nil, err
	}
	l, metaName, meta, err := newLayout(f, a.DType(), shape, shardShape)
	if err != nil {
		return item{}, nil, err
	}
	it := item{name: name, metaName: metaName, meta: meta, layout: l, shardShape: shardShape,
		elem: shapes.ElementBytes(a.DType())}
	all, err := s.Shards(shape)
	if err != nil {
		return item{}, nil, err
	}
	firsts := 0
	for _, sh := range all {
		if sh.ReplicaID == 0 {
			firsts++
		}
	}
	var mine []jit.Shard
	for _, sh := range a.AddressableShards() {
		if sh.ReplicaID == 0 {
			mine = append(mine, sh)
		}
	}
	if !multi && len(mine) != firsts {
		return item{}, nil, fmt.Errorf("%w: this process holds %d of its %d shards (a save across processes needs WithJob)",
			ErrIncomplete, len(mine), firsts)
	}
	if shapes.Make(a.DType(), shardShape...).Bytes() == 0 {
		mine = nil // no chunks to write
	}
	return it, mine, nil
}

// copyShards copies the shards to host memory, on all cores (on CPU devices each is a memory
// copy), and cuts them into the item's chunks.
func (it *item) copyShards(mine []jit.Shard) error {
	size := shapes.Make(it.layout.dtype, it.shardShape...).Bytes()
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
		return err
	}
	it.cutShards(mine, blocks)
	return nil
}

// cutShards sets the item's chunks to those of the shards, whose row-major bytes are blocks.
func (it *item) cutShards(mine []jit.Shard, blocks [][]byte) {
	it.chunks = nil
	for i, sh := range mine {
		it.chunks = append(it.chunks, it.layout.cut(sh.Index, it.shardShape, blocks[i], it.elem)...)
	}
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
	e, err := zstd.NewWriter(nil, zstdOptions()...)
	if err != nil {
		panic(err) // the options are constants
	}
	return e
})

// zstdOptions are the options of every encoder: JAX's level, a checksum, no goroutines of its own.
func zstdOptions() []zstd.EOption {
	return []zstd.EOption{zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel)),
		zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1)}
}

// writeItems writes every array's directory and files under root, each chunk compressed as
// it is written, several files at once: while some wait for the disk (a file's fsync), the
// others compress on the cores. Only the lead process writes metadata. It stops at the first
// error or at ctx's end.
func writeItems(ctx context.Context, root string, items []item, lead bool) error {
	return eachFile(ctx, fileJobs(items, lead), writers, func(ctx context.Context, j fileJob) error {
		p := filepath.Join(root, filepath.FromSlash(j.key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if j.raw {
			return writeFile(p, j.data)
		}
		return writeZstd(ctx, p, j.data)
	})
}

// eachFile calls do for every file on n goroutines at once, and returns the first error of do
// or ctx's; do's ctx ends at either.
func eachFile(ctx context.Context, files []fileJob, n int, do func(ctx context.Context, j fileJob) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan fileJob)
	var wg sync.WaitGroup
	for range min(n, max(len(files), 1)) {
		wg.Go(func() {
			for j := range next {
				if err := do(ctx, j); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, j := range files {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// fileJob is one file of a save: its slash-separated path below the checkpoint and its bytes,
// raw or to compress.
type fileJob struct {
	key  string
	data []byte
	raw  bool
}

// fileJobs returns the files of the items: the chunks, and the lead process's metadata.
func fileJobs(items []item, lead bool) []fileJob {
	var files []fileJob
	for _, it := range items {
		if lead {
			files = append(files, fileJob{key: keyIn(it.name, it.metaName), data: it.meta, raw: true})
		}
		for _, c := range it.chunks {
			files = append(files, fileJob{key: keyIn(it.name, c.key), data: c.data, raw: !it.layout.zstd})
		}
	}
	return files
}

// streamBuffer is how many bytes writeZstd compresses and writes at a time; a chunk of up to
// this size is compressed whole.
const streamBuffer = 1 << 20

// maxWindowLog is the log2 of the largest zstd window writeZstd declares: 8 MiB, zstd's
// default for streams.
const maxWindowLog = 23

// streams[w] holds the streaming encoders of window 1<<w, with their file buffers, between
// saves; small holds the buffers of chunks compressed whole.
var (
	streams [maxWindowLog + 1]sync.Pool
	small   = sync.Pool{New: func() any { return new([]byte) }}
)

type stream struct {
	enc *zstd.Encoder
	w   *bufio.Writer
}

// writeZstd writes data as one zstd frame to a new file and syncs it. A chunk of up to
// streamBuffer bytes is compressed whole (EncodeAll's frame, which declares its size as its
// window, as C zstd's does); a larger one a piece at a time, written as it is compressed, so
// that no compressed copy of it is ever held, in a frame whose window is the largest power of
// two up to its size and 8 MiB: what a reader must hold of it at once.
func writeZstd(ctx context.Context, path string, data []byte) error {
	if len(data) <= streamBuffer {
		buf := small.Get().(*[]byte)
		defer small.Put(buf)
		*buf = encoder().EncodeAll(data, (*buf)[:0])
		return writeFile(path, *buf)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	log := min(bits.Len(uint(len(data)))-1, maxWindowLog)
	st, _ := streams[log].Get().(*stream)
	if st == nil {
		e, err := zstd.NewWriter(nil, append(zstdOptions(), zstd.WithWindowSize(1<<log))...)
		if err != nil {
			panic(err) // the options are valid for every log from 20 to 23
		}
		st = &stream{enc: e, w: bufio.NewWriterSize(nil, streamBuffer)}
	}
	st.w.Reset(f)
	st.enc.ResetContentSize(st.w, int64(len(data)))
	for at := 0; at < len(data) && err == nil; at += streamBuffer {
		if err = ctx.Err(); err == nil {
			_, err = st.enc.Write(data[at:min(len(data), at+streamBuffer)])
		}
	}
	if err == nil {
		err = st.enc.Close()
	}
	if err == nil {
		err = st.w.Flush()
	}
	st.enc.Reset(nil)
	st.w.Reset(nil)
	streams[log].Put(st)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
// checkpoint, and its bytes), chunks compressed whole on all cores; only the lead process's
// metadata. It stops at the first error of put or at ctx's end.
func encodeItems(ctx context.Context, items []item, lead bool, put func(key string, data []byte) error) error {
	return eachFile(ctx, fileJobs(items, lead), runtime.GOMAXPROCS(0), func(_ context.Context, j fileJob) error {
		if !j.raw {
			j.data = encoder().EncodeAll(j.data, make([]byte, 0, encoder().MaxEncodedSize(len(j.data))))
		}
		return put(j.key, j.data)
	})
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
