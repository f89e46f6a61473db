package jit

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/internal/closegate"
	"github.com/xlamesh/xlamesh/internal/hostmem"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shapes"
)

// Array is a global array laid out over a mesh, like jax.Array: a global shape and dtype, a
// NamedSharding, and one device buffer per addressable device of the mesh (in mesh order).
// Replicas hold copies. An Array owns its buffers: Close frees them. Safe for concurrent use.
type Array struct {
	shape    []int
	dtype    dtypes.DType
	sharding mesh.NamedSharding
	shards   []Shard // addressable devices, mesh order

	// users counts the operations using the buffers (reads, waits, calls; a call it is donated
	// to exclusively). Close marks the array closed without waiting for them; whoever sees it
	// closed and unused first closes the buffers (package internal/closegate), so that closing
	// an argument of a call that never ends, or an array an abandoned copy waits for, never
	// blocks.
	users closegate.Users
}

// Shard is one addressable device's part of an Array, like jax.Shard.
type Shard struct {
	Device    *pjrt.Device
	Index     mesh.Index // the [start, stop) ranges of the global array this shard holds
	ReplicaID int        // how many earlier devices (mesh order) hold the same index
	Data      *pjrt.Buffer
}

// Put copies a host array (a flat row-major Go slice: []float32, []int64, []bool, ...,
// []bfloat16.BFloat16 for BF16) with the given global shape onto the mesh of s: each addressable device receives exactly its shard, like
// jax.device_put(x, sharding). Bad shapes fail with mesh's errors (mesh.ErrRank, mesh.ErrIndivisible).
func Put(c *pjrt.Client, flat any, shape []int, s mesh.NamedSharding) (*Array, error) {
	data, dt, err := pjrt.HostBytes(flat)
	if err != nil {
		return nil, fmt.Errorf("jit: put: %w", err)
	}
	return PutBytes(c, dt, shape, data, s)
}

// PutBytes is Put for raw row-major bytes of the given dtype (the way to put f16, the float8
// family and the sub-byte types), laid out as shapes.ElementBytes says: a sub-byte
// element in the low bits of its own byte, the rest 0 (pjrt.CheckElements), as NumPy's
// ml_dtypes arrays hold them.
func PutBytes(c *pjrt.Client, dtype dtypes.DType, shape []int, data []byte, s mesh.NamedSharding) (*Array, error) {
	if !pjrt.Supported(dtype) {
		return nil, fmt.Errorf("jit: put: %w: unsupported element type %v", pjrt.ErrHostData, dtype)
	}
	if err := s.CheckShape(shape); err != nil {
		return nil, fmt.Errorf("jit: put: %w", err)
	}
	global := shapes.Make(dtype, shape...)
	if n, ok := checkedSize(shape, shapes.ElementBytes(dtype)); !ok {
		return nil, fmt.Errorf("jit: put: %w: global shape %v has more bytes than an int holds", pjrt.ErrHostData, shape)
	} else if len(data) != n {
		return nil, fmt.Errorf("jit: put: %w: global shape %s needs %d bytes (%d elements), got %d bytes",
			pjrt.ErrHostData, global.Aval(), global.Bytes(), global.Size(), len(data))
	}
	if err := pjrt.CheckElements(global, data); err != nil {
		return nil, fmt.Errorf("jit: put: %w", err)
	}
	placed, shardShape, err := placement(c, s, shape)
	if err != nil {
		return nil, fmt.Errorf("jit: put: %w", err)
	}
	// Every shard goes in place from the global array, with its byte strides: pjrt gathers the
	// blocks on all cores into staging memory that the CPU devices use as their own (one copy),
	// and starts every transfer before waiting for any.
	strides := byteStrides(shape, shapes.ElementBytes(dtype))
	empty := shapes.Make(dtype, shardShape...).Size() == 0
	transfers := make([]pjrt.HostTransfer, len(placed))
	for i, p := range placed {
		transfers[i] = pjrt.HostTransfer{Device: p.Device, DType: dtype, Dims: shardShape}
		if !empty {
			transfers[i].Data, transfers[i].ByteStrides = data[blockOffset(p.Index, strides):], strides
		}
	}
	return transfer("put", c, shape, dtype, s, placed, transfers)
}

// inMemory places each transfer in the memory of its device that s's memory kind names; a
// sharding in device memory leaves the transfers in each device's default memory.
func inMemory(transfers []pjrt.HostTransfer, s mesh.NamedSharding) error {
	kind := s.MemoryKind()
	if kind == "" || kind == mesh.MemoryDevice {
		return nil
	}
	for i := range transfers {
		m, err := transfers[i].Device.Memory(kind)
		if err != nil {
			return err
		}
		transfers[i].Memory = m
	}
	return nil
}

// checkedSize returns the byte size of an array of the given shape and element size, and false
// when it overflows an int or a dimension is negative.
func checkedSize(shape []int, elem int) (int, bool) {
	n := elem
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > math.MaxInt/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// byteStrides returns the row-major byte strides of an array of the given shape and element size.
func byteStrides(shape []int, elem int) []int64 {
	strides := make([]int64, len(shape))
	acc := int64(elem)
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = acc
		acc *= int64(shape[d])
	}
	return strides
}

// blockOffset returns the byte offset of block idx's first element in an array with the given
// byte strides.
func blockOffset(idx mesh.Index, strides []int64) int {
	off := int64(0)
	for d, r := range idx {
		off += int64(r.Start) * strides[d]
	}
	return int(off)
}

// FromCallback builds an Array from a callback that returns the data (a flat row-major Go slice
// of the given dtype) of one shard given its index, like jax.make_array_from_callback. The
// callback is called once per addressable device in mesh order, or once in all for a fully
// replicated sharding; each result must have the shard's size and the dtype.
func FromCallback(c *pjrt.Client, shape []int, dtype dtypes.DType, s mesh.NamedSharding,
	data func(index mesh.Index) (any, error)) (*Array, error) {
	if data == nil {
		return nil, fmt.Errorf("jit: from callback: %w: nil callback", ErrNil)
	}
	return fromCallback(c, shape, dtype, s, func(index mesh.Index) ([]byte, error) {
		flat, err := data(index)
		if err != nil {
			return nil, err
		}
		raw, got, err := pjrt.HostBytes(flat)
		if err == nil && got != dtype {
			err = fmt.Errorf("%w: callback returned dtype %v, want %v", ErrShard, got, dtype)
		}
		return raw, err
	})
}

// FromCallbackBytes is FromCallback for a callback that returns a shard's raw row-major bytes,
// laid out as PutBytes takes them: the way to build arrays of f16, the float8 family and the
// sub-byte types, and to fill shards straight from a file.
func FromCallbackBytes(c *pjrt.Client, shape []int, dtype dtypes.DType, s mesh.NamedSharding,
	data func(index mesh.Index) ([]byte, error)) (*Array, error) {
	if data == nil {
		return nil, fmt.Errorf("jit: from callback: %w: nil callback", ErrNil)
	}
	if !pjrt.Supported(dtype) {
		return nil, fmt.Errorf("jit: from callback: %w: unsupported element type %v", pjrt.ErrHostData, dtype)
	}
	return fromCallback(c, shape, dtype, s, func(index mesh.Index) ([]byte, error) {
		raw, err := data(index)
		if err == nil {
			err = pjrt.CheckElements(shapes.Make(dtype, len(raw)/max(1, shapes.ElementBytes(dtype))), raw)
		}
		return raw, err
	})
}

// callbackPlacement checks shape against s and returns where its shards go (see placement),
// for the callback constructors.
func callbackPlacement(c *pjrt.Client, s mesh.NamedSharding, shape []int) ([]Shard, []int, error) {
	if err := s.CheckShape(shape); err != nil {
		return nil, nil, fmt.Errorf("jit: from callback: %w", err)
	}
	placed, shardShape, err := placement(c, s, shape)
	if err != nil {
		return nil, nil, fmt.Errorf("jit: from callback: %w", err)
	}
	return placed, shardShape, nil
}

// transfer makes the array whose shards, placed, have the bytes of transfers; op names the
// caller in errors.
func transfer(op string, c *pjrt.Client, shape []int, dtype dtypes.DType, s mesh.NamedSharding, placed []Shard,
	transfers []pjrt.HostTransfer) (*Array, error) {
	if err := inMemory(transfers, s); err != nil {
		return nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	bufs, err := c.BuffersFromHost(transfers)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w", op, err)
	}
	for i := range placed {
		placed[i].Data = bufs[i]
	}
	return newArray(shape, dtype, s, placed), nil
}

// FromCallbackInto is FromCallbackBytes with each shard's bytes written in place: fill writes
// the row-major bytes of the global array's part index into dst (exactly that part's size; dst
// holds anything before, so every byte must be written). On CPU dst is, for a shard of 64 KiB
// or more, the memory the device buffer then uses (pjrt.HostTransfer.Fill): the bytes are
// written once, where the device reads them, as when a file is decompressed straight onto the
// devices. fill is called once per distinct index, for several indices at the same time (on
// all cores); the devices that hold one index get copies of its one fill.
func FromCallbackInto(c *pjrt.Client, shape []int, dtype dtypes.DType, s mesh.NamedSharding,
	fill func(index mesh.Index, dst []byte) error) (*Array, error) {
	if fill == nil {
		return nil, fmt.Errorf("jit: from callback: %w: nil callback", ErrNil)
	}
	if !pjrt.Supported(dtype) {
		return nil, fmt.Errorf("jit: from callback: %w: unsupported element type %v", pjrt.ErrHostData, dtype)
	}
	placed, shardShape, err := callbackPlacement(c, s, shape)
	if err != nil {
		return nil, err
	}
	want := shapes.Make(dtype, shardShape...)
	holders := map[string]int{}
	for _, p := range placed {
		holders[p.Index.String()]++
	}
	transfers := make([]pjrt.HostTransfer, len(placed))
	shared := map[string][]byte{} // filled once for the devices that hold one index
	for i, p := range placed {
		index, dev := slices.Clone(p.Index), p.Device
		transfers[i] = pjrt.HostTransfer{Device: dev, DType: dtype, Dims: shardShape}
		key := index.String()
		if holders[key] == 1 {
			transfers[i].Fill = func(dst []byte) error {
				if err := fill(index, dst); err != nil {
					return fmt.Errorf("index %v on %s: %w", index, dev, err)
				}
				return nil
			}
			continue
		}
		block, ok := shared[key]
		if !ok {
			block = make([]byte, want.Bytes())
			err := fill(index, block)
			if err == nil {
				err = pjrt.CheckElements(want, block)
			}
			if err != nil {
				return nil, fmt.Errorf("jit: from callback: index %v on %s: %w", index, dev, err)
			}
			shared[key] = block
		}
		transfers[i].Data = block
	}
	return transfer("from callback", c, shape, dtype, s, placed, transfers)
}

func fromCallback(c *pjrt.Client, shape []int, dtype dtypes.DType, s mesh.NamedSharding,
	data func(index mesh.Index) ([]byte, error)) (*Array, error) {
	placed, shardShape, err := callbackPlacement(c, s, shape)
	if err != nil {
		return nil, err
	}
	want := shapes.Make(dtype, shardShape...)
	// Every block first, then one transfer of them all: pjrt copies them on all cores.
	transfers := make([]pjrt.HostTransfer, len(placed))
	var replicated []byte
	for i := range placed {
		block := replicated
		if block == nil {
			raw, err := data(slices.Clone(placed[i].Index))
			if err == nil && len(raw) != want.Bytes() {
				err = fmt.Errorf("%w: expected shard shape %v (%d elements), callback returned %d elements",
					ErrShard, shardShape, want.Size(), len(raw)/shapes.ElementBytes(dtype))
			}
			if err != nil {
				return nil, fmt.Errorf("jit: from callback: index %v on %s: %w", placed[i].Index, placed[i].Device, err)
			}
			block = raw
			if s.IsFullyReplicated() {
				replicated = block
			}
		}
		transfers[i] = pjrt.HostTransfer{Device: placed[i].Device, DType: dtype, Dims: shardShape, Data: block}
	}
	return transfer("from callback", c, shape, dtype, s, placed, transfers)
}

// FromShards builds an Array from existing device buffers, one per addressable device of the
// sharding's mesh in mesh order, each holding that device's shard (the GlobalDeviceArray checks:
// devices in order, shapes equal to the shard shape, one dtype). On success the Array owns the
// buffers; on error they are left to the caller.
func FromShards(c *pjrt.Client, shape []int, s mesh.NamedSharding, buffers []*pjrt.Buffer) (*Array, error) {
	if err := s.CheckShape(shape); err != nil {
		return nil, fmt.Errorf("jit: from shards: %w", err)
	}
	placed, shardShape, err := placement(c, s, shape)
	if err != nil {
		return nil, fmt.Errorf("jit: from shards: %w", err)
	}
	if len(buffers) != len(placed) {
		return nil, fmt.Errorf("jit: from shards: %w: got %d buffers for %d addressable devices", ErrShard, len(buffers), len(placed))
	}
	var dtype dtypes.DType
	for i, b := range buffers {
		switch {
		case b == nil:
			return nil, fmt.Errorf("jit: from shards: %w: buffer %d is nil", ErrShard, i)
		case b.IsClosed():
			return nil, fmt.Errorf("jit: from shards: buffer %d: %w", i, pjrt.ErrClosed)
		case b.Device() != placed[i].Device:
			return nil, fmt.Errorf("jit: from shards: %w: buffer %d is on device %d, the mesh's addressable device %d is %d",
				ErrShard, i, b.Device().ID(), i, placed[i].Device.ID())
		case !slices.Equal(b.Dims(), shardShape):
			return nil, fmt.Errorf("jit: from shards: %w: buffer %d has shape %v, expected shard shape %v", ErrShard, i, b.Dims(), shardShape)
		case i > 0 && b.DType() != dtype:
			return nil, fmt.Errorf("jit: from shards: %w: buffer %d has dtype %v, buffer 0 has %v", ErrShard, i, b.DType(), dtype)
		}
		dtype = b.DType()
		placed[i].Data = b
	}
	return newArray(shape, dtype, s, placed), nil
}

// placement returns the addressable shards of s for shape (without data) with their pjrt devices.
func placement(c *pjrt.Client, s mesh.NamedSharding, shape []int) ([]Shard, []int, error) {
	if c == nil {
		return nil, nil, fmt.Errorf("%w: nil client", ErrDevice)
	}
	shardShape, err := s.ShardShape(shape)
	if err != nil {
		return nil, nil, err
	}
	ms, err := s.AddressableShards(shape, c.ProcessIndex())
	if err != nil {
		return nil, nil, err
	}
	out := make([]Shard, len(ms))
	for i, sh := range ms {
		d, err := clientDevice(c, sh.Device)
		if err != nil {
			return nil, nil, err
		}
		out[i] = Shard{Device: d, Index: sh.Index, ReplicaID: sh.ReplicaID}
	}
	return out, shardShape, nil
}

// Devices returns the client's devices as mesh.Devices, in the client's order: the list to build
// a mesh from (mesh.New(jit.Devices(c), []int{4, 2}, "x", "y")).
func Devices(c *pjrt.Client) []mesh.Device {
	ds := c.Devices()
	out := make([]mesh.Device, len(ds))
	for i, d := range ds {
		out[i] = d
	}
	return out
}

// clientDevice returns the pjrt device of c that a mesh device stands for.
func clientDevice(c *pjrt.Client, d mesh.Device) (*pjrt.Device, error) {
	pd, ok := d.(*pjrt.Device)
	if !ok {
		return nil, fmt.Errorf("%w: mesh device %d (%T) is not a pjrt device; build the mesh from client.Devices()", ErrDevice, d.ID(), d)
	}
	cd, err := c.Device(pd.ID())
	if err != nil || cd != pd {
		return nil, fmt.Errorf("%w: mesh device %d belongs to another client", ErrDevice, pd.ID())
	}
	return pd, nil
}

func newArray(shape []int, dtype dtypes.DType, s mesh.NamedSharding, shards []Shard) *Array {
	return &Array{shape: slices.Clone(shape), dtype: dtype, sharding: s, shards: shards}
}

// Shape returns the global shape.
func (a *Array) Shape() []int {
	if a == nil {
		return nil
	}
	return slices.Clone(a.shape)
}

// DType returns the element type.
func (a *Array) DType() dtypes.DType {
	if a == nil {
		return dtypes.InvalidDType
	}
	return a.dtype
}

// Sharding returns how the array is laid out.
func (a *Array) Sharding() mesh.NamedSharding {
	if a == nil {
		return mesh.NamedSharding{}
	}
	return a.sharding
}

// IsFullyReplicated reports whether every device holds the whole array.
func (a *Array) IsFullyReplicated() bool { return a != nil && a.sharding.IsFullyReplicated() }

// AddressableShards returns the shards on this process's devices, in mesh order. The buffers stay
// owned by the array.
func (a *Array) AddressableShards() []Shard {
	if a == nil {
		return nil
	}
	out := make([]Shard, len(a.shards))
	for i, s := range a.shards {
		out[i] = s
		out[i].Index = slices.Clone(s.Index)
	}
	return out
}

// String returns e.g. "Array(i64[8,2], NamedSharding(Mesh('x': 4, 'y': 2), P('x', 'y')))".
func (a *Array) String() string {
	if a == nil {
		return "Array(nil)"
	}
	return fmt.Sprintf("Array(%s, %s)", shapes.Make(a.dtype, a.shape...).Aval(), a.sharding)
}

// ToHost gathers the global array into a new flat row-major Go slice of its dtype ([]uint16 raw
// bits for F16 and BF16, []complex64 and []complex128, []uint8 raw bits for the float8 family,
// f4E2M1FN and the sub-byte integers: see pjrt.FlatFromBytes), reading each distinct shard
// once, from its replica 0.
func (a *Array) ToHost() (any, error) {
	if a == nil {
		return nil, fmt.Errorf("jit: to host: %w: nil *Array", ErrNil)
	}
	if _, err := hostSize("to host", a.dtype, a.shape); err != nil {
		return nil, err
	}
	// Uncleared memory: toHostInto writes every byte, or the slice is dropped.
	flat, out := hostmem.Flat(a.dtype, shapes.Make(a.dtype, a.shape...).Size())
	if err := a.toHostInto(out); err != nil {
		return nil, err
	}
	return flat, nil
}

// ToHostBytes is ToHost returning raw row-major bytes, laid out as shapes.ElementBytes says (a
// sub-byte element in the low bits of its own byte). It returns every byte the array holds, or
// an error.
func (a *Array) ToHostBytes() ([]byte, error) {
	if a == nil {
		return nil, fmt.Errorf("jit: to host: %w: nil *Array", ErrNil)
	}
	n, err := hostSize("to host bytes", a.dtype, a.shape)
	if err != nil {
		return nil, err
	}
	out := hostmem.Bytes(n) // see ToHost
	if err := a.toHostInto(out); err != nil {
		return nil, err
	}
	return out, nil
}

// hostSize returns the bytes of the row-major host copy of an array of element type d and
// dimensions dims, or an error wrapping pjrt.ErrHostData that names d when pjrt cannot read
// arrays of that type (none that an Array can hold today): reads go through it so that none
// returns fewer bytes than the array holds without an error. op words the error.
func hostSize(op string, d dtypes.DType, dims []int) (int, error) {
	if !pjrt.Supported(d) {
		return 0, fmt.Errorf("jit: %s: %w: arrays of element type %s (%v) cannot be read to the host",
			op, pjrt.ErrHostData, shapes.AvalName(d), d)
	}
	return shapes.Make(d, dims...).Bytes(), nil
}

// aval returns the array's type as JAX writes it ("f32[8,2]").
func (a *Array) aval() string { return shapes.Make(a.dtype, a.shape...).Aval() }

// toHostInto copies the global array into out, its row-major bytes: every distinct shard
// straight into its place (pjrt.HostCopy with the global array's byte strides), all at once.
func (a *Array) toHostInto(out []byte) error {
	if !a.enter() {
		return fmt.Errorf("jit: to host: %w", ErrClosed)
	}
	defer a.exit()
	// The one length check of every read: out holds the whole array, or nothing is read.
	n, err := hostSize("to host", a.dtype, a.shape)
	if err != nil {
		return err
	}
	if len(out) != n {
		return fmt.Errorf("jit: to host: %w: %s holds %d bytes, the destination has %d", pjrt.ErrHostData, a.aval(), n, len(out))
	}
	if n == 0 {
		return nil // nothing to read (the blocks of an empty array all look alike)
	}
	var firsts []Shard // replica 0 of each distinct shard
	for _, s := range a.shards {
		if s.ReplicaID == 0 {
			firsts = append(firsts, s)
		}
	}
	if len(firsts) != a.sharding.NumShards() {
		return fmt.Errorf("jit: to host: %w: this process holds %d of the %d distinct shards", ErrNotAddressable, len(firsts), a.sharding.NumShards())
	}
	strides := byteStrides(a.shape, shapes.ElementBytes(a.dtype))
	copies := make([]pjrt.HostCopy, len(firsts))
	for i, s := range firsts {
		copies[i] = pjrt.HostCopy{Buffer: s.Data, Dst: out[blockOffset(s.Index, strides):], DstByteStrides: strides}
	}
	if err := firsts[0].Data.Device().Client().CopyToHostAll(copies); err != nil {
		return fmt.Errorf("jit: to host: %w", err)
	}
	return nil
}

// Wait blocks until every shard of the array is ready, like jax.Array.block_until_ready, and
// returns the error of the execution that produced it (wrapping pjrt.ErrExecute) if it failed.
func (a *Array) Wait() error {
	if a == nil {
		return fmt.Errorf("jit: wait: %w: nil *Array", ErrNil)
	}
	if !a.enter() {
		return fmt.Errorf("jit: wait: %w", ErrClosed)
	}
	defer a.exit()
	var local [8]*pjrt.Buffer
	bufs := local[:0]
	for _, s := range a.shards {
		bufs = append(bufs, s.Data)
	}
	if err := pjrt.WaitAll(bufs...); err != nil {
		return fmt.Errorf("jit: wait: %w", err)
	}
	return nil
}

// Close frees the array's device buffers. It is idempotent. It never waits: an array that a call
// or copy still uses (an argument of a program that never ends, an array an abandoned
// ToHostContext waits for) is marked closed at once, and its buffers are freed when the last of
// them ends.
func (a *Array) Close() error {
	if a == nil {
		return fmt.Errorf("jit: close: %w: nil *Array", ErrNil)
	}
	if a.users.Close() {
		return a.closeShards()
	}
	return nil
}

// enter admits a use of the array's buffers; false when it is closed or donated to a call
// under way.
func (a *Array) enter() bool { return a.users.Enter() }

// exit ends a use, closing the buffers of a closed array whose last user this was.
func (a *Array) exit() {
	if a.users.Exit() {
		_ = a.closeShards()
	}
}

// closeShards closes the shards' buffers; the caller is the array's last user.
func (a *Array) closeShards() error {
	var first error
	for _, s := range a.shards {
		if err := s.Data.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// IsClosed reports whether the array was closed or donated (true for a nil *Array, which cannot
// be used either).
func (a *Array) IsClosed() bool {
	if a == nil {
		return true
	}
	return a.users.IsClosed()
}

// PutContext is Put with a context: when ctx is done before the copy ends, it returns an error
// wrapping ctx.Err() at once. A transfer under way inside PJRT cannot be interrupted: it goes on
// in the background and frees its device buffers when it ends. Until then it may still read
// flat, so treat flat as read-only after a cancelled PutContext. The client stays usable.
func PutContext(ctx context.Context, c *pjrt.Client, flat any, shape []int, s mesh.NamedSharding) (*Array, error) {
	if err := checkContext("put", ctx); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return Put(c, flat, shape, s)
	}
	return inBackground(ctx, "put", func() (*Array, error) { return Put(c, flat, shape, s) }, closeArray)
}

// ToHostContext is ToHost with a context: when ctx is done before the copy ends, it returns an
// error wrapping ctx.Err() at once; the copy goes on in the background into memory nobody sees,
// holding the array open until it ends. The array stays usable.
func (a *Array) ToHostContext(ctx context.Context) (any, error) {
	if a == nil {
		return nil, fmt.Errorf("jit: to host: %w: nil *Array", ErrNil)
	}
	if err := checkContext("to host", ctx); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return a.ToHost()
	}
	return inBackground(ctx, "to host", a.ToHost, nil)
}

func closeArray(a *Array) { _ = a.Close() }
