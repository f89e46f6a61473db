package bytecode_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// program is one entry of testdata/oracle/bytecode.json or programs.json: a function JAX
// exported, the mesh and specs it was jitted with, and JAX's outputs on fixed inputs.
type program struct {
	Name        string
	Partitioner string
	Mesh        struct {
		Shape     []int
		Axes      []string
		DeviceIDs []int `json:"device_ids"`
	}
	InSpecs  [][]any `json:"in_specs"`
	OutSpecs [][]any `json:"out_specs"`
	Exported string
	Inputs   []hostArray
	Outputs  []hostArray
}

type hostArray struct {
	Shape  []int
	DType  string
	Values []any
}

func loadPrograms(t *testing.T, path string) []program {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Programs []program }
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Programs) == 0 {
		t.Fatalf("%s: no programs", path)
	}
	return f.Programs
}

// repoRoot is the repository root, two levels above this package.
const repoRoot = "../.."

// TestGoldensRun converts every artifact of testdata/oracle/bytecode.json (JAX 0.12's) and
// bytecode081.json (JAX 0.8.1's, frozen) to text, compiles the text on the 8-device CPU client
// with the program's mesh, runs it on the program's inputs laid out with its input shardings,
// and compares every output with JAX's exactly.
func TestGoldensRun(t *testing.T) {
	for _, f := range []string{"bytecode.json", "bytecode081.json"} {
		t.Run(f, func(t *testing.T) { runAll(t, filepath.Join(repoRoot, "testdata/oracle", f)) })
	}
}

// TestProgramsRun does the same for every program of the programs corpus, as JAX 0.12
// (testdata/oracle/programs.json) and JAX 0.8.1 (programs081.json) exported it;
// XLAMESH_PROGRAMS names another file of that form instead.
func TestProgramsRun(t *testing.T) {
	paths := []string{filepath.Join(repoRoot, "testdata/oracle/programs.json"), filepath.Join(repoRoot, "testdata/oracle/programs081.json")}
	if p := os.Getenv("XLAMESH_PROGRAMS"); p != "" {
		paths = []string{p}
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) { runAll(t, path) })
	}
}

func runAll(t *testing.T, path string) {
	c := pjrttest.Client(t)
	for _, p := range loadPrograms(t, path) {
		t.Run(p.Name, func(t *testing.T) { runProgram(t, c, p) })
	}
}

func runProgram(t *testing.T, c *pjrt.Client, p program) {
	raw, err := base64.StdEncoding.DecodeString(p.Exported)
	if err != nil {
		t.Fatal(err)
	}
	e, err := jaxexport.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	text, err := bytecode.ToText(e.Module())
	if err != nil {
		t.Fatal(err)
	}
	devs := make([]mesh.Device, len(p.Mesh.DeviceIDs))
	for i, id := range p.Mesh.DeviceIDs {
		d, err := c.Device(id)
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = d
	}
	m, err := mesh.New(devs, p.Mesh.Shape, p.Mesh.Axes...)
	if err != nil {
		t.Fatal(err)
	}
	sharding := func(spec []any) mesh.NamedSharding {
		s, err := mesh.NewNamedSharding(m, mesh.P(spec...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	partitioner := pjrt.Shardy
	if p.Partitioner == "gspmd" {
		partitioner = pjrt.GSPMD
	}
	// The module's @main takes the arguments JAX kept (module_kept_var_idx).
	var inputs []*jit.Array
	for _, i := range e.ModuleKeptVarIdx() {
		in := p.Inputs[i]
		dt, data := encode(t, in)
		arr, err := jit.PutBytes(c, dt, in.Shape, data, sharding(p.InSpecs[i]))
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		defer arr.Close()
		inputs = append(inputs, arr)
	}
	run := func(what, code string) ([]dtypes.DType, [][]byte) {
		exe, err := c.Compile(code, pjrt.CompileOptions{NumPartitions: m.Size(), DeviceAssignment: m.DeviceIDs(), Partitioner: partitioner})
		if err != nil {
			t.Fatalf("compile %s: %v", what, err)
		}
		defer exe.Close()
		args := make([][]*pjrt.Buffer, m.Size())
		for i, arr := range inputs {
			shards := arr.AddressableShards()
			for d := range args {
				if shards[d].Device != exe.Devices()[d] {
					t.Fatalf("input %d: shard %d on device %d, partition %d runs on %d", i, d, shards[d].Device.ID(), d, exe.Devices()[d].ID())
				}
				args[d] = append(args[d], shards[d].Data)
			}
		}
		results, err := exe.Execute(args)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(results[0]) != len(p.Outputs) {
			t.Fatalf("%s: %d outputs, JAX has %d", what, len(results[0]), len(p.Outputs))
		}
		var types []dtypes.DType
		var outs [][]byte
		for i, want := range p.Outputs {
			bufs := make([]*pjrt.Buffer, len(results))
			for d := range results {
				bufs[d] = results[d][i]
			}
			arr, err := jit.FromShards(c, want.Shape, sharding(p.OutSpecs[i]), bufs)
			if err != nil {
				for _, b := range bufs {
					b.Close()
				}
				t.Fatalf("%s: output %d: %v", what, i, err)
			}
			got, err := arr.ToHostBytes()
			types = append(types, arr.DType())
			arr.Close()
			if err != nil {
				t.Fatalf("%s: output %d: %v", what, i, err)
			}
			outs = append(outs, got)
		}
		return types, outs
	}
	types, got := run("text", text)
	// The artifact itself, compiled by the plugin: what the text must compute, to the bit.
	_, ref := run("bytecode", string(e.Module()))
	for i, want := range p.Outputs {
		if string(got[i]) != string(ref[i]) {
			t.Errorf("output %d: the text computes other bits than the artifact", i)
			continue
		}
		if err := compare(want, types[i], got[i]); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

func dtypeOf(t *testing.T, name string) dtypes.DType {
	dt, ok := dtypes.MapOfNames[name]
	if !ok {
		t.Fatalf("dtype %q", name)
	}
	return dt
}

// encode lays out a JSON array's values as the little-endian bytes of its dtype.
func encode(t *testing.T, a hostArray) (dtypes.DType, []byte) {
	dt := dtypeOf(t, a.DType)
	out := make([]byte, 0, len(a.Values)*dt.Size())
	for _, v := range a.Values {
		b, err := encodeValue(dt, v)
		if err != nil {
			t.Fatalf("%s value %v: %v", a.DType, v, err)
		}
		out = append(out, b...)
	}
	return dt, out
}

func encodeValue(dt dtypes.DType, v any) ([]byte, error) {
	b := make([]byte, 8)
	switch dt {
	case dtypes.Bool:
		if v.(bool) {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint16, dtypes.Uint32, dtypes.Uint64:
		n, ok := v.(json.Number)
		var u uint64
		if ok {
			if i, err := n.Int64(); err == nil {
				u = uint64(i)
			} else if _, err := fmt.Sscan(n.String(), &u); err != nil {
				return nil, err
			}
		} else {
			f := v.(float64)
			if f < 0 {
				u = uint64(int64(f))
			} else {
				u = uint64(f)
			}
		}
		binary.LittleEndian.PutUint64(b, u)
		return b[:dt.Size()], nil
	case dtypes.Complex64:
		pair := v.([]any)
		re, err := encodeValue(dtypes.Float32, pair[0])
		if err != nil {
			return nil, err
		}
		im, err := encodeValue(dtypes.Float32, pair[1])
		return append(re, im...), err
	}
	f, err := floatOf(v)
	if err != nil {
		return nil, err
	}
	switch dt {
	case dtypes.Float64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(f))
	case dtypes.Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
	case dtypes.BFloat16:
		bits := math.Float32bits(float32(f))
		if float64(math.Float32frombits(bits&0xFFFF0000)) != f && !math.IsNaN(f) {
			return nil, fmt.Errorf("not a bfloat16 value")
		}
		binary.LittleEndian.PutUint16(b, uint16(bits>>16))
	case dtypes.Float16:
		h, ok := toHalf(f)
		if !ok {
			return nil, fmt.Errorf("not a float16 value")
		}
		binary.LittleEndian.PutUint16(b, h)
	default:
		return nil, fmt.Errorf("dtype %s", dt)
	}
	return b[:dt.Size()], nil
}

func floatOf(v any) (float64, error) {
	switch v := v.(type) {
	case json.Number:
		return v.Float64()
	case float64:
		return v, nil
	case string:
		switch v {
		case "nan":
			return math.NaN(), nil
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("not a float: %v", v)
}

// toHalf converts a float64 that is exactly a float16 value to its bits.
func toHalf(f float64) (uint16, bool) {
	var sign uint16
	if math.Signbit(f) {
		sign, f = 0x8000, -f
	}
	switch {
	case math.IsNaN(f):
		return 0x7E00, true
	case math.IsInf(f, 0):
		return sign | 0x7C00, true
	case f == 0:
		return sign, true
	}
	frac, exp := math.Frexp(f) // f = frac * 2^exp, frac in [0.5, 1)
	e := exp - 1               // f = (2*frac) * 2^e
	if e >= -14 {
		m := (2*frac - 1) * 1024
		if e > 15 || m != math.Trunc(m) {
			return 0, false
		}
		return sign | uint16(e+15)<<10 | uint16(m), true
	}
	m := f / math.Ldexp(1, -24)
	if m != math.Trunc(m) || m >= 1024 {
		return 0, false
	}
	return sign | uint16(m), true
}

// compare checks the bytes XLA returned against JAX's values: integers and booleans exactly,
// floats to the bit (any NaN matches "nan").
func compare(want hostArray, got dtypes.DType, data []byte) error {
	if dt := dtypes.MapOfNames[want.DType]; dt != got {
		return fmt.Errorf("dtype %s, JAX has %s", got, want.DType)
	}
	size := got.Size()
	if len(data) != len(want.Values)*size {
		return fmt.Errorf("%d bytes for %d values of %s", len(data), len(want.Values), got)
	}
	// float32 values may differ from JAX's by rounding within f32Tolerance of the array's largest
	// magnitude: XLA's CPU code orders float32 reductions by the processor's vector width, so a
	// golden written on one processor is not bit-equal on another (JAX's own run there included).
	scale := 0.0
	if got == dtypes.Float32 {
		for _, v := range want.Values {
			if n, ok := v.(json.Number); ok {
				if x, err := n.Float64(); err == nil && !math.IsInf(x, 0) && !math.IsNaN(x) {
					scale = max(scale, math.Abs(x))
				}
			}
		}
	}
	var bad []string
	for i, v := range want.Values {
		wb, err := encodeValue(got, v)
		if err != nil {
			return fmt.Errorf("value %d: %v", i, err)
		}
		gb := data[i*size : (i+1)*size]
		if string(wb) == string(gb) || bothNaN(got, wb, gb) {
			continue
		}
		if got == dtypes.Float32 && withinF32Tolerance(wb, gb, scale) {
			continue
		}
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("[%d] got % x, JAX %v", i, gb, v))
		}
	}
	if bad != nil {
		return fmt.Errorf("%s differs: %s", want.DType, strings.Join(bad, "; "))
	}
	return nil
}

func bothNaN(dt dtypes.DType, a, b []byte) bool {
	switch dt {
	case dtypes.Float64:
		return isNaN64(a) && isNaN64(b)
	case dtypes.Float32:
		return isNaN32(a) && isNaN32(b)
	case dtypes.BFloat16:
		return isNaN32([]byte{0, 0, a[0], a[1]}) && isNaN32([]byte{0, 0, b[0], b[1]})
	case dtypes.Float16:
		ha, hb := binary.LittleEndian.Uint16(a), binary.LittleEndian.Uint16(b)
		return ha&0x7C00 == 0x7C00 && ha&0x3FF != 0 && hb&0x7C00 == 0x7C00 && hb&0x3FF != 0
	case dtypes.Complex64:
		part := func(x, y []byte) bool { return string(x) == string(y) || isNaN32(x) && isNaN32(y) }
		return part(a[:4], b[:4]) && part(a[4:], b[4:])
	}
	return false
}

func isNaN64(x []byte) bool { return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(x))) }
func isNaN32(x []byte) bool {
	return math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(x))))
}

// f32Tolerance is the relative tolerance of float32 results against the largest magnitude of
// the array, as internal/oracletest has it.
const f32Tolerance = 1e-6

// withinF32Tolerance reports whether the float32 values w (JAX's) and g (ours), both finite,
// differ by at most f32Tolerance times scale.
func withinF32Tolerance(w, g []byte, scale float64) bool {
	x := float64(math.Float32frombits(binary.LittleEndian.Uint32(w)))
	y := float64(math.Float32frombits(binary.LittleEndian.Uint32(g)))
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return false
	}
	return math.Abs(x-y) <= f32Tolerance*scale
}
