package pjrt_test

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// block is a rectangular block [r0, r0+rows) x [c0, c0+cols) of a row-major host matrix.
type block struct{ r0, rows, c0, cols int }

// TestTransferRoutes moves blocks of a host matrix to devices in place (byte strides), whole
// arrays densely and a transposed view, then reads them straight back into their places in a
// host matrix (DstByteStrides) and densely, with exact values: on the host-memory route (staging
// memory the device buffers live in, direct reads of device memory) and on the generic one (the
// plugin's strided copy, ToHostBuffer and a host-side scatter). The blocks of the large matrix are
// big enough for the dense staging route too. Closing the buffers gives every staging block back.
// The client is one of its own, of 2 devices, or 1 where pjrttest.Client has 1.
func TestTransferRoutes(t *testing.T) {
	c, err := pjrttest.Open(min(2, len(pjrttest.Client(t).Devices())))
	require.NoError(t, err)
	defer c.Close()
	for _, size := range []struct{ rows, cols int }{{6, 10}, {300, 500}} {
		for _, hostMemory := range []bool{true, false} {
			t.Run(fmt.Sprintf("%dx%d/hostMemory=%v", size.rows, size.cols, hostMemory), func(t *testing.T) {
				pjrt.SetHostMemory(c, hostMemory)
				defer pjrt.SetHostMemory(c, true)
				before, live, direct := pjrttest.StagingBaseline(t), pjrt.LiveBuffers(), pjrt.DirectReads()
				rows, cols := size.rows, size.cols
				host := make([]float32, rows*cols)
				for i := range host {
					host[i] = float32(i) + 0.5
				}
				raw, _, err := pjrt.HostBytes(host)
				require.NoError(t, err)
				strides := []int64{int64(cols * 4), 4}
				blocks := []block{{0, rows / 2, 0, cols / 2}, {rows / 2, rows / 2, cols / 2, cols / 2},
					{1, rows - 2, 3, 1}, {0, rows, 0, cols}, {rows / 3, rows / 3, 0, cols}}
				var ts []pjrt.HostTransfer
				for i, b := range blocks {
					ts = append(ts, pjrt.HostTransfer{Device: deviceAt(c, i), DType: dtypes.Float32, Dims: []int{b.rows, b.cols},
						Data: raw[(b.r0*cols+b.c0)*4:], ByteStrides: strides})
				}
				// The whole matrix densely, and transposed (element [j][i] is host[i][j]).
				ts = append(ts,
					pjrt.HostTransfer{Device: deviceAt(c, 1), DType: dtypes.Float32, Dims: []int{rows, cols}, Data: raw},
					pjrt.HostTransfer{Device: deviceAt(c, 0), DType: dtypes.Float32, Dims: []int{cols, rows}, Data: raw, ByteStrides: []int64{4, int64(cols * 4)}})
				bs, err := c.BuffersFromHost(ts)
				require.NoError(t, err)
				if hostMemory && c.Platform() == "cpu" {
					// Every strided transfer (the blocks and the transposed view) and a dense one of
					// 64 KiB or more live in staging blocks.
					staged := int64(len(blocks) + 1)
					if rows*cols*4 >= 64<<10 {
						staged++
					}
					assert.Equal(t, before+staged, pjrt.Staging().LiveBlocks)
				}
				// Each block, read into its place in a zeroed matrix, restores exactly that block.
				for i, b := range blocks {
					dst := make([]float32, rows*cols)
					draw, _, _ := pjrt.HostBytes(dst)
					require.NoError(t, c.CopyToHostAll([]pjrt.HostCopy{{Buffer: bs[i], Dst: draw[(b.r0*cols+b.c0)*4:], DstByteStrides: strides}}))
					want := make([]float32, rows*cols)
					for r := b.r0; r < b.r0+b.rows; r++ {
						for col := b.c0; col < b.c0+b.cols; col++ {
							want[r*cols+col] = host[r*cols+col]
						}
					}
					require.Equal(t, want, dst, "block %d", i)
					flat, err := bs[i].ToHost()
					require.NoError(t, err)
					var dense []float32
					for r := b.r0; r < b.r0+b.rows; r++ {
						dense = append(dense, host[r*cols+b.c0:r*cols+b.c0+b.cols]...)
					}
					require.Equal(t, dense, flat, "block %d densely", i)
				}
				// The quarter blocks together, in one call, rebuild their half of the matrix.
				all := make([]float32, rows*cols)
				araw, _, _ := pjrt.HostBytes(all)
				require.NoError(t, c.CopyToHostAll([]pjrt.HostCopy{
					{Buffer: bs[0], Dst: araw, DstByteStrides: strides},
					{Buffer: bs[1], Dst: araw[((rows/2)*cols+cols/2)*4:], DstByteStrides: strides},
					{Buffer: bs[5], Dst: make([]byte, rows*cols*4)},
				}))
				got, err := bs[5].ToHost()
				require.NoError(t, err)
				require.Equal(t, host, got, "dense whole matrix")
				tr, err := bs[6].ToHost()
				require.NoError(t, err)
				for i := range rows {
					for j := range cols {
						require.Equal(t, host[i*cols+j], tr.([]float32)[j*rows+i], "transposed [%d][%d]", j, i)
					}
				}
				if hostMemory && c.Platform() == "cpu" {
					// Every read above was a direct one: 2 per block, 3 in the call of three, 1 for
					// each whole-matrix ToHost.
					assert.Equal(t, direct+int64(2*len(blocks)+3+2), pjrt.DirectReads())
				} else {
					assert.Equal(t, direct, pjrt.DirectReads())
				}
				for _, b := range bs {
					require.NoError(t, b.Close())
				}
				pjrttest.WaitStaging(t, before)
				assert.Equal(t, live, pjrt.LiveBuffers())
			})
		}
	}
	// Buffers left open are destroyed by Client.Close, which gives their staging blocks back.
	before := pjrttest.StagingBaseline(t)
	raw := make([]byte, 1<<20)
	_, err = c.BuffersFromHost([]pjrt.HostTransfer{{Device: deviceAt(c, 0), DType: dtypes.Uint8, Dims: []int{1 << 20}, Data: raw}})
	require.NoError(t, err)
	if c.Platform() == "cpu" {
		assert.Equal(t, before+1, pjrt.Staging().LiveBlocks)
	}
	require.NoError(t, c.Close())
	pjrttest.WaitStaging(t, before)
}

// TestCopyToHostStrideErrors: destinations that strides make too small are refused before any
// copy.
func TestCopyToHostStrideErrors(t *testing.T) {
	c := pjrttest.Client(t)
	b, err := c.BufferFromHost(c.AddressableDevices()[0], []int32{1, 2, 3, 4}, []int{2, 2})
	require.NoError(t, err)
	defer b.Close()
	err = c.CopyToHostAll([]pjrt.HostCopy{{Buffer: b, Dst: make([]byte, 20), DstByteStrides: []int64{16, 4}}})
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	assert.ErrorContains(t, err, "writes 24 bytes, got 20")
	err = c.CopyToHostAll([]pjrt.HostCopy{{Buffer: b, Dst: make([]byte, 64), DstByteStrides: []int64{16}}})
	assert.ErrorContains(t, err, "1 byte strides for 2 dimensions")
	err = c.CopyToHostAll([]pjrt.HostCopy{{Buffer: b, Dst: make([]byte, 64), DstByteStrides: []int64{-16, 4}}})
	assert.ErrorContains(t, err, "negative byte stride -16 for dimension 0")
}
