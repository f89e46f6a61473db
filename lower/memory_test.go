package lower_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// memoryModule lowers x*2 over a 4x2 mesh with the argument in argKind and, when resKind is
// not "-", the result sharded P('x','y') in resKind ("" for the default).
func memoryModule(t *testing.T, p lower.Partitioner, argKind, resKind string) string {
	t.Helper()
	m := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	s := mesh.MustNamedSharding(m, mesh.P("x", "y"))
	with := func(kind string) mesh.NamedSharding {
		if kind == "" {
			return s
		}
		k, err := s.WithMemoryKind(kind)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	mod := lower.NewModule("m", lower.WithPartitioner(p))
	f := mod.Main()
	a := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), with(argKind))
	f.Return(f.Mul(a, f.Constant(2)))
	if resKind != "-" {
		f.ShardResults(with(resKind))
	}
	prog, err := mod.Build()
	if err != nil {
		t.Fatal(err)
	}
	return prog.Text()
}

// TestMemoryKindMarks: as jax.jit, a program with an argument or result outside device memory
// marks every argument and result with mhlo.memory_kind (attributes in name order) and each
// returned value with an annotate_device_placement call; one all in device memory has no marks.
func TestMemoryKindMarks(t *testing.T) {
	const sdy = `#sdy.sharding<@mesh, [{"x"}, {"y"}]>`
	tests := []struct {
		name           string
		p              lower.Partitioner
		arg, res       string
		sig, placement string // "" placement: no annotate_device_placement call
	}{
		{"argument on host", lower.Shardy, mesh.MemoryPinnedHost, "",
			`@main(%arg0: tensor<8x2xf32> {mhlo.memory_kind = "pinned_host", sdy.sharding = ` + sdy + `}) -> (tensor<8x2xf32> {mhlo.memory_kind = "device", sdy.sharding = ` + sdy + `})`,
			"device"},
		{"result on host", lower.Shardy, "", mesh.MemoryUnpinnedHost,
			`@main(%arg0: tensor<8x2xf32> {mhlo.memory_kind = "device", sdy.sharding = ` + sdy + `}) -> (tensor<8x2xf32> {mhlo.memory_kind = "unpinned_host", sdy.sharding = ` + sdy + `})`,
			"unpinned_host"},
		{"result without a sharding", lower.Shardy, mesh.MemoryPinnedHost, "-",
			`@main(%arg0: tensor<8x2xf32> {mhlo.memory_kind = "pinned_host", sdy.sharding = ` + sdy + `}) -> (tensor<8x2xf32> {mhlo.memory_kind = "device", sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>})`,
			"device"},
		{"GSPMD", lower.GSPMD, mesh.MemoryPinnedHost, mesh.MemoryPinnedHost,
			`@main(%arg0: tensor<8x2xf32> {mhlo.memory_kind = "pinned_host", mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<8x2xf32> {mhlo.memory_kind = "pinned_host", mhlo.sharding = "{devices=[4,2]<=[8]}"})`,
			"pinned_host"},
		{"device memory", lower.Shardy, mesh.MemoryDevice, mesh.MemoryDevice,
			`@main(%arg0: tensor<8x2xf32> {sdy.sharding = ` + sdy + `}) -> (tensor<8x2xf32> {sdy.sharding = ` + sdy + `})`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := memoryModule(t, tc.p, tc.arg, tc.res)
			if !strings.Contains(text, tc.sig) {
				t.Errorf("module:\n%s\nwant the signature %s", text, tc.sig)
			}
			call := `stablehlo.custom_call @annotate_device_placement(%1) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "` + tc.placement + `"}} : (tensor<8x2xf32>) -> tensor<8x2xf32>` + "\n    return %2 :"
			switch {
			case tc.placement == "" && strings.Contains(text, lower.PlacementTarget):
				t.Errorf("module in device memory has placement calls:\n%s", text)
			case tc.placement != "" && !strings.Contains(text, call):
				t.Errorf("module:\n%s\nwant the result placed by %s", text, call)
			}
		})
	}
}

// TestPutInMemory: a placement inside the program marks the edges in device memory, DevicePut
// constrains before it places, and a kind other than JAX's three is refused.
func TestPutInMemory(t *testing.T) {
	m := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	s := mesh.MustNamedSharding(m, mesh.P("x", "y"))
	host, _ := s.WithMemoryKind(mesh.MemoryPinnedHost)
	mod := lower.NewModule("m")
	f := mod.Main()
	a := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), s)
	before := f.DevicePut(a, s) // device memory, nothing placed yet: a constraint only
	b := f.DevicePut(before, host)
	c := f.DevicePut(b, s) // back: placed, since the program places values now
	f.Return(f.PutInMemory(c, mesh.MemoryUnpinnedHost))
	prog, err := mod.Build()
	if err != nil {
		t.Fatal(err)
	}
	text := prog.Text()
	var placements []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, `_xla_buffer_placement = "`); i >= 0 {
			placements = append(placements, strings.SplitN(line[i+len(`_xla_buffer_placement = "`):], `"`, 2)[0])
		}
	}
	want := []string{"pinned_host", "device", "unpinned_host", "device"}
	if strings.Join(placements, ",") != strings.Join(want, ",") || strings.Count(text, "sdy.sharding_constraint") != 3 ||
		!strings.Contains(text, `{mhlo.memory_kind = "device", sdy.sharding`) {
		t.Errorf("placements %v, want %v; module:\n%s", placements, want, text)
	}

	bad := lower.NewModule("bad")
	g := bad.Main()
	x := g.Arg(lower.NewShape(dtypes.Float32, 4))
	g.Return(g.PutInMemory(x, "hbm"))
	if _, err := bad.Build(); !errors.Is(err, mesh.ErrMemoryKind) || !strings.Contains(err.Error(), "hbm") {
		t.Errorf("PutInMemory(hbm): %v, want mesh.ErrMemoryKind naming it", err)
	}
}

// TestComputeOnHost: each ComputeOnHost body is a private function of its own, called with the
// host compute type and its results placed back in device memory, without marking the edges.
func TestComputeOnHost(t *testing.T) {
	mod := lower.NewModule("m")
	f := mod.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 4))
	double := func(g *lower.Function, in []lower.Value) []lower.Value { return []lower.Value{g.Add(in[0], in[0])} }
	y := f.ComputeOnHost(double, x)
	z := f.ComputeOnHost(double, y[0])
	f.Return(z...)
	prog, err := mod.Build()
	if err != nil {
		t.Fatal(err)
	}
	text := prog.Text()
	for _, want := range []string{
		`%0 = func.call @compute_on(%arg0) {mhlo.frontend_attributes = {_xla_compute_type = "host"}} : (tensor<4xf32>) -> tensor<4xf32>`,
		`{_xla_buffer_placement = "device"}} : (tensor<4xf32>) -> tensor<4xf32>` + "\n    %2 = func.call @compute_on_1(%1)",
		"func.func private @compute_on(", "func.func private @compute_on_1(",
		`func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("module:\n%s\nwant it to hold %s", text, want)
		}
	}
	bad := lower.NewModule("bad")
	g := bad.Main()
	g.Arg(lower.NewShape(dtypes.Float32, 4))
	g.ComputeOnHost(double, lower.Value{})
	if _, err := bad.Build(); !errors.Is(err, lower.ErrFunction) {
		t.Errorf("ComputeOnHost of a zero Value: %v, want ErrFunction", err)
	}
}
