package pjrt_test

import (
	"math"
	"testing"
	"time"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// stagingBlock is the pool size class of a 4 MiB transfer: 4 MiB itself.
const stagingBlock = 4 << 20

// putAndClose puts a 4 MiB array on device 0 (staged on the CPU platform), closes it, and waits
// until its staging block is no longer live.
func putAndClose(t *testing.T, c *pjrt.Client) {
	t.Helper()
	before := pjrttest.StagingBaseline(t)
	b, err := c.BufferFromBytes(c.Devices()[0], dtypes.Uint8, []int{stagingBlock}, make([]byte, stagingBlock))
	require.NoError(t, err)
	assert.Equal(t, before+1, pjrt.Staging().LiveBlocks)
	require.NoError(t, b.Close())
	pjrttest.WaitStaging(t, before)
}

// waitIdleBytes waits up to limit for Staging().IdleBytes to be want and reports how long it took.
func waitIdleBytes(t *testing.T, want int64, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for pjrt.Staging().IdleBytes != want {
		if time.Since(start) > limit {
			t.Fatalf("after %v: %+v, want %d idle bytes", limit, pjrt.Staging(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// TestStagingIdleReleaseCPUOnly: a closed array's staging block is kept for reuse, then given
// back to the operating system once idle for the staging idle time (2 s by default), and
// SetStagingIdleLimit(0) still gives it back at once. Staging memory backs device buffers on the
// CPU platform only.
func TestStagingIdleReleaseCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	if c.Platform() != "cpu" {
		t.Skip("staging memory backs device buffers on the CPU platform only")
	}
	prev := pjrt.SetStagingIdleTime(time.Hour)
	assert.Equal(t, pjrt.DefaultStagingIdleTime, prev)
	t.Cleanup(func() {
		pjrt.SetStagingIdleTime(pjrt.DefaultStagingIdleTime)
		pjrt.SetStagingIdleLimit(1 << 30)
	})
	pjrt.SetStagingIdleLimit(0) // start from an empty pool
	pjrt.SetStagingIdleLimit(1 << 30)
	require.Equal(t, int64(0), pjrt.Staging().IdleBytes)

	t.Run("kept, then released when the idle time is shortened", func(t *testing.T) {
		putAndClose(t, c)
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, int64(stagingBlock), pjrt.Staging().IdleBytes) // an hour is not up
		assert.Equal(t, time.Hour, pjrt.SetStagingIdleTime(20*time.Millisecond))
		waitIdleBytes(t, 0, 5*time.Second)
	})
	t.Run("idle limit 0 frees at once", func(t *testing.T) {
		pjrt.SetStagingIdleTime(time.Hour)
		putAndClose(t, c)
		assert.Equal(t, int64(stagingBlock), pjrt.Staging().IdleBytes)
		pjrt.SetStagingIdleLimit(0)
		assert.Equal(t, int64(0), pjrt.Staging().IdleBytes)
		pjrt.SetStagingIdleLimit(1 << 30)
	})
	t.Run("reused while idle", func(t *testing.T) {
		pjrt.SetStagingIdleTime(time.Hour)
		putAndClose(t, c)
		putAndClose(t, c) // takes the idle block and gives it back: still one block idle
		assert.Equal(t, int64(stagingBlock), pjrt.Staging().IdleBytes)
	})
	t.Run("default idle time", func(t *testing.T) {
		pjrt.SetStagingIdleLimit(0)
		pjrt.SetStagingIdleLimit(1 << 30)
		pjrt.SetStagingIdleTime(pjrt.DefaultStagingIdleTime)
		start := time.Now()
		putAndClose(t, c)
		took := waitIdleBytes(t, 0, 10*time.Second)
		t.Logf("staging block returned %v after it was freed", took)
		assert.GreaterOrEqual(t, time.Since(start), pjrt.DefaultStagingIdleTime-100*time.Millisecond)
	})
	t.Run("the longest idle time keeps blocks", func(t *testing.T) {
		pjrt.SetStagingIdleTime(math.MaxInt64)
		putAndClose(t, c)
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, int64(stagingBlock), pjrt.Staging().IdleBytes)
		pjrt.SetStagingIdleTime(time.Millisecond)
		waitIdleBytes(t, 0, 5*time.Second)
	})
	t.Run("no idle time keeps blocks", func(t *testing.T) {
		pjrt.SetStagingIdleTime(0)
		putAndClose(t, c)
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, int64(stagingBlock), pjrt.Staging().IdleBytes)
		pjrt.SetStagingIdleTime(time.Millisecond)
		waitIdleBytes(t, 0, 5*time.Second)
	})
}
