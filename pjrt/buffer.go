package pjrt

/*
#include "xlamesh_pjrt.h"

// xm_buffers_await keeps no Go pointer past the call and never calls back into Go.
#cgo noescape xm_buffers_await
#cgo nocallback xm_buffers_await
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/internal/closegate"
	"github.com/xlamesh/xlamesh/internal/hostmem"
	"github.com/xlamesh/xlamesh/shapes"
)

// Buffer is an array on one device. Close it when done; a finalizer frees a forgotten buffer,
// but only Close makes the memory's lifetime predictable. Safe for concurrent use.
type Buffer struct {
	dev   *Device
	shape Shape
	st    *bufferState
}

// bufferState is what the finalizer needs; it must not point back to the Buffer.
type bufferState struct {
	// users counts the operations using the device memory (copies, waits, executions: shared; an
	// execution it is donated to: exclusive). Close marks the buffer closed without waiting for
	// them, and whoever sees it closed and unused first frees it (the rule of closegate), so that
	// closing an argument of a program that never ends, or a buffer an abandoned copy waits for,
	// never blocks.
	users  closegate.Users
	freed  atomic.Bool // the PJRT buffer is destroyed (or was donated)
	client *Client
	api    *api
	c      *C.PJRT_Buffer

	prev, next *bufferState // in the client's list of live buffers, under client.resMu
}

var liveBuffers atomic.Int64

// LiveBuffers returns the number of buffers created by this package and not yet closed or
// finalized: a leak check for tests.
func LiveBuffers() int64 { return liveBuffers.Load() }

func newBuffer(dev *Device, shape Shape, c *C.PJRT_Buffer) *Buffer {
	st := &bufferState{client: dev.client, api: dev.client.api, c: c}
	b := &Buffer{dev: dev, shape: shape, st: st}
	liveBuffers.Add(1)
	dev.client.trackBuffer(st)
	runtime.AddCleanup(b, func(st *bufferState) { _ = st.close() }, st)
	return b
}

// close marks the buffer closed and destroys it now if nothing uses it (returning the destroy's
// error); otherwise the last user destroys it.
func (st *bufferState) close() error {
	if st.users.Close() {
		return st.free()
	}
	return nil
}

// free destroys the PJRT buffer, once; the caller is its last user, or holds it exclusively.
func (st *bufferState) free() error {
	if !st.markDonated() {
		return nil
	}
	return st.api.toError("destroy buffer", ErrClosed, C.xm_buffer_destroy(st.api.p, st.c))
}

// markDonated records that the buffer's memory is gone (destroyed, or handed to an execution),
// and reports whether this call did (the caller then destroys the handle).
func (st *bufferState) markDonated() bool {
	if !st.freed.CompareAndSwap(false, true) {
		return false
	}
	liveBuffers.Add(-1)
	st.client.untrackBuffer(st)
	return true
}

// enter admits a shared use of the memory; false when the buffer is closed or donated to a
// running call.
func (st *bufferState) enter() bool { return st.users.Enter() }

// exit ends a shared use, destroying a closed buffer whose last user this was.
func (st *bufferState) exit() {
	if st.users.Exit() {
		_ = st.free()
	}
}

// exitExclusive ends an exclusive use, destroying the buffer if it was closed meanwhile.
func (st *bufferState) exitExclusive() {
	if st.users.ExitExclusive() {
		_ = st.free()
	}
}

// closedError is the error of an operation that could not enter st: closed, or donated to a
// call still under way.
func (st *bufferState) closedError() error {
	if st.users.IsClosed() {
		return ErrClosed
	}
	return errDonating
}

// BufferFromHost copies a flat Go slice ([]float32, []int64, []bool, ...; row-major) with the
// given dimensions to an addressable device of the client.
func (c *Client) BufferFromHost(dev *Device, flat any, dims []int) (*Buffer, error) {
	raw, dt, err := HostBytes(flat)
	if err != nil {
		return nil, err
	}
	return c.BufferFromBytes(dev, dt, dims, raw)
}

// BufferFromBytes copies raw row-major bytes of the given element type and dimensions to a device.
func (c *Client) BufferFromBytes(dev *Device, dtype dtypes.DType, dims []int, data []byte) (*Buffer, error) {
	bs, err := c.BuffersFromHost([]HostTransfer{{Device: dev, DType: dtype, Dims: dims, Data: data}})
	if err != nil {
		return nil, err
	}
	return bs[0], nil
}

// checkDevice checks that dev is an addressable device of c.
func (c *Client) checkDevice(dev *Device) error {
	if dev == nil {
		return fmt.Errorf("%w: nil device", ErrDevice)
	}
	if dev.client != c {
		return fmt.Errorf("%w: device %d belongs to another client", ErrDevice, dev.ID())
	}
	if !dev.info.addressable {
		return fmt.Errorf("%w: device %d is not addressable from process %d", ErrDevice, dev.ID(), c.processIndex)
	}
	return nil
}

// Device returns the device holding the buffer.
func (b *Buffer) Device() *Device { return b.dev }

// Shape returns the buffer's element type and dimensions.
func (b *Buffer) Shape() Shape {
	return b.shape
}

// DType returns the buffer's element type.
func (b *Buffer) DType() dtypes.DType { return b.shape.DType() }

// Dims returns the buffer's dimensions.
func (b *Buffer) Dims() []int { return b.shape.Dims() }

// String returns e.g. "Buffer(f32[4,2] on CpuDevice(id=3))".
func (b *Buffer) String() string { return fmt.Sprintf("Buffer(%s on %s)", b.shape.Aval(), b.dev) }

// ToHost copies the buffer to a new flat Go slice of its element type ([]float32, []int64, ...;
// []uint16 raw bits for Float16 and BFloat16).
func (b *Buffer) ToHost() (any, error) {
	if !Supported(b.shape.DType()) {
		return nil, fmt.Errorf("pjrt: copy to host: %w: unsupported element type %v", ErrHostData, b.shape.DType())
	}
	flat, raw := hostmem.Flat(b.shape.DType(), b.shape.Size()) // the copy writes every byte
	if err := b.CopyToHost(raw); err != nil {
		return nil, err
	}
	return flat, nil
}

// CopyToHost copies the buffer's row-major bytes into dst, which must be exactly Shape().Bytes()
// long, waiting for the buffer to be ready first.
func (b *Buffer) CopyToHost(dst []byte) error {
	if b == nil {
		return fmt.Errorf("pjrt: copy to host: %w: nil buffer", ErrHostData)
	}
	return b.dev.client.CopyToHostAll([]HostCopy{{Buffer: b, Dst: dst}})
}

// Close frees the device memory. It is idempotent; a closed buffer cannot be used again. It
// never waits: a buffer that an operation still uses (an argument of an execution that has not
// ended, a copy or Wait waiting for it) is freed by the last of them, when it ends, and Close
// then returns nil at once.
func (b *Buffer) Close() error { return b.st.close() }

// IsClosed reports whether Close was called (or the buffer was donated to an execution).
func (b *Buffer) IsClosed() bool { return b.st.users.IsClosed() }

// Wait blocks until the buffer's data is ready (the execution or transfer that produces it has
// finished) and returns that work's error: an *Error matching ErrExecute when the execution
// failed. Like jax.Array.block_until_ready for one shard.
func (b *Buffer) Wait() error {
	if b == nil {
		return fmt.Errorf("pjrt: wait: %w: nil buffer", ErrHostData)
	}
	return WaitAll(b)
}

// WaitAll waits until every buffer is ready, in one call into the plugin, and returns the first
// error (as Buffer.Wait does), or one wrapping ErrClosed for a closed buffer. It is
// Buffer.Wait for many buffers, e.g. the shards of an array.
func WaitAll(bufs ...*Buffer) error {
	if len(bufs) == 0 {
		return nil
	}
	// The buffer list, and one word past it for the index of a failed buffer.
	var small [heldInline + 1]*C.PJRT_Buffer
	list := small[:0]
	if len(bufs) > heldInline {
		list = make([]*C.PJRT_Buffer, 0, len(bufs)+1)
	}
	var held heldSet
	defer held.release()
	for _, b := range bufs {
		if b == nil {
			return fmt.Errorf("pjrt: wait: %w: nil buffer", ErrHostData)
		}
		if b.st.api != bufs[0].st.api {
			return fmt.Errorf("pjrt: wait: %w: buffers of two plugins", ErrDevice)
		}
		if !held.has(b.st) {
			if !b.st.enter() {
				return fmt.Errorf("pjrt: wait: buffer %w", b.st.closedError())
			}
			held.add(b.st, false, len(bufs))
		}
		list = append(list, b.st.c)
	}
	a := bufs[0].st.api
	if !a.has(fnBufferReadyEvent) {
		return nil // the plugin made every result ready before returning it
	}
	failed := (*C.size_t)(unsafe.Pointer(&list[:len(list)+1][len(list)]))
	if err := a.toError("wait", ErrExecute, C.xm_buffers_await(a.p, &list[0], C.size_t(len(list)), failed)); err != nil {
		if e, ok := err.(*Error); ok {
			e.Op = fmt.Sprintf("wait for %s", bufs[*failed]) // formatted only on failure: Wait is on the hot path
		}
		return err
	}
	return nil
}

// HostTransfer is one host-to-device copy for BuffersFromHost: Data holds the array with
// element type DType and dimensions Dims, laid out row-major, or with the given ByteStrides (bytes
// per step of each dimension, so that a block of a larger host array can be sent in place). The
// buffer is made on Device, in Memory: one of the memories Device addresses (Device.Memory gives
// them by kind, e.g. "pinned_host"), or, when Memory is nil, the device's default memory.
//
// A transfer may instead have Fill, and neither Data nor ByteStrides: Fill then writes the
// array's row-major bytes into dst (exactly the array's size, holding anything before), and
// its error fails the transfer. Where the transfer is staged (see BuffersFromHost) dst is the
// staging memory the buffer then uses: the bytes are written once, where the device reads
// them (a file decompressed straight into device memory, on CPU). BuffersFromHost calls the
// transfers' Fills at the same time, on all cores.
type HostTransfer struct {
	Device      *Device
	DType       dtypes.DType
	Dims        []int
	Data        []byte
	ByteStrides []int64 // nil: dense row-major
	Memory      *Memory // nil: the device's default memory
	Fill        func(dst []byte) error
}

// BuffersFromHost starts every transfer, then waits until the plugin is done with the host
// memory. The host memory is only read during the call; the caller may change it once
// BuffersFromHost returns. On error no buffer is left open.
//
// On a platform whose device memory is host memory (CPU), a strided transfer, or a dense one of
// 64 KiB or more, is copied once, on all cores, into staging memory outside Go's heap that the
// device buffer then uses as its own (PJRT's zero-copy host buffers): the transfer runs at the
// speed of a memory copy, and the staging block is recycled for later transfers when the buffer
// is closed, for at most the staging idle time (see Staging, SetStagingIdleLimit,
// SetStagingIdleTime). Elsewhere the plugin copies from Data, strides and all.
func (c *Client) BuffersFromHost(ts []HostTransfer) ([]*Buffer, error) {
	for i, t := range ts {
		if err := c.checkTransfer(t); err != nil {
			return nil, fmt.Errorf("pjrt: buffers from host: transfer %d: %w", i, err)
		}
	}
	done, err := c.use("buffers from host")
	if err != nil {
		return nil, err
	}
	defer done()
	a := c.api
	// Choose each transfer's route and gather the staged ones, all at once, with the fills.
	staged := make([]stagingBlock, len(ts))
	defer func() {
		for _, b := range staged {
			b.free() // blocks not handed to the plugin
		}
	}()
	stage := c.hostMemory && a.has(fnEventOnReady)
	fills := make([]error, len(ts))
	var tasks []func()
	ts = slices.Clone(ts) // filled transfers get their Data here
	for i, t := range ts {
		n := hostBytes(t.DType, t.Dims)
		if !stage || (t.ByteStrides == nil && n < stagingMin) {
			if t.Fill != nil {
				ts[i].Data = make([]byte, n)
				tasks = append(tasks, func() { fills[i] = fill(t, ts[i].Data) })
			}
			continue
		}
		if staged[i], err = allocStaging(n); err != nil {
			return nil, fmt.Errorf("pjrt: buffers from host: transfer %d: %w", i, err)
		}
		if t.Fill != nil {
			dst := staged[i].bytes(n)
			tasks = append(tasks, func() { fills[i] = fill(t, dst) })
			continue
		}
		strides := t.ByteStrides
		if strides == nil {
			strides = denseStrides(t.Dims, shapes.ElementBytes(t.DType))
		}
		l := newLayout(t.Dims, strides, shapes.ElementBytes(t.DType))
		tasks = l.copyTasks(tasks, staged[i].bytes(n), t.Data, true)
	}
	runTasks(tasks)
	for i, err := range fills {
		if err != nil {
			return nil, fmt.Errorf("pjrt: buffers from host: transfer %d: %w", i, err)
		}
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	out := make([]*Buffer, 0, len(ts))
	events := make([]*C.PJRT_Event, 0, len(ts))
	var first error
	for i, t := range ts {
		cdims := make([]C.int64_t, len(t.Dims)+len(t.ByteStrides)+1)
		for i, d := range t.Dims {
			cdims[i] = C.int64_t(d)
		}
		pin.Pin(&cdims[0])
		args := C.PJRT_Client_BufferFromHostBuffer_Args{
			client:   c.c,
			_type:    C.PJRT_Buffer_Type(t.DType),
			dims:     &cdims[0],
			num_dims: C.size_t(len(t.Dims)),
			device:   t.Device.c,
		}
		if t.Memory != nil {
			// With memory set the plugin copies there and device only names the buffer's device
			// (the header: "If nullptr, host data will be copied to `device`, otherwise we copy
			// data to `memory`"); both CPU plugins take memory with or without device.
			args.memory = t.Memory.c
		}
		if b := staged[i]; b.p != nil {
			staged[i] = stagingBlock{} // xm_buffer_from_staging owns it from here on
			err := a.toError(fmt.Sprintf("buffer from host to %s", t.Device), ErrHostData, C.xm_buffer_from_staging(a.p, &args, b.p, b.cap))
			if err == nil && args.buffer == nil {
				err = fmt.Errorf("pjrt: buffer from host to %s: %w: out of host memory", t.Device, ErrHostData)
			}
			if err != nil {
				first = err
				break
			}
			out = append(out, newBuffer(t.Device, shapes.Make(t.DType, t.Dims...), args.buffer))
			continue
		}
		data := t.Data
		if len(data) == 0 {
			data = make([]byte, 1) // PJRT needs a valid pointer even for zero elements
		}
		pin.Pin(&data[0])
		for i, s := range t.ByteStrides {
			cdims[len(t.Dims)+i] = C.int64_t(s)
		}
		args.data = unsafe.Pointer(&data[0])
		args.host_buffer_semantics = C.PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes
		if len(t.ByteStrides) > 0 {
			args.byte_strides = &cdims[len(t.Dims)]
			args.num_byte_strides = C.size_t(len(t.ByteStrides))
		}
		if err := a.toError(fmt.Sprintf("buffer from host to %s", t.Device), ErrHostData, C.xm_Client_BufferFromHostBuffer(a.p, &args)); err != nil {
			first = err
			break
		}
		out = append(out, newBuffer(t.Device, shapes.Make(t.DType, t.Dims...), args.buffer))
		events = append(events, args.done_with_host_buffer)
	}
	// The pinned host memory must outlive every transfer started, also on error.
	for _, ev := range events {
		if err := a.awaitEvent("buffer from host", ErrHostData, ev); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		for _, b := range out {
			_ = b.Close()
		}
		return nil, first
	}
	return out, nil
}

// fill calls t.Fill and checks the elements it wrote.
func fill(t HostTransfer, dst []byte) error {
	if err := t.Fill(dst); err != nil {
		return err
	}
	return CheckElements(shapes.Make(t.DType, t.Dims...), dst)
}

// denseStrides returns the row-major byte strides of dims.
func denseStrides(dims []int, elem int) []int64 {
	s := make([]int64, len(dims))
	acc := int64(elem)
	for d := len(dims) - 1; d >= 0; d-- {
		s[d] = acc
		acc *= int64(dims[d])
	}
	return s
}

// checkTransfer checks a transfer's device, element type, dimensions and that its strides stay
// inside Data.
func (c *Client) checkTransfer(t HostTransfer) error {
	if !Supported(t.DType) {
		return fmt.Errorf("%w: unsupported element type %v", ErrHostData, t.DType)
	}
	if err := c.checkDevice(t.Device); err != nil {
		return err
	}
	if t.Memory != nil {
		if err := c.checkMemory(t.Memory, t.Device); err != nil {
			return err
		}
	}
	n := 1
	for i, d := range t.Dims {
		if d < 0 {
			return fmt.Errorf("%w: dimension %d is %d in %v", ErrHostData, i, d, t.Dims)
		}
		if d != 0 && n > math.MaxInt/d {
			return fmt.Errorf("%w: %v has more elements than an int holds", ErrHostData, t.Dims)
		}
		n *= d
	}
	if n > math.MaxInt/max(1, shapes.ElementBytes(t.DType)) {
		return fmt.Errorf("%w: %v has more bytes than an int holds", ErrHostData, t.Dims)
	}
	if t.Fill != nil {
		if t.Data != nil || t.ByteStrides != nil {
			return fmt.Errorf("%w: a transfer with Fill has no Data or ByteStrides", ErrHostData)
		}
		return nil // its elements are checked once filled
	}
	if t.ByteStrides == nil {
		if nb := hostBytes(t.DType, t.Dims); len(t.Data) != nb {
			return fmt.Errorf("%w: %s needs %d bytes (%d elements), got %d bytes", ErrHostData,
				shapes.Make(t.DType, t.Dims...).Aval(), nb, n, len(t.Data))
		}
		return CheckElements(shapes.Make(t.DType, t.Dims...), t.Data)
	}
	// A strided transfer reads part of a larger array, whose elements its caller checks once
	// (jit.PutBytes does): not once per shard here.
	return checkStrides(shapes.Make(t.DType, t.Dims...), t.ByteStrides, len(t.Data), "reads")
}

// HostCopy is one device-to-host copy for CopyToHostAll: the buffer's bytes go to Dst, row-major
// and dense (Dst exactly the buffer's Shape().Bytes() long), or with DstByteStrides (bytes per
// step of each dimension in Dst), so that a shard lands straight in its place in a larger
// row-major array.
type HostCopy struct {
	Buffer         *Buffer
	Dst            []byte
	DstByteStrides []int64 // nil: dense row-major
}

// CopyToHostAll copies buffers to host memory: it waits for every buffer to be ready and returns
// the first error (an *Error matching ErrExecute when a buffer's execution failed).
//
// On a platform whose device memory is host memory (CPU), with a plugin that shows where a
// buffer's memory is (PJRT_Buffer_UnsafePointer) and buffers in the default dense row-major
// layout, it copies each buffer straight from device memory into its place in Dst, on all cores:
// one copy. Elsewhere it starts every device-to-host transfer at once and waits once; a strided
// Dst then takes a second, host-side copy.
func (c *Client) CopyToHostAll(copies []HostCopy) error {
	for i, hc := range copies {
		if hc.Buffer == nil {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d has a nil buffer", ErrHostData, i)
		}
		if hc.Buffer.dev.client != c {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d: buffer of another client", ErrDevice, i)
		}
		s := hc.Buffer.shape
		if !Supported(s.DType()) {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d: unsupported element type %v", ErrHostData, i, s.DType())
		}
		if hc.DstByteStrides != nil {
			if err := checkStrides(s, hc.DstByteStrides, len(hc.Dst), "writes"); err != nil {
				return fmt.Errorf("pjrt: copy to host: copy %d: %w", i, err)
			}
		} else if len(hc.Dst) != s.Bytes() {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d: %s needs %d bytes, got %d", ErrHostData, i,
				s.Aval(), s.Bytes(), len(hc.Dst))
		}
	}
	done, err := c.use("copy to host")
	if err != nil {
		return err
	}
	defer done()
	// Hold every buffer (once) for the whole copy.
	var held heldSet
	defer held.release()
	var todo []HostCopy // the copies with bytes to move
	for _, hc := range copies {
		st := hc.Buffer.st
		if !held.has(st) {
			if !st.enter() {
				return fmt.Errorf("pjrt: copy to host: buffer %w", st.closedError())
			}
			held.add(st, false, len(copies))
		}
		if hc.Buffer.shape.Bytes() > 0 {
			todo = append(todo, hc)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if c.hostMemory {
		if ok, err := c.copyFromHostMemory(todo); ok || err != nil {
			return err
		}
	}
	return c.copyToHostBuffers(todo)
}

// directReads counts the buffers copyFromHostMemory read in place (a figure for tests).
var directReads atomic.Int64

// copyFromHostMemory copies from device memory that is host memory, when every buffer allows it
// (see CopyToHostAll); it reports false, having done nothing, when one does not.
func (c *Client) copyFromHostMemory(copies []HostCopy) (bool, error) {
	bufs := make([]*Buffer, len(copies))
	for i, hc := range copies {
		bufs[i] = hc.Buffer
	}
	srcs, release, err := c.hostViews("copy %s to host", bufs)
	if srcs == nil || err != nil {
		return false, err
	}
	defer release()
	directReads.Add(int64(len(copies)))
	var tasks []func()
	for i, hc := range copies {
		s := hc.Buffer.shape
		dims, size := s.Dims(), shapes.ElementBytes(s.DType())
		strides := hc.DstByteStrides
		if strides == nil {
			strides = denseStrides(dims, size)
		}
		tasks = newLayout(dims, strides, size).copyTasks(tasks, srcs[i], hc.Dst, false)
	}
	runTasks(tasks)
	return true, nil
}

// hostViews returns the bytes of each buffer where they lie in device memory, and the release
// to call once they are read; nil views when one buffer does not allow it (see CopyToHostAll).
// The caller holds every buffer, each with bytes. op names an operation on a buffer (%s) in
// errors.
func (c *Client) hostViews(op string, bufs []*Buffer) ([][]byte, func(), error) {
	a := c.api
	n := len(bufs)
	cbufs := make([]*C.PJRT_Buffer, n)
	sizes := make([]C.int64_t, n)
	ranks := make([]C.int32_t, n)
	ptrs := make([]unsafe.Pointer, n)
	for i, b := range bufs {
		cbufs[i] = b.st.c
		sizes[i] = C.int64_t(b.shape.Bytes())
		ranks[i] = C.int32_t(b.shape.Rank())
	}
	var ok C.int
	var failed C.size_t
	if err := a.toError(fmt.Sprintf(op, "buffers"), ErrExecute, C.xm_host_views(a.p, &cbufs[0], &sizes[0], &ranks[0],
		C.size_t(n), &ptrs[0], &ok, &failed)); err != nil {
		if e, isPJRT := err.(*Error); isPJRT {
			e.Op = fmt.Sprintf(op, bufs[failed])
		}
		return nil, nil, err
	}
	if ok == 0 {
		return nil, nil, nil
	}
	views := make([][]byte, n)
	for i, b := range bufs {
		views[i] = unsafe.Slice((*byte)(ptrs[i]), b.shape.Bytes())
	}
	return views, func() { C.xm_host_views_release(a.p, &cbufs[0], C.size_t(n)) }, nil
}

// ReadInPlace calls read with the bytes of each buffer (row-major, dense, Shape().Bytes() long)
// where they lie in device memory, without copying them, when that memory is host memory (the
// CPU platform) and every buffer allows it (as for CopyToHostAll's single copy). It reports
// false, having called nothing, when one does not: the caller then copies. It waits for every
// buffer to be ready first, and holds them all until read returns, so that closing one
// meanwhile frees it only then. The slices are valid only until read returns and must not be
// written to. It returns read's error.
func (c *Client) ReadInPlace(bufs []*Buffer, read func(views [][]byte) error) (bool, error) {
	for i, b := range bufs {
		if b == nil {
			return false, fmt.Errorf("pjrt: read in place: %w: buffer %d is nil", ErrHostData, i)
		}
		if b.dev.client != c {
			return false, fmt.Errorf("pjrt: read in place: %w: buffer %d: buffer of another client", ErrDevice, i)
		}
	}
	if !c.hostMemory {
		return false, nil
	}
	done, err := c.use("read in place")
	if err != nil {
		return false, err
	}
	defer done()
	var held heldSet
	defer held.release()
	var todo []int // the buffers with bytes to read
	for i, b := range bufs {
		if !held.has(b.st) {
			if !b.st.enter() {
				return false, fmt.Errorf("pjrt: read %s in place: buffer %w", b, b.st.closedError())
			}
			held.add(b.st, false, len(bufs))
		}
		if b.shape.Bytes() > 0 {
			todo = append(todo, i)
		}
	}
	views := make([][]byte, len(bufs))
	for i := range views {
		views[i] = []byte{}
	}
	if len(todo) > 0 {
		withBytes := make([]*Buffer, len(todo))
		for i, j := range todo {
			withBytes[i] = bufs[j]
		}
		srcs, release, err := c.hostViews("read %s in place", withBytes)
		if srcs == nil || err != nil {
			return false, err
		}
		defer release()
		for i, j := range todo {
			views[j] = srcs[i]
		}
	}
	return true, read(views)
}

// copyToHostBuffers copies with PJRT_Buffer_ToHostBuffer: every copy starts, then all are waited
// for; a strided destination goes through a dense block first.
func (c *Client) copyToHostBuffers(copies []HostCopy) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	a := c.api
	dense := make([][]byte, len(copies))
	var events []*C.PJRT_Event
	var first error
	for i, hc := range copies {
		dst := hc.Dst
		if hc.DstByteStrides != nil {
			dst = make([]byte, hc.Buffer.shape.Bytes())
		}
		dense[i] = dst
		pin.Pin(&dst[0])
		args := C.PJRT_Buffer_ToHostBuffer_Args{src: hc.Buffer.st.c, dst: unsafe.Pointer(&dst[0]), dst_size: C.size_t(len(dst))}
		if err := a.toError("copy to host", ErrHostData, C.xm_Buffer_ToHostBuffer(a.p, &args)); err != nil {
			first = err
			break
		}
		events = append(events, args.event)
	}
	for _, ev := range events {
		if err := a.awaitEvent("copy to host", ErrExecute, ev); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	var tasks []func()
	for i, hc := range copies {
		if hc.DstByteStrides != nil {
			s := hc.Buffer.shape
			tasks = newLayout(s.Dims(), hc.DstByteStrides, shapes.ElementBytes(s.DType())).copyTasks(tasks, dense[i], hc.Dst, false)
		}
	}
	runTasks(tasks)
	return nil
}

// NewErrorBuffer makes a buffer of the given shape on dev that holds an error instead of data
// (PJRT_Client_CreateErrorBuffer): an execution that consumes it fails with that error, which
// then reaches the execution's results. It lets a pipeline stage pass a failure on, and tests
// exercise asynchronous error paths. Plugins before PJRT C API 0.9x lack it: ErrUnimplemented.
func (c *Client) NewErrorBuffer(dev *Device, s Shape, code Code, msg string) (*Buffer, error) {
	a := c.api
	for _, f := range []fn{fnClientCreateErrorBuffer, fnDeviceDefaultMemory} {
		if err := a.need(f); err != nil {
			return nil, err
		}
	}
	if err := c.checkDevice(dev); err != nil {
		return nil, fmt.Errorf("pjrt: error buffer: %w", err)
	}
	if !Supported(s.DType()) {
		return nil, fmt.Errorf("pjrt: error buffer: %w: unsupported element type %v", ErrHostData, s.DType())
	}
	if code == 0 {
		return nil, fmt.Errorf("pjrt: error buffer: %w: an error buffer needs a non-OK code", ErrHostData)
	}
	done, err := c.use("error buffer")
	if err != nil {
		return nil, err
	}
	defer done()
	mem, err := dev.defaultMemoryC()
	if err != nil {
		return nil, fmt.Errorf("pjrt: error buffer: %w", err)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	cdims := make([]C.int64_t, s.Rank()+1)
	for i := range s.Rank() {
		d := s.Dim(i)
		if d < 0 {
			return nil, fmt.Errorf("pjrt: error buffer: %w: dimension %d is %d", ErrHostData, i, d)
		}
		cdims[i] = C.int64_t(d)
	}
	pin.Pin(&cdims[0])
	cmsg := []byte(msg + "\x00")
	pin.Pin(&cmsg[0])
	args := C.PJRT_Client_CreateErrorBuffer_Args{
		client: c.c, error_code: C.PJRT_Error_Code(code),
		error_message: (*C.char)(unsafe.Pointer(&cmsg[0])), error_message_size: C.size_t(len(msg)),
		shape_dims: &cdims[0], shape_num_dims: C.size_t(s.Rank()),
		shape_element_type: C.PJRT_Buffer_Type(s.DType()), memory: mem,
	}
	if err := a.toError("error buffer", ErrHostData, C.xm_Client_CreateErrorBuffer(a.p, &args)); err != nil {
		return nil, err
	}
	return newBuffer(dev, s, args.buffer), nil
}
