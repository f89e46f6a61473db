package bytecode

import (
	"strconv"

	"github.com/xlamesh/xlamesh/mlir"
)

// Shardy (sdy) dialect attribute encodings (shardy/dialect/sdy/ir/bytecode.td): a varint
// code, then the fields; nested attributes are references to other entries.
const (
	sdyManualAxes = iota
	sdyMeshAxis
	sdyMesh
	sdySubAxisInfo
	sdyAxisRef
	sdyDimensionSharding
	sdyTensorShardingV1
	sdyTensorShardingPerValueV1
	sdyDimMapping
	sdyTensorMapping
	sdyOpShardingRule
	sdyAxisRefList
	sdyListOfAxisRefLists
	sdyAllToAllParam
	sdyAllToAllParamList
	sdyTensorShardingV2
	sdyTensorShardingPerValueV2
	sdyTensorShardingV3
)

// Decoded Shardy attributes. Each prints its own text (Shardy's assembly format), in
// full (#sdy.sharding<...>) or stripped where it is nested in another.
type (
	sManualAxes []string
	sMeshAxis   struct {
		name string
		size int64
	}
	sMesh struct {
		axes      []sMeshAxis
		deviceIDs []int64
	}
	sSubAxis struct{ pre, size int64 }
	sAxisRef struct {
		name string
		sub  *sSubAxis
	}
	sDim struct {
		axes     []sAxisRef
		closed   bool
		priority int64 // -1 when not set
	}
	sSharding struct {
		mesh       attr // aSymRef or sMesh
		dims       []sDim
		replicated []sAxisRef
		unreduced  []sAxisRef
		reduction  int64 // 0 sum, 1 max, 2 min (ReductionOp)
	}
	sPerValue       []sSharding
	sAxisRefList    []sAxisRef
	sListOfAxisRefs []sAxisRefList
	sAllToAllParam  struct {
		axes     []sAxisRef
		src, tgt int64
	}
	sAllToAllParamList []sAllToAllParam
	sDimMapping        []int64
	sTensorMapping     []sDimMapping
	sShardingRule      struct {
		factorSizes                                      []int64
		operands, results                                []sTensorMapping
		reduction, needReplication, permutation, blocked []int64
		custom                                           bool
	}
)

func (f *file) sdyAttr(d *decoder) attr {
	code := d.varint()
	if d.err != nil {
		return nil
	}
	switch code {
	case sdyManualAxes:
		n := d.count(1, "manual axis")
		axes := make(sManualAxes, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			axes = append(axes, f.stringAttr(d))
		}
		return axes
	case sdyMeshAxis:
		name := f.str(d)
		return sMeshAxis{name: name, size: d.svarint()}
	case sdyMesh:
		n := d.count(1, "mesh axis")
		m := sMesh{}
		for i := 0; i < n && d.err == nil; i++ {
			a, ok := f.attrRef(d).(sMeshAxis)
			if !ok && d.err == nil {
				d.fail("sdy mesh axis of another kind")
			}
			m.axes = append(m.axes, a)
		}
		m.deviceIDs = f.svarints(d)
		return m
	case sdySubAxisInfo:
		pre := d.svarint()
		return sSubAxis{pre: pre, size: d.svarint()}
	case sdyAxisRef:
		r := sAxisRef{name: f.str(d)}
		if i, ok := d.flagged(); ok {
			s, isSub := f.attrAt(d, i).(sSubAxis)
			if !isSub && d.err == nil {
				d.fail("sdy sub-axis info of another kind")
			}
			r.sub = &s
		}
		return r
	case sdyDimensionSharding:
		dim := sDim{axes: f.sdyAxisRefs(d), priority: -1}
		dim.closed = d.byte() != 0
		if p, ok := d.flagged(); ok {
			dim.priority = int64(p)
		}
		return dim
	case sdyTensorShardingV1, sdyTensorShardingV2, sdyTensorShardingV3:
		s := sSharding{mesh: f.attrRef(d)}
		switch s.mesh.(type) {
		case aSymRef, sMesh:
		default:
			if d.err == nil {
				d.fail("sdy sharding whose mesh is neither a mesh nor a symbol")
			}
		}
		n := d.count(1, "dimension sharding")
		for i := 0; i < n && d.err == nil; i++ {
			dim, ok := f.attrRef(d).(sDim)
			if !ok && d.err == nil {
				d.fail("sdy dimension sharding of another kind")
			}
			s.dims = append(s.dims, dim)
		}
		s.replicated = f.sdyAxisRefs(d)
		if code != sdyTensorShardingV1 {
			s.unreduced = f.sdyAxisRefs(d)
		}
		if code == sdyTensorShardingV3 {
			s.reduction = d.svarint()
		}
		return s
	case sdyTensorShardingPerValueV1, sdyTensorShardingPerValueV2:
		n := d.count(1, "sharding")
		pv := make(sPerValue, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			s, ok := f.attrRef(d).(sSharding)
			if !ok && d.err == nil {
				d.fail("sdy sharding of another kind")
			}
			pv = append(pv, s)
		}
		return pv
	case sdyAxisRefList:
		return sAxisRefList(f.sdyAxisRefs(d))
	case sdyListOfAxisRefLists:
		n := d.count(1, "axis list")
		l := make(sListOfAxisRefs, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			e, ok := f.attrRef(d).(sAxisRefList)
			if !ok && d.err == nil {
				d.fail("sdy axis list of another kind")
			}
			l = append(l, e)
		}
		return l
	case sdyAllToAllParam:
		p := sAllToAllParam{axes: f.sdyAxisRefs(d)}
		p.src = d.svarint()
		p.tgt = d.svarint()
		return p
	case sdyAllToAllParamList:
		n := d.count(1, "all-to-all parameter")
		l := make(sAllToAllParamList, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			e, ok := f.attrRef(d).(sAllToAllParam)
			if !ok && d.err == nil {
				d.fail("sdy all-to-all parameter of another kind")
			}
			l = append(l, e)
		}
		return l
	case sdyDimMapping:
		return sDimMapping(f.svarints(d))
	case sdyTensorMapping:
		n := d.count(1, "dim mapping")
		m := make(sTensorMapping, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			e, ok := f.attrRef(d).(sDimMapping)
			if !ok && d.err == nil {
				d.fail("sdy dim mapping of another kind")
			}
			m = append(m, e)
		}
		return m
	case sdyOpShardingRule:
		r := sShardingRule{factorSizes: f.svarints(d)}
		r.operands = f.sdyTensorMappings(d)
		r.results = f.sdyTensorMappings(d)
		r.reduction = f.svarints(d)
		r.needReplication = f.svarints(d)
		r.permutation = f.svarints(d)
		r.blocked = f.svarints(d)
		r.custom = d.byte() != 0
		return r
	}
	d.failKind(ErrUnsupported, "sdy attribute code %d", code)
	return nil
}

func (f *file) sdyTensorMappings(d *decoder) []sTensorMapping {
	n := d.count(1, "tensor mapping")
	out := make([]sTensorMapping, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		m, ok := f.attrRef(d).(sTensorMapping)
		if !ok && d.err == nil {
			d.fail("sdy tensor mapping of another kind")
		}
		out = append(out, m)
	}
	return out
}

func (f *file) sdyAxisRefs(d *decoder) []sAxisRef {
	n := d.count(1, "axis ref")
	out := make([]sAxisRef, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		r, ok := f.attrRef(d).(sAxisRef)
		if !ok && d.err == nil {
			d.fail("sdy axis ref of another kind")
		}
		out = append(out, r)
	}
	return out
}

// writeSdy prints a Shardy attribute in full; false for other attributes.
func writeSdy(b *textBuf, a attr) bool {
	switch a := a.(type) {
	case sManualAxes:
		b.WriteString("#sdy<manual_axes")
		writeNames(b, a)
		b.WriteByte('>')
	case sMeshAxis:
		b.WriteString("#sdy<mesh_axis")
		writeMeshAxis(b, a)
		b.WriteByte('>')
	case sMesh:
		b.WriteString("#sdy.mesh")
		writeMesh(b, a)
	case sSubAxis:
		b.WriteString("#sdy<sub_axis_info")
		writeSubAxis(b, a)
		b.WriteByte('>')
	case sAxisRef:
		b.WriteString("#sdy<axis_ref")
		writeAxisRef(b, a)
		b.WriteByte('>')
	case sDim:
		b.WriteString("#sdy<dimension_sharding")
		writeDim(b, a)
		b.WriteByte('>')
	case sSharding:
		b.WriteString("#sdy.sharding")
		writeSharding(b, a)
	case sPerValue:
		b.WriteString("#sdy.sharding_per_value<[")
		for i, s := range a {
			if b.done() {
				return true
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeSharding(b, s)
		}
		b.WriteString("]>")
	case sAxisRefList:
		b.WriteString("#sdy<axis_ref_list")
		writeAxisList(b, a)
		b.WriteByte('>')
	case sListOfAxisRefs:
		b.WriteString("#sdy<list_of_axis_ref_lists[")
		for i, l := range a {
			if b.done() {
				return true
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeAxisList(b, l)
		}
		b.WriteString("]>")
	case sAllToAllParam:
		b.WriteString("#sdy<all_to_all_param")
		writeAllToAll(b, a)
		b.WriteByte('>')
	case sAllToAllParamList:
		b.WriteString("#sdy<all_to_all_param_list[")
		for i, p := range a {
			if b.done() {
				return true
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeAllToAll(b, p)
		}
		b.WriteString("]>")
	case sShardingRule:
		b.WriteString("#sdy.op_sharding_rule<")
		writeShardingRule(b, a)
	default:
		return false
	}
	return true
}

func writeNames(b *textBuf, names []string) {
	b.WriteByte('{')
	for i, n := range names {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(mlir.Quote(n))
	}
	b.WriteByte('}')
}

func writeMeshAxis(b *textBuf, a sMeshAxis) {
	b.WriteString(mlir.Quote(a.name))
	b.WriteString("=" + strconv.FormatInt(a.size, 10))
}

func writeMesh(b *textBuf, m sMesh) {
	b.WriteString("<[")
	for i, a := range m.axes {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeMeshAxis(b, a)
	}
	b.WriteByte(']')
	if len(m.deviceIDs) > 0 {
		b.WriteString(", device_ids=" + dims(m.deviceIDs))
	}
	b.WriteByte('>')
}

func writeSubAxis(b *textBuf, s sSubAxis) {
	b.WriteString("(" + strconv.FormatInt(s.pre, 10) + ")" + strconv.FormatInt(s.size, 10))
}

func writeAxisRef(b *textBuf, r sAxisRef) {
	b.WriteString(mlir.Quote(r.name))
	if r.sub != nil {
		b.WriteByte(':')
		writeSubAxis(b, *r.sub)
	}
}

func writeAxisList(b *textBuf, l []sAxisRef) {
	b.WriteByte('{')
	for i, r := range l {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeAxisRef(b, r)
	}
	b.WriteByte('}')
}

func writeDim(b *textBuf, d sDim) {
	b.WriteByte('{')
	for i, r := range d.axes {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeAxisRef(b, r)
	}
	if !d.closed {
		if len(d.axes) > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('?')
	}
	b.WriteByte('}')
	if d.priority >= 0 {
		b.WriteString("p" + strconv.FormatInt(d.priority, 10))
	}
}

func writeSharding(b *textBuf, s sSharding) {
	b.WriteByte('<')
	switch m := s.mesh.(type) {
	case aSymRef:
		b.WriteString(mlir.Symbol(m.root))
	case sMesh:
		b.WriteString("mesh")
		writeMesh(b, m)
	}
	b.WriteString(", [")
	for i, d := range s.dims {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeDim(b, d)
	}
	b.WriteByte(']')
	if len(s.replicated) > 0 {
		b.WriteString(", replicated=")
		writeAxisList(b, s.replicated)
	}
	if len(s.unreduced) > 0 {
		b.WriteString(", unreduced=")
		switch s.reduction {
		case 1:
			b.WriteString("max")
		case 2:
			b.WriteString("min")
		}
		writeAxisList(b, s.unreduced)
	}
	b.WriteByte('>')
}

func writeAllToAll(b *textBuf, p sAllToAllParam) {
	b.WriteByte('{')
	for i, r := range p.axes {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeAxisRef(b, r)
	}
	b.WriteString("}:" + strconv.FormatInt(p.src, 10) + "->" + strconv.FormatInt(p.tgt, 10))
}

// factorSymbol names factor i as Shardy does: i, j, ..., z, then z_1, z_2, ...
func factorSymbol(i int64) string {
	const startAtZ = 'z' - 'i'
	if i >= 0 && i <= startAtZ {
		return string(rune('i' + i))
	}
	return "z_" + strconv.FormatInt(i-startAtZ, 10)
}

func writeMappings(b *textBuf, ms []sTensorMapping) {
	b.WriteByte('(')
	for i, m := range ms {
		if b.done() {
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('[')
		for j, dim := range m {
			if b.done() {
				return
			}
			if j > 0 {
				b.WriteString(", ")
			}
			for _, f := range dim {
				if b.done() {
					return
				}
				b.WriteString(factorSymbol(f))
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte(')')
}

func writeShardingRule(b *textBuf, r sShardingRule) {
	writeMappings(b, r.operands)
	b.WriteString("->")
	writeMappings(b, r.results)
	if len(r.factorSizes) > 0 {
		b.WriteString(" {")
		for i, s := range r.factorSizes {
			if b.done() {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(factorSymbol(int64(i)) + "=" + strconv.FormatInt(s, 10))
		}
		b.WriteByte('}')
	}
	for _, k := range []struct {
		name    string
		factors []int64
	}{{"reduction", r.reduction}, {"need_replication", r.needReplication}, {"permutation", r.permutation}, {"blocked_propagation", r.blocked}} {
		if len(k.factors) == 0 {
			continue
		}
		b.WriteString(" " + k.name + "={")
		for i, f := range k.factors {
			if b.done() {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(factorSymbol(f))
		}
		b.WriteByte('}')
	}
	if r.custom {
		b.WriteString(", custom")
	}
	b.WriteByte('>')
}
