package jaxexport

import (
	"errors"
	"strings"
	"testing"
)

// twoMeshes sets up the named shardings of version 10: two abstract meshes and a sharding on
// each, argument 0 on the 4x2 mesh, argument 1 on the 8-device one with an Explicit axis.
func twoMeshes(a *artifact) {
	a.meshes = []testMesh{
		{sizes: []uint32{4, 2}, names: []string{"x", "y"}, types: []byte{1, 1}},
		{sizes: []uint32{8}, names: []string{"d"}, types: []byte{2}},
	}
	a.named = []testNamed{
		{mesh: 0, spec: [][]string{{"x"}, {"y"}}},
		{mesh: 1, spec: [][]string{{"d"}}, memoryKind: "pinned_host"},
	}
	a.inSh, a.outSh = nil, nil
	a.shardingIdx = []uint32{1, 2}
}

func TestReadNamedShardings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*artifact)
		want   [2]string
		memory string
	}{
		{"two meshes by index (version 10)", twoMeshes, [2]string{
			"NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'))",
			"NamedSharding(mesh=AbstractMesh('d': 8, axis_types=(Explicit,)), spec=P('d',))"}, "pinned_host"},
		{"named sharding alone, mesh inline (version 9)", func(a *artifact) {
			twoMeshes(a)
			a.named, a.shardingIdx = nil, nil
			a.inSh = []sharding{{kind: 2, named: &testNamed{mesh: 0, spec: [][]string{nil, {"x", "y"}}}}, {kind: 0}}
		}, [2]string{"NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P(None, ('x', 'y')))", "unspecified"}, ""},
		{"named sharding with its proto (versions 6 to 8)", func(a *artifact) {
			twoMeshes(a)
			a.named, a.shardingIdx = nil, nil
			v := valid()
			a.inSh, a.outSh = v.inSh, v.outSh
			a.inSh[0].kind, a.inSh[0].named = 2, &testNamed{mesh: 0, spec: [][]string{{"x"}, {"y"}}}
		}, [2]string{"{devices=[4,2]<=[8]}", "unspecified"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := valid()
			tc.edit(&a)
			e, err := Read(a.bytes())
			if err != nil {
				t.Fatal(err)
			}
			sh := e.InShardings()
			if sh[0].String() != tc.want[0] || sh[1].String() != tc.want[1] || sh[1].MemoryKind() != tc.memory {
				t.Errorf("InShardings() = %q, %q (memory %q); want %q, %q (memory %q)", sh[0], sh[1], sh[1].MemoryKind(), tc.want[0], tc.want[1], tc.memory)
			}
			if _, ok := sh[0].Named(); !ok {
				t.Error("in_shardings[0] has no named sharding")
			}
		})
	}
	for _, tc := range []struct {
		name string
		edit func(*artifact)
		kind error
		msg  string
	}{
		{"mesh index out of range", func(a *artifact) { twoMeshes(a); a.named[1].mesh = 2 }, ErrFormat, "abstract_mesh_idx 2; unique_abstract_meshes has 2"},
		{"unknown axis", func(a *artifact) { twoMeshes(a); a.named[0].spec = [][]string{{"z"}} }, ErrFormat, `unique_named_shardings[0]: malformed jax.export artifact: mesh: resource axis z of P('z',) (dim 0) is not found in mesh: ('x', 'y')`},
		{"reduced axes", func(a *artifact) { twoMeshes(a); a.named[0].reduced = []string{"x"} }, ErrUnsupported, `reduced axes ["x"]`},
		{"unknown axis type", func(a *artifact) { twoMeshes(a); a.meshes[1].types = []byte{7} }, ErrFormat, `axis "d" has unknown axis type 7`},
		{"sizes and names differ", func(a *artifact) { twoMeshes(a); a.meshes[1].names = nil }, ErrFormat, "abstract mesh with 1 sizes, 0 names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := valid()
			tc.edit(&a)
			_, err := Read(a.bytes())
			var e *Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Read: %v; want %v containing %q", err, tc.kind, tc.msg)
			}
		})
	}
}
