package pjrt

// #include "xlamesh_pjrt.h"
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// Host-side copies between a dense row-major block and a strided view of a larger host array
// (BuffersFromHost with ByteStrides, CopyToHostAll with DstByteStrides), split into chunks that
// run on all cores, and the staging memory that transfers hand to the plugin.

// StagingStats reports the host staging memory of transfers: blocks handed to the plugin and not
// yet given back (on the CPU platform a device buffer lives in its staging block until it is
// closed), and the bytes kept idle for reuse.
type StagingStats struct {
	LiveBlocks int64 // blocks in use by transfers and device buffers
	LiveBytes  int64 // their bytes
	IdleBytes  int64 // bytes of freed blocks kept for the next transfers of the same size, for at most the staging idle time
}

// Staging returns the current StagingStats. A test that closed every buffer expects LiveBlocks 0.
func Staging() StagingStats {
	var s StagingStats
	var lb, ly, ib C.int64_t
	C.xm_staging_stats(&lb, &ly, &ib)
	s.LiveBlocks, s.LiveBytes, s.IdleBytes = int64(lb), int64(ly), int64(ib)
	return s
}

// SetStagingIdleLimit sets how many bytes of freed staging memory are kept for reuse (1 GiB by
// default) and frees what is kept beyond it; 0 frees all and keeps none. Keeping them spares the
// next transfer of the same size a page fault per 4 KiB, which costs as much as the copy itself.
// Kept memory goes back to the operating system once idle for the staging idle time (see
// SetStagingIdleTime).
func SetStagingIdleLimit(bytes int64) { C.xm_staging_set_idle_limit(C.int64_t(bytes)) }

// DefaultStagingIdleTime is how long freed staging memory is kept for reuse by default.
const DefaultStagingIdleTime = 2 * time.Second

// SetStagingIdleTime sets how long a freed staging block is kept for reuse
// (DefaultStagingIdleTime unless set): a background thread returns blocks idle for longer to the
// operating system, so that a program that put a large array once and closed it does not hold its
// staging memory for the rest of its life (Staging().IdleBytes drops to 0). d <= 0 keeps idle
// blocks until SetStagingIdleLimit drops them. It returns the previous idle time.
func SetStagingIdleTime(d time.Duration) time.Duration {
	return time.Duration(C.xm_staging_set_idle_time(C.int64_t(d)))
}

// stagingMin is the size from which a dense transfer to host-memory devices goes through staging
// memory (one copy into pooled memory, then zero-copy) instead of the plugin's own copy into
// fresh memory. Strided transfers are always staged there.
const stagingMin = 64 << 10

// stagingBlock is host memory from xm_staging_alloc.
type stagingBlock struct {
	p   unsafe.Pointer
	cap C.size_t
}

func allocStaging(size int) (stagingBlock, error) {
	var capacity C.size_t
	p := C.xm_staging_alloc(C.size_t(size), &capacity)
	if p == nil {
		return stagingBlock{}, fmt.Errorf("%w: cannot allocate %d bytes of host staging memory", ErrHostData, size)
	}
	return stagingBlock{p: p, cap: capacity}, nil
}

// bytes views the first n bytes of the block.
func (b stagingBlock) bytes(n int) []byte { return unsafe.Slice((*byte)(b.p), max(n, 1))[:n] }

func (b stagingBlock) free() {
	if b.p != nil {
		C.xm_staging_free(b.p, b.cap)
	}
}

// layout describes how an array of dims with elements of elem bytes lies in strided host memory:
// dimensions from inner on are one contiguous run of run bytes there, as in a dense block.
type layout struct {
	dims    []int
	strides []int64 // strided side
	dense   []int64 // dense row-major strides
	inner   int
	run     int
	bytes   int // dense size
}

func newLayout(dims []int, strides []int64, elem int) layout {
	l := layout{dims: dims, strides: strides, dense: make([]int64, len(dims)), inner: len(dims), run: elem}
	acc := int64(elem)
	for d := len(dims) - 1; d >= 0; d-- {
		l.dense[d] = acc
		acc *= int64(dims[d])
	}
	l.bytes = int(acc)
	// Merge trailing dimensions while the strided side is as dense as the dense side (the stride
	// of a dimension of size 1 never matters).
	for l.inner > 0 && (strides[l.inner-1] == int64(l.run) || dims[l.inner-1] == 1) {
		l.run *= dims[l.inner-1]
		l.inner--
	}
	return l
}

// isDense reports whether the strided side is the dense layout (strides equal or irrelevant).
func (l layout) isDense() bool { return l.inner == 0 }

// copyRows copies rows [lo, hi) of dimension 0 (for inner == 0: bytes [lo, hi)) between the dense
// block and the strided memory; toDense says which way.
func (l layout) copyRows(dense, strided []byte, toDense bool, lo, hi int) {
	if l.inner == 0 {
		if toDense {
			copy(dense[lo:hi], strided[lo:hi])
		} else {
			copy(strided[lo:hi], dense[lo:hi])
		}
		return
	}
	pos := make([]int, l.inner)
	pos[0] = lo
	for {
		var s, d int64
		for i, p := range pos {
			s += int64(p) * l.strides[i]
			d += int64(p) * l.dense[i]
		}
		if toDense {
			copy(dense[d:d+int64(l.run)], strided[s:s+int64(l.run)])
		} else {
			copy(strided[s:s+int64(l.run)], dense[d:d+int64(l.run)])
		}
		i := l.inner - 1
		for ; i >= 0; i-- {
			pos[i]++
			limit := l.dims[i]
			if i == 0 {
				limit = hi
			}
			if pos[i] < limit {
				break
			}
			if i > 0 {
				pos[i] = 0
			}
		}
		if i < 0 {
			return
		}
	}
}

// copyChunk is the size of one task of a parallel copy.
const copyChunk = 2 << 20

// copyTasks appends the tasks that copy the whole array between dense and strided memory.
func (l layout) copyTasks(tasks []func(), dense, strided []byte, toDense bool) []func() {
	if l.bytes == 0 {
		return tasks
	}
	if l.inner == 0 {
		for lo := 0; lo < l.bytes; lo += copyChunk {
			hi := min(lo+copyChunk, l.bytes)
			tasks = append(tasks, func() { l.copyRows(dense, strided, toDense, lo, hi) })
		}
		return tasks
	}
	rowBytes := l.bytes / l.dims[0]
	step := max(1, copyChunk/max(rowBytes, 1))
	for lo := 0; lo < l.dims[0]; lo += step {
		hi := min(lo+step, l.dims[0])
		tasks = append(tasks, func() { l.copyRows(dense, strided, toDense, lo, hi) })
	}
	return tasks
}

// runTasks runs tasks on up to GOMAXPROCS goroutines (inline when there is one task) and
// returns when all are done.
func runTasks(tasks []func()) {
	workers := min(runtime.GOMAXPROCS(0), len(tasks))
	if workers <= 1 {
		for _, f := range tasks {
			f()
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for i := next.Add(1) - 1; i < int64(len(tasks)); i = next.Add(1) - 1 {
			tasks[i]()
		}
	}
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// hostBytes returns the bytes of a dense array of element type d and dimensions dims (0 for an
// element type that is not Supported), like Shape.Bytes without building a Shape.
func hostBytes(d dtypes.DType, dims []int) int {
	if !Supported(d) {
		return 0
	}
	n := shapes.ElementBytes(d)
	for _, x := range dims {
		n *= x
	}
	return n
}

// checkStrides checks that an array of shape with the given byte strides lies inside n bytes:
// one stride per dimension, none negative, no overflow. verb ("reads", "writes") words the error.
func checkStrides(s Shape, strides []int64, n int, verb string) error {
	if len(strides) != s.Rank() {
		return fmt.Errorf("%w: %d byte strides for %d dimensions", ErrHostData, len(strides), s.Rank())
	}
	for i := range s.Rank() {
		if s.Dim(i) == 0 {
			return nil
		}
	}
	// The last byte touched is at sum((dim-1)*stride) + element size; every step is checked
	// against overflow (a wrapped sum would let a copy run past the memory).
	end := int64(shapes.ElementBytes(s.DType()))
	for i := range s.Rank() {
		d := s.Dim(i)
		st := strides[i]
		if st < 0 {
			return fmt.Errorf("%w: negative byte stride %d for dimension %d", ErrHostData, st, i)
		}
		if st != 0 && int64(d-1) > (math.MaxInt64-end)/st {
			return fmt.Errorf("%w: %s with byte strides %v reaches past any host array", ErrHostData, s.Aval(), strides)
		}
		end += int64(d-1) * st
	}
	if end > int64(n) {
		return fmt.Errorf("%w: %s with byte strides %v %s %d bytes, got %d", ErrHostData, s.Aval(), strides, verb, end, n)
	}
	return nil
}
