package pjrt_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestReadInPlace reads buffers where they lie on the CPU plugin: exact bytes, an empty buffer
// and a repeated one among them; a buffer closed while it is read stays readable and is freed
// when the read ends. Without host memory (on a GPU, or turned off) nothing is read and the
// caller is told to copy.
func TestReadInPlace(t *testing.T) {
	c := pjrttest.Client(t)
	live := pjrt.LiveBuffers()
	a, err := c.BufferFromHost(deviceAt(c, 0), []float32{1.5, -2, 3.25, 4, 5, 6}, []int{2, 3})
	require.NoError(t, err)
	b, err := c.BufferFromHost(deviceAt(c, 1), []int32{7, -8}, []int{2})
	require.NoError(t, err)
	empty, err := c.BufferFromHost(deviceAt(c, 0), []float32{}, []int{0, 4})
	require.NoError(t, err)
	wantA, _, err := pjrt.HostBytes([]float32{1.5, -2, 3.25, 4, 5, 6})
	require.NoError(t, err)
	wantB, _, err := pjrt.HostBytes([]int32{7, -8})
	require.NoError(t, err)

	if c.Platform() != "cpu" {
		ok, err := c.ReadInPlace([]*pjrt.Buffer{a, b}, func([][]byte) error { t.Fatal("read device memory in place"); return nil })
		require.NoError(t, err)
		assert.False(t, ok)
		for _, x := range []*pjrt.Buffer{a, b, empty} {
			require.NoError(t, x.Close())
		}
		assert.Equal(t, live, pjrt.LiveBuffers())
		return
	}
	calls := 0
	ok, err := c.ReadInPlace([]*pjrt.Buffer{a, empty, b, a}, func(views [][]byte) error {
		calls++
		require.Len(t, views, 4)
		assert.Equal(t, wantA, views[0])
		assert.Equal(t, []byte{}, views[1])
		assert.Equal(t, wantB, views[2])
		assert.Equal(t, wantA, views[3])
		require.NoError(t, b.Close()) // held: freed when the read ends
		assert.Equal(t, live+3, pjrt.LiveBuffers())
		assert.Equal(t, wantB, views[2])
		return nil
	})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 1, calls)
	assert.Equal(t, live+2, pjrt.LiveBuffers(), "the buffer closed during the read is freed after it")

	// read's error comes back; so does a closed buffer's, before any read.
	boom := errors.New("boom")
	ok, err = c.ReadInPlace([]*pjrt.Buffer{a}, func([][]byte) error { return boom })
	assert.True(t, ok)
	assert.ErrorIs(t, err, boom)
	_, err = c.ReadInPlace([]*pjrt.Buffer{a, b}, func([][]byte) error { t.Fatal("read a closed buffer"); return nil })
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	_, err = c.ReadInPlace([]*pjrt.Buffer{nil}, func([][]byte) error { t.Fatal("read a nil buffer"); return nil })
	assert.ErrorIs(t, err, pjrt.ErrHostData)

	pjrt.SetHostMemory(c, false)
	ok, err = c.ReadInPlace([]*pjrt.Buffer{a}, func([][]byte) error { t.Fatal("read without host memory"); return nil })
	pjrt.SetHostMemory(c, true)
	require.NoError(t, err)
	assert.False(t, ok)

	require.NoError(t, a.Close())
	require.NoError(t, empty.Close())
	assert.Equal(t, live, pjrt.LiveBuffers())
}

// TestReadInPlaceOtherClient refuses a buffer of another client.
func TestReadInPlaceOtherClient(t *testing.T) {
	c := pjrttest.Client(t)
	other, err := pjrttest.Open(1)
	require.NoError(t, err)
	defer other.Close()
	b, err := other.BufferFromHost(other.AddressableDevices()[0], []float32{1}, []int{1})
	require.NoError(t, err)
	defer b.Close()
	_, err = c.ReadInPlace([]*pjrt.Buffer{b}, func([][]byte) error { t.Fatal("read another client's buffer"); return nil })
	assert.ErrorIs(t, err, pjrt.ErrDevice)
}
