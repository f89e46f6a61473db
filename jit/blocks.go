package jit

import (
	"sync"

	"github.com/xlamesh/xlamesh/mesh"
)

// stagingPools recycles the host buffers that non-contiguous blocks are gathered into before a
// transfer, one pool per size: fresh memory costs a page fault per 4 KiB, which made the copy
// several times slower than the copy itself.
var stagingPools sync.Map // int -> *sync.Pool of *[]byte

func getStaging(size int) *[]byte {
	p, _ := stagingPools.LoadOrStore(size, &sync.Pool{New: func() any { b := make([]byte, size); return &b }})
	return p.(*sync.Pool).Get().(*[]byte)
}

func putStaging(b *[]byte) {
	if p, ok := stagingPools.Load(len(*b)); ok {
		p.(*sync.Pool).Put(b)
	}
}

// Row-major block copies between a global array's bytes and one shard's bytes.

// blockRuns calls run(globalOffset, shardOffset, n) for each contiguous run of n bytes that
// index idx selects from an array of the given shape and element size. Trailing dimensions that
// idx takes whole are merged into one run, so a shard split only on dimension 0 is one copy.
func blockRuns(shape []int, idx mesh.Index, elem int, run func(g, s, n int)) {
	rank := len(shape)
	if rank == 0 {
		run(0, 0, elem)
		return
	}
	// inner is the first dimension from which every later dimension is taken whole.
	inner := rank - 1
	for inner > 0 && idx[inner].Start == 0 && idx[inner].Stop == shape[inner] {
		inner--
	}
	// Bytes per step of each dimension in the global array.
	stride := make([]int, rank)
	stride[rank-1] = elem
	for d := rank - 2; d >= 0; d-- {
		stride[d] = stride[d+1] * shape[d+1]
	}
	runLen := (idx[inner].Stop - idx[inner].Start) * stride[inner]
	if runLen == 0 {
		return
	}
	for d := 0; d < inner; d++ {
		if idx[d].Stop <= idx[d].Start {
			return
		}
	}
	pos := make([]int, inner) // current position in the outer dimensions
	for d := range pos {
		pos[d] = idx[d].Start
	}
	shardOff := 0
	for {
		g := idx[inner].Start * stride[inner]
		for d, p := range pos {
			g += p * stride[d]
		}
		run(g, shardOff, runLen)
		shardOff += runLen
		d := inner - 1
		for ; d >= 0; d-- {
			pos[d]++
			if pos[d] < idx[d].Stop {
				break
			}
			pos[d] = idx[d].Start
		}
		if d < 0 {
			return
		}
	}
}

// contiguousBlock returns the sub-slice of a global array's bytes that block idx occupies when
// that block is one contiguous run (a split of dimension 0 only, or a replicated array), so it
// can be moved without a copy.
func contiguousBlock(global []byte, shape []int, idx mesh.Index, elem, size int) ([]byte, bool) {
	runs, start := 0, 0
	blockRuns(shape, idx, elem, func(g, s, n int) { runs, start = runs+1, g })
	if runs != 1 || size == 0 {
		return nil, false
	}
	return global[start : start+size], true
}

// insertBlock copies a shard's bytes into block idx of the global array dst.
func insertBlock(dst []byte, shape []int, idx mesh.Index, elem int, shard []byte) {
	blockRuns(shape, idx, elem, func(g, s, n int) { copy(dst[g:g+n], shard[s:s+n]) })
}
