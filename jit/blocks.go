package jit

import "github.com/xlamesh/xlamesh/mesh"

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

// insertBlock copies a shard's bytes into block idx of the global array dst.
func insertBlock(dst []byte, shape []int, idx mesh.Index, elem int, shard []byte) {
	blockRuns(shape, idx, elem, func(g, s, n int) { copy(dst[g:g+n], shard[s:s+n]) })
}
