package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"fmt"
	"runtime"
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
	api    *api
	c      *C.PJRT_Buffer
	closed bool
}

var liveBuffers atomic.Int64

// LiveBuffers returns the number of buffers created by this package and not yet closed or
// finalized: a leak check for tests.
func LiveBuffers() int64 { return liveBuffers.Load() }

func newBuffer(dev *Device, shape Shape, c *C.PJRT_Buffer) *Buffer {
	st := &bufferState{api: dev.client.api, c: c}
	b := &Buffer{dev: dev, shape: shape, st: st}
	liveBuffers.Add(1)
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
	shape := Shape{DType: dtype, Dims: append([]int(nil), dims...)}
	if !Supported(dtype) {
		return nil, fmt.Errorf("pjrt: buffer from host: %w: unsupported element type %v", ErrHostData, dtype)
	}
	cdims := make([]C.int64_t, len(dims))
	for i, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("pjrt: buffer from host: %w: dimension %d is %d in %v", ErrHostData, i, d, dims)
		}
		cdims[i] = C.int64_t(d)
	}
	if len(data) != shape.Bytes() {
		return nil, fmt.Errorf("pjrt: buffer from host: %w: %s needs %d bytes (%d elements), got %d bytes",
			ErrHostData, shape, shape.Bytes(), shape.Size(), len(data))
	}
	if err := c.checkDevice(dev); err != nil {
		return nil, fmt.Errorf("pjrt: buffer from host: %w", err)
	}
	done, err := c.use("buffer from host")
	if err != nil {
		return nil, err
	}
	defer done()
	if len(data) == 0 {
		data = make([]byte, 1) // PJRT needs a valid pointer even for zero elements
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&data[0])
	args := C.PJRT_Client_BufferFromHostBuffer_Args{
		client:                c.c,
		data:                  unsafe.Pointer(&data[0]),
		_type:                 C.PJRT_Buffer_Type(dtype),
		num_dims:              C.size_t(len(cdims)),
		host_buffer_semantics: C.PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
		device:                dev.c,
	}
	if len(cdims) > 0 {
		pin.Pin(&cdims[0])
		args.dims = &cdims[0]
	}
	a := c.api
	if err := a.toError(fmt.Sprintf("buffer from host to %s", dev), ErrHostData, C.xm_Client_BufferFromHostBuffer(a.p, &args)); err != nil {
		return nil, err
	}
	b := newBuffer(dev, shape, args.buffer)
	// With ImmutableOnlyDuringCall the host data is copied before the call returns; the event
	// says when the device copy is done, and waiting here keeps transfers synchronous.
	if err := a.awaitEvent("buffer from host", ErrHostData, args.done_with_host_buffer); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
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

// CopyToHost copies the buffer's row-major bytes into dst, which must be exactly Shape().Bytes() long.
func (b *Buffer) CopyToHost(dst []byte) error {
	if !Supported(b.shape.DType) {
		return fmt.Errorf("pjrt: copy to host: %w: unsupported element type %v", ErrHostData, b.shape.DType)
	}
	if len(dst) != b.shape.Bytes() {
		return fmt.Errorf("pjrt: copy to host: %w: %s needs %d bytes, got %d", ErrHostData, b.shape, b.shape.Bytes(), len(dst))
	}
	done, err := b.dev.client.use("copy to host")
	if err != nil {
		return err
	}
	defer done()
	b.st.mu.RLock()
	defer b.st.mu.RUnlock()
	if b.st.closed {
		return fmt.Errorf("pjrt: copy to host: buffer %w", ErrClosed)
	}
	if len(dst) == 0 {
		return nil
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&dst[0])
	a := b.st.api
	args := C.PJRT_Buffer_ToHostBuffer_Args{src: b.st.c, dst: unsafe.Pointer(&dst[0]), dst_size: C.size_t(len(dst))}
	if err := a.toError("copy to host", ErrHostData, C.xm_Buffer_ToHostBuffer(a.p, &args)); err != nil {
		return err
	}
	return a.awaitEvent("copy to host", ErrHostData, args.event)
}

// Close frees the device memory. It is idempotent; a closed buffer cannot be used again.
func (b *Buffer) Close() error { return b.st.destroy() }

// IsClosed reports whether Close was called (or the buffer was donated to an execution).
func (b *Buffer) IsClosed() bool {
	b.st.mu.RLock()
	defer b.st.mu.RUnlock()
	return b.st.closed
}
