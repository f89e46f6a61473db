package checkpoint_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/checkpoint/ocdbt"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// update rewrites testdata/checkpoint/xlamesh.json, the checkpoints the oracle has JAX read
// (then run `make oracle` and commit both).
var update = flag.Bool("update", false, "rewrite testdata/checkpoint/xlamesh.json")

const (
	goldenPath  = "../testdata/oracle/checkpoint.json"
	fixturePath = "../testdata/checkpoint/xlamesh.json"
)

// oracleArray is an array of the golden as tools/oracle/vjp.py's arr writes it: Values as
// numbers, and for the types NumPy has no plain dtype for (complex, float8, int4) the raw
// bytes in Hex.
type oracleArray struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
	Hex    string    `json:"hex"`
}

type oracleGolden struct {
	TensorstoreVersion string `json:"tensorstore_version"`
	Written            []struct {
		Name   string            `json:"name"`
		Format string            `json:"format"`
		Mesh   []int             `json:"mesh"`
		Axes   []string          `json:"axes"`
		Spec   []any             `json:"spec"`
		Array  oracleArray       `json:"array"`
		Files  map[string]string `json:"files"`
	} `json:"written"`
	Read []struct {
		Name     string `json:"name"`
		Restored []struct {
			Mesh  []int       `json:"mesh"`
			Axes  []string    `json:"axes"`
			Spec  []any       `json:"spec"`
			Array oracleArray `json:"array"`
		} `json:"restored"`
	} `json:"read"`
}

// fixture is testdata/checkpoint/xlamesh.json: checkpoints xlamesh wrote, one array each.
type fixture struct {
	Cases []fixtureCase `json:"cases"`
}

type fixtureCase struct {
	Name      string            `json:"name"`
	Format    string            `json:"format"`
	ArrayName string            `json:"array_name,omitempty"` // the array's name in an Orbax checkpoint
	DType     string            `json:"dtype"`
	Shape     []int             `json:"shape"`
	Files     map[string]string `json:"files"`
}

func loadOracle(t *testing.T) oracleGolden {
	t.Helper()
	raw, err := os.ReadFile(goldenPath)
	require.NoError(t, err, "the checkpoint golden (regenerate with `make oracle`)")
	var g oracleGolden
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEmpty(t, g.Written)
	return g
}

// numpyDType returns the dtype NumPy calls name.
func numpyDType(t *testing.T, name string) dtypes.DType {
	t.Helper()
	for d := dtypes.DType(1); d < 64; d++ {
		if shapes.Supported(d) && shapes.NumPyName(d) == name {
			return d
		}
	}
	t.Fatalf("no dtype %q", name)
	return 0
}

// specOf reads a golden spec: null, an axis, or a list of axes per dimension.
func specOf(entries []any) mesh.PartitionSpec {
	var dims []any
	for _, e := range entries {
		switch e := e.(type) {
		case nil:
			dims = append(dims, nil)
		case string:
			dims = append(dims, e)
		case []any:
			var names []string
			for _, n := range e {
				names = append(names, n.(string))
			}
			dims = append(dims, mesh.Axes(names...))
		}
	}
	return mesh.P(dims...)
}

// values returns a row-major array of dtype d as the numbers the golden lists (a complex
// array's real and imaginary parts in turn).
func values(t *testing.T, d dtypes.DType, raw []byte) []float64 {
	t.Helper()
	var out []float64
	switch d {
	case dtypes.Bool, dtypes.Uint8:
		for _, b := range raw {
			out = append(out, float64(b))
		}
	case dtypes.Int8:
		for _, b := range raw {
			out = append(out, float64(int8(b)))
		}
	case dtypes.Int16:
		for i := 0; i < len(raw); i += 2 {
			out = append(out, float64(int16(binary.LittleEndian.Uint16(raw[i:]))))
		}
	case dtypes.Int32:
		for i := 0; i < len(raw); i += 4 {
			out = append(out, float64(int32(binary.LittleEndian.Uint32(raw[i:]))))
		}
	case dtypes.Int64:
		for i := 0; i < len(raw); i += 8 {
			out = append(out, float64(int64(binary.LittleEndian.Uint64(raw[i:]))))
		}
	case dtypes.Float16:
		for i := 0; i < len(raw); i += 2 {
			out = append(out, float64(shapes.Float16Value(binary.LittleEndian.Uint16(raw[i:]))))
		}
	case dtypes.BFloat16:
		for i := 0; i < len(raw); i += 2 {
			out = append(out, float64(shapes.BFloat16Value(binary.LittleEndian.Uint16(raw[i:]))))
		}
	case dtypes.Float32, dtypes.Complex64:
		for i := 0; i < len(raw); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
		}
	case dtypes.Float64:
		for i := 0; i < len(raw); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])))
		}
	default:
		t.Fatalf("no values for %v", d)
	}
	return out
}

// assertArray checks a's global contents against a golden array: the bytes where the golden
// has them, else the values.
func assertArray(t *testing.T, want oracleArray, a *jit.Array, what string) {
	t.Helper()
	d := numpyDType(t, want.DType)
	require.Equal(t, d, a.DType(), what)
	require.Equal(t, want.Shape, a.Shape(), what)
	got, err := a.ToHostBytes()
	require.NoError(t, err)
	if want.Hex != "" {
		raw, err := hex.DecodeString(want.Hex)
		require.NoError(t, err)
		assert.Equal(t, raw, got, what)
		return
	}
	assert.Equal(t, want.Values, values(t, d, got), what)
}

// writeFiles writes base64 files under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, b64 := range files {
		raw, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, raw, 0o644))
	}
}

// TestRestoresWhatJAXWrote restores each checkpoint JAX 0.12 wrote (the golden's "written":
// jax.experimental.array_serialization on tensorstore) onto the sharding JAX saved it with,
// replicated on 8 devices and split 2 ways, and checks the values; saving the array again
// writes the same file names and byte-identical metadata.
func TestRestoresWhatJAXWrote(t *testing.T) {
	g := loadOracle(t)
	c := pjrttest.ClientWithDevices(t, 8)
	ctx := context.Background()
	for _, tc := range g.Written {
		t.Run(tc.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.Name)
			writeFiles(t, dir, tc.Files)
			saved := sharding(t, c, tc.Mesh, tc.Axes, specOf(tc.Spec))
			targets := []mesh.NamedSharding{saved, sharding(t, c, []int{8}, []string{"r"}, mesh.P())}
			if len(tc.Array.Shape) > 0 && tc.Array.Shape[0]%2 == 0 {
				targets = append(targets, sharding(t, c, []int{2}, []string{"h"}, mesh.P("h")))
			}
			for _, s := range targets {
				a, err := checkpoint.Restore[*jit.Array](ctx, dir, c, s)
				require.NoError(t, err, "%s", s)
				assertArray(t, tc.Array, a, s.String())
				if s.Equal(saved) {
					again := filepath.Join(t.TempDir(), "again")
					require.NoError(t, checkpoint.Save(ctx, again, a, checkpoint.WithFormat(formats[tc.Format])))
					var want []string
					for rel := range tc.Files {
						want = append(want, rel)
					}
					sort.Strings(want)
					assert.Equal(t, want, files(t, again))
					metaFile := map[string]string{"zarr": ".zarray", "zarr3": "zarr.json"}[tc.Format]
					meta, err := os.ReadFile(filepath.Join(again, metaFile))
					require.NoError(t, err)
					jaxMeta, err := base64.StdEncoding.DecodeString(tc.Files[metaFile])
					require.NoError(t, err)
					assert.Equal(t, string(jaxMeta), string(meta))
				}
				require.NoError(t, a.Close())
			}
		})
	}
}

// formats are the golden's names of the formats.
var formats = map[string]checkpoint.Format{"zarr": checkpoint.ZarrV2, "zarr3": checkpoint.Zarr3, "orbax": checkpoint.Orbax}

// fixtureCases are the checkpoints xlamesh writes for JAX to read: each a dtype, shape, mesh
// and spec; the values are pattern's, the first zeros elements zero (in zarr3, chunks of
// zeros are not written).
var fixtureCases = []struct {
	name   string
	format checkpoint.Format
	dtype  dtypes.DType
	shape  []int
	mesh   []int
	spec   mesh.PartitionSpec
	zeros  int
}{
	{"f32_tiles", checkpoint.ZarrV2, dtypes.Float32, []int{8, 6}, []int{4, 2}, mesh.P("x", "y"), 0},
	{"bf16_rows", checkpoint.ZarrV2, dtypes.BFloat16, []int{8, 4}, []int{4, 2}, mesh.P("x"), 0},
	{"i32_cols", checkpoint.ZarrV2, dtypes.Int32, []int{4, 8}, []int{4, 2}, mesh.P(nil, "y"), 0},
	{"bool_rows", checkpoint.ZarrV2, dtypes.Bool, []int{8}, []int{4, 2}, mesh.P("x"), 0},
	{"f16_replicated", checkpoint.ZarrV2, dtypes.Float16, []int{8, 2}, []int{4, 2}, mesh.P(), 0},
	{"f32_scalar", checkpoint.ZarrV2, dtypes.Float32, []int{}, []int{4, 2}, mesh.P(), 0},
	{"i4_rows", checkpoint.ZarrV2, dtypes.S4, []int{8, 4}, []int{4, 2}, mesh.P("x"), 0},
	{"f8e4m3fn_flat", checkpoint.ZarrV2, dtypes.F8E4M3FN, []int{16}, []int{4, 2}, mesh.P(mesh.Axes("x", "y")), 0},
	{"c64_rows", checkpoint.ZarrV2, dtypes.Complex64, []int{8, 2}, []int{4, 2}, mesh.P("x"), 0},
	{"i8_flat", checkpoint.ZarrV2, dtypes.Int8, []int{16}, []int{4, 2}, mesh.P(mesh.Axes("y", "x")), 0},
	{"z3_f32_rows", checkpoint.Zarr3, dtypes.Float32, []int{8, 6}, []int{4, 2}, mesh.P("x"), 24},
	{"z3_bf16_tiles", checkpoint.Zarr3, dtypes.BFloat16, []int{8, 4}, []int{4, 2}, mesh.P("x", "y"), 0},
	{"z3_i32_zeros", checkpoint.Zarr3, dtypes.Int32, []int{4, 8}, []int{4, 2}, mesh.P("y"), 32},
	{"z3_bool_scalar", checkpoint.Zarr3, dtypes.Bool, []int{}, []int{4, 2}, mesh.P(), 0},
	{"z3_i4_cols", checkpoint.Zarr3, dtypes.S4, []int{2, 8}, []int{4, 2}, mesh.P(nil, "x"), 0},
	{"orbax_f32_tiles", checkpoint.Orbax, dtypes.Float32, []int{32, 16}, []int{4, 2}, mesh.P("x", "y"), 0},
	{"orbax_bf16_rows", checkpoint.Orbax, dtypes.BFloat16, []int{8, 4}, []int{4, 2}, mesh.P("x"), 0},
	{"orbax_i32_scalar", checkpoint.Orbax, dtypes.Int32, []int{}, []int{4, 2}, mesh.P(), 0},
}

// pattern returns n elements of dtype d, element i from (i*7+3) % 17 - 8: exact in every type
// (divided by 8 for the float types; int4 keeps the low 4 bits; float8 bytes avoid NaN).
func pattern(d dtypes.DType, n int) []byte {
	elem := shapes.ElementBytes(d)
	out := make([]byte, n*elem)
	for i := range n {
		v := (i*7+3)%17 - 8
		b := out[i*elem:]
		f := float32(v) / 8
		switch d {
		case dtypes.Bool:
			b[0] = byte(i % 3 % 2)
		case dtypes.S4:
			b[0] = byte(v) & 0x0f
		case dtypes.F8E4M3FN:
			b[0] = byte(i*37) & 0x7e
		case dtypes.Int8:
			b[0] = byte(int8(v))
		case dtypes.Int32:
			binary.LittleEndian.PutUint32(b, uint32(int32(v)))
		case dtypes.Float32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(f))
		case dtypes.Complex64:
			binary.LittleEndian.PutUint32(b, math.Float32bits(f))
			binary.LittleEndian.PutUint32(b[4:], math.Float32bits(-f/2))
		case dtypes.BFloat16:
			binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(f)>>16))
		case dtypes.Float16:
			binary.LittleEndian.PutUint16(b, half(f))
		}
	}
	return out
}

// fixtureValues returns pattern(d, n) with its first zeros elements zero.
func fixtureValues(d dtypes.DType, n, zeros int) []byte {
	out := pattern(d, n)
	clear(out[:zeros*shapes.ElementBytes(d)])
	return out
}

// half returns the float16 bits of f, a multiple of 1/8 in [-1, 1] (exact in float16).
func half(f float32) uint16 {
	if f == 0 {
		return 0
	}
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xff) - 127 + 15
	return sign | uint16(exp)<<10 | uint16(bits>>13&0x3ff)
}

// writeFixture saves every fixture case and returns its files.
func writeFixture(t *testing.T, c *pjrt.Client) fixture {
	t.Helper()
	var f fixture
	for _, tc := range fixtureCases {
		n := 1
		for _, s := range tc.shape {
			n *= s
		}
		s := sharding(t, c, tc.mesh, []string{"x", "y"}, tc.spec)
		a, err := jit.PutBytes(c, tc.dtype, tc.shape, fixtureValues(tc.dtype, n, tc.zeros), s)
		require.NoError(t, err, tc.name)
		dir := filepath.Join(t.TempDir(), tc.name)
		fc := fixtureCase{Name: tc.name, Format: tc.format.String(), DType: shapes.NumPyName(tc.dtype), Shape: tc.shape,
			Files: map[string]string{}}
		var tree any = a
		if tc.format == checkpoint.Orbax {
			fc.ArrayName = "params." + tc.name // Orbax's layout is a tree of named arrays
			tree = map[string]*jit.Array{fc.ArrayName: a}
		}
		require.NoError(t, checkpoint.Save(context.Background(), dir, tree, checkpoint.WithFormat(tc.format)), tc.name)
		require.NoError(t, a.Close())
		for _, rel := range files(t, dir) {
			raw, err := os.ReadFile(filepath.Join(dir, rel))
			require.NoError(t, err)
			fc.Files[rel] = base64.StdEncoding.EncodeToString(raw)
		}
		f.Cases = append(f.Cases, fc)
	}
	return f
}

// ocdbtEntries returns the keys and values of the OCDBT database among files (base64, by
// path), and its other files (Orbax's _METADATA).
func ocdbtEntries(t *testing.T, files map[string]string) map[string][]byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	writeFiles(t, dir, files)
	db, err := ocdbt.Open(dir)
	require.NoError(t, err)
	defer db.Close()
	keys, err := db.List("")
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, k := range keys {
		out[k], err = db.Get(k)
		require.NoError(t, err)
	}
	out["_METADATA (file)"], err = os.ReadFile(filepath.Join(dir, "_METADATA"))
	require.NoError(t, err)
	return out
}

// TestJAXRestoresWhatXlameshWrote: testdata/checkpoint/xlamesh.json holds what Save writes
// today (byte for byte: this test rewrites the checkpoints and compares), and JAX restores
// each onto several shardings with exactly the values saved (the golden's "read").
func TestJAXRestoresWhatXlameshWrote(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	made := writeFixture(t, c)
	if *update {
		text, err := json.MarshalIndent(made, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(fixturePath), 0o755))
		require.NoError(t, os.WriteFile(fixturePath, append(text, '\n'), 0o644))
	}
	raw, err := os.ReadFile(fixturePath)
	require.NoError(t, err)
	var kept fixture
	require.NoError(t, json.Unmarshal(raw, &kept))
	require.Equal(t, len(made.Cases), len(kept.Cases), "run this test with -update, then `make oracle`")
	for i := range made.Cases {
		if made.Cases[i].Format == "orbax" {
			// OCDBT names its data file at random and stamps the time: compare what it holds.
			assert.Equal(t, ocdbtEntries(t, made.Cases[i].Files), ocdbtEntries(t, kept.Cases[i].Files), made.Cases[i].Name)
			made.Cases[i].Files, kept.Cases[i].Files = nil, nil
		}
	}
	require.Equal(t, made, kept, "Save writes other bytes than %s holds: run this test with -update, then `make oracle`", fixturePath)

	g := loadOracle(t)
	require.Len(t, g.Read, len(fixtureCases), "the golden reads other cases than the fixture holds: run `make oracle`")
	for i, tc := range fixtureCases {
		r := g.Read[i]
		require.Equal(t, tc.name, r.Name)
		require.NotEmpty(t, r.Restored)
		n := 1
		for _, s := range tc.shape {
			n *= s
		}
		want := fixtureValues(tc.dtype, n, tc.zeros)
		for _, rs := range r.Restored {
			what := tc.name + " restored by JAX on " + specOf(rs.Spec).String()
			require.Equal(t, shapes.NumPyName(tc.dtype), rs.Array.DType, what)
			require.Equal(t, tc.shape, rs.Array.Shape, what)
			if rs.Array.Hex != "" {
				assert.Equal(t, hex.EncodeToString(want), rs.Array.Hex, what)
			} else {
				assert.Equal(t, values(t, tc.dtype, want), rs.Array.Values, what)
			}
		}
	}
}
