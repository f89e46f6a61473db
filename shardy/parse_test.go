package shardy

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Canonical texts: print(parse(s)) == s.
var (
	canonicalShardings = []string{
		`#sdy.sharding<@mesh, [{"a"}, {}]>`,
		`#sdy.sharding<@mesh, [{"x", "y"}, {}]>`,
		`#sdy.sharding<@mesh, [{"x"}p0, {?}], replicated={"y"}>`,
		`#sdy.sharding<@mesh, []>`,
		`#sdy.sharding<@mesh, [{"y":(1)2}, {}]>`,
		`#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x"}, {}], unreduced={"y"}>`,
		`#sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>`,
		`#sdy.sharding<@mesh, [{"x", ?}p3, {?}p2, {}]>`,
		`#sdy.sharding<@maximal_mesh_0, []>`,
		`#sdy.sharding<@mesh, [{}], replicated={"x", "y"}, unreduced=max{"z"}>`,
		`#sdy.sharding<@mesh, [{}], unreduced=min{"z":(2)4}>`,
		`#sdy.sharding<@"odd name", [{"a\22b"}]>`,
		`#sdy.sharding<mesh<[], device_ids=[3]>, []>`,
		`#sdy.sharding<@mesh, [{"x"}p9223372036854775807]>`,
	}
	canonicalMeshes = []string{
		`<["x"=4, "y"=2]>`,
		`<["a"=2]>`,
		`<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`,
		`<[], device_ids=[0]>`,
		`<[], device_ids=[3]>`,
		`<[]>`,
		`<["x"=1, "y"=8]>`,
		`<["x"=0]>`,
		`<["x"=-3], device_ids=[-1]>`,
	}
	canonicalMeshOps = []string{
		`sdy.mesh @mesh = <["a"=2]>`,
		`sdy.mesh @mesh = <["x"=4, "y"=2]>`,
		`sdy.mesh @mesh_0 = <["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>`,
		`sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>`,
		`sdy.mesh @empty_mesh = <[]>`,
		`sdy.mesh @"with space" = <["x"=2]>`,
	}
	canonicalPerValue = []string{
		`#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>`,
		`#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]>`,
		`#sdy.sharding_per_value<[<@maximal_mesh_0, []>]>`,
		`#sdy.sharding_per_value<[]>`,
	}
	canonicalDims   = []string{`{}`, `{?}`, `{"x"}`, `{"x", ?}`, `{"x", "y"}p1`, `{?}p0`, `{"x":(2)2, "y"}`}
	canonicalManual = []string{`{}`, `{"x"}`, `{"x", "y"}`}
)

func TestRoundTrip(t *testing.T) {
	for _, s := range canonicalShardings {
		v, err := ParseTensorSharding(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, v.String())
		stripped := strings.TrimPrefix(s, "#sdy.sharding")
		assert.Equal(t, stripped, v.Stripped())
		w, err := ParseTensorSharding(stripped)
		require.NoError(t, err, stripped)
		assert.True(t, v.Equal(w), stripped)
	}
	for _, s := range canonicalMeshes {
		v, err := ParseMesh(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, v.String())
	}
	for _, s := range canonicalMeshOps {
		v, err := ParseMeshOp(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, v.String())
	}
	for _, s := range canonicalPerValue {
		v, err := ParseTensorShardingPerValue(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, v.String())
	}
	for _, s := range canonicalDims {
		v, err := ParseDimSharding(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, v.String())
	}
	for _, s := range canonicalManual {
		v, err := ParseManualAxes(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, v.String())
	}
}

// Non-canonical input that parses to a value printed differently.
func TestParseLenient(t *testing.T) {
	tests := []struct{ in, want string }{
		{"#sdy.sharding< @mesh ,\n [ { \"x\" , ? } p1 , {} ] , unreduced = sum { \"y\" } >",
			`#sdy.sharding<@mesh, [{"x", ?}p1, {}], unreduced={"y"}>`},
		{`<@mesh, [{}], unreduced={"y"}, replicated={"x"}>`, `#sdy.sharding<@mesh, [{}], replicated={"x"}, unreduced={"y"}>`},
		{`<#sdy.mesh<["x"=2]>, [{"x"}]>`, `#sdy.sharding<mesh<["x"=2]>, [{"x"}]>`},
		{`<@mesh, [{"a\"b\\c\n\t"}]>`, `#sdy.sharding<@mesh, [{"a\22b\\c\0A\09"}]>`},
		{`<@"mesh", [{"x":( 1 ) 2}]>`, `#sdy.sharding<@mesh, [{"x":(1)2}]>`},
		{"<@mesh, [{}], replicated={}> // comment", `#sdy.sharding<@mesh, [{}]>`},
		// What MLIR's own printer gives for these (jaxlib 0.8.1's sdy dialect).
		{`#sdy.sharding<@mesh, [{"x"} p0, {?}], replicated={"y"}>`, `#sdy.sharding<@mesh, [{"x"}p0, {?}], replicated={"y"}>`},
		{`#sdy.sharding<@mesh, [{"a\01b\7Fc\n"}]>`, `#sdy.sharding<@mesh, [{"a\01b\7Fc\0A"}]>`},
		{`#sdy.sharding<@"a\"b", [{"x"}]>`, `#sdy.sharding<@"a\22b", [{"x"}]>`},
		{`#sdy.sharding<mesh<["x"=4, "y"=2], device_ids=[0,1,2,3,4,5,7,6]>, [{"x"}, {}]>`,
			`#sdy.sharding<mesh<["x"=4, "y"=2], device_ids=[0, 1, 2, 3, 4, 5, 7, 6]>, [{"x"}, {}]>`},
		{`#sdy.sharding<@mesh_0.a$b, [{"x" : ( 1 ) 2}]>`, `#sdy.sharding<@mesh_0.a$b, [{"x":(1)2}]>`},
	}
	for _, tt := range tests {
		v, err := ParseTensorSharding(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, v.String(), tt.in)
	}
	meshes := []struct{ in, want string }{
		{`#sdy.mesh<["a"=1]>`, `<["a"=1]>`},
		{`mesh<["a"=1]>`, `<["a"=1]>`},
		{`<"x"=4, "y"=2>`, `<["x"=4, "y"=2]>`},
		{`<>`, `<[]>`},
		{`<["x"=2], device_ids=[]>`, `<["x"=2]>`},
		// Shardy drops device ids equal to iota (its MeshAttr builder), and
		// prints them only when the order is not iota.
		{`<["x"=2], device_ids=[0, 1]>`, `<["x"=2]>`},
		{`<["a"=1], device_ids=[0]>`, `<["a"=1]>`},
		{`<["x"=2], device_ids=[1, 0]>`, `<["x"=2], device_ids=[1, 0]>`},
		{`<["x"=2], device_ids=[0]>`, `<["x"=2], device_ids=[0]>`}, // not iota(2): Validate rejects it
		{`<[], device_ids=[0]>`, `<[], device_ids=[0]>`},           // maximal: always kept
	}
	for _, tt := range meshes {
		v, err := ParseMesh(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, v.String(), tt.in)
	}
	ops, err := ParseMeshOps("sdy.mesh @mesh = <[\"x\"=4]>\n  sdy.mesh @maximal_mesh_0 = #sdy.mesh<[], device_ids=[0]>\n")
	require.NoError(t, err)
	require.Len(t, ops, 2)
	assert.Equal(t, `sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>`, ops[1].String())
	list, err := ParseShardingList(`[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]`)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, `<@mesh, [{}, {}]>`, list[1].Stripped())
	pv, err := ParseTensorShardingPerValue(`<[<@mesh, []>]>`)
	require.NoError(t, err)
	assert.Equal(t, `#sdy.sharding_per_value<[<@mesh, []>]>`, pv.String())
	// Elements may carry the #sdy.sharding prefix; Shardy prints them stripped.
	pv, err = ParseTensorShardingPerValue(`#sdy.sharding_per_value<[#sdy.sharding<@mesh_4, [{"x"}, {}]>, <@m, []>]>`)
	require.NoError(t, err)
	assert.Equal(t, `#sdy.sharding_per_value<[<@mesh_4, [{"x"}, {}]>, <@m, []>]>`, pv.String())
	list, err = ParseShardingList(`[#sdy.sharding<mesh<["x"=2], device_ids=[0, 1]>, [{"x"}]>]`)
	require.NoError(t, err)
	assert.Equal(t, `<mesh<["x"=2]>, [{"x"}]>`, list[0].Stripped())
	// Shardy's parser takes the lists after the dims in either order, `=`
	// optional before an unreduced list, and a list again while it is empty.
	for in, want := range map[string]string{
		`<@m, [{}], unreduced{"x"}>`:                       `#sdy.sharding<@m, [{}], unreduced={"x"}>`,
		`<@m, [{}], unreduced=max{"x"}, replicated={"y"}>`: `#sdy.sharding<@m, [{}], replicated={"y"}, unreduced=max{"x"}>`,
		`<@m, [{}], replicated={}, replicated={"y"}>`:      `#sdy.sharding<@m, [{}], replicated={"y"}>`,
	} {
		v, err := ParseTensorSharding(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, v.String(), in)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{`#sdy.sharding<@mesh, [{"x" "y"}]>`, 27, `expected ',' or '}', found "y"`},
		{`#sdy.sharding<@mesh, [{"x"}p01]>`, 27, `priorities with leading zeros are not allowed, got: p01`},
		{`#sdy.sharding<@mesh, [{"x"}q1]>`, 27, `expecting priority in format 'p<number>', got: q1`},
		{`#sdy.sharding<@mesh, [{"x"}p]>`, 27, `expecting priority in format 'p<number>', got: p`},
		{`#sdy.sharding<@mesh, [{"x"}p99999999999999999999]>`, 27, `expecting integer priority, got: p99999999999999999999`},
		{`#sdy.sharding<@mesh, [{?, "x"}]>`, 24, `expected '}' after '?', found ','`},
		{`#sdy.sharding<@mesh, [{"x"}, {}]`, 32, `expected ',' or '>', found end of input`},
		{`#sdy.sharding<@mesh, [{"x"}]> x`, 30, `expected end of input, found 'x'`},
		{`#sdy.sharding<mesh, [{"x"}]>`, 18, `expected '<', found ','`},
		{`#sdy.sharding<[{"x"}]>`, 14, `expected mesh symbol '@name' or inline 'mesh<...>', found '['`},
		{`#sdy.sharding_per_value<[]>`, 1, `expected 'sdy.sharding', found 'sdy.sharding_per_value'`},
		{`<@mesh, [{"x}]>`, 10, `unterminated string literal`},
		{`<@mesh, [{"x\q"}]>`, 12, `unknown escape in string literal`},
		{`<@mesh, [{"x":(1)}]>`, 17, `expected sub-axis size, found '}'`},
		{`<@mesh, [{}], foo={}>`, 14, `expected valid named axis list after comma, found 'foo'`},
		{`<@mesh, [{}], replicated={"x"}, replicated={"y"}>`, 32, `expected valid named axis list after comma, found 'replicated'`},
		{`<@mesh, [{}], unreduced={"x"}, unreduced={"y"}>`, 31, `expected valid named axis list after comma, found 'unreduced'`},
		{`<@mesh, [{}],>`, 13, `expected valid named axis list after comma, found '>'`},
		{`<@mesh, [{}], replicated={"x" "y"}>`, 30, `expected '}', found "y"`},
		{`<@, []>`, 2, `expected symbol name, found ','`},
		{`#sdy.sharding<@mesh, [{"x"}p-1]>`, 27, `expecting priority in format 'p<number>', got: p`},
		{``, 0, `expected '<', found end of input`},
	}
	for _, tt := range tests {
		_, err := ParseTensorSharding(tt.in)
		require.Error(t, err, tt.in)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), tt.in)
		assert.True(t, errors.Is(err, ErrSyntax))
		assert.Equal(t, tt.offset, pe.Offset, tt.in)
		assert.Contains(t, err.Error(), tt.msg, tt.in)
	}
	meshErrs := []struct {
		in     string
		offset int
		msg    string
	}{
		{`<["x"=4`, 7, `expected ',' or ']', found end of input`},
		{`<["x"=4, "y"]>`, 12, `expected '=', found ']'`},
		{`<["x"=y]>`, 6, `expected axis size, found 'y'`},
		{`<["x"=99999999999999999999]>`, 6, `axis size out of range`},
		{`<["x"=2], ids=[1]>`, 10, `expected 'device_ids', found 'ids'`},
	}
	for _, tt := range meshErrs {
		_, err := ParseMesh(tt.in)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), tt.in)
		assert.Equal(t, tt.offset, pe.Offset, tt.in)
		assert.Contains(t, err.Error(), tt.msg, tt.in)
	}
	_, err := ParseMeshOp(`sdy.mesh mesh = <[]>`)
	assert.EqualError(t, err, `shardy: offset 9: expected symbol '@name', found 'mesh'`)
}

// The complete module of the reference (JAX's tpu_Sharding back-compat test)
// and the reference's argument examples: every sdy attribute in them parses.
const referenceModule = `module @jit_func attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2]>
  func.func public @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})
      -> (tensor<2x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<1x4xf32>) {
      %1 = "stablehlo.collective_permute"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<1x4xf32>) -> tensor<1x4xf32>
      sdy.return %1 : tensor<1x4xf32>
    } : (tensor<2x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}`

func TestReferenceModule(t *testing.T) {
	ops, err := MeshOpsInModule(referenceModule)
	require.NoError(t, err)
	require.Len(t, ops, 1)
	assert.Equal(t, `sdy.mesh @mesh = <["a"=2]>`, ops[0].String())
	attrs := regexp.MustCompile(`#sdy\.sharding<@mesh, \[[^\]]*\]>`).FindAllString(referenceModule, -1)
	require.Len(t, attrs, 2)
	for _, a := range attrs {
		s, err := ParseTensorSharding(a)
		require.NoError(t, err)
		require.NoError(t, s.ValidateIn(ops, 2))
	}
	lists := regexp.MustCompile(`_shardings=(\[[^=]*?\]>\])`).FindAllStringSubmatch(referenceModule, -1)
	require.Len(t, lists, 2)
	for _, l := range lists {
		got, err := ParseShardingList(l[1])
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, `<@mesh, [{"a"}, {}]>`, got[0].Stripped())
	}
	manual, err := ParseManualAxes(`{"a"}`)
	require.NoError(t, err)
	require.NoError(t, manual.Validate(ops[0].Mesh()))
}

// TestParseMeshOpJAX012 reads the mesh op JAX 0.12 writes, with its stablehlo.mesh dictionary.
func TestParseMeshOpJAX012(t *testing.T) {
	op, err := ParseMeshOp(`sdy.mesh @mesh_0 = <["X"=2, "Y"=4]> {stablehlo.mesh = {axes = [{name = "X", size = 2 : i64}, {name = "Y", size = 4 : i64}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := op.String(), `sdy.mesh @mesh_0 = <["X"=2, "Y"=4]>`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, bad := range []string{`sdy.mesh @m = <["X"=2]> {stablehlo.mesh = {`, `sdy.mesh @m = <["X"=2]> {"a}`} {
		if _, err := ParseMeshOp(bad); err == nil {
			t.Errorf("ParseMeshOp(%q) read", bad)
		}
	}
}

// TestMeshOpJAXString prints mesh ops as JAX 0.12's lowering does, device ids and maximal
// meshes included (the texts JAX 0.12.0.1 printed for these meshes), and reads them back.
func TestMeshOpJAXString(t *testing.T) {
	for _, want := range []string{
		`sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}`,
		`sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}], device_ids = dense<[0, 2, 4, 6, 1, 3, 5, 7]> : tensor<8xi64>}}`,
		`sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]> {stablehlo.mesh = {axes = [], device_ids = dense<0> : tensor<1xi64>}}`,
		`sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}`,
	} {
		op, err := ParseMeshOp(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := op.JAXString(); got != want {
			t.Errorf("JAXString() = %q, want %q", got, want)
		}
	}
}
