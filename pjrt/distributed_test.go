package pjrt_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/kv"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// memJob is one process of a job whose processes are goroutines of this test sharing a store.
type memJob struct {
	*pjrttest.MemoryStore
	id, n   int
	timeout time.Duration
}

var _ kv.Distributed = memJob{}

func (j memJob) ProcessID() int             { return j.id }
func (j memJob) NumProcesses() int          { return j.n }
func (j memJob) InitTimeout() time.Duration { return j.timeout }

// openJob opens the clients of an n-process job on plugin, one goroutine per process, each with
// perProcess CPU devices, and returns them with their errors (by process id).
func openJob(t *testing.T, plugin string, n, perProcess int) ([]*pjrt.Client, []error) {
	t.Helper()
	store := &pjrttest.MemoryStore{}
	clients := make([]*pjrt.Client, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Go(func() {
			clients[p], errs[p] = pjrt.Open(pjrt.WithPlugin(plugin), pjrt.WithCPUDeviceCount(perProcess),
				pjrt.WithDistributed(memJob{MemoryStore: store, id: p, n: n, timeout: 10 * time.Second}))
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	})
	return clients, errs
}

// TestDistributedCPUClients forms 2- and 4-process jobs on the CPU plugin that accepts a process
// id. Every client lists the job's devices, process by process, and can address only its own; a
// buffer or an executable cannot be put on another process's device.
func TestDistributedCPUClients(t *testing.T) {
	pjrttest.CacheDir() // the checkout's .cache, where make setup installs the plugins
	plugin, err := pjrt.MultiProcessCPUPlugin()
	require.NoError(t, err)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d processes", n), func(t *testing.T) {
			clients, errs := openJob(t, plugin, n, 2)
			var firstIDs []int
			for p, c := range clients {
				require.NoError(t, errs[p], "process %d", p)
				assert.Equal(t, p, c.ProcessIndex())
				all, local := c.Devices(), c.AddressableDevices()
				require.Len(t, all, 2*n)
				require.Len(t, local, 2)
				var ids []int
				for i, d := range all {
					ids = append(ids, d.ID())
					assert.Equal(t, i/2, d.ProcessIndex(), "device %s", d)
					assert.Equal(t, i/2 == p, d.IsAddressable(), "device %s seen from process %d", d, p)
					assert.Equal(t, "cpu", d.Platform())
					got, err := c.Device(d.ID())
					require.NoError(t, err)
					assert.Same(t, d, got)
				}
				assert.Equal(t, local, all[2*p:2*p+2])
				if p == 0 {
					firstIDs = ids
				}
				assert.Equal(t, firstIDs, ids, "processes agree on the device list")

				remote := all[(2*p+2)%len(all)]
				_, err := c.BufferFromBytes(remote, dtypes.Float32, []int{1}, make([]byte, 4))
				assert.ErrorIs(t, err, pjrt.ErrDevice)
				_, err = remote.MemoryStats()
				assert.ErrorIs(t, err, pjrt.ErrDevice)
				_, err = c.Compile(`module { func.func @main(%x: tensor<f32>) -> tensor<f32> { return %x : tensor<f32> } }`,
					pjrt.CompileOptions{DeviceAssignment: []int{remote.ID()}})
				assert.ErrorIs(t, err, pjrt.ErrDevice)
			}
		})
	}
}

// TestDistributedIgnoredProcessID: the API 0.81 CPU plugin (xla-cpu-pjrt 0.0.1) takes node_id and
// num_nodes without a word and ignores them; every process finds out from what the others
// published, and all fail alike.
func TestDistributedIgnoredProcessID(t *testing.T) {
	plugin, err := pjrttest.CPUPlugin("cpu-0.81") // whatever XLAMESH_PJRT_PLUGIN says
	require.NoError(t, err)
	_, errs := openJob(t, plugin, 2, 2)
	for p, err := range errs {
		require.ErrorIs(t, err, pjrt.ErrDistributed, "process %d", p)
		assert.ErrorContains(t, err, "ignores the process id: the client of process 1 reports process index 0")
	}
}

// TestDistributedErrors: a bad process id, and a process whose peers never come (the store's
// timeout reaches Open's caller).
func TestDistributedErrors(t *testing.T) {
	pjrttest.CacheDir()
	for _, j := range []memJob{{id: 2, n: 2}, {id: -1, n: 2}, {id: 0, n: 0}} {
		_, err := pjrt.Open(pjrt.WithDistributed(j))
		assert.ErrorIs(t, err, pjrt.ErrDistributed, "process %d of %d", j.id, j.n)
	}
	plugin, err := pjrt.MultiProcessCPUPlugin()
	require.NoError(t, err)
	start := time.Now()
	_, err = pjrt.Open(pjrt.WithPlugin(plugin), pjrt.WithCPUDeviceCount(1),
		pjrt.WithDistributed(memJob{MemoryStore: &pjrttest.MemoryStore{}, id: 0, n: 2, timeout: 200 * time.Millisecond}))
	require.ErrorIs(t, err, kv.ErrKeyNotFound)
	assert.ErrorContains(t, err, "waiting for the devices of process 1")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestKeyValueBridgeConcurrent calls the C trampolines from 8 C threads at once, as a plugin's
// threads do: puts, blocking gets that wait for another thread, try-gets of missing keys
// (NotFound), a get that times out (DeadlineExceeded), every value freed through its deleter.
func TestKeyValueBridgeConcurrent(t *testing.T) {
	store := &pjrttest.MemoryStore{}
	require.NoError(t, pjrt.KVBridgeConcurrent(store, 8, 50, 10*time.Second))
	assert.Equal(t, 8*50, store.Len())
	v, err := store.TryGet("thread/3/round/7")
	require.NoError(t, err)
	assert.Equal(t, []byte("value of thread 3 in round 7"), v)
}
