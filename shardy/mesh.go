package shardy

import (
	"slices"
	"strings"
)

// MeshAxis is one named axis of a Mesh: `"x"=4`.
type MeshAxis struct {
	Name string
	Size int
}

// String returns the axis as in a mesh: `"x"=4`.
func (a MeshAxis) String() string {
	var b strings.Builder
	a.writeTo(&b)
	return b.String()
}

func (a MeshAxis) writeTo(b *strings.Builder) {
	writeQuoted(b, a.Name)
	b.WriteByte('=')
	writeInt(b, a.Size)
}

// Mesh is Shardy's mesh attribute `<["x"=4, "y"=2], device_ids=[...]>`:
// named axes, major to minor, and an optional device order.
//
// Without device_ids the device ids are iota(product of sizes) laid out
// row-major over the axes. A maximal mesh has no axes and exactly one device
// id (`<[], device_ids=[3]>`); the empty mesh has neither (`<[]>`).
//
// A Mesh is an immutable value: accessors return copies and it is safe for
// concurrent use. Construction does not check Shardy's rules; Validate does.
type Mesh struct {
	axes []MeshAxis
	ids  []int
}

// NewMesh returns the mesh with the given axes (major to minor) and device
// ids; pass nil for the default order. As in Shardy's MeshAttr builder,
// device ids equal to iota(product of the axis sizes) are dropped, so such
// a mesh prints without them and equals the mesh without ids. A maximal
// mesh (no axes, one id) keeps its id. NewMesh does not validate; call
// Validate.
func NewMesh(axes []MeshAxis, deviceIDs []int) Mesh {
	m := Mesh{axes: slices.Clone(axes)}
	if len(deviceIDs) > 0 && !isDefaultOrder(axes, deviceIDs) {
		m.ids = slices.Clone(deviceIDs)
	}
	return m
}

// isDefaultOrder reports whether ids are iota(product of the axis sizes)
// for a mesh with axes.
func isDefaultOrder(axes []MeshAxis, ids []int) bool {
	if len(axes) == 0 {
		return false
	}
	sizes := make([]int, len(axes))
	for i, a := range axes {
		sizes[i] = a.Size
	}
	return productCapped(sizes) == len(ids) && isIota(ids)
}

// MaximalMesh returns the maximal mesh on one device: `<[], device_ids=[id]>`.
func MaximalMesh(deviceID int) Mesh { return Mesh{ids: []int{deviceID}} }

// EmptyMesh returns the empty placeholder mesh `<[]>`.
func EmptyMesh() Mesh { return Mesh{} }

func isIota(ids []int) bool {
	for i, id := range ids {
		if id != i {
			return false
		}
	}
	return true
}

// Axes returns a copy of the mesh axes, major to minor.
func (m Mesh) Axes() []MeshAxis { return slices.Clone(m.axes) }

// NumAxes returns the number of axes.
func (m Mesh) NumAxes() int { return len(m.axes) }

// AxisNames returns the axis names, major to minor.
func (m Mesh) AxisNames() []string {
	names := make([]string, len(m.axes))
	for i, a := range m.axes {
		names[i] = a.Name
	}
	return names
}

// AxisSizes returns the axis sizes, major to minor.
func (m Mesh) AxisSizes() []int {
	sizes := make([]int, len(m.axes))
	for i, a := range m.axes {
		sizes[i] = a.Size
	}
	return sizes
}

// AxisIndex returns the position of the named axis, or -1.
func (m Mesh) AxisIndex(name string) int {
	for i, a := range m.axes {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// AxisSize returns the size of the named axis and whether it exists.
func (m Mesh) AxisSize(name string) (int, bool) {
	if i := m.AxisIndex(name); i >= 0 {
		return m.axes[i].Size, true
	}
	return 0, false
}

// Size returns the number of devices: the product of the axis sizes, or 1
// for a maximal mesh (and 1 for the empty mesh, the empty product). A product
// past 2^40 is reported as 2^40 rather than wrapping; Validate refuses it.
func (m Mesh) Size() int {
	sizes := make([]int, len(m.axes))
	for i, a := range m.axes {
		sizes[i] = a.Size
	}
	return productCapped(sizes) // never wraps: a huge product stays huge, and Validate refuses it
}

// DeviceIDs returns a copy of the explicit device ids, or nil when the mesh
// uses the default iota order.
func (m Mesh) DeviceIDs() []int { return slices.Clone(m.ids) }

// Devices returns the device ids in mesh (row-major) order, explicit or
// iota. It returns nil for an invalid mesh (an axis size below 1) and for
// meshes of more than 2^31 devices.
func (m Mesh) Devices() []int {
	if m.ids != nil {
		return slices.Clone(m.ids)
	}
	n := productCapped(m.AxisSizes())
	if n > maxDevices {
		return nil
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// IsMaximal reports whether m is a maximal mesh: no axes, one device id.
func (m Mesh) IsMaximal() bool { return len(m.axes) == 0 && len(m.ids) == 1 }

// IsEmpty reports whether m is the empty mesh `<[]>`.
func (m Mesh) IsEmpty() bool { return len(m.axes) == 0 && len(m.ids) == 0 }

// Equal reports whether m and o have the same axes and the same explicit
// device ids, that is, whether they print the same text.
func (m Mesh) Equal(o Mesh) bool {
	return slices.Equal(m.axes, o.axes) && slices.Equal(m.ids, o.ids)
}

// String returns the mesh attribute text: `<["x"=4, "y"=2]>`.
func (m Mesh) String() string {
	var b strings.Builder
	m.writeTo(&b)
	return b.String()
}

func (m Mesh) writeTo(b *strings.Builder) {
	b.WriteString("<[")
	for i, a := range m.axes {
		if i > 0 {
			b.WriteString(", ")
		}
		a.writeTo(b)
	}
	b.WriteByte(']')
	if len(m.ids) > 0 {
		b.WriteString(", device_ids=[")
		writeIDs(b, m.ids)
		b.WriteByte(']')
	}
	b.WriteByte('>')
}

// MeshOp is the module-level symbol op `sdy.mesh @mesh = <["x"=4, "y"=2]>`.
type MeshOp struct {
	name string
	mesh Mesh
}

// NewMeshOp returns the op defining symbol @name as m.
func NewMeshOp(name string, m Mesh) MeshOp { return MeshOp{name: name, mesh: m} }

// Name returns the symbol name, without '@'.
func (op MeshOp) Name() string { return op.name }

// Mesh returns the mesh the symbol stands for.
func (op MeshOp) Mesh() Mesh { return op.mesh }

// Equal reports whether op and o define the same name as the same mesh.
func (op MeshOp) Equal(o MeshOp) bool { return op.name == o.name && op.mesh.Equal(o.mesh) }

// String returns the op text as Shardy prints it: `sdy.mesh @mesh = <["x"=4, "y"=2]>`.
func (op MeshOp) String() string {
	var b strings.Builder
	op.writeTo(&b)
	return b.String()
}

// JAXString returns the op text as JAX 0.12's lowering prints it: Shardy's
// text, then the dictionary restating the mesh for StableHLO (StableHLOMesh):
//
//	sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
func (op MeshOp) JAXString() string {
	var b strings.Builder
	op.writeTo(&b)
	b.WriteString(" {stablehlo.mesh = ")
	op.mesh.writeStableHLO(&b)
	b.WriteByte('}')
	return b.String()
}

func (op MeshOp) writeTo(b *strings.Builder) {
	b.WriteString("sdy.mesh ")
	writeSymbol(b, op.name)
	b.WriteString(" = ")
	op.mesh.writeTo(b)
}

// StableHLOMesh returns the mesh as StableHLO's mesh dictionary, which JAX 0.12
// attaches to every `sdy.mesh` op as `stablehlo.mesh`:
// `{axes = [{name = "x", size = 4 : i64}], device_ids = dense<[1, 0, 3, 2]> : tensor<4xi64>}`
// (device_ids only when the mesh lists them; a one-id list prints as `dense<0>`).
func (m Mesh) StableHLOMesh() string {
	var b strings.Builder
	m.writeStableHLO(&b)
	return b.String()
}

func (m Mesh) writeStableHLO(b *strings.Builder) {
	b.WriteString("{axes = [")
	for i, a := range m.axes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("{name = ")
		writeQuoted(b, a.Name)
		b.WriteString(", size = ")
		writeInt(b, a.Size)
		b.WriteString(" : i64}")
	}
	b.WriteByte(']')
	if len(m.ids) > 0 {
		b.WriteString(", device_ids = dense<")
		if len(m.ids) > 1 {
			b.WriteByte('[')
		}
		writeIDs(b, m.ids)
		if len(m.ids) > 1 {
			b.WriteByte(']')
		}
		b.WriteString("> : tensor<")
		writeInt(b, len(m.ids))
		b.WriteString("xi64>")
	}
	b.WriteByte('}')
}

// writeIDs writes ids separated by ", ".
func writeIDs(b *strings.Builder, ids []int) {
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		writeInt(b, id)
	}
}

// lookupMesh finds the mesh named name among ops.
func lookupMesh(ops []MeshOp, name string) (Mesh, bool) {
	for _, op := range ops {
		if op.name == name {
			return op.mesh, true
		}
	}
	return Mesh{}, false
}
