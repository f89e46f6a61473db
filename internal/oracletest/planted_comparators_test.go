package oracletest

import (
	"encoding/binary"
	"encoding/hex"
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

func f64Bytes(v ...float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}

// TestCompareClosePlanted: the LAPACK modules' comparator (numpy.allclose with JAX's
// tolerances) passes what is within atol + rtol|want| and reports anything beyond, a NaN
// against a number, and a complex part off alone.
func TestCompareClosePlanted(t *testing.T) {
	// As backcompat.json writes float64 and complex data: raw bytes in hex.
	w := arrayJSON{Shape: []int{3}, DType: "float64", Hex: hex.EncodeToString(f64Bytes(1, -2, 0))}
	wc := arrayJSON{Shape: []int{2}, DType: "complex128", Hex: hex.EncodeToString(f64Bytes(1, 1, 0, -3))}
	nan := math.NaN()
	tests := []struct {
		name string
		w    arrayJSON
		dt   dtypes.DType
		got  []byte
		diff string
	}{
		{"same", w, dtypes.Float64, f64Bytes(1, -2, 0), ""},
		{"within rtol", w, dtypes.Float64, f64Bytes(1+5e-6, -2, 0), ""},
		{"within atol at zero", w, dtypes.Float64, f64Bytes(1, -2, 1e-12), ""},
		{"beyond rtol", w, dtypes.Float64, f64Bytes(1, -2-1e-4, 0), "element 1: JAX [-2], xlamesh [-2.0001] (rtol 1e-05, atol 1e-12)"},
		{"beyond atol at zero", w, dtypes.Float64, f64Bytes(1, -2, 1e-11), "element 2: JAX [0], xlamesh [1e-11] (rtol 1e-05, atol 1e-12)"},
		{"NaN from xlamesh", w, dtypes.Float64, f64Bytes(nan, -2, 0), "element 0: JAX [1], xlamesh [NaN] (rtol 1e-05, atol 1e-12)"},
		{"imaginary part off", wc, dtypes.Complex128, f64Bytes(1, 1, 0, -3.001), "element 1: JAX [0 -3], xlamesh [0 -3.001] (rtol 1e-05, atol 1e-12)"},
		{"complex same", wc, dtypes.Complex128, f64Bytes(1, 1, 0, -3), ""},
		{"dtype", w, dtypes.Float32, f32Bytes(1, -2, 0), "JAX float64[3], xlamesh Float32[3]"},
	}
	for _, tt := range tests {
		rtol, atol, ok := lapackTolerance(tt.dt)
		if !ok {
			rtol, atol = 1e-5, 1e-12
		}
		if d := compareClose(tt.w, tt.dt, tt.w.Shape, tt.got, rtol, atol); d != tt.diff {
			t.Errorf("%s: diff %q, want %q", tt.name, d, tt.diff)
		}
	}
}

// backCompatArtifactNamed returns the module of backcompat.json with the given name.
func backCompatArtifactNamed(t *testing.T, name string) backCompatArtifact {
	t.Helper()
	f := loadBackCompat(t)
	i := slices.IndexFunc(f.Artifacts, func(a backCompatArtifact) bool { return a.Name == name })
	if i < 0 {
		t.Fatalf("no module %s in backcompat.json", name)
	}
	return f.Artifacts[i]
}

// expected returns JAX's expected outputs of a as host values.
func expected(t *testing.T, a backCompatArtifact) []hostValue {
	t.Helper()
	var out []hostValue
	for _, o := range a.Outputs {
		dt, data, err := encodeArray(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, hostValue{dt, data})
	}
	return out
}

// swapColumns returns v (n x n, row-major, elements of size es) with columns j and k swapped.
func swapColumns(v []byte, n, es, j, k int) []byte {
	out := slices.Clone(v)
	for i := range n {
		a, b := (i*n+j)*es, (i*n+k)*es
		copy(out[a:a+es], v[b:b+es])
		copy(out[b:b+es], v[a:a+es])
	}
	return out
}

// TestPropertyChecksPlanted: JAX's own outputs pass the property checks of the eigh, eig and
// Schur modules (the checks of JAX's back-compat tests); a planted difference does not: an
// eigenvector column doubled or two swapped, a changed eigenvalue, a Schur vector swapped.
func TestPropertyChecksPlanted(t *testing.T) {
	for _, dt := range []string{"f32", "f64", "c64", "c128"} {
		for _, name := range []string{"cpu_eigh_lapack_syev/data_2024_08_19/", "cpu_eig_lapack_geev/data_2024_08_19/",
			"cpu_schur_lapack_gees/data_2024_11_29/"} {
			a := backCompatArtifactNamed(t, name+dt)
			if d := propertyCheck(a.Name)(a, expected(t, a)); d != "" {
				t.Errorf("%s: JAX's own outputs: %s", a.Name, d)
			}
		}
	}
	eigh := backCompatArtifactNamed(t, "cpu_eigh_lapack_syev/data_2024_08_19/f64")
	out := expected(t, eigh)
	doubled := slices.Clone(out[0].data)
	for i := range 8 {
		x := math.Float64frombits(binary.LittleEndian.Uint64(doubled[8*(8*i+7):]))
		binary.LittleEndian.PutUint64(doubled[8*(8*i+7):], math.Float64bits(2*x))
	}
	if d := checkEigh(eigh, []hostValue{{out[0].dt, doubled}, out[1]}); !strings.Contains(d, "not orthonormal") {
		t.Errorf("eigh, a column doubled: %q, want not orthonormal", d)
	}
	if d := checkEigh(eigh, []hostValue{{out[0].dt, swapColumns(out[0].data, 8, 8, 0, 7)}, out[1]}); !strings.Contains(d, "not eigenvectors") {
		t.Errorf("eigh, columns 0 and 7 swapped: %q, want not eigenvectors", d)
	}
	eig := backCompatArtifactNamed(t, "cpu_eig_lapack_geev/data_2024_08_19/c128")
	out = expected(t, eig)
	if d := checkEig(eig, []hostValue{out[0], out[1], {out[2].dt, swapColumns(out[2].data, 4, 16, 0, 1)}}); !strings.Contains(d, "right eigenvectors") {
		t.Errorf("eig, right eigenvectors 0 and 1 swapped: %q, want them reported", d)
	}
	if d := checkEig(eig, []hostValue{out[0], {out[1].dt, swapColumns(out[1].data, 4, 16, 0, 1)}, out[2]}); !strings.Contains(d, "left eigenvectors") {
		t.Errorf("eig, left eigenvectors 0 and 1 swapped: %q, want them reported", d)
	}
	w := slices.Clone(out[0].data)
	binary.LittleEndian.PutUint64(w, math.Float64bits(math.Float64frombits(binary.LittleEndian.Uint64(w))+1e-9))
	if d := checkEig(eig, []hostValue{{out[0].dt, w}, out[1], out[2]}); !strings.Contains(d, "eigenvalues") {
		t.Errorf("eig, an eigenvalue moved by 1e-9: %q, want it reported", d)
	}
	schur := backCompatArtifactNamed(t, "cpu_schur_lapack_gees/data_2024_11_29/f64")
	out = expected(t, schur)
	if d := checkSchur(schur, []hostValue{out[0], {out[1].dt, swapColumns(out[1].data, 4, 8, 0, 1)}}); !strings.Contains(d, "s t sᴴ") {
		t.Errorf("schur, Schur vectors 0 and 1 swapped: %q, want it reported", d)
	}
}
