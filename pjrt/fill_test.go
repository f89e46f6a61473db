package pjrt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestFillTransfers makes buffers whose bytes a Fill writes, beside a plain transfer: small and
// staged sizes, on the host-memory route (Fill writes the staging memory the buffer uses) and
// the generic one, with exact values read back (on a GPU: the generic one). A failing Fill, or
// one writing an element XLA cannot hold, fails the call with no buffer or staging block left;
// Fill with Data is refused.
func TestFillTransfers(t *testing.T) {
	c, err := pjrttest.Open(min(2, len(pjrttest.Client(t).Devices())))
	require.NoError(t, err)
	defer c.Close()
	routes := []bool{true, false}
	if c.Platform() != "cpu" {
		routes = []bool{false}
	}
	for _, hostMemory := range routes {
		t.Run(fmt.Sprintf("hostMemory=%v", hostMemory), func(t *testing.T) {
			if c.Platform() == "cpu" {
				pjrt.SetHostMemory(c, hostMemory)
				defer pjrt.SetHostMemory(c, true)
			}
			before, live := pjrttest.StagingBaseline(t), pjrt.LiveBuffers()
			fillWith := func(n int, k float32) func([]byte) error {
				return func(dst []byte) error {
					want := make([]float32, n)
					for i := range want {
						want[i] = float32(i)*k + 0.5
					}
					raw, _, err := pjrt.HostBytes(want)
					if err == nil && copy(dst, raw) != len(dst) {
						err = fmt.Errorf("dst has %d bytes, want %d", len(dst), len(raw))
					}
					return err
				}
			}
			big := 300 * 500 // staged on host memory
			ts := []pjrt.HostTransfer{
				{Device: deviceAt(c, 0), DType: dtypes.Float32, Dims: []int{2, 3}, Fill: fillWith(6, 2)},
				{Device: deviceAt(c, 1), DType: dtypes.Float32, Dims: []int{300, 500}, Fill: fillWith(big, -1)},
				{Device: deviceAt(c, 0), DType: dtypes.Float32, Dims: []int{2}, Data: []byte{0, 0, 128, 63, 0, 0, 0, 64}},
			}
			bs, err := c.BuffersFromHost(ts)
			require.NoError(t, err)
			if hostMemory {
				assert.Equal(t, before+1, pjrt.Staging().LiveBlocks, "the large Fill writes a staging block")
			}
			for i, n := range []int{6, big} {
				got, err := bs[i].ToHost()
				require.NoError(t, err)
				want := make([]float32, n)
				for j := range want {
					want[j] = float32(j)*[]float32{2, -1}[i] + 0.5
				}
				assert.Equal(t, want, got, "transfer %d", i)
			}
			got, err := bs[2].ToHost()
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2}, got)
			for _, b := range bs {
				require.NoError(t, b.Close())
			}

			boom := errors.New("boom")
			_, err = c.BuffersFromHost([]pjrt.HostTransfer{ts[0], ts[1],
				{Device: deviceAt(c, 1), DType: dtypes.Float32, Dims: []int{100, 200}, Fill: func([]byte) error { return boom }}})
			assert.ErrorIs(t, err, boom)
			assert.ErrorContains(t, err, "transfer 2")
			_, err = c.BuffersFromHost([]pjrt.HostTransfer{{Device: deviceAt(c, 0), DType: dtypes.S4, Dims: []int{3},
				Fill: func(dst []byte) error { copy(dst, []byte{1, 0x17, 2}); return nil }}})
			assert.ErrorIs(t, err, pjrt.ErrHostData)
			assert.ErrorContains(t, err, "element 1")
			_, err = c.BuffersFromHost([]pjrt.HostTransfer{{Device: deviceAt(c, 0), DType: dtypes.Float32, Dims: []int{1},
				Data: []byte{0, 0, 0, 0}, Fill: fillWith(1, 1)}})
			assert.ErrorIs(t, err, pjrt.ErrHostData)
			assert.Equal(t, live, pjrt.LiveBuffers())
			pjrttest.WaitStaging(t, before)
		})
	}
}
