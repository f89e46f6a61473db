package oracletest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Planted differences for the comparators of the ops, programs, vjp and multi-process
// groups: each agrees with itself, and reports a planted difference (a wrong value, a NaN
// from xlamesh against a finite JAX value, a wrong shape) exactly.

func f32Bytes(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func TestOpsComparePlanted(t *testing.T) {
	strictComparators(t)
	nan := float32(math.NaN())
	want := f32Bytes(1, 2, nan, -0.5)
	tests := []struct {
		name string
		d    dtypes.DType
		want []byte
		got  []byte
		tol  float64
		diff []string
	}{
		{"same", dtypes.Float32, want, f32Bytes(1, 2, nan, -0.5), 0, nil},
		{"within tol", dtypes.Float32, want, f32Bytes(1, 2.000001, nan, -0.5), 1e-6, nil},
		{"one ulp, exact", dtypes.Float32, want, f32Bytes(1, math.Nextafter32(2, 3), nan, -0.5), 0,
			[]string{"output 3[1]: JAX 2, xlamesh 2.000000238418579"}},
		{"NaN from xlamesh", dtypes.Float32, want, f32Bytes(nan, 2, nan, -0.5), 1e-6,
			[]string{"output 3[0]: JAX 1, xlamesh NaN"}},
		{"a number for JAX's NaN", dtypes.Float32, want, f32Bytes(1, 2, 0, -0.5), 1e-6,
			[]string{"output 3[2]: JAX NaN, xlamesh 0"}},
		{"-0 for +0, exact", dtypes.Float32, f32Bytes(0), f32Bytes(float32(math.Copysign(0, -1))), 0,
			[]string{"output 3[0]: JAX 0, xlamesh -0"}},
		{"int32", dtypes.Int32, []byte{1, 0, 0, 0, 2, 0, 0, 0}, []byte{1, 0, 0, 0, 3, 0, 0, 0}, 0,
			[]string{"output 3[1]: JAX 0x2, xlamesh 0x3"}},
		{"many", dtypes.Int8, []byte{0, 0, 0, 0, 0, 0}, []byte{1, 1, 1, 1, 1, 0}, 0,
			[]string{"output 3[0]: JAX 0x0, xlamesh 0x1", "output 3[1]: JAX 0x0, xlamesh 0x1", "output 3[2]: JAX 0x0, xlamesh 0x1",
				"output 3[3]: JAX 0x0, xlamesh 0x1", "output 3: 5 elements differ in all"}},
	}
	for _, tt := range tests {
		if d := opsCompare(3, tt.d, tt.want, tt.got, tt.tol); !slices.Equal(d, tt.diff) {
			t.Errorf("%s: diffs %q, want %q", tt.name, d, tt.diff)
		}
	}
}

func TestCompareProgramOutputPlanted(t *testing.T) {
	strictComparators(t)
	w := arrayJSON{Shape: []int{2, 2}, DType: "float32", Values: []any{1.0, -2.0, "nan", 4.0}}
	nan := float32(math.NaN())
	tests := []struct {
		name  string
		dt    dtypes.DType
		shape []int
		got   []byte
		diff  string
	}{
		{"same", dtypes.Float32, []int{2, 2}, f32Bytes(1, -2, nan, 4), ""},
		{"within tolerance", dtypes.Float32, []int{2, 2}, f32Bytes(1, -2.000001, nan, 4), ""},
		{"wrong value", dtypes.Float32, []int{2, 2}, f32Bytes(1, -2, nan, 4.5), "1 of 4 values differ; first at flat 3: JAX 4, xlamesh 4.5 (largest difference 0.125 of the largest magnitude)"},
		{"NaN from xlamesh", dtypes.Float32, []int{2, 2}, f32Bytes(nan, -2, nan, 4), "1 of 4 values differ; first at flat 0: JAX 1, xlamesh NaN"},
		{"a number for JAX's NaN", dtypes.Float32, []int{2, 2}, f32Bytes(1, -2, 3, 4), "1 of 4 values differ; first at flat 2: JAX NaN, xlamesh 3"},
		{"shape", dtypes.Float32, []int{4}, f32Bytes(1, -2, nan, 4), "JAX float32[2 2], xlamesh Float32[4]"},
		{"dtype", dtypes.Int32, []int{2, 2}, f32Bytes(1, -2, nan, 4), "JAX float32[2 2], xlamesh Int32[2 2]"},
		{"length", dtypes.Float32, []int{2, 2}, f32Bytes(1, -2, nan), "12 bytes for 4 values"},
	}
	for _, tt := range tests {
		if d, _ := compareProgramOutput(w, tt.dt, tt.shape, tt.got); d != tt.diff {
			t.Errorf("%s: diff %q, want %q", tt.name, d, tt.diff)
		}
	}
}

func TestCompareArrayPlanted(t *testing.T) {
	strictComparators(t)
	want := vjpArray{Shape: []int{3}, DType: "float32", Values: []float64{1, -0.5, 3}}
	nan := float32(math.NaN())
	tests := []struct {
		name  string
		got   []float32
		exact bool
		diff  []string
	}{
		{"same, exact", []float32{1, -0.5, 3}, true, nil},
		{"within tolerance", []float32{1, -0.5, 3.00001}, false, nil},
		{"one ulp, exact", []float32{1, -0.5, math.Nextafter32(3, 4)}, true, []string{"g[2]: JAX 3, xlamesh 3.0000002"}},
		{"wrong value", []float32{1, -0.4, 3}, false, []string{"g[1]: JAX -0.5, xlamesh -0.4"}},
		{"NaN from xlamesh", []float32{nan, -0.5, 3}, false, []string{"g[0]: JAX 1, xlamesh NaN"}},
		{"NaN from xlamesh, exact", []float32{1, nan, 3}, true, []string{"g[1]: JAX -0.5, xlamesh NaN"}},
		{"length", []float32{1, -0.5}, false, []string{"g: JAX has 3 values, xlamesh 2"}},
	}
	for _, tt := range tests {
		var d []string
		compareArray(&d, "g", want, tt.got, tt.exact)
		if !slices.Equal(d, tt.diff) {
			t.Errorf("%s: diffs %q, want %q", tt.name, d, tt.diff)
		}
	}
}

func TestCompareHostPlanted(t *testing.T) {
	strictComparators(t)
	c2 := vjpArray{Shape: []int{2}, DType: "complex64", Values: []float64{1, -0.5, 0, 2}, Hex: "0000803f000000bf0000000000000040"}
	f8 := vjpArray{Shape: []int{3}, DType: "float8_e4m3fn", Values: []float64{1, -2, 0.5}, Hex: "38c030"}
	tests := []struct {
		name  string
		want  vjpArray
		shape stablehlo.Shape
		got   any
		diff  []string
	}{
		{"complex, same", c2, stablehlo.NewShape(dtypes.Complex64, 2), []complex64{1 - 0.5i, 2i}, nil},
		{"complex, imaginary part", c2, stablehlo.NewShape(dtypes.Complex64, 2), []complex64{1 + 0.5i, 2i},
			[]string{"g (real, imaginary)[1]: JAX -0.5, xlamesh 0.5"}},
		{"float8, same", f8, stablehlo.NewShape(dtypes.F8E4M3FN, 3), []uint8{0x38, 0xc0, 0x30}, nil},
		{"float8, one bit", f8, stablehlo.NewShape(dtypes.F8E4M3FN, 3), []uint8{0x38, 0xc1, 0x30},
			[]string{"g[1]: JAX -2 (0xc0), xlamesh 0xc1"}},
		{"float8 for float32", f8, stablehlo.NewShape(dtypes.Float32, 3), []float32{1, -2, 0.5},
			[]string{"g: JAX float8_e4m3fn[3], xlamesh Float32[3]"}},
		{"shape", f8, stablehlo.NewShape(dtypes.F8E4M3FN, 1, 3), []uint8{0x38, 0xc0, 0x30},
			[]string{"g: JAX float8_e4m3fn[3], xlamesh F8E4M3FN[1 3]"}},
	}
	for _, tt := range tests {
		var d []string
		if err := compareHost(&d, "g", tt.want, tt.shape, tt.got, true); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(d, tt.diff) {
			t.Errorf("%s: diffs %q, want %q", tt.name, d, tt.diff)
		}
	}
}

func TestCompareLossesPlanted(t *testing.T) {
	strictComparators(t)
	want := []float64{2.5, 1.25}
	tests := []struct {
		name string
		got  []float64
		diff []string
	}{
		{"same", []float64{2.5, 1.25}, nil},
		{"within tolerance", []float64{2.5 + 1e-6, 1.25}, nil},
		{"wrong loss", []float64{2.5, 1.3}, []string{"loss 1: JAX 1.25, xlamesh 1.3"}},
		{"NaN from xlamesh", []float64{math.NaN(), 1.25}, []string{"loss 0: JAX 2.5, xlamesh NaN"}},
		{"Inf from xlamesh", []float64{2.5, math.Inf(1)}, []string{"loss 1: JAX 1.25, xlamesh +Inf"}},
		{"count", []float64{2.5}, []string{"JAX has 2 losses, xlamesh 1"}},
	}
	for _, tt := range tests {
		var d []string
		compareLosses(&d, want, tt.got)
		if !slices.Equal(d, tt.diff) {
			t.Errorf("%s: diffs %q, want %q", tt.name, d, tt.diff)
		}
	}
}

// TestCompareProcessPlanted runs compareProcess on a real multiprocess golden case: it agrees
// on the golden as it is, and reports each planted field exactly once.
func TestCompareProcessPlanted(t *testing.T) {
	strictComparators(t)
	g := loadGolden[multiprocessCase](t, "multiprocess")
	i := slices.IndexFunc(g.Cases, func(c multiprocessCase) bool {
		if c.ExpectError || known["multiprocess/"+c.Name].why != "" || len(c.JAX.Processes) == 0 {
			return false
		}
		v := c.JAX.Processes[0]
		return len(v.Holds) > 0 && len(v.Counts) > 0 && len(v.Builds) > 0 && !slices.Contains(v.Inferred, nil)
	})
	if i < 0 {
		t.Fatal("no multiprocess case with holds, counts, builds and a uniform inferred shape")
	}
	c := g.Cases[i]
	s, err := c.sharding()
	if err != nil {
		t.Fatal(err)
	}
	v := c.JAX.Processes[0]
	if d := compareProcess(s, c.Shape, v); d != nil {
		t.Fatalf("%s: %q", c.Name, d)
	}
	seven := 7
	plants := map[string]func(v *processView){
		"holds [device, index, replica id]": func(v *processView) {
			v.Holds = slices.Clone(v.Holds)
			v.Holds[0] = []json.RawMessage{json.RawMessage("99"), v.Holds[0][1], v.Holds[0][2]}
		},
		"process count per dimension": func(v *processView) { v.Counts = slices.Clone(v.Counts); v.Counts[0] = &seven },
		"process-local shape": func(v *processView) {
			v.LocalShape = slices.Clone(v.LocalShape)
			v.LocalShape[0]++
		},
		"inferred global shape": func(v *processView) { v.Inferred = slices.Clone(v.Inferred); v.Inferred[0] = &seven },
		"builds [device, local positions]": func(v *processView) {
			v.Builds = slices.Clone(v.Builds)
			v.Builds[0] = []json.RawMessage{json.RawMessage("99"), v.Builds[0][1]}
		},
	}
	for what, plant := range plants {
		p := v
		plant(&p)
		d := compareProcess(s, c.Shape, p)
		if len(d) != 1 || !strings.HasPrefix(d[0], "process 0: "+what+":") {
			t.Errorf("%s: planted %s: %q", c.Name, what, d)
		}
	}
}
