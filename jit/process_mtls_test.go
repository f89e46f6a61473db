package jit_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestProcessAllgatherTLS: a 2-process job (goroutines here) over real etcd with mutual TLS on
// loopback opens its CPU clients through the job's store, and ProcessAllgather brings back the
// exact global array on both, through the TLS store in several chunks.
func TestProcessAllgatherTLS(t *testing.T) {
	checkNoLeak(t)
	if _, err := pjrttest.CacheDir(); err != nil {
		t.Fatal(err)
	}
	plugin, err := pjrt.MultiProcessCPUPlugin()
	require.NoError(t, err)
	creds, err := distributed.NewCredentials(t.TempDir(), 2, []string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	cfg := distributed.Config{JobID: "gathertls", NumProcesses: 2, Coordinator: addr,
		InitTimeout: 30 * time.Second, HeartbeatTimeout: 5 * time.Second, BarrierTimeout: 30 * time.Second, ShutdownTimeout: 30 * time.Second}

	const cols = 3 << 17 // each shard: 1 x 3*2^17 float32 = 1.5 MiB, three chunks
	global := arange[float32](4 * cols)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Go(func() {
			errs[p] = func() error {
				c := creds[p].Apply(cfg)
				c.ProcessID = p
				job, err := distributed.Join(context.Background(), c)
				if err != nil {
					return err
				}
				defer job.Close()
				client, err := pjrt.Open(pjrt.WithPlugin(plugin), pjrt.WithCPUDeviceCount(2), pjrt.WithDistributed(job))
				if err != nil {
					return err
				}
				defer client.Close()
				m, err := mesh.New(jit.Devices(client), []int{2, 2}, "proc", "x")
				if err != nil {
					return err
				}
				s := mesh.MustNamedSharding(m, mesh.P("proc", "x"))
				a, err := jit.FromProcessLocalData(client, s, global[p*2*cols:(p+1)*2*cols], []int{2, cols}, []int{4, cols})
				if err != nil {
					return err
				}
				defer a.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				all, shape, err := jit.ProcessAllgather(ctx, job, a, true)
				if err != nil {
					return err
				}
				if !slices.Equal(shape, []int{4, cols}) || !slices.Equal(all.([]float32), global) {
					return fmt.Errorf("gathered shape %v or data differs", shape)
				}
				return job.Shutdown(context.Background())
			}()
		})
	}
	wg.Wait()
	for p, err := range errs {
		require.NoError(t, err, "process %d", p)
	}
}
