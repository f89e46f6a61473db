package shardy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
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
			if _, err := v.GSPMD(m); err != nil && v.Reduction() == ReduceSum && len(v.Unreduced()) == 0 {
				t.Logf("GSPMD(%s): %v", text, err)
			}
		}
	})
}

func FuzzParseTensorShardingPerValue(f *testing.F) {
	addSeeds(f, canonicalPerValue, []string{`<[<@mesh, []>]>`, `#sdy.sharding_per_value<[<@mesh, [{"x"}]>,]>`})
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
		`<["x"=2], device_ids=[0, 1]>`, `<["x"=4, "y"=2], device_ids=[0, 1, 3, 2, 6, 7, 5, 4]>`})
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
		if v.Validate() == nil {
			// Shard over every axis, major to minor, and convert to GSPMD.
			dims := make([]DimSharding, v.NumAxes())
			for i, n := range v.AxisNames() {
				dims[len(dims)-1-i] = Closed(Axis(n))
			}
			_, _ = NewInlineTensorSharding(v, dims...).GSPMD(EmptyMesh())
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
