package oracletest

import (
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

type meshProps struct {
	AxisNames []string  `json:"axis_names"`
	AxisSizes []int     `json:"axis_sizes"`
	AxisTypes []string  `json:"axis_types"`
	Size      int       `json:"size"`
	DeviceIDs []int     `json:"device_ids"`
	Str       string    `json:"str"`
	Repr      string    `json:"repr"`
	Error     *jaxError `json:"error,omitempty"`
}

type meshCase struct {
	caseHead
	Mesh meshJSON  `json:"mesh"`
	JAX  meshProps `json:"jax"`
}

func typeNames(ts []mesh.AxisType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

func compareMesh(want meshProps, m mesh.Mesh, withDevices bool) []string {
	var d []string
	eq(&d, "axis names", want.AxisNames, m.AxisNames())
	eq(&d, "axis sizes", want.AxisSizes, m.AxisSizes())
	eq(&d, "axis types", want.AxisTypes, typeNames(m.AxisTypes()))
	eq1(&d, "size", want.Size, m.Size())
	if withDevices {
		eq(&d, "device ids", want.DeviceIDs, m.DeviceIDs())
	}
	eq1(&d, "String", pyRepr(want.Str), m.String())
	return d
}

// TestMesh compares mesh.New (+ WithAxisTypes) with jax.sharding.Mesh.
func TestMesh(t *testing.T) {
	g := loadGolden[meshCase](t, "mesh")
	report.noteGroup("mesh", "`mesh.New(devices, shape, names...)` then `WithAxisTypes` against `jax.sharding.Mesh(np.array(devices).reshape(shape), names, axis_types=...)`. "+
		"Text forms: `Mesh.String` against JAX's `str(mesh)`, `Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))`, exactly; JAX's repr, `Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), axis_types=(Auto, Auto))`, is recorded in the golden but has no xlamesh counterpart.")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			m, err := buildMesh(c.Mesh)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil {
				d = compareMesh(c.JAX, m, true)
			}
			report.check(t, "mesh", c.Name, d)
		})
	}
}

type makeMeshCase struct {
	caseHead
	Shape []int     `json:"shape"`
	Names []string  `json:"names"`
	JAX   meshProps `json:"jax"`
	Types []string  `json:"types"`
}

// TestMakeMesh compares jax.make_mesh with mesh.MakeMesh on the 8 CPU devices: both take the
// first prod(shape) devices and give Explicit axes (JAX's default since 0.9).
func TestMakeMesh(t *testing.T) {
	g := loadGolden[makeMeshCase](t, "make_mesh")
	report.noteGroup("make_mesh", "`jax.make_mesh(shape, names, axis_types=...)` against `mesh.MakeMesh(the 8 CPU devices, shape, names, types...)`: the first prod(shape) devices, Explicit axes when no types are given; JAX's too-few-devices error against MakeMesh's.")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			types, err := parseTypes(c.Types)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mesh.MakeMesh(cpuDevices, c.Shape, c.Names, types...)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil {
				d = compareMesh(c.JAX, m, true)
			}
			report.check(t, "make_mesh", c.Name, d)
		})
	}
}

// TestAbstractMesh compares mesh.NewAbstract with jax.sharding.AbstractMesh.
func TestAbstractMesh(t *testing.T) {
	g := loadGolden[meshCase](t, "abstract_mesh")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var types []mesh.AxisType
			var err error
			if c.Mesh.Types != nil {
				types, err = parseTypes(c.Mesh.Types)
				if err != nil {
					t.Fatal(err)
				}
			}
			a, err := mesh.NewAbstract(c.Mesh.Shape, c.Mesh.Names, types...)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil {
				eq(&d, "axis names", c.JAX.AxisNames, a.AxisNames())
				eq(&d, "axis sizes", c.JAX.AxisSizes, a.AxisSizes())
				eq(&d, "axis types", c.JAX.AxisTypes, typeNames(a.AxisTypes()))
				eq1(&d, "size", c.JAX.Size, a.Size())
				eq1(&d, "String", pyRepr(c.JAX.Str), a.String())
			}
			report.check(t, "abstract_mesh", c.Name, d)
		})
	}
}
