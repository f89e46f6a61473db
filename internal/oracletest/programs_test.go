package oracletest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"

	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// programsFile is testdata/oracle/programs.json (tools/oracle/programs.py): JAX programs
// exported with jax.export, with JAX's inputs and outputs, and variants re-jitted by JAX on other
// meshes, device orders and specs.
type programsFile struct {
	JAXVersion string        `json:"jax_version"`
	JAXLib     string        `json:"jaxlib_version"`
	Programs   []programJSON `json:"programs"`
}

type programJSON struct {
	Name        string        `json:"name"`
	About       string        `json:"about"`
	Partitioner string        `json:"partitioner"`
	Mesh        programMesh   `json:"mesh"`
	InSpecs     [][]any       `json:"in_specs"`
	OutSpecs    [][]any       `json:"out_specs"`
	Donate      []int         `json:"donate"`
	Exported    string        `json:"exported"`
	StableHLO   string        `json:"stablehlo"`
	Inputs      []arrayJSON   `json:"inputs"`
	Outputs     []arrayJSON   `json:"outputs"`
	Variants    []variantJSON `json:"variants"`
}

type programMesh struct {
	Shape     []int    `json:"shape"`
	Axes      []string `json:"axes"`
	DeviceIDs []int    `json:"device_ids"`
}

type variantJSON struct {
	Name     string      `json:"name"`
	Mesh     programMesh `json:"mesh"`
	InSpecs  [][]any     `json:"in_specs"`
	OutSpecs [][]any     `json:"out_specs"`
	Outputs  []arrayJSON `json:"outputs"`
}

type arrayJSON struct {
	Shape  []int  `json:"shape"`
	DType  string `json:"dtype"`
	Values []any  `json:"values"`
	Hex    string `json:"hex"` // raw bytes, for the types beyond programs.py's PLAIN_DTYPES
}

// programDTypes maps the corpus's numpy names to dtypes: "float32", "bfloat16",
// "float8_e4m3fn", "int4", "complex64", ... (shapes.NumPyName).
var programDTypes = func() map[string]dtypes.DType {
	out := map[string]dtypes.DType{}
	for d := range dtypes.DType(64) {
		if shapes.Supported(d) {
			out[shapes.NumPyName(d)] = d
		}
	}
	return out
}()

// f32Tolerance is the relative tolerance of float32 results, against the largest magnitude of
// the array: XLA may order a reduction differently on another mesh (or than JAX's own run).
const f32Tolerance = 1e-6

func loadPrograms(t *testing.T, file string) programsFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, file))
	if err != nil {
		t.Fatalf("oracle golden programs: %v (regenerate with `make oracle`)", err)
	}
	var f programsFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("oracle golden programs: %v", err)
	}
	if f.JAXVersion == "" || len(f.Programs) == 0 {
		t.Fatalf("oracle golden programs: malformed (jax %q, %d programs)", f.JAXVersion, len(f.Programs))
	}
	return f
}

// TestPrograms runs every corpus program on 8 CPU devices, (a) as exported, from its jax.export
// artifact, and (b) re-sharded onto each variant's mesh and specs, and compares the outputs with
// JAX's: exactly for integers, bools, float16 and bfloat16 (bit for bit; any NaN matches any
// NaN), float32 to f32Tolerance.
//
// On a client with fewer devices than a mesh needs, a jit program (its outputs are global
// values) runs re-sharded onto the mesh fitMesh makes of it; a program that needsItsMesh
// needs the devices of its meshes (NeedDevices).
func TestPrograms(t *testing.T) { runPrograms(t, "programs", "programs.json") }

// TestPrograms081 runs the same programs as exported by JAX 0.8.1 (programs081.json, the
// programs corpus the oracle wrote before it moved to JAX 0.12; frozen, see
// tools/oracle/frozen.sha256) as TestPrograms does: artifacts of serialization version 9
// from a year-older JAX still read, run and re-shard to JAX's numbers.
func TestPrograms081(t *testing.T) { runPrograms(t, "programs081", "programs081.json") }

// TestProgramsTypes runs the element-type corpus (programs_types.json, by
// tools/oracle/programs_types.py) as TestPrograms does: programs whose inputs and outputs are
// complex64, each float8 type, float4_e2m1fn, int4, uint4, bfloat16, float16 and bool, and
// programs without inputs (called with jit.WithMesh), from the artifact and the text, as
// exported and re-sharded. Arrays beyond float32, the integers and the 16-bit floats are
// compared bit for bit, complex64 as float32 pairs.
func TestProgramsTypes(t *testing.T) { runPrograms(t, "programs_types", "programs_types.json") }

// TestProgramsTypes081 runs the element-type corpus as exported by JAX 0.8.1
// (programs_types081.json, written once with tools/oracle/programs_types.py in a JAX 0.8.1
// venv and frozen, see tools/oracle/frozen.sha256), as TestProgramsTypes does.
func TestProgramsTypes081(t *testing.T) {
	runPrograms(t, "programs_types081", "programs_types081.json")
}

func runPrograms(t *testing.T, group, file string) {
	f := loadPrograms(t, file)
	c := pjrttest.Client(t)
	report.noteGroup(group, fmt.Sprintf("The programs of `testdata/oracle/%s` (jax %s), run on the pinned CPU plugin with 8 devices through `jit`. "+
		"**exported**: `jaxexport.Read` of the `jax.export` artifact, `jit.FromExported`, inputs placed on the program's mesh and in_specs, the module read from its bytecode to text by `mlir/bytecode`, checked and compiled (pjrt compiles only text it has checked). "+
		"**variants**: the same function on the variant's mesh, device order and specs (as JAX re-jitted it): from the artifact "+
		"(`jit.FromExported` with InSpecs/OutSpecs: its module read as text by `mlir/bytecode` and re-sharded by `wrap.Module` with ReplaceShardings), "+
		"and, as `<variant> (text)`, from the module text JAX printed (`stablehlo`, `jit.FromText`). "+
		"Outputs are compared with JAX's: integers, bools, float16 and bfloat16 bit for bit, float32 to %g of the array's largest magnitude.",
		file, f.JAXVersion, f32Tolerance))
	for _, p := range f.Programs {
		t.Run(p.Name, func(t *testing.T) {
			if needsItsMesh(p) {
				need := devicesNeeded(p.Mesh.Shape, p.Mesh.DeviceIDs)
				for _, v := range p.Variants {
					need = max(need, devicesNeeded(v.Mesh.Shape, v.Mesh.DeviceIDs))
				}
				pjrttest.NeedDevices(t, need)
			}
			report.aboutProgram(p.Name, p.About, p.Partitioner)
			diffs, inexact := runExported(t, c, p)
			if refusedOffCPU(strings.ToLower(c.Platform()), diffs) {
				t.Logf("%s/exported: refused on %s, as JAX refuses it: %s", p.Name, c.Platform(), diffs[0])
				diffs = nil
			}
			report.check(t, group, p.Name+"/exported", diffs)
			report.noteRun(group, p.Name+"/exported", inexact)
			for _, v := range p.Variants {
				for _, fromText := range []bool{false, true} {
					name := p.Name + "/" + v.Name
					if fromText {
						name += " (text)"
					}
					diffs, inexact := runVariant(t, c, p, v, fromText)
					if !fromText && refusedOffCPU(strings.ToLower(c.Platform()), diffs) {
						t.Logf("%s: refused on %s, as JAX refuses it: %s", name, c.Platform(), diffs[0])
						diffs = nil
					}
					report.check(t, group, name, diffs)
					report.noteRun(group, name, inexact)
				}
			}
		})
	}
}

// needsItsMesh says whether p runs only on meshes of the devices its golden names: a module
// with a shard_map (in Shardy or GSPMD form), whose outputs depend on the mesh, or a GSPMD
// module with a sharding constraint in its body (a @Sharding custom call), whose tile
// assignment names the mesh's devices, so that wrap.Module cannot re-shard it onto a
// smaller mesh.
func needsItsMesh(p programJSON) bool {
	return strings.Contains(p.StableHLO, "sdy.manual_computation") || strings.Contains(p.StableHLO, "SPMDFullToShardShape") ||
		p.Partitioner == "gspmd" && strings.Contains(p.StableHLO, "@Sharding")
}

// fitMesh returns pm when c has the devices it names, else a mesh of the same axes over c's
// first devices, its shape fitted to them by fitShape: a jit program's global outputs are the
// same on it.
func fitMesh(c *pjrt.Client, pm programMesh) programMesh {
	n := len(c.Devices())
	if devicesNeeded(pm.Shape, pm.DeviceIDs) <= n {
		return pm
	}
	shape := pjrttest.FitShape(pm.Shape, n)
	ids := make([]int, prod(shape))
	for i := range ids {
		ids[i] = c.Devices()[i].ID()
	}
	return programMesh{Shape: shape, Axes: pm.Axes, DeviceIDs: ids}
}

// runExported runs the program from its artifact, as exported (re-sharded by its own specs
// onto fitMesh's mesh on a client with fewer devices than the program's mesh).
func runExported(t *testing.T, c *pjrt.Client, p programJSON) (diffs, inexact []string) {
	raw, err := base64.StdEncoding.DecodeString(p.Exported)
	if err != nil {
		return []string{"artifact: " + err.Error()}, nil
	}
	e, err := jaxexport.Read(raw)
	if err != nil {
		return []string{"jaxexport.Read: " + err.Error()}, nil
	}
	opts := []jit.Option{jit.Donate(p.Donate...)}
	pm := fitMesh(c, p.Mesh)
	if !slices.Equal(pm.DeviceIDs, p.Mesh.DeviceIDs) {
		opts = append(opts, jit.InSpecs(specsOf(p.InSpecs)...), jit.OutSpecs(specsOf(p.OutSpecs)...))
	}
	if opts, err = withMeshOf(c, pm, p, opts); err != nil {
		return []string{err.Error()}, nil
	}
	fn, err := jit.FromExported(e, opts...)
	if err != nil {
		return []string{"jit.FromExported: " + err.Error()}, nil
	}
	defer fn.Close()
	return runProgram(t, c, fn, pm, p.InSpecs, p.Inputs, p.Outputs)
}

// runVariant runs the program re-sharded onto a variant, from its artifact or its module text.
func runVariant(t *testing.T, c *pjrt.Client, p programJSON, v variantJSON, fromText bool) (diffs, inexact []string) {
	opts := []jit.Option{jit.Donate(p.Donate...), jit.InSpecs(specsOf(v.InSpecs)...), jit.OutSpecs(specsOf(v.OutSpecs)...)}
	var fn *jit.Function
	opts, err := withMeshOf(c, fitMesh(c, v.Mesh), p, opts)
	if err != nil {
		return []string{err.Error()}, nil
	}
	if !fromText {
		raw, derr := base64.StdEncoding.DecodeString(p.Exported)
		if derr != nil {
			return []string{"artifact: " + derr.Error()}, nil
		}
		e, rerr := jaxexport.Read(raw)
		if rerr != nil {
			return []string{"jaxexport.Read: " + rerr.Error()}, nil
		}
		fn, err = jit.FromExported(e, opts...)
	} else {
		fn, err = jit.FromText(p.Name, p.StableHLO, opts...)
	}
	if err != nil {
		return []string{"jit: " + err.Error()}, nil
	}
	defer fn.Close()
	return runProgram(t, c, fn, fitMesh(c, v.Mesh), v.InSpecs, p.Inputs, v.Outputs)
}

// withMeshOf adds jit.WithMesh(the mesh of pm) to opts for a program without inputs, whose
// mesh no argument says.
func withMeshOf(c *pjrt.Client, pm programMesh, p programJSON, opts []jit.Option) ([]jit.Option, error) {
	if len(p.Inputs) > 0 {
		return opts, nil
	}
	m, err := meshOf(c, pm)
	if err != nil {
		return nil, err
	}
	return append(opts, jit.WithMesh(m)), nil
}

// meshOf builds the mesh pm describes over c's devices.
func meshOf(c *pjrt.Client, pm programMesh) (mesh.Mesh, error) {
	devs := make([]mesh.Device, len(pm.DeviceIDs))
	for i, id := range pm.DeviceIDs {
		d, err := c.Device(id)
		if err != nil {
			return mesh.Mesh{}, fmt.Errorf("device: %w", err)
		}
		devs[i] = d
	}
	m, err := mesh.New(devs, pm.Shape, pm.Axes...)
	if err != nil {
		return mesh.Mesh{}, fmt.Errorf("mesh: %w", err)
	}
	return m, nil
}

// runProgram places the inputs on the mesh by the specs, calls fn and compares its outputs.
// Besides the differences it returns the float32 outputs that agree only within the tolerance.
func runProgram(t *testing.T, c *pjrt.Client, fn *jit.Function, pm programMesh, inSpecs [][]any, inputs, want []arrayJSON) (diffs, inexact []string) {
	t.Helper()
	m, err := meshOf(c, pm)
	if err != nil {
		return []string{err.Error()}, nil
	}
	args := make([]*jit.Array, len(inputs))
	defer func() {
		for _, a := range args {
			if a != nil {
				_ = a.Close()
			}
		}
	}()
	for i, in := range inputs {
		s, err := mesh.NewNamedSharding(m, specOf(inSpecs[i]))
		if err != nil {
			return []string{fmt.Sprintf("input %d: %v", i, err)}, nil
		}
		dt, data, err := encodeArray(in)
		if err != nil {
			return []string{fmt.Sprintf("input %d: %v", i, err)}, nil
		}
		if args[i], err = jit.PutBytes(c, dt, in.Shape, data, s); err != nil {
			return []string{fmt.Sprintf("input %d: %v", i, err)}, nil
		}
	}
	outs, err := fn.Call(c, args...)
	if err != nil {
		return []string{"call: " + err.Error()}, nil
	}
	defer func() {
		for _, o := range outs {
			_ = o.Close()
		}
	}()
	if len(outs) != len(want) {
		return []string{fmt.Sprintf("JAX returns %d outputs, xlamesh %d", len(want), len(outs))}, nil
	}
	for i, w := range want {
		got, err := outs[i].ToHostBytes()
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("output %d: %v", i, err))
			continue
		}
		d, near := compareProgramOutput(w, outs[i].DType(), outs[i].Shape(), got)
		if d != "" {
			diffs = append(diffs, fmt.Sprintf("output %d: %s", i, d))
		}
		if near != "" {
			inexact = append(inexact, fmt.Sprintf("output %d %s", i, near))
		}
	}
	return diffs, inexact
}

// number reads a corpus value: a JSON number, "nan", "inf", "-inf", or a bool (as 0/1).
func number(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		switch x {
		case "nan":
			return math.NaN(), nil
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("value %v (%T) is not a number", v, v)
}

// encodeArray returns the row-major bytes of a corpus array.
func encodeArray(a arrayJSON) (dtypes.DType, []byte, error) {
	dt, ok := programDTypes[a.DType]
	if !ok {
		return dt, nil, fmt.Errorf("dtype %q", a.DType)
	}
	if a.Hex != "" {
		data, err := hex.DecodeString(a.Hex)
		return dt, data, err
	}
	size := shapes.ElementBytes(dt)
	data := make([]byte, 0, len(a.Values)*size)
	for _, v := range a.Values {
		if dt == dtypes.Complex64 || dt == dtypes.Complex128 {
			// A complex value by value: [real, imaginary] (linalg.json's outputs).
			parts, ok := v.([]any)
			if !ok || len(parts) != 2 {
				return dt, nil, fmt.Errorf("complex value %v is not a [real, imaginary] pair", v)
			}
			for _, p := range parts {
				x, err := number(p)
				if err != nil {
					return dt, nil, err
				}
				if dt == dtypes.Complex64 {
					data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(x)))
				} else {
					data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
				}
			}
			continue
		}
		x, err := number(v)
		if err != nil {
			return dt, nil, err
		}
		switch dt {
		case dtypes.Float32:
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(x)))
		case dtypes.Float64:
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
		case dtypes.BFloat16:
			data = binary.LittleEndian.AppendUint16(data, uint16(math.Float32bits(float32(x))>>16))
		case dtypes.Float16:
			data = binary.LittleEndian.AppendUint16(data, f16Bits(x))
		case dtypes.Int8:
			data = append(data, byte(int8(x)))
		case dtypes.Int32:
			data = binary.LittleEndian.AppendUint32(data, uint32(int32(x)))
		case dtypes.Uint32:
			data = binary.LittleEndian.AppendUint32(data, uint32(x))
		case dtypes.Bool:
			data = append(data, byte(x))
		default:
			return dt, nil, fmt.Errorf("dtype %s is written with its raw bytes (hex), not by value", a.DType)
		}
	}
	return dt, data, nil
}

// f16Bits returns the IEEE half-precision bits of x, which the corpus writes exactly.
func f16Bits(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	switch {
	case math.IsNaN(x):
		return 0x7e00
	case math.IsInf(x, 0) || x >= 65520:
		return sign | 0x7c00
	case x == 0:
		return sign
	}
	frac, exp := math.Frexp(x) // x = frac * 2^exp, frac in [0.5, 1)
	if e := exp - 1; e >= -14 {
		mant := uint16(math.RoundToEven(frac*2048)) - 1024 // the implicit leading 1 dropped
		return sign | uint16(e+15)<<10 | mant
	}
	return sign | uint16(math.RoundToEven(x*(1<<24))) // subnormal
}

// decodeValue reads element i of row-major bytes as float64 (floats) or its exact bits.
func decodeValue(dt dtypes.DType, data []byte, i int) float64 {
	switch dt {
	case dtypes.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
	case dtypes.BFloat16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(data[2*i:])) << 16))
	case dtypes.Float16:
		return f16Value(binary.LittleEndian.Uint16(data[2*i:]))
	case dtypes.Int8:
		return float64(int8(data[i]))
	case dtypes.Int32:
		return float64(int32(binary.LittleEndian.Uint32(data[4*i:])))
	case dtypes.Uint32:
		return float64(binary.LittleEndian.Uint32(data[4*i:]))
	case dtypes.Bool:
		return float64(data[i])
	}
	return math.NaN()
}

func f16Value(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	e, m := int(b>>10&0x1f), float64(b&0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 31:
		if m != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+m, e-25)
}

// compareProgramOutput returns how got (row-major bytes of dtype dt and shape) differs from JAX's w, or
// ""; near says how float32 values that are within the tolerance but not equal differ.
func compareProgramOutput(w arrayJSON, dt dtypes.DType, shape []int, got []byte) (diff, near string) {
	wdt := programDTypes[w.DType]
	if dt != wdt || fmt.Sprint(shape) != fmt.Sprint(w.Shape) {
		return fmt.Sprintf("JAX %s%v, xlamesh %s%v", w.DType, w.Shape, dt, shape), ""
	}
	if w.Hex != "" {
		return compareRaw(w, dt, shape, got)
	}
	if len(got) != len(w.Values)*shapes.ElementBytes(dt) {
		return fmt.Sprintf("%d bytes for %d values", len(got), len(w.Values)), ""
	}
	scale := 0.0
	want := make([]float64, len(w.Values))
	for i, v := range w.Values {
		x, err := number(v)
		if err != nil {
			return err.Error(), ""
		}
		want[i] = x
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			scale = max(scale, math.Abs(x))
		}
	}
	bad, first, worst, within := 0, -1, 0.0, 0
	for i, x := range want {
		y := decodeValue(dt, got, i)
		ok := x == y || math.IsNaN(x) && math.IsNaN(y)
		if !ok && dt == dtypes.Float32 && !math.IsInf(x, 0) && !math.IsNaN(x) && !math.IsNaN(y) {
			d := math.Abs(x - y)
			worst = max(worst, d/scale)
			ok = d <= programTolerance()*scale
			if ok {
				within++
			}
		}
		if !ok && dt.IsFloat() && gpuClose(dt, x, y) {
			ok = true // on a GPU only (gpu_test.go)
		}
		if x == 0 && y == 0 && dt != dtypes.Float32 && math.Signbit(x) != math.Signbit(y) {
			ok = false // -0 and +0 differ in their bits
		}
		if !ok {
			bad++
			if first < 0 {
				first = i
			}
		}
	}
	if bad == 0 {
		if within > 0 {
			near = fmt.Sprintf("(float32): %d of %d values within %.3g of the largest magnitude, not equal", within, len(want), worst)
		}
		return "", near
	}
	msg := fmt.Sprintf("%d of %d values differ; first at flat %d: JAX %v, xlamesh %v", bad, len(want), first, want[first], decodeValue(dt, got, first))
	if worst > 0 {
		msg += fmt.Sprintf(" (largest difference %.3g of the largest magnitude)", worst)
	}
	return msg, ""
}

// compareRaw compares got with JAX's raw bytes: bit for bit, except complex64, whose real and
// imaginary parts are compared as float32 values are (a reduction may be ordered otherwise).
func compareRaw(w arrayJSON, dt dtypes.DType, shape []int, got []byte) (diff, near string) {
	want, err := hex.DecodeString(w.Hex)
	if err != nil {
		return "hex: " + err.Error(), ""
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, JAX's array has %d", len(got), len(want)), ""
	}
	if dt == dtypes.Complex64 {
		parts := arrayJSON{Shape: []int{len(want) / 4}, DType: "float32", Values: make([]any, len(want)/4)}
		for i := range parts.Values {
			x := decodeValue(dtypes.Float32, want, i)
			switch {
			case math.IsNaN(x):
				parts.Values[i] = "nan"
			case math.IsInf(x, 0):
				parts.Values[i] = map[bool]string{true: "inf", false: "-inf"}[x > 0]
			default:
				parts.Values[i] = x
			}
		}
		d, n := compareProgramOutput(parts, dtypes.Float32, parts.Shape, got)
		if d != "" {
			d = "complex64 as float32 pairs: " + d
		}
		if n != "" {
			n = "(complex64 parts) " + strings.TrimPrefix(n, "(float32): ")
		}
		return d, n
	}
	for i := range got {
		if got[i] != want[i] {
			e := shapes.ElementBytes(dt)
			at := i / e * e
			return fmt.Sprintf("bytes differ; first at flat %d (byte %d of %d): JAX %x, xlamesh %x", i/e, i, len(got),
				want[at:at+e], got[at:at+e]), ""
		}
	}
	return "", ""
}

// programInfo is what the report says about a program.
type programInfo struct{ about, partitioner string }

// aboutProgram records a program's description for its report section.
func (c *collector) aboutProgram(name, about, partitioner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.programs == nil {
		c.programs = map[string]programInfo{}
	}
	c.programs[name] = programInfo{about, partitioner}
}

// noteRun records how a passing run's float32 outputs differ within the tolerance.
func (c *collector) noteRun(group, name string, inexact []string) {
	if len(inexact) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runNotes == nil {
		c.runNotes = map[string][]string{}
	}
	c.runNotes[group+":"+name] = inexact
}

// renderPrograms writes one section per program of group: what it is and every run's outcome.
func (c *collector) renderPrograms(b *strings.Builder, group string) {
	var names []string
	runs := map[string][]outcome{}
	for _, o := range c.outcomes {
		if o.group != group {
			continue
		}
		prog, _, _ := strings.Cut(o.name, "/")
		if _, ok := runs[prog]; !ok {
			names = append(names, prog)
		}
		runs[prog] = append(runs[prog], o)
	}
	for _, n := range names {
		info := c.programs[n]
		fmt.Fprintf(b, "### %s\n\n%s (%s).\n\n", n, info.about, info.partitioner)
		for _, o := range runs[n] {
			_, run, _ := strings.Cut(o.name, "/")
			fmt.Fprintf(b, "- `%s`: **%s**", run, o.status)
			if o.note != "" {
				fmt.Fprintf(b, ": %s", o.note)
			}
			b.WriteString("\n")
			for _, d := range o.diffs {
				fmt.Fprintf(b, "  - %s\n", strings.ReplaceAll(d, "\n", " "))
			}
			for _, d := range c.runNotes[o.group+":"+o.name] {
				fmt.Fprintf(b, "  - %s\n", d)
			}
		}
		b.WriteString("\n")
	}
}
