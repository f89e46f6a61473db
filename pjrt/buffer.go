package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"
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
	// mu is held shared while the device memory is read (copies, executions) and exclusively
	// while it is destroyed or donated.
	mu     sync.RWMutex
	client *Client
	api    *api
	c      *C.PJRT_Buffer
	closed bool
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
	runtime.AddCleanup(b, func(st *bufferState) { _ = st.destroy() }, st)
	return b
}

func (st *bufferState) destroy() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.markDonated()
	args := C.PJRT_Buffer_Destroy_Args{buffer: st.c}
	return st.api.toError("destroy buffer", ErrClosed, C.xm_Buffer_Destroy(st.api.p, &args))
}

// markDonated records that the buffer's memory is gone (destroyed, or handed to an execution);
// the caller holds st.mu exclusively.
func (st *bufferState) markDonated() {
	if !st.closed {
		st.closed = true
		liveBuffers.Add(-1)
		st.client.untrackBuffer(st)
	}
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
	return Shape{DType: b.shape.DType, Dims: append([]int(nil), b.shape.Dims...)}
}

// DType returns the buffer's element type.
func (b *Buffer) DType() dtypes.DType { return b.shape.DType }

// Dims returns the buffer's dimensions.
func (b *Buffer) Dims() []int { return append([]int(nil), b.shape.Dims...) }

// String returns e.g. "Buffer(f32[4,2] on CpuDevice(id=3))".
func (b *Buffer) String() string { return fmt.Sprintf("Buffer(%s on %s)", b.shape, b.dev) }

// ToHost copies the buffer to a new flat Go slice of its element type ([]float32, []int64, ...;
// []uint16 raw bits for Float16 and BFloat16).
func (b *Buffer) ToHost() (any, error) {
	if !Supported(b.shape.DType) {
		return nil, fmt.Errorf("pjrt: copy to host: %w: unsupported element type %v", ErrHostData, b.shape.DType)
	}
	flat := newFlat(b.shape.DType, b.shape.Size())
	raw, _, _ := HostBytes(flat)
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

// Close frees the device memory. It is idempotent; a closed buffer cannot be used again.
func (b *Buffer) Close() error { return b.st.destroy() }

// IsClosed reports whether Close was called (or the buffer was donated to an execution).
func (b *Buffer) IsClosed() bool {
	b.st.mu.RLock()
	defer b.st.mu.RUnlock()
	return b.st.closed
}

// Wait blocks until the buffer's data is ready (the execution or transfer that produces it has
// finished) and returns that work's error: an *Error matching ErrExecute when the execution
// failed. Like jax.Array.block_until_ready for one shard.
func (b *Buffer) Wait() error {
	if b == nil {
		return fmt.Errorf("pjrt: wait: %w: nil buffer", ErrHostData)
	}
	a := b.st.api
	if !a.has(fnBufferReadyEvent) {
		return nil // the plugin made every result ready before returning it
	}
	b.st.mu.RLock()
	defer b.st.mu.RUnlock()
	if b.st.closed {
		return fmt.Errorf("pjrt: wait: buffer %w", ErrClosed)
	}
	args := C.PJRT_Buffer_ReadyEvent_Args{buffer: b.st.c}
	if err := a.toError("buffer ready event", ErrExecute, C.xm_Buffer_ReadyEvent(a.p, &args)); err != nil {
		return err
	}
	if err := a.awaitEvent("wait", ErrExecute, args.event); err != nil {
		if e, ok := err.(*Error); ok {
			e.Op = fmt.Sprintf("wait for %s", b) // formatted only on failure: Wait is on the hot path
		}
		return err
	}
	return nil
}

// HostTransfer is one host-to-device copy for BuffersFromHost: Data holds the array with
// element type DType and dimensions Dims, laid out row-major, or with the given ByteStrides (bytes
// per step of each dimension, so that a block of a larger host array can be sent in place).
type HostTransfer struct {
	Device      *Device
	DType       dtypes.DType
	Dims        []int
	Data        []byte
	ByteStrides []int64 // nil: dense row-major
}

// BuffersFromHost starts every transfer, then waits for all of them: the plugin copies the
// shards concurrently, and no host data is staged. The host memory is only read during the call;
// the caller may change it once BuffersFromHost returns. On error no buffer is left open.
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
	var pin runtime.Pinner
	defer pin.Unpin()
	a := c.api
	out := make([]*Buffer, 0, len(ts))
	events := make([]*C.PJRT_Event, 0, len(ts))
	var first error
	for _, t := range ts {
		data := t.Data
		if len(data) == 0 {
			data = make([]byte, 1) // PJRT needs a valid pointer even for zero elements
		}
		pin.Pin(&data[0])
		cdims := make([]C.int64_t, len(t.Dims)+len(t.ByteStrides)+1)
		for i, d := range t.Dims {
			cdims[i] = C.int64_t(d)
		}
		for i, s := range t.ByteStrides {
			cdims[len(t.Dims)+i] = C.int64_t(s)
		}
		pin.Pin(&cdims[0])
		args := C.PJRT_Client_BufferFromHostBuffer_Args{
			client:                c.c,
			data:                  unsafe.Pointer(&data[0]),
			_type:                 C.PJRT_Buffer_Type(t.DType),
			dims:                  &cdims[0],
			num_dims:              C.size_t(len(t.Dims)),
			host_buffer_semantics: C.PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
			device:                t.Device.c,
		}
		if len(t.ByteStrides) > 0 {
			args.byte_strides = &cdims[len(t.Dims)]
			args.num_byte_strides = C.size_t(len(t.ByteStrides))
		}
		if err := a.toError(fmt.Sprintf("buffer from host to %s", t.Device), ErrHostData, C.xm_Client_BufferFromHostBuffer(a.p, &args)); err != nil {
			first = err
			break
		}
		out = append(out, newBuffer(t.Device, Shape{DType: t.DType, Dims: slices.Clone(t.Dims)}, args.buffer))
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

// checkTransfer checks a transfer's device, element type, dimensions and that its strides stay
// inside Data.
func (c *Client) checkTransfer(t HostTransfer) error {
	if !Supported(t.DType) {
		return fmt.Errorf("%w: unsupported element type %v", ErrHostData, t.DType)
	}
	if err := c.checkDevice(t.Device); err != nil {
		return err
	}
	shape := Shape{DType: t.DType, Dims: t.Dims}
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
	if t.ByteStrides == nil {
		if len(t.Data) != shape.Bytes() {
			return fmt.Errorf("%w: %s needs %d bytes (%d elements), got %d bytes", ErrHostData, shape, shape.Bytes(), n, len(t.Data))
		}
		return nil
	}
	if len(t.ByteStrides) != len(t.Dims) {
		return fmt.Errorf("%w: %d byte strides for %d dimensions", ErrHostData, len(t.ByteStrides), len(t.Dims))
	}
	if n == 0 {
		return nil
	}
	// The last byte read is at sum((dim-1)*stride) + element size; strides are non-negative here,
	// and every step is checked against overflow (a wrapped sum would let the plugin read past
	// the data).
	end := int64(t.DType.Size())
	for i, d := range t.Dims {
		st := t.ByteStrides[i]
		if st < 0 {
			return fmt.Errorf("%w: negative byte stride %d for dimension %d", ErrHostData, st, i)
		}
		if st != 0 && int64(d-1) > (math.MaxInt64-end)/st {
			return fmt.Errorf("%w: %s with byte strides %v reaches past any host array", ErrHostData, shape, t.ByteStrides)
		}
		end += int64(d-1) * st
	}
	if end > int64(len(t.Data)) {
		return fmt.Errorf("%w: %s with byte strides %v reads %d bytes, got %d", ErrHostData, shape, t.ByteStrides, end, len(t.Data))
	}
	return nil
}

// HostCopy is one device-to-host copy for CopyToHostAll: the buffer's row-major bytes go to Dst,
// which must be exactly the buffer's Shape().Bytes() long.
type HostCopy struct {
	Buffer *Buffer
	Dst    []byte
}

// CopyToHostAll starts every copy, then waits for all of them, and returns the first error (an
// *Error matching ErrExecute when a buffer's execution failed).
func (c *Client) CopyToHostAll(copies []HostCopy) error {
	for i, hc := range copies {
		if hc.Buffer == nil {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d has a nil buffer", ErrHostData, i)
		}
		if hc.Buffer.dev.client != c {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d: buffer of another client", ErrDevice, i)
		}
		if !Supported(hc.Buffer.shape.DType) {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d: unsupported element type %v", ErrHostData, i, hc.Buffer.shape.DType)
		}
		if len(hc.Dst) != hc.Buffer.shape.Bytes() {
			return fmt.Errorf("pjrt: copy to host: %w: copy %d: %s needs %d bytes, got %d", ErrHostData, i,
				hc.Buffer.shape, hc.Buffer.shape.Bytes(), len(hc.Dst))
		}
	}
	done, err := c.use("copy to host")
	if err != nil {
		return err
	}
	defer done()
	var pin runtime.Pinner
	defer pin.Unpin()
	a := c.api
	var events []*C.PJRT_Event
	var first error
	for _, hc := range copies {
		st := hc.Buffer.st
		st.mu.RLock()
		defer st.mu.RUnlock()
		if st.closed {
			first = fmt.Errorf("pjrt: copy to host: buffer %w", ErrClosed)
			break
		}
		if len(hc.Dst) == 0 {
			continue
		}
		pin.Pin(&hc.Dst[0])
		args := C.PJRT_Buffer_ToHostBuffer_Args{src: st.c, dst: unsafe.Pointer(&hc.Dst[0]), dst_size: C.size_t(len(hc.Dst))}
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
	return first
}

// NewErrorBuffer makes a buffer of the given shape on dev that holds an error instead of data
// (PJRT_Client_CreateErrorBuffer): an execution that consumes it fails with that error, which
// then reaches the execution's results. It lets a pipeline stage pass a failure on, and tests
// exercise asynchronous error paths. Plugins before PJRT C API 0.9x lack it: ErrUnimplemented.
func (c *Client) NewErrorBuffer(dev *Device, shape Shape, code Code, msg string) (*Buffer, error) {
	a := c.api
	for _, f := range []fn{fnClientCreateErrorBuffer, fnDeviceDefaultMemory} {
		if err := a.need(f); err != nil {
			return nil, err
		}
	}
	if err := c.checkDevice(dev); err != nil {
		return nil, fmt.Errorf("pjrt: error buffer: %w", err)
	}
	if !Supported(shape.DType) {
		return nil, fmt.Errorf("pjrt: error buffer: %w: unsupported element type %v", ErrHostData, shape.DType)
	}
	if code == 0 {
		return nil, fmt.Errorf("pjrt: error buffer: %w: an error buffer needs a non-OK code", ErrHostData)
	}
	done, err := c.use("error buffer")
	if err != nil {
		return nil, err
	}
	defer done()
	dm := C.PJRT_Device_DefaultMemory_Args{device: dev.c}
	if err := a.toError("default memory", ErrDevice, C.xm_Device_DefaultMemory(a.p, &dm)); err != nil {
		return nil, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	cdims := make([]C.int64_t, len(shape.Dims)+1)
	for i, d := range shape.Dims {
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
		shape_dims: &cdims[0], shape_num_dims: C.size_t(len(shape.Dims)),
		shape_element_type: C.PJRT_Buffer_Type(shape.DType), memory: dm.memory,
	}
	if err := a.toError("error buffer", ErrHostData, C.xm_Client_CreateErrorBuffer(a.p, &args)); err != nil {
		return nil, err
	}
	return newBuffer(dev, Shape{DType: shape.DType, Dims: slices.Clone(shape.Dims)}, args.buffer), nil
}
