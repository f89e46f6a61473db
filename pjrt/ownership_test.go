package pjrt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestCopyToHostAllOtherClient: a client copies only its own buffers; another client's buffer,
// alone or among its own, is refused with ErrDevice before anything is copied.
func TestCopyToHostAllOtherClient(t *testing.T) {
	c := pjrttest.Client(t)
	other, err := pjrttest.Open(min(4, len(c.Devices()))) // a client of its own: 4 devices on 8
	require.NoError(t, err)
	defer other.Close()
	mine, err := c.BufferFromHost(c.AddressableDevices()[0], []float32{1, 2}, []int{2})
	require.NoError(t, err)
	defer mine.Close()
	theirs, err := other.BufferFromHost(other.AddressableDevices()[0], []float32{3, 4}, []int{2})
	require.NoError(t, err)
	defer theirs.Close()

	dst := make([]byte, 8)
	err = c.CopyToHostAll([]pjrt.HostCopy{{Buffer: theirs, Dst: dst}})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.EqualError(t, err, "pjrt: copy to host: invalid device: copy 0: buffer of another client")

	mineDst := make([]byte, 8)
	err = c.CopyToHostAll([]pjrt.HostCopy{{Buffer: mine, Dst: mineDst}, {Buffer: theirs, Dst: dst}})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "copy 1: buffer of another client")
	assert.Equal(t, make([]byte, 8), dst, "nothing copied")

	require.NoError(t, other.CopyToHostAll([]pjrt.HostCopy{{Buffer: theirs, Dst: dst}}), "its own client copies it")
	assert.Equal(t, []byte{0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40}, dst)
}
