// Command multiprocess is one process of a multi-process xlamesh job. Run several with
//
//	go run ./cmd/xlamesh launch -n 4 -- go run ./examples/multiprocess
//
// Each process joins the job (distributed.FromEnv reads what launch sets), opens its PJRT client
// of the job, prints the job's global devices and the ones it can address, and builds its rows of
// a global array x[i][j] = 4i + j (shape [2·processes, 4], split over a processes × 2 mesh) from
// its own data. It computes the sum of squares of its rows on its own devices with a jitted
// function, and after a barrier every process prints the same result: the per-process sums
// gathered from all processes, checked against the whole of x gathered to every host. Then it
// passes -steps more barriers, -step-time apart (a window in which to kill a process: the others
// then exit with an error naming it), and shuts down.
//
// Exit codes: 0 done, 3 a process of the job was lost, 1 anything else. Without launch's
// environment it runs as a job of one process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

func main() {
	cpus := flag.Int("cpu-devices", 2, "CPU devices per process (0: the plugin's default; use 0 on GPUs)")
	steps := flag.Int("steps", 3, "barriers to pass after the result")
	stepTime := flag.Duration("step-time", 500*time.Millisecond, "time between those barriers")
	flag.Parse()
	err := run(*cpus, *steps, *stepTime)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "multiprocess:", err)
	if errors.Is(err, distributed.ErrProcessLost) {
		os.Exit(3)
	}
	os.Exit(1)
}

func run(cpus, steps int, stepTime time.Duration) error {
	ctx := context.Background()
	cfg, err := distributed.FromEnv()
	if err != nil {
		return err
	}
	if cfg.NumProcesses == 0 { // not under launch: a job of one process
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		cfg.NumProcesses, cfg.Coordinator = 1, l.Addr().String()
		l.Close()
	}
	job, err := distributed.Join(ctx, cfg)
	if err != nil {
		return err
	}
	defer job.Close()
	me, n := job.ProcessID(), job.NumProcesses()
	say := func(format string, args ...any) {
		fmt.Printf("process %d/%d: %s\n", me, n, fmt.Sprintf(format, args...))
	}

	opts := []pjrt.Option{pjrt.WithDistributed(job)}
	if cpus > 0 {
		opts = append(opts, pjrt.WithCPUDeviceCount(cpus))
	}
	client, err := pjrt.Open(opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	say("job %q, %s client from %s, process index %d", job.JobID(), client.Platform(), filepath.Base(client.Plugin().Path()), client.ProcessIndex())
	var global, local []string
	for _, d := range client.Devices() {
		global = append(global, fmt.Sprintf("%d@p%d", d.ID(), d.ProcessIndex()))
	}
	for _, d := range client.AddressableDevices() {
		local = append(local, fmt.Sprint(d.ID()))
	}
	say("global devices (id@process): %d [%s]", len(global), strings.Join(global, " "))
	say("addressable devices: %d [%s]", len(local), strings.Join(local, " "))

	// x = 4i + j over a (processes × devices per process) mesh; this process's rows come from
	// its own data.
	per := len(client.AddressableDevices())
	m, err := mesh.New(jit.Devices(client), []int{n, per}, "proc", "x")
	if err != nil {
		return err
	}
	s, err := mesh.NewNamedSharding(m, mesh.P("proc"))
	if err != nil {
		return err
	}
	rows := make([]float32, 2*4)
	for i := range rows {
		rows[i] = float32(4*(2*me+i/4) + i%4)
	}
	x, err := jit.FromProcessLocalData(client, s, rows, []int{2, 4}, nil)
	if err != nil {
		return err
	}
	defer x.Close()
	say("x is %s; my rows [%d:%d] are on %d of my devices", x, 2*me, 2*me+2, len(x.AddressableShards()))

	// The sum of squares of this process's rows, computed on its own devices.
	lm, err := mesh.New(jit.Devices(client)[me*per:(me+1)*per], []int{per}, "x")
	if err != nil {
		return err
	}
	ls, err := mesh.NewNamedSharding(lm, mesh.P())
	if err != nil {
		return err
	}
	mine, err := jit.Put(client, rows, []int{2, 4}, ls)
	if err != nil {
		return err
	}
	defer mine.Close()
	sumSq := jit.New("sum_of_squares", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Sum(f.Mul(a[0], a[0]))}
	}, jit.OutSpecs(mesh.P()))
	defer sumSq.Close()
	out, err := sumSq.Call(client, mine)
	if err != nil {
		return err
	}
	defer out[0].Close()

	if err := job.Barrier(ctx, "computed"); err != nil {
		return err
	}
	parts, _, err := jit.ProcessAllgather(ctx, job, out[0], false)
	if err != nil {
		return err
	}
	all, shape, err := jit.ProcessAllgather(ctx, job, x, true)
	if err != nil {
		return err
	}
	var total, check float32
	for _, v := range parts.([]float32) {
		total += v
	}
	for _, v := range all.([]float32) {
		check += v * v
	}
	if total != check {
		return fmt.Errorf("the per-process sums add up to %g, the gathered x gives %g", total, check)
	}
	say("result after barrier %q: sum of x² = %g (per process %v; x gathered to every host: shape %v, first row %v)",
		"computed", total, parts, shape, all.([]float32)[:4])

	for step := 1; step <= steps; step++ {
		time.Sleep(stepTime)
		if err := job.Barrier(ctx, fmt.Sprintf("step %d", step)); err != nil {
			return err
		}
	}
	if steps > 0 {
		say("passed %d more barriers", steps)
	}
	if err := job.Shutdown(ctx); err != nil {
		return err
	}
	say("shut down")
	return nil
}
