package jit_test

import (
	"context"
	"fmt"

	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// The multi-controller round trip, run in every process of a job (xlamesh launch -n 2 -- prog):
// each process gives its rows of a global array (FromProcessLocalData), calls one Function on the
// global array (every process compiles the same program with the global device assignment and
// runs its own part), and gets global results of which it holds its addressable shards;
// ProcessAllgather brings a result back whole to every process. It needs a plugin that runs a
// program over several processes' devices (GPU, TPU); the CPU plugins refuse the call with an
// error wrapping pjrt.ErrMultiController (docs/multihost.md).
func Example_multiController() {
	ctx := context.Background()
	cfg, err := distributed.FromEnv()
	if err != nil {
		fmt.Println(err)
		return
	}
	job, err := distributed.Join(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer job.Close()
	c, err := pjrt.Open(pjrt.WithDistributed(job))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	perProcess := len(c.AddressableDevices())
	m, err := mesh.New(jit.Devices(c), []int{job.NumProcesses(), perProcess}, "proc", "x")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := job.ProcessID()
	rows := []float32{float32(4 * p), float32(4*p + 1), float32(4*p + 2), float32(4*p + 3)} // [2, 2]
	x, err := jit.FromProcessLocalData(c, mesh.MustNamedSharding(m, mesh.P("proc")), rows, []int{2, 2}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	f := jit.New("double", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(2))}
	}, jit.OutSpecs(mesh.P("proc")))
	defer f.Close()
	outs, err := f.Call(c, x) // x: Array(f32[2n, 2], P('proc')) over every process's devices
	if err != nil {
		fmt.Println(err)
		return
	}
	defer outs[0].Close()
	all, shape, err := jit.ProcessAllgather(ctx, job, outs[0], true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(shape, all) // on every process: [2n 2] [0 2 4 6 ... ]
	if err := job.Shutdown(ctx); err != nil {
		fmt.Println(err)
	}
}
