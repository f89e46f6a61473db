// Command xlamesh-demo runs the seed program of JAX's Shardy announcement on XLA's CPU plugin:
// f(x) = x * 2 on the 8x2 int64 array arange(16), over 8 CPU devices arranged as a 4x2 mesh with
// axes ("x", "y"), input and output sharded P("x", "y").
//
// It prints the lowered StableHLO module, the client's devices, each device's input and output
// shard with its index into the global array, and the gathered result. Run it with `make demo`,
// which installs the plugin first.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "xlamesh-demo:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	client, err := pjrt.Open(pjrt.WithCPUDeviceCount(8))
	if err != nil {
		return err
	}
	defer client.Close()

	fmt.Fprintf(w, "== Devices (%s, PJRT API %d.%d)\n", client, apiMajor(client), apiMinor(client))
	for _, d := range client.Devices() {
		fmt.Fprintf(w, "  id=%d kind=%s process=%d local_hardware_id=%d %s\n", d.ID(), d.Kind(), d.ProcessIndex(), d.LocalHardwareID(), d)
	}

	m, err := mesh.New(jit.Devices(client), []int{4, 2}, "x", "y")
	if err != nil {
		return err
	}
	sharding, err := mesh.NewNamedSharding(m, mesh.P("x", "y"))
	if err != nil {
		return err
	}
	double := jit.New("f", func(f *lower.Function, args []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(args[0], f.Constant(int64(2)))}
	}, jit.InSpecs(mesh.P("x", "y")), jit.OutSpecs(mesh.P("x", "y")))

	prog, err := double.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Int64, 8, 2), Spec: mesh.P("x", "y")})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Lowered module (%s, device assignment %v)\n%s", m, m.DeviceIDs(), prog.Text())

	x := make([]int64, 16)
	for i := range x {
		x[i] = int64(i)
	}
	in, err := jit.Put(client, x, []int{8, 2}, sharding)
	if err != nil {
		return err
	}
	defer in.Close()
	outs, err := double.Call(client, in)
	if err != nil {
		return err
	}
	out := outs[0]
	defer out.Close()

	fmt.Fprintf(w, "\n== Shards: input %s -> output %s\n", in, out)
	inShards, outShards := in.AddressableShards(), out.AddressableShards()
	for i := range inShards {
		a, err := inShards[i].Data.ToHost()
		if err != nil {
			return err
		}
		b, err := outShards[i].Data.ToHost()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-16s index %-12v replica %d  in %v  out %v\n",
			inShards[i].Device, inShards[i].Index, inShards[i].ReplicaID, a, b)
	}

	got, err := out.ToHost()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Gathered result (8x2)\n")
	flat := got.([]int64)
	for r := 0; r < 8; r++ {
		fmt.Fprintf(w, "  %v\n", flat[2*r:2*r+2])
	}
	want := make([]int64, 16)
	for i := range want {
		want[i] = 2 * x[i]
	}
	if !slices.Equal(flat, want) {
		return fmt.Errorf("result %v, want %v", flat, want)
	}
	fmt.Fprintln(w, "\nOK: every output shard is twice its input shard.")
	return nil
}

func apiMajor(c *pjrt.Client) int { m, _ := c.Plugin().APIVersion(); return m }
func apiMinor(c *pjrt.Client) int { _, m := c.Plugin().APIVersion(); return m }
