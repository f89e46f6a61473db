package shardy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/mlir"
)

// The fuzz targets check that parsing never panics and that whatever parses
// prints to text that parses again to an equal value and prints the same
// (print is a fixed point after one round). Validation and the GSPMD
// conversion run on every parsed value, to catch panics there too.
//
//	go test -run='^$' -fuzz=FuzzParseTensorSharding -fuzztime=30s ./shardy/

var fuzzMeshes = []MeshOp{
	NewMeshOp("mesh", NewMesh([]MeshAxis{{"x", 4}, {"y", 2}, {"z", 1}}, nil)),
	NewMeshOp("mesh_0", NewMesh([]MeshAxis{{"x", 2}, {"y", 4}}, []int{0, 2, 4, 6, 1, 3, 5, 7})),
	NewMeshOp("maximal_mesh_0", MaximalMesh(0)),
	NewMeshOp("empty_mesh", EmptyMesh()),
	NewMeshOp("mesh_big", NewMesh([]MeshAxis{{"x", 16}, {"y", 6}, {"z", 1}}, nil)),
}

func addSeeds(f *testing.F, seeds ...[]string) {
	for _, list := range seeds {
		for _, s := range list {
			f.Add(s)
		}
	}
}

func FuzzParseTensorSharding(f *testing.F) {
	addSeeds(f, canonicalShardings, []string{
		`<@mesh, [{"a"}, {}]>`,
		`<@mesh, [{"x"}, {?}]>`,
		`<@mesh, [{}, {"y"}]>`,
		`<@mesh_0, [{"y"}, {"x"}]>`,
		`<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>`,
		`<mesh<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>, [{"y":(2)2}, {"x"}], replicated={"y":(1)2}>`,
		`<@mesh, [{"x":(1)2, "y"}, {"x":(2)2}]>`,
		"#sdy.sharding< @mesh ,\n [ { \"x\" , ? } p1 , {} ] , unreduced = sum { \"y\" } >",
		`#sdy.sharding<@mesh, [{"x" "y"}]>`,
		`#sdy.sharding<@mesh, [{"x"}p01]>`,
		`#sdy.sharding<@mesh_big, [{"x":(2)4, "y"}, {"z", "x":(1)2}], replicated={"x":(8)2}>`,
		`#sdy.sharding<@mesh_big, [{"y":(1)2}, {"y":(2)3}, {"x"}]>`,
	})
	// Every sharding attribute JAX emitted in testdata/jax_modules.json.
	if b, err := os.ReadFile("testdata/jax_modules.json"); err == nil {
		var data struct{ Modules []struct{ Text string } }
		if json.Unmarshal(b, &data) == nil {
			seen := map[string]bool{}
			for _, m := range data.Modules {
				for line := range strings.Lines(m.Text) {
					if i := strings.Index(line, "#sdy.sharding<"); i >= 0 {
						if j := strings.Index(line[i:], ">"); j > 0 && !seen[line[i:i+j+1]] {
							seen[line[i:i+j+1]] = true
							f.Add(line[i : i+j+1])
						}
					}
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseTensorSharding(s)
		if err != nil {
			return
		}
		text := v.String()
		w, err := ParseTensorSharding(text)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", text, s, err)
		}
		if !w.Equal(v) || w.String() != text {
			t.Fatalf("round trip of %q: %q != %q", s, w.String(), text)
		}
		w, err = ParseTensorSharding(v.Stripped())
		if err != nil || !w.Equal(v) {
			t.Fatalf("stripped round trip of %q: %v", v.Stripped(), err)
		}
		if err := v.ValidateIn(fuzzMeshes, v.Rank()); err == nil {
			m, _ := lookupMesh(fuzzMeshes, v.MeshName())
			checkGSPMD(t, v, m)
		}
	})
}

// checkGSPMD checks the GSPMD text of a sharding that validated on m: it
// converts, unless it has unreduced axes or sub-axes that do not split
// their axis into factors (both have no GSPMD form, ErrUnsupported), the
// module checker's HloSharding reader (mlir.CheckSharding) accepts it, and
// its tile assignment covers every device of the mesh.
func checkGSPMD(t *testing.T, s TensorSharding, m Mesh) {
	t.Helper()
	if inline, ok := s.InlineMesh(); ok {
		m = inline
	}
	text, err := s.GSPMD(m)
	unsupported := len(s.Unreduced()) > 0 || !subAxesFactor(s, m)
	switch {
	case unsupported && !errors.Is(err, ErrUnsupported):
		t.Fatalf("GSPMD(%s) on %s = %q, %v; want an error wrapping ErrUnsupported", s, m, text, err)
	case !unsupported && err != nil:
		t.Fatalf("GSPMD(%s) on %s: %v", s, m, err)
	case err != nil:
		return
	}
	partitions := m.Size()
	if m.IsMaximal() {
		partitions = 0 // its device id counts among the module's partitions
	}
	if err := mlir.CheckSharding(text, partitions); err != nil {
		t.Fatalf("GSPMD(%s) on %s = %q, which the module checker rejects: %v", s, m, text, err)
	}
	switch {
	case m.IsMaximal():
		if want := fmt.Sprintf("{maximal device=%d}", m.DeviceIDs()[0]); text != want {
			t.Fatalf("GSPMD(%s) on %s = %q, want %q", s, m, text, want)
		}
	case text == "{replicated}":
		for _, d := range s.Dims() {
			for _, a := range d.Axes() {
				if a.Size(m) > 1 {
					t.Fatalf("GSPMD(%s) on %s = {replicated}, but dims are sharded", s, m)
				}
			}
		}
	default:
		dims := regexp.MustCompile(`^\{devices=\[([0-9,]+)\]`).FindStringSubmatch(text)
		if dims == nil {
			t.Fatalf("GSPMD(%s) on %s = %q: no tile assignment", s, m, text)
		}
		n := 1
		for _, f := range strings.Split(dims[1], ",") {
			k, _ := strconv.Atoi(f)
			n *= k
		}
		if n != m.Size() {
			t.Fatalf("GSPMD(%s) on %s = %q: tiles for %d devices, mesh has %d", s, m, text, n, m.Size())
		}
	}
}

// subAxesFactor reports whether, for every mesh axis, the boundaries its
// sub-axes in s put on it (pre-size m and m·k of "x":(m)k, counted from the
// major end) each divide the next, so that they split it into factors.
func subAxesFactor(s TensorSharding, m Mesh) bool {
	refs := s.Replicated()
	for _, d := range s.Dims() {
		refs = append(refs, d.Axes()...)
	}
	for _, a := range m.Axes() {
		bounds := []int{1, a.Size}
		for _, r := range refs {
			if r.IsSubAxis() && r.Name() == a.Name {
				bounds = append(bounds, r.PreSize(), r.PreSize()*r.SubSize())
			}
		}
		slices.Sort(bounds)
		for i := 1; i < len(bounds); i++ {
			if bounds[i]%bounds[i-1] != 0 {
				return false
			}
		}
	}
	return true
}

func FuzzParseTensorShardingPerValue(f *testing.F) {
	addSeeds(f, canonicalPerValue, []string{`<[<@mesh, []>]>`, `#sdy.sharding_per_value<[<@mesh, [{"x"}]>,]>`,
		`#sdy.sharding_per_value<[#sdy.sharding<@mesh, [{"x"}, {}]>, <mesh<["a"=2], device_ids=[0, 1]>, []>]>`})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseTensorShardingPerValue(s)
		if err != nil {
			return
		}
		text := v.String()
		w, err := ParseTensorShardingPerValue(text)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", text, s, err)
		}
		if !w.Equal(v) || w.String() != text {
			t.Fatalf("round trip of %q: %q != %q", s, w.String(), text)
		}
		_ = v.ValidateIn(fuzzMeshes, nil)
	})
}

func FuzzParseMesh(f *testing.F) {
	addSeeds(f, canonicalMeshes, []string{`#sdy.mesh<["a"=1]>`, `mesh<["a"=1]>`, `<"x"=4, "y"=2>`, `<>`,
		`<["x"=2], device_ids=[0, 1]>`, `<["x"=4, "y"=2], device_ids=[0, 1, 3, 2, 6, 7, 5, 4]>`,
		`<["a"=2, "b"=3, "c"=5]>`, `<["x"=64, "y"=32]>`, `<["x"=1, "y"=4, "z"=4]>`})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMesh(s)
		if err != nil {
			return
		}
		text := v.String()
		w, err := ParseMesh(text)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", text, s, err)
		}
		if !w.Equal(v) || w.String() != text {
			t.Fatalf("round trip of %q: %q != %q", s, w.String(), text)
		}
		if v.Validate() == nil && productCapped(v.AxisSizes()) <= maxDevices {
			// Shard over every axis, minor to major, and convert to GSPMD.
			dims := make([]DimSharding, v.NumAxes())
			for i, n := range v.AxisNames() {
				dims[len(dims)-1-i] = Closed(Axis(n))
			}
			checkGSPMD(t, NewInlineTensorSharding(v, dims...), EmptyMesh())
		}
	})
}

func FuzzParseMeshOp(f *testing.F) {
	addSeeds(f, canonicalMeshOps, []string{"sdy.mesh @m = #sdy.mesh<[]>", "sdy.mesh @m=<[\"x\"=2]>"})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMeshOp(s)
		if err != nil {
			return
		}
		text := v.String()
		w, err := ParseMeshOp(text)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", text, s, err)
		}
		if !w.Equal(v) || w.String() != text {
			t.Fatalf("round trip of %q: %q != %q", s, w.String(), text)
		}
		_ = ValidateMeshOps([]MeshOp{v})
	})
}

func FuzzParseDimSharding(f *testing.F) {
	addSeeds(f, canonicalDims, []string{`{"x"}p01`, `{?, "x"}`, `{"x":(1)2}p3`, `{ "x" , ? } p 1`})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDimSharding(s)
		if err != nil {
			return
		}
		text := v.String()
		w, err := ParseDimSharding(text)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", text, s, err)
		}
		if !w.Equal(v) || w.String() != text {
			t.Fatalf("round trip of %q: %q != %q", s, w.String(), text)
		}
	})
}

func FuzzParseAttribute(f *testing.F) {
	for _, tt := range attrTests {
		f.Add(tt.want)
	}
	addSeeds(f, canonicalRules, []string{`#sdy<dim_mapping ij>`, `#sdy<all_to_all_param{"x"}:0->1>`,
		`#sdy.op_sharding_rule<([, i])->([i]) {i=2}>`, `#sdy.op_sharding_rule<([iz_1])->([z_1]) {i=1}, custom>`})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseAttribute(s)
		if err != nil {
			return
		}
		text := v.Attribute()
		w, err := ParseAttribute(text)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", text, s, err)
		}
		if !equalAttr(w, v) || w.Attribute() != text {
			t.Fatalf("round trip of %q: %q != %q", s, w.Attribute(), text)
		}
	})
}
