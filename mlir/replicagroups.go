package mlir

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrReplicaGroups: mesh-axes replica groups DenseReplicaGroups cannot write as dense groups
// (a sub-axis, an unknown mesh or axis, a mesh with its own device order).
var ErrReplicaGroups = errors.New("unsupported mesh-axes replica groups")

// meshAxesAttr is the attribute JAX 0.12 writes for the replica groups of collectives over mesh
// axes: #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "Y">]>.
const meshAxesAttr = "#stablehlo.replica_group_mesh_axes"

// HasMeshAxesReplicaGroups reports whether text holds mesh-axes replica groups, which StableHLO
// older than JAX 0.12's (the PJRT API 0.81 CPU plugin) does not know.
func HasMeshAxesReplicaGroups(text string) bool { return strings.Contains(text, meshAxesAttr) }

// DenseReplicaGroups rewrites every mesh-axes replica groups attribute of text into the dense
// replica groups older StableHLO reads: the groups of the devices that differ only in the
// attribute's axes, by their position in the mesh (its device ids when collectives use global
// device ids and the mesh is in iota order), e.g. axes ["Y"] of <["X"=2, "Y"=4]> become
// dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>. Text without them is returned as it
// is. Errors wrap ErrSyntax, or ErrReplicaGroups for a sub-axis, an unknown mesh or axis, or a
// mesh with device_ids.
func DenseReplicaGroups(text string) (string, error) {
	if !HasMeshAxesReplicaGroups(text) {
		return text, nil
	}
	type span struct {
		off, end int
		mesh     string
		axes     []string
	}
	type meshDef struct {
		names []string
		sizes []int
		ids   bool
	}
	meshes := map[string]meshDef{}
	var spans []span
	s := NewScanner(text)
	toks := make([]Token, 0, 64)
	for t := s.Next(); t.Kind != EOF; t = s.Next() {
		toks = append(toks, t)
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	bad := func(t Token, format string, args ...any) error {
		return errorAt(text, t.Off, ErrReplicaGroups, t.Text, fmt.Sprintf(format, args...))
	}
	at := func(i int) Token {
		if i < len(toks) {
			return toks[i]
		}
		return Token{Kind: EOF, Off: len(text)}
	}
	expect := func(i int, k Kind, txt string) error {
		if t := at(i); t.Kind != k || txt != "" && t.Text != txt {
			return errorAt(text, t.Off, ErrSyntax, t.Text, fmt.Sprintf("expected %s %q", k, txt))
		}
		return nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Is(Ident, "sdy.mesh") && at(i+1).Kind == AtIdent:
			name, err := at(i + 1).Symbol()
			if err != nil {
				return "", err
			}
			if at(i+2).Text != "=" || at(i+3).Text != "<" || at(i+4).Text != "[" {
				continue // a mesh alias or another form: not needed unless referenced
			}
			var m meshDef
			j := i + 5
			for at(j).Kind == String {
				n, err := Unquote(at(j).Text)
				if err != nil {
					return "", err
				}
				if err := expect(j+1, Punct, "="); err != nil {
					return "", err
				}
				if err := expect(j+2, Int, ""); err != nil {
					return "", err
				}
				size, err := strconv.Atoi(at(j + 2).Text)
				if err != nil || size < 1 {
					return "", bad(at(j+2), "axis %q has size %s", n, at(j+2).Text)
				}
				m.names, m.sizes = append(m.names, n), append(m.sizes, size)
				j += 3
				if at(j).Text == "," {
					j++
				}
			}
			if err := expect(j, Punct, "]"); err != nil {
				return "", err
			}
			m.ids = at(j+1).Text == "," && at(j+2).Text == "device_ids"
			meshes[name] = m
			i = j
		case t.Is(HashIdent, meshAxesAttr):
			sp := span{off: t.Off}
			for k, w := range []struct {
				k   Kind
				txt string
			}{{Punct, "<"}, {Ident, "mesh"}, {Punct, "="}, {AtIdent, ""}, {Punct, ","}, {Ident, "axes"}, {Punct, "="}, {Punct, "["}} {
				if err := expect(i+1+k, w.k, w.txt); err != nil {
					return "", err
				}
			}
			var err error
			if sp.mesh, err = at(i + 4).Symbol(); err != nil {
				return "", err
			}
			j := i + 9
			for at(j).Is(HashIdent, "#stablehlo.axis_ref") {
				for k, w := range []struct {
					k   Kind
					txt string
				}{{Punct, "<"}, {Ident, "name"}, {Punct, "="}, {String, ""}} {
					if err := expect(j+1+k, w.k, w.txt); err != nil {
						return "", err
					}
				}
				n, err := Unquote(at(j + 4).Text)
				if err != nil {
					return "", err
				}
				if at(j+5).Text != ">" {
					return "", bad(at(j+5), "axis %q: sub-axes are not rewritten", n)
				}
				sp.axes = append(sp.axes, n)
				j += 6
				if at(j).Text == "," {
					j++
				}
			}
			if err := expect(j, Punct, "]"); err != nil {
				return "", err
			}
			if err := expect(j+1, Punct, ">"); err != nil {
				return "", err
			}
			sp.end = at(j + 1).End()
			spans = append(spans, sp)
			i = j + 1
		}
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		m, ok := meshes[sp.mesh]
		what := Token{Off: sp.off, Text: meshAxesAttr}
		if !ok {
			return "", bad(what, "mesh @%s is not defined", sp.mesh)
		}
		if m.ids {
			return "", bad(what, "mesh @%s has its own device_ids", sp.mesh)
		}
		b.WriteString(text[last:sp.off])
		groups, err := denseGroups(m.names, m.sizes, sp.axes)
		if err != nil {
			return "", bad(what, "%v", err)
		}
		b.WriteString(groups)
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// denseGroups returns the dense replica groups of axes over a mesh: one group per position of
// the other axes (row-major), its members the devices along axes in the order given.
func denseGroups(names []string, sizes []int, axes []string) (string, error) {
	const maxDevices = 1 << 20
	total := 1
	for _, n := range sizes {
		if n > maxDevices/total {
			return "", fmt.Errorf("a mesh of more than %d devices", maxDevices)
		}
		total *= n
	}
	strides := make([]int, len(sizes))
	for i, st := len(sizes)-1, 1; i >= 0; i-- {
		strides[i], st = st, st*sizes[i]
	}
	var in, out []int // mesh axis indices: in the groups (axes' order), and the others
	for _, a := range axes {
		k := slices.Index(names, a)
		if k < 0 {
			return "", fmt.Errorf("axis %q is not in the mesh %q", a, names)
		}
		if slices.Contains(in, k) {
			return "", fmt.Errorf("axis %q is named twice", a)
		}
		in = append(in, k)
	}
	for k := range names {
		if !slices.Contains(in, k) {
			out = append(out, k)
		}
	}
	// positions enumerates the row-major positions over the axes idx: the offset of each.
	positions := func(idx []int) []int {
		offs := []int{0}
		for _, k := range idx {
			next := make([]int, 0, len(offs)*sizes[k])
			for _, o := range offs {
				for v := range sizes[k] {
					next = append(next, o+v*strides[k])
				}
			}
			offs = next
		}
		return offs
	}
	members, bases := positions(in), positions(out)
	var b strings.Builder
	b.WriteString("dense<[")
	for g, base := range bases {
		if g > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('[')
		for i, m := range members {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(base + m))
		}
		b.WriteByte(']')
	}
	fmt.Fprintf(&b, "]> : tensor<%dx%dxi64>", len(bases), len(members))
	return b.String(), nil
}
