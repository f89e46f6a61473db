package jit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/kv"
	"github.com/xlamesh/xlamesh/shapes"
)

// This file holds the process-local entry points of a multi-process job (JAX's
// make_array_from_process_local_data, Array.addressable_shards seen per process, and
// multihost_utils.process_allgather). The mesh of a global array lists every process's devices
// (pjrt.WithDistributed makes a client whose Devices are the job's); each process places and
// reads only its own shards.

// FromProcessLocalData builds a global Array from this process's part of it, like
// jax.make_array_from_process_local_data(sharding, local_data, global_shape): local is a flat
// row-major Go slice of localShape, and each of this process's devices receives its shard from
// it. A dimension of localShape equal to the global one is indexed as the global array; any other
// holds, side by side in the order of their global position, the blocks this process's devices
// address (mesh.NamedSharding.ProcessLocalShards). With globalShape nil the global shape is
// inferred from localShape (mesh.NamedSharding.LocalToGlobalShape), which fails with
// mesh.ErrNonUniform when the processes' blocks are not uniform.
//
// Replicas must be given the same data by every process holding them, as in JAX. Errors: a
// local shape that fits neither shape wraps mesh.ErrProcessData; data of the wrong size or type
// pjrt.ErrHostData; a client that is not a process of the mesh ErrDevice.
func FromProcessLocalData(c *pjrt.Client, s mesh.NamedSharding, local any, localShape, globalShape []int) (*Array, error) {
	data, dt, err := pjrt.HostBytes(local)
	if err != nil {
		return nil, fmt.Errorf("jit: from process-local data: %w", err)
	}
	return FromProcessLocalBytes(c, s, dt, data, localShape, globalShape)
}

// FromProcessLocalBytes is FromProcessLocalData for raw row-major bytes of the given dtype.
func FromProcessLocalBytes(c *pjrt.Client, s mesh.NamedSharding, dtype dtypes.DType, data []byte, localShape, globalShape []int) (*Array, error) {
	const op = "from process-local data"
	if c == nil {
		return nil, fmt.Errorf("jit: %s: %w: nil client", op, ErrDevice)
	}
	if !pjrt.Supported(dtype) {
		return nil, fmt.Errorf("jit: %s: %w: unsupported element type %v", op, pjrt.ErrHostData, dtype)
	}
	process := c.ProcessIndex()
	localSize := shapes.Make(dtype, localShape...)
	for d, n := range localShape {
		if n < 0 {
			return nil, fmt.Errorf("jit: %s: %w: dimension %d of the local shape %v is negative", op, pjrt.ErrHostData, d, localShape)
		}
	}
	if len(data) != localSize.Bytes() {
		return nil, fmt.Errorf("jit: %s: %w: local shape %s needs %d bytes (%d elements), got %d bytes",
			op, pjrt.ErrHostData, localSize.Aval(), localSize.Bytes(), localSize.Size(), len(data))
	}
	if globalShape == nil {
		var err error
		if globalShape, err = s.LocalToGlobalShape(localShape, process); err != nil {
			return nil, fmt.Errorf("jit: %s: %w", op, err)
		}
	}
	if err := s.CheckShape(globalShape); err != nil {
		return nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	locals, err := s.ProcessLocalShards(globalShape, localShape, process)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	placed, shardShape, err := placement(c, s, globalShape)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	if len(placed) != len(locals) {
		return nil, fmt.Errorf("jit: %s: %w: %d addressable shards, %d process-local blocks", op, ErrDevice, len(placed), len(locals))
	}
	// Each shard goes in place from the local array, with the local array's byte strides.
	strides := byteStrides(localShape, shapes.ElementBytes(dtype))
	empty := shapes.Make(dtype, shardShape...).Size() == 0
	transfers := make([]pjrt.HostTransfer, len(placed))
	for i, p := range placed {
		start := 0
		for d, r := range locals[i].Local {
			start += r.Start * int(strides[d])
		}
		t := pjrt.HostTransfer{Device: p.Device, DType: dtype, Dims: shardShape, Data: data[start:], ByteStrides: strides}
		if empty {
			t.Data, t.ByteStrides = nil, nil
		}
		transfers[i] = t
	}
	return transfer(op, c, globalShape, dtype, s, placed, transfers)
}

// ProcessLocalData returns this process's part of the array as a new flat row-major Go slice
// and its shape: the inverse of FromProcessLocalData (JAX's global_array_to_host_local_array),
// each dimension cut to the blocks this process's devices hold, side by side in the order of
// their global position (mesh.NamedSharding.ProcessLocalShape). For an array on this process's
// devices only, it is ToHost. It fails with ErrNotAddressable when this process holds no shard.
func (a *Array) ProcessLocalData() (any, []int, error) {
	if a == nil {
		return nil, nil, fmt.Errorf("jit: process-local data: %w: nil *Array", ErrNil)
	}
	if !a.enter() {
		return nil, nil, fmt.Errorf("jit: process-local data: %w", ErrClosed)
	}
	defer a.exit()
	if len(a.shards) == 0 {
		return nil, nil, fmt.Errorf("jit: process-local data: %w: this process holds no shard of %s", ErrNotAddressable, a)
	}
	c := a.shards[0].Device.Client()
	process := c.ProcessIndex()
	localShape, err := a.sharding.ProcessLocalShape(a.shape, process)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: process-local data: %w", err)
	}
	locals, err := a.sharding.ProcessLocalShards(a.shape, localShape, process)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: process-local data: %w", err)
	}
	n, err := hostSize("process-local data", a.dtype, localShape)
	if err != nil {
		return nil, nil, err
	}
	out := make([]byte, n)
	// Read each local block once, from the first shard that holds it, straight into its place.
	strides := byteStrides(localShape, shapes.ElementBytes(a.dtype))
	var copies []pjrt.HostCopy
	var blocks []mesh.Index
	for i, l := range locals {
		if slices.ContainsFunc(blocks, l.Local.Equal) {
			continue
		}
		blocks = append(blocks, l.Local)
		copies = append(copies, pjrt.HostCopy{Buffer: a.shards[i].Data, Dst: out[blockOffset(l.Local, strides):], DstByteStrides: strides})
	}
	if len(copies) > 0 && len(out) > 0 {
		if err := c.CopyToHostAll(copies); err != nil {
			return nil, nil, fmt.Errorf("jit: process-local data: %w", err)
		}
	}
	flat, err := pjrt.FlatFromBytes(a.dtype, out)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: process-local data: %w", err)
	}
	return flat, localShape, nil
}

// gatherChunk is the largest value ProcessAllgather puts in the store at once: below etcd's
// default request limit of 1.5 MiB.
const gatherChunk = 512 << 10

// gatherRounds counts the ProcessAllgather calls made with each job, so that the processes'
// n-th calls meet under the same keys.
var gatherRounds = struct {
	sync.Mutex
	n map[kv.Distributed]int
}{n: map[kv.Distributed]int{}}

// gatherHeader describes what one process contributes to a gather.
type gatherHeader struct {
	DType  string `json:"dtype"`
	Shape  []int  `json:"shape"`
	Chunks int    `json:"chunks"`
}

// ProcessAllgather brings an array to every process of the job d, like
// jax.experimental.multihost_utils.process_allgather, and returns it as a flat row-major Go
// slice with its shape. Every process of the job must call it, in the same order as its other
// ProcessAllgather calls (like a collective). The data goes through the job's key-value store,
// in chunks of 512 KiB, so it suits metrics and results rather than model weights; it stays in
// the store until the job ends.
//
//   - A global array (its mesh spans several processes) comes back whole on every process: each
//     distinct shard is published once, by the process of the first device holding it. As in
//     JAX, only tiled=true is allowed for it (ErrArguments otherwise).
//   - An array on this process's devices only is this process's value: the result stacks the
//     processes' values along a new leading axis (tiled=false; shape [processes, ...]) or
//     concatenates them along axis 0 (tiled=true; a scalar is stacked). Every process must give
//     the same shape and dtype (ErrArguments).
//
// Waiting for the others is bounded by ctx's deadline, or by d.InitTimeout() when ctx has none;
// a store error (a lost process, a timeout wrapping kv.ErrKeyNotFound) is returned wrapped.
func ProcessAllgather(ctx context.Context, d kv.Distributed, a *Array, tiled bool) (any, []int, error) {
	const op = "process allgather"
	if err := checkContext(op, ctx); err != nil {
		return nil, nil, err
	}
	if d == nil || a == nil {
		return nil, nil, fmt.Errorf("jit: %s: %w: nil job or array", op, ErrNil)
	}
	m, err := a.sharding.Mesh()
	if err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(d.InitTimeout())
	}
	if !reflect.ValueOf(d).Comparable() {
		return nil, nil, fmt.Errorf("jit: %s: %w: the job %T is not comparable; pass a pointer", op, ErrArguments, d)
	}
	gatherRounds.Lock()
	round := gatherRounds.n[d]
	gatherRounds.n[d]++
	gatherRounds.Unlock()
	prefix := fmt.Sprintf("xlamesh:allgather/%d/", round)
	if m.IsMultiProcess() {
		if !tiled {
			return nil, nil, fmt.Errorf("jit: %s: %w: gathering global non-fully-addressable arrays only supports tiled=true (%s)", op, ErrArguments, a)
		}
		return gatherGlobal(ctx, d, a, prefix, deadline)
	}
	return gatherLocal(ctx, d, a, prefix, deadline, tiled)
}

// gatherGlobal assembles a global array on every process from its distinct shards.
func gatherGlobal(ctx context.Context, d kv.Distributed, a *Array, prefix string, deadline time.Time) (any, []int, error) {
	const op = "process allgather"
	all, err := a.sharding.Shards(a.shape)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	// The distinct shards, each with the first device (mesh order) holding it.
	var blocks []mesh.Shard
	for _, sh := range all {
		if !slices.ContainsFunc(blocks, func(b mesh.Shard) bool { return b.Index.Equal(sh.Index) }) {
			blocks = append(blocks, sh)
		}
	}
	if !a.enter() {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, ErrClosed)
	}
	var mine []pjrt.HostCopy
	var mineAt []int
	for k, b := range blocks {
		for _, sh := range a.shards {
			if sh.Device.ID() == b.Device.ID() {
				mine = append(mine, pjrt.HostCopy{Buffer: sh.Data, Dst: make([]byte, sh.Data.Shape().Bytes())})
				mineAt = append(mineAt, k)
			}
		}
	}
	if len(mine) > 0 {
		err = mine[0].Buffer.Device().Client().CopyToHostAll(mine)
	}
	a.exit()
	if err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	for i, k := range mineAt {
		if err := putChunks(d, prefix+strconv.Itoa(k), gatherHeader{DType: a.dtype.String(), Shape: a.shape}, mine[i].Dst); err != nil {
			return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
		}
	}
	out := make([]byte, shapes.Make(a.dtype, a.shape...).Bytes())
	for k, b := range blocks {
		var data []byte
		if i := slices.Index(mineAt, k); i >= 0 {
			data = mine[i].Dst
		} else if _, data, err = getChunks(ctx, d, prefix+strconv.Itoa(k), deadline); err != nil {
			return nil, nil, fmt.Errorf("jit: %s: shard %s (from process %d): %w", op, b.Index, b.Device.ProcessIndex(), err)
		}
		insertBlock(out, a.shape, b.Index, shapes.ElementBytes(a.dtype), data)
	}
	flat, err := pjrt.FlatFromBytes(a.dtype, out)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	return flat, slices.Clone(a.shape), nil
}

// gatherLocal stacks or concatenates every process's value of a process-local array.
func gatherLocal(ctx context.Context, d kv.Distributed, a *Array, prefix string, deadline time.Time, tiled bool) (any, []int, error) {
	const op = "process allgather"
	mine, err := a.ToHostBytes()
	if err != nil {
		return nil, nil, err
	}
	h := gatherHeader{DType: a.dtype.String(), Shape: a.shape}
	if err := putChunks(d, prefix+"p"+strconv.Itoa(d.ProcessID()), h, mine); err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	n := d.NumProcesses()
	out := make([]byte, 0, n*len(mine))
	for p := range n {
		data := mine
		if p != d.ProcessID() {
			var got gatherHeader
			if got, data, err = getChunks(ctx, d, prefix+"p"+strconv.Itoa(p), deadline); err != nil {
				return nil, nil, fmt.Errorf("jit: %s: the value of process %d: %w", op, p, err)
			}
			if got.DType != h.DType || !slices.Equal(got.Shape, h.Shape) {
				return nil, nil, fmt.Errorf("jit: %s: %w: process %d gives %s%v, process %d %s%v; every process must give the same shape and dtype",
					op, ErrArguments, p, got.DType, got.Shape, d.ProcessID(), h.DType, h.Shape)
			}
		}
		out = append(out, data...)
	}
	shape := append([]int{n}, a.shape...)
	if tiled && len(a.shape) > 0 {
		shape = append([]int{n * a.shape[0]}, a.shape[1:]...)
	}
	flat, err := pjrt.FlatFromBytes(a.dtype, out)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	return flat, shape, nil
}

// putChunks stores data under key/0, key/1, ... and the header (with the chunk count) under key.
func putChunks(d kv.Distributed, key string, h gatherHeader, data []byte) error {
	h.Chunks = (len(data) + gatherChunk - 1) / gatherChunk
	for i := range h.Chunks {
		if err := d.Put(key+"/"+strconv.Itoa(i), data[i*gatherChunk:min(len(data), (i+1)*gatherChunk)]); err != nil {
			return err
		}
	}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return d.Put(key, head)
}

// contextGetter is a store whose blocking get also ends with a context (distributed.Job).
type contextGetter interface {
	GetContext(ctx context.Context, key string) ([]byte, error)
}

// getChunks waits (until deadline, or ctx ends) for a value putChunks stored.
func getChunks(ctx context.Context, d kv.Distributed, key string, deadline time.Time) (gatherHeader, []byte, error) {
	var h gatherHeader
	get := func(key string) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cg, ok := d.(contextGetter); ok {
			ctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			return cg.GetContext(ctx, key)
		}
		return d.Get(key, max(time.Until(deadline), time.Millisecond))
	}
	raw, err := get(key)
	if err != nil {
		return h, nil, err
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, nil, fmt.Errorf("%w: unreadable gather header under %q: %v", ErrArguments, key, err)
	}
	var data []byte
	for i := range h.Chunks {
		chunk, err := get(key + "/" + strconv.Itoa(i))
		if err != nil {
			return h, nil, err
		}
		data = append(data, chunk...)
	}
	return h, data, nil
}
