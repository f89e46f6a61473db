package jit_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// exportedArtifact returns the jax.export artifact (Exported.serialize()) of a program of the
// oracle's corpus, which JAX wrote into testdata.
func exportedArtifact(name string) ([]byte, error) {
	data, err := os.ReadFile("../testdata/oracle/programs.json")
	if err != nil {
		return nil, err
	}
	var corpus struct {
		Programs []struct{ Name, Exported string }
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		return nil, err
	}
	for _, p := range corpus.Programs {
		if p.Name == name {
			return base64.StdEncoding.DecodeString(p.Exported)
		}
	}
	return nil, fmt.Errorf("no program %q", name)
}

// Load a function JAX exported for a 4x2 mesh — f(a, b) = (2a + b, b.sum(0)) — and run it
// re-sharded on a 2x4 mesh: the caller's mesh and specs replace the ones it was exported with.
func ExampleFromExported() {
	raw, err := exportedArtifact("donate")
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := jaxexport.Read(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e)
	fmt.Println("exported with", e.InShardings()[0])

	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{2, 4}, "x", "y")
	f, err := jit.FromExported(e, jit.InSpecs(mesh.P("y", "x"), mesh.P("y")), jit.OutSpecs(mesh.P("y", "x"), mesh.P("x")))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(i % 8)
	}
	a, _ := jit.Put(c, in, []int{8, 8}, mesh.MustNamedSharding(m, mesh.P("y", "x")))
	b, _ := jit.Put(c, in, []int{8, 8}, mesh.MustNamedSharding(m, mesh.P("y")))
	defer a.Close()
	defer b.Close()
	out, err := f.Call(c, a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Shape(), o.Sharding().Spec(), "device 0 holds", o.AddressableShards()[0].Index)
	}
	sums, _ := out[1].ToHost()
	fmt.Println(sums)
	for _, o := range out {
		o.Close()
	}
	// Output:
	// Exported(donate, in=[f32[8,8], f32[8,8]], out=[f32[8,8], f32[8]], 8 devices, cpu)
	// exported with NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'))
	// [8 8] P('y', 'x') device 0 holds [0:2, 0:4]
	// [8] P('x',) device 0 holds [0:4]
	// [0 8 16 24 32 40 48 56]
}
