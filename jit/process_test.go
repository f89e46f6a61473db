package jit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/kv"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// memProcess is one process of an in-memory job.
type memProcess struct {
	*pjrttest.MemoryStore
	id, n int
}

func (p *memProcess) ProcessID() int             { return p.id }
func (p *memProcess) NumProcesses() int          { return p.n }
func (p *memProcess) InitTimeout() time.Duration { return 20 * time.Second }

// process is one simulated process: its job membership and its client of the job.
type process struct {
	job    *memProcess
	client *pjrt.Client
}

// openProcesses opens an n-process job of the CPU plugin that accepts a process id, two devices
// per process, every process a goroutine of this test.
func openProcesses(t *testing.T, n int) []process {
	t.Helper()
	if _, err := pjrttest.CacheDir(); err != nil {
		t.Fatal(err)
	}
	plugin, err := pjrt.MultiProcessCPUPlugin()
	require.NoError(t, err)
	store := &pjrttest.MemoryStore{}
	procs := make([]process, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		procs[p].job = &memProcess{MemoryStore: store, id: p, n: n}
		wg.Go(func() {
			procs[p].client, errs[p] = pjrt.Open(pjrt.WithPlugin(plugin), pjrt.WithCPUDeviceCount(2),
				pjrt.WithDistributed(procs[p].job))
		})
	}
	wg.Wait()
	for p, err := range errs {
		require.NoError(t, err, "process %d", p)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.client.Close()
		}
	})
	return procs
}

// inProcesses runs f for every process at once and fails on the first error.
func inProcesses(t *testing.T, procs []process, f func(p int, pr process) error) {
	t.Helper()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for p, pr := range procs {
		wg.Go(func() { errs[p] = f(p, pr) })
	}
	wg.Wait()
	for p, err := range errs {
		require.NoError(t, err, "process %d", p)
	}
}

// TestProcessLocalArrays: in 2- and 4-process jobs, each process builds its rows of a global
// array from its own data, reads them back, sees ToHost refused, and gathers the whole array.
func TestProcessLocalArrays(t *testing.T) {
	checkNoLeak(t)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d processes", n), func(t *testing.T) {
			procs := openProcesses(t, n)
			global := arange[float32](4 * n * 6) // [4n, 6]
			inProcesses(t, procs, func(p int, pr process) error {
				m, err := mesh.New(jit.Devices(pr.client), []int{n, 2}, "proc", "x")
				if err != nil {
					return err
				}
				s := mesh.MustNamedSharding(m, mesh.P("proc", "x"))
				local := global[p*24 : (p+1)*24] // rows 4p..4p+4
				a, err := jit.FromProcessLocalData(pr.client, s, local, []int{4, 6}, nil)
				if err != nil {
					return err
				}
				defer a.Close()
				if !slices.Equal(a.Shape(), []int{4 * n, 6}) {
					return fmt.Errorf("inferred global shape %v", a.Shape())
				}
				shards := a.AddressableShards()
				if len(shards) != 2 || shards[0].Index.String() != fmt.Sprintf("[%d:%d, 0:3]", 4*p, 4*p+4) {
					return fmt.Errorf("addressable shards %v", shards)
				}
				back, shape, err := a.ProcessLocalData()
				if err != nil {
					return err
				}
				if !slices.Equal(shape, []int{4, 6}) || !slices.Equal(back.([]float32), local) {
					return fmt.Errorf("process-local data %v %v, want %v", shape, back, local)
				}
				if _, err := a.ToHost(); !assert.ErrorIs(t, err, jit.ErrNotAddressable) {
					return fmt.Errorf("ToHost of a global array: %v", err)
				}
				all, shape, err := jit.ProcessAllgather(context.Background(), pr.job, a, true)
				if err != nil {
					return err
				}
				if !slices.Equal(shape, []int{4 * n, 6}) || !slices.Equal(all.([]float32), global) {
					return fmt.Errorf("allgather: %v %v", shape, all)
				}
				if _, _, err := jit.ProcessAllgather(context.Background(), pr.job, a, false); !assert.ErrorIs(t, err, jit.ErrArguments) {
					return fmt.Errorf("untiled allgather of a global array: %v", err)
				}

				// make_array_from_callback semantics: called for this process's shards only.
				var calls []string
				b, err := jit.FromCallback(pr.client, []int{4 * n, 6}, dtypes.Float32, s, func(idx mesh.Index) (any, error) {
					calls = append(calls, idx.String())
					return make([]float32, 12), nil
				})
				if err != nil {
					return err
				}
				defer b.Close()
				if want := []string{fmt.Sprintf("[%d:%d, 0:3]", 4*p, 4*p+4), fmt.Sprintf("[%d:%d, 3:6]", 4*p, 4*p+4)}; !slices.Equal(calls, want) {
					return fmt.Errorf("callback calls %v, want %v", calls, want)
				}

				// A process-local array: every process's value, stacked or concatenated.
				lm, err := mesh.New(jit.Devices(pr.client)[2*p:2*p+2], []int{2}, "x")
				if err != nil {
					return err
				}
				v, err := jit.Put(pr.client, []int32{int32(p), int32(10 * p)}, []int{2}, mesh.MustNamedSharding(lm, mesh.P("x")))
				if err != nil {
					return err
				}
				defer v.Close()
				stacked, shape, err := jit.ProcessAllgather(context.Background(), pr.job, v, false)
				if err != nil {
					return err
				}
				var want []int32
				for q := range n {
					want = append(want, int32(q), int32(10*q))
				}
				if !slices.Equal(shape, []int{n, 2}) || !slices.Equal(stacked.([]int32), want) {
					return fmt.Errorf("stacked: %v %v", shape, stacked)
				}
				tiledV, shape, err := jit.ProcessAllgather(context.Background(), pr.job, v, true)
				if err != nil || !slices.Equal(shape, []int{2 * n}) || !slices.Equal(tiledV.([]int32), want) {
					return fmt.Errorf("tiled: %v %v %v", shape, tiledV, err)
				}
				return nil
			})
		})
	}
}

// TestProcessAllgatherChunks gathers shards larger than one store value (512 KiB).
func TestProcessAllgatherChunks(t *testing.T) {
	checkNoLeak(t)
	procs := openProcesses(t, 2)
	const cols = 3 << 17 // each shard: 1 x 3*2^16 float32 = 768 KiB, two chunks
	global := arange[float32](4 * cols)
	inProcesses(t, procs, func(p int, pr process) error {
		m, err := mesh.New(jit.Devices(pr.client), []int{2, 2}, "proc", "x")
		if err != nil {
			return err
		}
		s := mesh.MustNamedSharding(m, mesh.P("proc", "x"))
		a, err := jit.FromProcessLocalData(pr.client, s, global[p*2*cols:(p+1)*2*cols], []int{2, cols}, []int{4, cols})
		if err != nil {
			return err
		}
		defer a.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		all, _, err := jit.ProcessAllgather(ctx, pr.job, a, true)
		if err != nil {
			return err
		}
		if !slices.Equal(all.([]float32), global) {
			return fmt.Errorf("gathered data differs")
		}
		return nil
	})
}

// TestProcessLocalErrors: local data that fits no shape or has the wrong size, and a peer that
// never gathers.
func TestProcessLocalErrors(t *testing.T) {
	checkNoLeak(t)
	procs := openProcesses(t, 2)
	c := procs[0].client
	m, err := mesh.New(jit.Devices(c), []int{2, 2}, "proc", "x")
	require.NoError(t, err)
	s := mesh.MustNamedSharding(m, mesh.P("proc", "x"))
	_, err = jit.FromProcessLocalData(c, s, make([]float32, 12), []int{3, 4}, []int{8, 4})
	assert.ErrorIs(t, err, mesh.ErrProcessData)
	_, err = jit.FromProcessLocalData(c, s, make([]float32, 5), []int{4, 4}, nil)
	assert.ErrorIs(t, err, pjrt.ErrHostData)

	a, err := jit.FromProcessLocalData(c, s, make([]float32, 16), []int{4, 4}, nil)
	require.NoError(t, err)
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = jit.ProcessAllgather(ctx, procs[0].job, a, true) // process 1 never comes
	assert.ErrorIs(t, err, kv.ErrKeyNotFound)
	assert.ErrorContains(t, err, "from process 1")
	assert.Less(t, time.Since(start), 5*time.Second)
}
