package oracletest

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The memory_kinds group: NamedSharding's memory kinds and jitted functions whose arguments and
// results live in host memory, against JAX 0.12 (tools/oracle/memory_kinds.py writes
// testdata/oracle/memory_kinds.json).

type memoryRepr struct {
	Name       string  `json:"name"`
	Abstract   bool    `json:"abstract"`
	MemoryKind *string `json:"memory_kind"`
	Repr       string  `json:"repr"`
	KindAfter  *string `json:"kind_after"`
	Error      string  `json:"error"`
}

type memoryArg struct {
	Spec       []any   `json:"spec"`
	MemoryKind *string `json:"memory_kind"`
	vjpArray
}

type memoryResult struct {
	MemoryKind string `json:"memory_kind"`
	vjpArray
}

type memoryProgram struct {
	Name     string         `json:"name"`
	Function string         `json:"function"`
	Args     []memoryArg    `json:"args"`
	Outs     []memoryArg    `json:"outs"`
	Text     string         `json:"text"`
	Results  []memoryResult `json:"results"`
	After    string         `json:"after"`
}

type memoryGolden struct {
	Group    string          `json:"group"`
	Reprs    []memoryRepr    `json:"reprs"`
	Programs []memoryProgram `json:"programs"`
	Placed   []memoryProgram `json:"placed"`
}

// placedBodies are memory_kinds.py's placed functions, with PutInMemory and DevicePut where
// JAX calls jax.device_put inside jit.
var placedBodies = map[string]func(m mesh.Mesh) jit.Body{
	"put_host_and_back": func(mesh.Mesh) jit.Body {
		return func(f *lower.Function, a []lower.Value) []lower.Value {
			b := f.PutInMemory(f.Mul(a[0], f.Constant(3)), mesh.MemoryPinnedHost)
			return []lower.Value{f.Add(f.PutInMemory(b, mesh.MemoryDevice), f.Constant(1))}
		}
	},
	"device_put_sharding": func(m mesh.Mesh) jit.Body {
		return func(f *lower.Function, a []lower.Value) []lower.Value {
			sh := mesh.MustNamedSharding(m, mesh.P("x", "y"))
			host, err := sh.WithMemoryKind(mesh.MemoryPinnedHost)
			if err != nil {
				panic(err)
			}
			b := f.DevicePut(f.Mul(a[0], f.Constant(3)), host)
			return []lower.Value{f.Add(f.DevicePut(b, sh), f.Constant(1))}
		}
	},
	"compute_on_host": func(mesh.Mesh) jit.Body {
		return func(f *lower.Function, a []lower.Value) []lower.Value {
			r := f.ComputeOnHost(func(g *lower.Function, in []lower.Value) []lower.Value {
				return []lower.Value{g.Mul(in[0], g.Constant(3))}
			}, a[0])
			return []lower.Value{f.Add(r[0], f.Constant(1))}
		}
	},
	"offload_grad": func(mesh.Mesh) jit.Body {
		return func(f *lower.Function, a []lower.Value) []lower.Value {
			w, x := a[0], a[1]
			h := f.Sin(f.MatMul(x, w))
			h = f.PutInMemory(f.PutInMemory(h, mesh.MemoryPinnedHost), mesh.MemoryDevice)
			loss, grads := autodiff.ValueAndGrad(f.Function, f.Sum(f.Mul(h, h)), w)
			return []lower.Value{loss, grads[0]}
		}
	},
}

// memoryBodies are memory_kinds.py's FUNCTIONS.
var memoryBodies = map[string]jit.Body{
	"mul2": func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(2))}
	},
	"add1": func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Add(a[0], f.Constant(1))}
	},
	"pair": func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(2)), f.Add(a[1], f.Constant(1))}
	},
}

func loadMemoryKinds(t *testing.T) memoryGolden {
	t.Helper()
	g := readGolden[memoryGolden](t, "memory_kinds")
	if g.Group != "memory_kinds" || len(g.Reprs) == 0 || len(g.Programs) == 0 {
		t.Fatalf("oracle golden memory_kinds: malformed")
	}
	return g
}

// memoryMesh is memory_kinds.py's mesh: jax.make_mesh((4, 2), ("x", "y")), Explicit axes as
// JAX 0.12 makes them, over the client's first 8 devices.
func memoryMesh(t *testing.T, c *pjrt.Client) mesh.Mesh {
	t.Helper()
	m, err := mesh.New(jit.Devices(c)[:8], []int{4, 2}, "x", "y")
	if err == nil {
		m, err = m.WithAxisTypes(mesh.Explicit, mesh.Explicit)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func kindOf(k *string) string {
	if k == nil {
		return ""
	}
	return *k
}

// TestMemoryKindsRepr: NamedSharding.WithMemoryKind prints JAX's repr, and refuses the kinds JAX
// refuses with JAX's message.
func TestMemoryKindsRepr(t *testing.T) {
	g := loadMemoryKinds(t)
	report.noteGroup("memory_kinds", "NamedSharding's memory kinds and jitted functions with arguments or results in host memory "+
		"(tools/oracle/memory_kinds.py). `repr_*` cases compare NamedSharding.WithMemoryKind's String and MemoryKind with JAX's repr "+
		"and memory_kind, or its error with JAX's ValueError. The program cases compare @main's signature (mhlo.memory_kind and "+
		"shardings of every argument and result) and the annotate_device_placement calls with JAX's text byte for byte (the rest "+
		"of the body is not compared), then run on the CPU plugin: values, each result's memory kind and the memory its buffers are "+
		"in. `placed_*` cases move values between memories inside the program (lower's PutInMemory and DevicePut for "+
		"jax.device_put inside jit, autodiff through them): JAX lowers those to nothing on CPU, so their text is JAX's "+
		"lowering for GPUs, whose signature and placement calls, in order, must be xlamesh's byte for byte; their values "+
		"are JAX's CPU run's, to 1e-6 relative. On a plugin older than PJRT API 0.115 the programs with host memory must "+
		"fail with pjrt.ErrUnimplemented.")
	c := pjrttest.Client(t)
	pjrttest.NeedDevices(t, 8)
	m := memoryMesh(t, c)
	for _, r := range g.Reprs {
		t.Run(r.Name, func(t *testing.T) {
			var s mesh.NamedSharding
			var err error
			if r.Abstract {
				s, err = mesh.NewAbstractSharding(m.Abstract(), mesh.P("x", nil))
			} else {
				s, err = mesh.NewNamedSharding(m, mesh.P("x", nil))
			}
			if err == nil && r.MemoryKind != nil {
				s, err = s.WithMemoryKind(*r.MemoryKind)
			}
			var d []string
			if r.Error != "" {
				if err == nil || !strings.HasSuffix(err.Error(), r.Error) || !isMemoryKindErr(err) {
					d = append(d, fmt.Sprintf("error: JAX %q, xlamesh %v", r.Error, err))
				}
			} else if err != nil {
				d = append(d, fmt.Sprintf("error: JAX none, xlamesh %v", err))
			} else {
				eq1(&d, "repr", r.Repr, s.String())
				eq1(&d, "memory_kind", kindOf(r.KindAfter), s.MemoryKind())
			}
			report.check(t, "memory_kinds", "repr_"+r.Name, d)
		})
	}
}

func isMemoryKindErr(err error) bool {
	var me *mesh.MemoryKindError
	return errors.As(err, &me) && errors.Is(err, mesh.ErrMemoryKind)
}

func isUnimplemented(err error) bool { return errors.Is(err, pjrt.ErrUnimplemented) }

// annotateLine matches an annotate_device_placement call of @main's body: its operand name and
// the rest of the line.
var annotateLine = regexp.MustCompile(`(?m)^\s*%[\w#]+ = (stablehlo\.custom_call @annotate_device_placement)\(%[\w#]+\)(.*)$`)

// hostCallLine matches a call of @main marked to run on the host: the callee and the rest of the
// line (func.call prints as call).
var hostCallLine = regexp.MustCompile(`(?m)^\s*%[\w#]+ = (?:func\.)?call (@[\w]+)\(([^)]*)\)(.*_xla_compute_type.*)$`)

// memorySignature returns what the memory_kinds group compares byte for byte: @main's signature
// line (normalised: no jax.result_info, no locations), each annotate_device_placement call
// without its SSA names, and each call @main marks to run on the host.
func memorySignature(text string) []string {
	text = normalizeModule(text)
	if i := strings.Index(text, "func.func public @main("); i >= 0 {
		text = text[i:]
		if j := strings.Index(text, "\n  }\n"); j >= 0 {
			text = text[:j] // @main only
		}
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "func.func public @main(") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	for _, m := range annotateLine.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]+"(%)"+m[2])
	}
	for _, m := range hostCallLine.FindAllStringSubmatch(text, -1) {
		out = append(out, "call "+m[1]+"("+m[2]+")"+m[3])
	}
	return out
}

// TestMemoryKindsPrograms lowers each program of the group with package jit (arguments in the
// memory JAX put them in, OutSpecs and OutMemoryKinds as JAX's out_shardings), compares the
// @main signature and annotate_device_placement calls with JAX's text byte for byte, and runs
// it: the values, each result's memory kind and the memory its buffers are in must be JAX's.
// A plugin older than PJRT API 0.115 cannot compile a program with memory spaces
// (pjrt.MemorySpacesMinor): there Call must fail with pjrt.ErrUnimplemented naming the
// capability; one all in device memory carries no marks and runs.
func TestMemoryKindsPrograms(t *testing.T) {
	g := loadMemoryKinds(t)
	c := pjrttest.Client(t)
	pjrttest.NeedDevices(t, 8)
	m := memoryMesh(t, c)
	results := map[string][]*jit.Array{}
	defer func() {
		for _, rs := range results {
			for _, r := range rs {
				_ = r.Close()
			}
		}
	}()
	for _, p := range g.Programs {
		t.Run(p.Name, func(t *testing.T) {
			d, out := runMemoryProgram(t, c, m, p, results[p.After])
			results[p.Name] = out
			report.check(t, "memory_kinds", p.Name, d)
		})
	}
}

func runMemoryProgram(t *testing.T, c *pjrt.Client, m mesh.Mesh, p memoryProgram, after []*jit.Array) ([]string, []*jit.Array) {
	body, ok := memoryBodies[p.Function]
	if !ok {
		t.Fatalf("memory_kinds/%s: no body for function %q", p.Name, p.Function)
	}
	var outSpecs []mesh.PartitionSpec
	var outKinds []string
	for _, o := range p.Outs {
		outSpecs = append(outSpecs, specOf(o.Spec))
		outKinds = append(outKinds, kindOf(o.MemoryKind))
	}
	f := jit.New("memory", body, jit.OutSpecs(outSpecs...), jit.OutMemoryKinds(outKinds...))
	defer f.Close()
	var d []string
	// The lowering, for the arguments' types.
	types := make([]jit.ArgType, len(p.Args))
	for i, a := range p.Args {
		types[i] = jit.ArgType{Shape: lower.NewShape(dtypes.Float32, a.Shape...), Spec: specOf(a.Spec), MemoryKind: kindOf(a.MemoryKind)}
	}
	prog, err := f.Lower(m.Abstract(), types...)
	if err != nil {
		return []string{fmt.Sprintf("lower: %v", err)}, nil
	}
	eq(&d, "@main signature and annotate_device_placement calls", memorySignature(p.Text), memorySignature(prog.Text()))
	// The arguments: put where JAX had them, or the results of the program run before.
	args := after
	if args == nil {
		args = putMemoryArgs(t, c, m, p.Args)
		defer closeAll(args)
	}
	for i, a := range args {
		if got, want := bufferKinds(a), memoryKindOr(p.Args[i].MemoryKind); !slices.Equal(got, []string{want}) {
			d = append(d, fmt.Sprintf("argument %d: buffers in %v, want %s", i, got, want))
		}
	}
	out, err := f.Call(c, args...)
	if _, minor := c.Plugin().APIVersion(); minor < pjrt.MemorySpacesMinor && strings.Contains(p.Text, lower.PlacementTarget) {
		if !isUnimplemented(err) || !strings.Contains(fmt.Sprint(err), "memory") {
			d = append(d, fmt.Sprintf("call on a plugin of PJRT API 0.%d: error %v, want ErrUnimplemented naming memory spaces", minor, err))
		}
		return d, nil
	}
	if err != nil {
		return append(d, fmt.Sprintf("call: %v", err)), nil
	}
	for i, r := range p.Results {
		if i >= len(out) {
			d = append(d, fmt.Sprintf("result %d: missing", i))
			continue
		}
		eq1(&d, fmt.Sprintf("result %d memory kind", i), r.MemoryKind, out[i].Sharding().MemoryKind())
		eq(&d, fmt.Sprintf("result %d buffers' memory", i), []string{r.MemoryKind}, bufferKinds(out[i]))
		got, err := out[i].ToHost()
		if err != nil {
			d = append(d, fmt.Sprintf("result %d: ToHost: %v", i, err))
			continue
		}
		eq(&d, fmt.Sprintf("result %d values", i), toFloat32(r.Values), got.([]float32))
	}
	return d, out
}

// putMemoryArgs puts a program's arguments on m, each in its memory; the caller closes them.
func putMemoryArgs(t *testing.T, c *pjrt.Client, m mesh.Mesh, args []memoryArg) []*jit.Array {
	t.Helper()
	var out []*jit.Array
	for i, a := range args {
		s, err := mesh.NewNamedSharding(m, specOf(a.Spec))
		if err == nil && a.MemoryKind != nil {
			s, err = s.WithMemoryKind(*a.MemoryKind)
		}
		var x *jit.Array
		if err == nil {
			x, err = jit.Put(c, toFloat32(a.Values), a.Shape, s)
		}
		if err != nil {
			closeAll(out)
			t.Fatalf("argument %d: %v", i, err)
		}
		out = append(out, x)
	}
	return out
}

func memoryKindOr(k *string) string {
	if k == nil {
		return mesh.MemoryDevice
	}
	return *k
}

// bufferKinds returns the distinct memory kinds of an array's buffers, as the plugin reports.
func bufferKinds(a *jit.Array) []string {
	var kinds []string
	for _, s := range a.AddressableShards() {
		mem, err := s.Data.Memory()
		k := "error: " + fmt.Sprint(err)
		if err == nil {
			k = mem.Kind()
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func toFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// TestMemoryKindsPlaced builds the programs that move values between memories inside jit with
// PutInMemory and DevicePut (and autodiff through them), compares the @main signature and every
// annotate_device_placement call, in order, with JAX's lowering for GPUs byte for byte, and
// runs them on the CPU plugin: the values must be JAX's (to 1e-6 relative: sin may round
// differently between the plugin's XLA and JAX's). Plugins older than PJRT API 0.115 must refuse
// them with pjrt.ErrUnimplemented.
func TestMemoryKindsPlaced(t *testing.T) {
	g := loadMemoryKinds(t)
	c := pjrttest.Client(t)
	pjrttest.NeedDevices(t, 8)
	m := memoryMesh(t, c)
	for _, p := range g.Placed {
		t.Run(p.Name, func(t *testing.T) {
			report.check(t, "memory_kinds", "placed_"+p.Name, runPlacedProgram(t, c, m, p))
		})
	}
}

func runPlacedProgram(t *testing.T, c *pjrt.Client, m mesh.Mesh, p memoryProgram) []string {
	mk, ok := placedBodies[p.Function]
	if !ok {
		t.Fatalf("memory_kinds/%s: no body for function %q", p.Name, p.Function)
	}
	f := jit.New("placed", mk(m))
	defer f.Close()
	var d []string
	types := make([]jit.ArgType, len(p.Args))
	for i, a := range p.Args {
		types[i] = jit.ArgType{Shape: lower.NewShape(dtypes.Float32, a.Shape...), Spec: specOf(a.Spec)}
	}
	args := putMemoryArgs(t, c, m, p.Args)
	defer closeAll(args)
	prog, err := f.Lower(m.Abstract(), types...)
	if err != nil {
		return []string{fmt.Sprintf("lower: %v", err)}
	}
	eq(&d, "@main signature and annotate_device_placement calls", memorySignature(p.Text), memorySignature(prog.Text()))
	out, err := f.Call(c, args...)
	if _, minor := c.Plugin().APIVersion(); minor < pjrt.MemorySpacesMinor {
		if !isUnimplemented(err) {
			d = append(d, fmt.Sprintf("call on a plugin of PJRT API 0.%d: error %v, want ErrUnimplemented", minor, err))
		}
		return d
	}
	if err != nil {
		return append(d, fmt.Sprintf("call: %v", err))
	}
	defer func() {
		for _, o := range out {
			_ = o.Close()
		}
	}()
	for i, r := range p.Results {
		got, err := out[i].ToHost()
		if err != nil {
			d = append(d, fmt.Sprintf("result %d: ToHost: %v", i, err))
			continue
		}
		want := toFloat32(r.Values)
		g := got.([]float32)
		if len(g) != len(want) {
			d = append(d, fmt.Sprintf("result %d: %d values, want %d", i, len(g), len(want)))
			continue
		}
		for j := range want {
			if diff := math.Abs(float64(g[j] - want[j])); diff > 1e-6*math.Max(1, math.Abs(float64(want[j]))) {
				d = append(d, fmt.Sprintf("result %d[%d]: %v, JAX %v", i, j, g[j], want[j]))
				break
			}
		}
	}
	return d
}
