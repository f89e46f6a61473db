package hostile

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shardy"
)

// axisNameCase is mesh.New refusing one axis name XLA cannot carry through a compile.
func axisNameCase(name, axis string) *hcase {
	return &hcase{
		name: "mesh.New: axis name " + name, class: classNames, entry: "mesh.New",
		want: is("mesh.ErrAxisName", mesh.ErrAxisName, "mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
		as:   as[*mesh.AxisNameError]("*mesh.AxisNameError"),
		run: func(*H) error {
			_, err := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", axis)
			return err
		},
	}
}

func meshCases() []*hcase {
	sim8 := mesh.SimDevices(8)
	m8 := mesh.MustNew(sim8, []int{4, 2}, "x", "y")
	return []*hcase{
		axisNameCase("with a backslash", `a\b`),
		axisNameCase("outside ASCII (é)", "é"),
		axisNameCase("of invalid UTF-8", "\xff\xfe"),
		axisNameCase("with a newline", "x\n"),
		axisNameCase("with a NUL byte", "x\x00y"),
		axisNameCase("with DEL", "x\x7f"),
		{
			name: "mesh.NewAbstract: axis name with a backslash", class: classNames, entry: "mesh.NewAbstract",
			want: is("mesh.ErrAxisName", mesh.ErrAxisName), as: as[*mesh.AxisNameError]("*mesh.AxisNameError"),
			run: func(*H) error {
				_, err := mesh.NewAbstract([]int{8}, []string{`\`})
				return err
			},
		},
		{
			name: "mesh.New: empty axis name", class: classNames, entry: "mesh.New",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.New(sim8, []int{8}, "")
				return err
			},
		},
		{
			name: "mesh.New: one axis name twice", class: classNames, entry: "mesh.New",
			want: is("mesh.ErrDuplicateAxis", mesh.ErrDuplicateAxis),
			run: func(*H) error {
				_, err := mesh.New(sim8, []int{4, 2}, "x", "x")
				return err
			},
		},
		{
			name: "mesh.New: sizes 2^61+1 x 8 whose product wraps to 8", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrMeshSize", mesh.ErrMeshSize, "mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.New(sim8, []int{1<<61 + 1, 8}, "a", "b")
				return err
			},
		},
		{
			name: "mesh.New: sizes 2^32 x 2^32 whose product wraps to 0", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrMeshSize", mesh.ErrMeshSize),
			run: func(*H) error {
				_, err := mesh.New(nil, []int{1 << 32, 1 << 32}, "a", "b")
				return err
			},
		},
		{
			name: "mesh.NewAbstract: sizes 2^40 x 2^40", class: classPanics, entry: "mesh.NewAbstract",
			want: is("mesh.ErrMeshSize", mesh.ErrMeshSize, "mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				a, err := mesh.NewAbstract([]int{1 << 40, 1 << 40}, []string{"a", "b"})
				if err == nil {
					return fmt.Errorf("accepted, Size() = %d", a.Size())
				}
				return err
			},
		},
		{
			name: "mesh.NewAbstract: axis size MaxInt", class: classPanics, entry: "mesh.NewAbstract",
			want: is("mesh.ErrMeshSize", mesh.ErrMeshSize),
			run: func(*H) error {
				_, err := mesh.NewAbstract([]int{math.MaxInt}, []string{"a"})
				return err
			},
		},
		{
			name: "mesh.NewAbstract: axis size 0", class: classPanics, entry: "mesh.NewAbstract",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.NewAbstract([]int{0, 8}, []string{"a", "b"})
				return err
			},
		},
		{
			name: "mesh.NewAbstract: negative axis size", class: classPanics, entry: "mesh.NewAbstract",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.NewAbstract([]int{-8}, []string{"a"})
				return err
			},
		},
		{
			name: "mesh.NewAbstract: more names than sizes", class: classPanics, entry: "mesh.NewAbstract",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.NewAbstract([]int{8}, []string{"a", "b"})
				return err
			},
		},
		{
			name: "mesh.NewAbstract: axis type 99", class: classPanics, entry: "mesh.NewAbstract",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.NewAbstract([]int{8}, []string{"a"}, mesh.AxisType(99))
				return err
			},
		},
		{
			name: "mesh.New: nil devices in the list", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.New(make([]mesh.Device, 8), []int{4, 2}, "x", "y")
				return err
			},
		},
		{
			name: "mesh.New: no devices for a 4x2 mesh", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrDeviceCount", mesh.ErrDeviceCount),
			run: func(*H) error {
				_, err := mesh.New(nil, []int{4, 2}, "x", "y")
				return err
			},
		},
		{
			name: "mesh.New: one device twice", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrDuplicateDevice", mesh.ErrDuplicateDevice),
			run: func(*H) error {
				devs := mesh.SimDevices(2)
				_, err := mesh.New([]mesh.Device{devs[0], devs[0]}, []int{2}, "x")
				return err
			},
		},
		{
			name: "mesh.Create: sizes whose product overflows", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrMeshSize", mesh.ErrMeshSize),
			run: func(*H) error {
				_, err := mesh.Create(sim8, []int{1 << 62, 4}, []string{"a", "b"})
				return err
			},
		},
		{
			name: "Mesh.Device: coordinates outside the mesh", class: classPanics, entry: "mesh.New",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := m8.Device(4, -1)
				return err
			},
		},
		{
			name: "zero Mesh: every accessor", class: classPanics, entry: "mesh.New",
			run: func(*H) error {
				var m mesh.Mesh
				if m.Size() != 0 || m.NumAxes() != 0 || !m.Empty() || len(m.Devices()) != 0 || m.String() == "" {
					return wrongf("zero Mesh: size %d, axes %d, empty %v, %q", m.Size(), m.NumAxes(), m.Empty(), m.String())
				}
				return nil
			},
		},
		{
			name: "mesh.Visualize: nil io.Writer", class: classPanics, entry: "mesh.Visualize",
			want: is("mesh.ErrUnsupported", mesh.ErrUnsupported),
			run: func(*H) error {
				return mesh.Visualize(nil, mesh.MustNamedSharding(m8, mesh.P("x", "y")), []int{8, 8})
			},
		},
		{
			name: "mesh.Visualize: zero NamedSharding", class: classPanics, entry: "mesh.Visualize",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run:  func(*H) error { return mesh.Visualize(&bytes.Buffer{}, mesh.NamedSharding{}, []int{8, 8}) },
		},
		{
			name: "mesh.Visualize: rank-3 shape", class: classPanics, entry: "mesh.Visualize",
			want: is("mesh.ErrUnsupported", mesh.ErrUnsupported),
			run: func(*H) error {
				return mesh.Visualize(&bytes.Buffer{}, mesh.MustNamedSharding(m8, mesh.P("x")), []int{8, 8, 8})
			},
		},
		{
			name: "mesh.Visualize: negative dimension", class: classPanics, entry: "mesh.Visualize",
			want: is("mesh.ErrShape", mesh.ErrShape),
			run: func(*H) error {
				return mesh.Visualize(&bytes.Buffer{}, mesh.MustNamedSharding(m8, mesh.P("x")), []int{-8, 8})
			},
		},
		{
			name: "mesh.Visualize: a 2^40-wide array", class: classSilent, entry: "mesh.Visualize",
			run: func(*H) error {
				var b bytes.Buffer
				if err := mesh.Visualize(&b, mesh.MustNamedSharding(m8, mesh.P("x", "y")), []int{1 << 40, 1 << 40}); err != nil {
					return err
				}
				if !strings.Contains(b.String(), "CPU 0") || !strings.Contains(b.String(), "CPU 7") || b.Len() > 1<<16 {
					return wrongf("table of %d bytes:\n%s", b.Len(), b.String())
				}
				return nil
			},
		},
		{
			name: "mesh.NewNamedSharding: zero Mesh", class: classPanics, entry: "mesh shardings and specs",
			want: is("mesh.ErrInvalidMesh", mesh.ErrInvalidMesh),
			run: func(*H) error {
				_, err := mesh.NewNamedSharding(mesh.Mesh{}, mesh.P("x"))
				return err
			},
		},
		{
			name: "mesh.NewSpec: a float64 entry", class: classPanics, entry: "mesh shardings and specs",
			want: is("mesh.ErrInvalidSpec", mesh.ErrInvalidSpec),
			run: func(*H) error {
				_, err := mesh.NewSpec("x", 3.5)
				return err
			},
		},
		{
			name: "mesh.NewNamedSharding: a spec P(42)", class: classPanics, entry: "mesh shardings and specs",
			want: is("mesh.ErrInvalidSpec", mesh.ErrInvalidSpec),
			run: func(*H) error {
				_, err := mesh.NewNamedSharding(m8, mesh.P(42))
				return err
			},
		},
		{
			name: "mesh.NewNamedSharding: one axis in two dimensions", class: classSilent, entry: "mesh shardings and specs",
			want: is("mesh.ErrDuplicateAxis", mesh.ErrDuplicateAxis), as: as[*mesh.DuplicateAxisError]("*mesh.DuplicateAxisError"),
			run: func(*H) error {
				_, err := mesh.NewNamedSharding(m8, mesh.P("x", "x"))
				return err
			},
		},
		{
			name: "mesh.NewNamedSharding: unknown axis", class: classSilent, entry: "mesh shardings and specs",
			want: is("mesh.ErrUnknownAxis", mesh.ErrUnknownAxis), as: as[*mesh.UnknownAxisError]("*mesh.UnknownAxisError"),
			run: func(*H) error {
				_, err := mesh.NewNamedSharding(m8, mesh.P("w"))
				return err
			},
		},
		{
			name: "NamedSharding.ShardShape: negative dimension", class: classPanics, entry: "mesh shardings and specs",
			want: is("mesh.ErrShape", mesh.ErrShape),
			run: func(*H) error {
				_, err := mesh.MustNamedSharding(m8, mesh.P("x")).ShardShape([]int{-8})
				return err
			},
		},
		{
			name: "NamedSharding.ShardShape: spec longer than the shape", class: classPanics, entry: "mesh shardings and specs",
			want: is("mesh.ErrRank", mesh.ErrRank), as: as[*mesh.RankError]("*mesh.RankError"),
			run: func(*H) error {
				_, err := mesh.MustNamedSharding(m8, mesh.P("x", "y")).ShardShape([]int{8})
				return err
			},
		},
		{
			name: "NamedSharding.ShardShape: 7 rows over 4 devices", class: classSilent, entry: "mesh shardings and specs",
			want: is("mesh.ErrIndivisible", mesh.ErrIndivisible), as: as[*mesh.IndivisibleError]("*mesh.IndivisibleError"),
			run: func(*H) error {
				_, err := mesh.MustNamedSharding(m8, mesh.P("x")).ShardShape([]int{7})
				return err
			},
		},
		{
			name: "NamedSharding.DevicesIndicesMap: a 2^62 x 2^62 array", class: classSilent, entry: "mesh shardings and specs",
			run: func(*H) error {
				idx, err := mesh.MustNamedSharding(m8, mesh.P("x")).DevicesIndicesMap([]int{1 << 62, 1 << 62})
				if err != nil {
					return err
				}
				// Device 2 is at x=1: rows [2^60, 2^61), all columns.
				want := mesh.Index{{Start: 1 << 60, Stop: 1 << 61}, {Start: 0, Stop: 1 << 62}}
				if len(idx) != 8 || !slices.Equal(idx[2], want) {
					return wrongf("got %v, want device 2 to hold %v", idx, want)
				}
				return nil
			},
		},
		{
			name: "mesh.LogicalSharding: two logical axes on one mesh axis (the second gets None, as in flax)", class: classSilent, entry: "mesh shardings and specs",
			run: func(*H) error {
				s, err := mesh.LogicalSharding(m8, []string{"batch", "embed"}, []mesh.Rule{mesh.R("batch", "x"), mesh.R("embed", "x")})
				if err != nil {
					return err
				}
				if got := s.Spec().String(); got != "P('x', None)" {
					return wrongf("got %s, want P('x', None)", got)
				}
				return nil
			},
		},
		// Pod scale (issue 31): sizes where a quadratic path or an unbounded line shows.
		{
			name: "mesh.Visualize: a 1-D array over 65,536 devices", class: classSilent, entry: "mesh.Visualize",
			run: func(*H) error {
				m := mesh.MustNew(mesh.SimDevices(65536), []int{65536}, "x")
				var b strings.Builder
				if err := mesh.Visualize(&b, mesh.MustNamedSharding(m, mesh.P("x")), []int{65536}); err != nil {
					return err
				}
				// JAX's rich console crops each line to its 80 columns.
				want := "┌" + strings.Repeat("┬", 79) + "\n" + strings.Repeat("│", 80) + "\n" + "└" + strings.Repeat("┴", 79) + "\n"
				if got := b.String(); got != want {
					return wrongf("got %d bytes in %d lines, want JAX's 3 lines of 80 columns", len(got), strings.Count(got, "\n"))
				}
				return nil
			},
		},
		{
			name: "mesh shardings and specs: ProcessIndexAndCount, 65,536 devices in 8,192 processes", class: classHangs,
			entry: "mesh shardings and specs",
			run: func(*H) error {
				devices := make([]mesh.Device, 65536)
				for i := range devices {
					devices[i] = mesh.SimDevice{Id: i, Process: i / 8}
				}
				s := mesh.MustNamedSharding(mesh.MustNew(devices, []int{8192, 8}, "x", "y"), mesh.P("x"))
				idx, count, err := s.ProcessIndexAndCount(0, 2, 4321)
				if err != nil {
					return err
				}
				if idx != 4321 || count != 8192 {
					return wrongf("got (%d, %d), want (4321, 8192)", idx, count)
				}
				return nil
			},
		},
		{
			name: "mesh.New: 65,536 devices in 65,536 processes, ProcessIndices", class: classHangs, entry: "mesh.New",
			run: func(*H) error {
				devices := make([]mesh.Device, 65536)
				for i := range devices {
					devices[i] = mesh.SimDevice{Id: i, Process: 65535 - i}
				}
				m, err := mesh.New(devices, []int{256, 256}, "x", "y")
				if err != nil {
					return err
				}
				got := m.ProcessIndices()
				if len(got) != 65536 || got[0] != 0 || got[65535] != 65535 || !m.IsMultiProcess() {
					return wrongf("got %d process indices, want 0..65535", len(got))
				}
				return nil
			},
		},
	}
}

func shardyCases() []*hcase {
	parse := func(name string, cl class, text string, want ...any) *hcase {
		return &hcase{
			name: "shardy.ParseTensorSharding: " + name, class: cl, entry: "shardy parse",
			want: is(want...), as: as[*shardy.ParseError]("*shardy.ParseError"),
			run: func(*H) error {
				_, err := shardy.ParseTensorSharding(text)
				return err
			},
		}
	}
	// roundTrip: a name XLA would not take is still Shardy text; parsing and printing keep it.
	roundTrip := func(name, text string) *hcase {
		return &hcase{
			name: "shardy.ParseMesh: " + name + " round-trips", class: classNames, entry: "shardy parse",
			run: func(*H) error {
				m, err := shardy.ParseMesh(text)
				if err != nil {
					return err
				}
				back, err := shardy.ParseMesh(m.String())
				if err != nil || !back.Equal(m) {
					return wrongf("%s printed as %s, which parses back as %v (%v)", text, m, back, err)
				}
				return nil
			},
		}
	}
	mesh8 := shardy.MustParseMesh(`<["x"=8]>`)
	validate := func(name, sharding string, rank int, want ...any) *hcase {
		return &hcase{
			name: "TensorSharding.Validate: " + name, class: classSilent, entry: "shardy validate",
			want: is(want...),
			run: func(*H) error {
				s, err := shardy.ParseTensorSharding(sharding)
				if err != nil {
					return err
				}
				return s.Validate(mesh8, rank)
			},
		}
	}
	return []*hcase{
		parse("100,000 nested '['", classPrograms, "#sdy.sharding<@mesh, "+strings.Repeat("[", 100000), "shardy.ErrSyntax", shardy.ErrSyntax),
		parse("100,000 nested '{'", classPrograms, "#sdy.sharding<@mesh, ["+strings.Repeat("{", 100000), "shardy.ErrSyntax", shardy.ErrSyntax),
		parse("unterminated string", classNames, `#sdy.sharding<@mesh, [{"x`, "shardy.ErrSyntax", shardy.ErrSyntax),
		parse("unknown escape", classNames, `#sdy.sharding<@mesh, [{"x\q"}]>`, "shardy.ErrSyntax", shardy.ErrSyntax),
		parse("priority past int64", classSilent, `#sdy.sharding<@mesh, [{"x"}p99999999999999999999]>`, "shardy.ErrSyntax", shardy.ErrSyntax),
		parse("empty text", classPanics, ``, "shardy.ErrSyntax", shardy.ErrSyntax),
		{
			name: "shardy.ParseMesh: 100,000 nested '<'", class: classPrograms, entry: "shardy parse",
			want: is("shardy.ErrSyntax", shardy.ErrSyntax),
			run: func(*H) error {
				_, err := shardy.ParseMesh(strings.Repeat("<", 100000))
				return err
			},
		},
		{
			name: "shardy.ParseMesh: axis size past int64", class: classSilent, entry: "shardy parse",
			want: is("shardy.ErrSyntax", shardy.ErrSyntax),
			run: func(*H) error {
				_, err := shardy.ParseMesh(`<["x"=99999999999999999999]>`)
				return err
			},
		},
		roundTrip(`axis "a\\b"`, `<["a\\b"=2]>`),
		roundTrip(`axis "\C3\A9" (é)`, `<["\C3\A9"=2, "y"=4]>`),
		roundTrip(`axes with quotes, braces and spaces`, `<["a b"=2, "\22q"=2, "{}[]<>()=,:"=2]>`),
		{
			name: "shardy.ParseTensorSharding: raw invalid UTF-8 in an axis name round-trips", class: classNames, entry: "shardy parse",
			run: func(*H) error {
				s, err := shardy.ParseTensorSharding("#sdy.sharding<@mesh, [{\"\xff\"}]>")
				if err != nil {
					return err
				}
				back, err := shardy.ParseTensorSharding(s.String())
				if err != nil || !back.Equal(s) || s.Dim(0).Axes()[0].Name() != "\xff" {
					return wrongf("printed as %s, parsed back as %v (%v)", s, back, err)
				}
				return nil
			},
		},
		{
			name: "shardy.MeshOpsInModule: module 100,000 regions deep", class: classPrograms, entry: "shardy parse",
			want: is("mlir.ErrNesting", mlir.ErrNesting),
			run: func(*H) error {
				text := "module {\n  sdy.mesh @mesh = <[\"x\"=8]>\n" + strings.Repeat("{", 100000) + strings.Repeat("}", 100000) + "\n}\n"
				_, err := shardy.MeshOpsInModule(text)
				return err
			},
		},
		{
			name: "shardy.ValidateMeshOps: one mesh name twice", class: classSilent, entry: "shardy validate",
			want: is("shardy.ErrDuplicateMesh", shardy.ErrDuplicateMesh),
			run: func(*H) error {
				ops, err := shardy.ParseMeshOps("sdy.mesh @m = <[\"x\"=2]>\nsdy.mesh @m = <[\"y\"=2]>")
				if err != nil {
					return err
				}
				return shardy.ValidateMeshOps(ops)
			},
		},
		{
			name: "shardy.Mesh.Validate: axis sizes whose product overflows int64", class: classSilent, entry: "shardy validate",
			want: is("shardy.ErrAxisSize", shardy.ErrAxisSize),
			run: func(*H) error {
				m, err := shardy.ParseMesh(`<["a"=4294967296, "b"=4294967296, "c"=4294967296]>`)
				if err != nil {
					return err
				}
				if m.Size() <= 0 {
					return fmt.Errorf("%s: Size() = %d, Validate() = %v", m, m.Size(), m.Validate())
				}
				return m.Validate()
			},
		},
		{
			name: "shardy.Mesh.Validate: device id repeated", class: classSilent, entry: "shardy validate",
			want: is("shardy.ErrDeviceIDs", shardy.ErrDeviceIDs),
			run:  func(*H) error { return shardy.MustParseMesh(`<["x"=4], device_ids=[0, 1, 2, 2]>`).Validate() },
		},
		{
			name: "shardy.Mesh.Validate: negative device id", class: classSilent, entry: "shardy validate",
			want: is("shardy.ErrDeviceIDs", shardy.ErrDeviceIDs),
			run:  func(*H) error { return shardy.MustParseMesh(`<["x"=2], device_ids=[-1, 0]>`).Validate() },
		},
		{
			name: "shardy.Mesh.Validate: axis size 0", class: classSilent, entry: "shardy validate",
			want: is("shardy.ErrAxisSize", shardy.ErrAxisSize),
			run: func(*H) error {
				m, err := shardy.ParseMesh(`<["x"=0]>`)
				if err != nil {
					return err
				}
				return m.Validate()
			},
		},
		validate("sub-axis with pre-size 2^62", `#sdy.sharding<@mesh, [{"x":(4611686018427387904)4}]>`, 1, "shardy.ErrSubAxis", shardy.ErrSubAxis),
		validate("sub-axis with pre-size -1", `#sdy.sharding<@mesh, [{"x":(-1)2}]>`, 1, "shardy.ErrSubAxis", shardy.ErrSubAxis),
		validate("sub-axis (0)0", `#sdy.sharding<@mesh, [{"x":(0)0}]>`, 1, "shardy.ErrSubAxis", shardy.ErrSubAxis),
		validate("one axis in two dimensions", `#sdy.sharding<@mesh, [{"x"}, {"x"}]>`, 2, "shardy.ErrDuplicateAxisRef", shardy.ErrDuplicateAxisRef),
		validate("rank 2 sharding of a rank-1 value", `#sdy.sharding<@mesh, [{"x"}, {}]>`, 1, "shardy.ErrRank", shardy.ErrRank),
		validate("unknown axis", `#sdy.sharding<@mesh, [{"z"}]>`, 1, "shardy.ErrUnknownAxis", shardy.ErrUnknownAxis),
		{
			name: "shardy.GSPMD: zero NamedSharding", class: classPanics, entry: "shardy validate",
			want: is("shardy.ErrSpec", shardy.ErrSpec),
			run: func(*H) error {
				_, err := shardy.GSPMD(mesh.NamedSharding{}, 2)
				return err
			},
		},
		{
			name: "shardy.FromNamedSharding: negative rank", class: classPanics, entry: "shardy validate",
			want: is("shardy.ErrRank", shardy.ErrRank),
			run: func(*H) error {
				m := mesh.MustNew(mesh.SimDevices(8), []int{8}, "x")
				_, err := shardy.FromNamedSharding(mesh.MustNamedSharding(m, mesh.P("x")), "mesh", -1)
				return err
			},
		},
	}
}
