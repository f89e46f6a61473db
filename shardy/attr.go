package shardy

import "strings"

// Attr is an attribute value of this package. Attribute returns it as a
// standalone MLIR attribute, with the dialect prefix MLIR's printer gives it
// (as in a generic op's attribute dictionary): `#sdy.mesh<["x"=4]>`,
// `#sdy<manual_axes{"x"}>`, `#sdy.sharding<@mesh, [{"x"}]>`,
// `#sdy<all_to_all_param{"x"}: 0->1>`. ParseAttribute reads that text back.
//
// Attr is sealed: only this package's values implement it.
type Attr interface {
	Attribute() string
	isAttr()
}

var (
	_ Attr = Mesh{}
	_ Attr = MeshAxis{}
	_ Attr = SubAxisInfo{}
	_ Attr = AxisRef{}
	_ Attr = DimSharding{}
	_ Attr = TensorSharding{}
	_ Attr = TensorShardingPerValue{}
	_ Attr = ManualAxes{}
	_ Attr = AxisRefList{}
	_ Attr = ListOfAxisRefLists{}
	_ Attr = AllToAllParam{}
	_ Attr = AllToAllParamList{}
	_ Attr = DimMapping{}
	_ Attr = TensorMapping{}
	_ Attr = ShardingRule{}
)

// Attribute prefixes. An attribute whose text is an identifier followed by
// `<...>` prints in MLIR's pretty form `#sdy.name<...>`, any other in the
// form `#sdy<name...>`.
const (
	meshAttrPrefix     = "#sdy.mesh"
	shardingAttrPrefix = "#sdy.sharding"
	perValueAttrPrefix = "#sdy.sharding_per_value"
	ruleAttrPrefix     = "#sdy.op_sharding_rule"
	dimMappingPrefix   = "#sdy.dim_mapping" // followed by the symbols: #sdy.dim_mappingij
)

// writerTo is a value printed by the one writer.
type writerTo interface{ writeTo(b *strings.Builder) }

// pretty returns `prefix` followed by v's text.
func pretty(prefix string, v writerTo) string {
	var b strings.Builder
	b.WriteString(prefix)
	v.writeTo(&b)
	return b.String()
}

// generic returns `#sdy<mnemonic...>` around v's text.
func generic(mnemonic string, v writerTo) string {
	var b strings.Builder
	b.WriteString("#sdy<")
	b.WriteString(mnemonic)
	v.writeTo(&b)
	b.WriteByte('>')
	return b.String()
}

// Attribute returns `#sdy.mesh<["x"=4, "y"=2]>`.
func (m Mesh) Attribute() string { return pretty(meshAttrPrefix, m) }

// Attribute returns `#sdy<mesh_axis"x"=4>`.
func (a MeshAxis) Attribute() string { return generic("mesh_axis", a) }

// Attribute returns `#sdy<sub_axis_info(1)2>`.
func (s SubAxisInfo) Attribute() string { return generic("sub_axis_info", s) }

// Attribute returns `#sdy<axis_ref"x":(1)2>`.
func (a AxisRef) Attribute() string { return generic("axis_ref", a) }

// Attribute returns `#sdy<dimension_sharding{"x", ?}p1>`.
func (d DimSharding) Attribute() string { return generic("dimension_sharding", d) }

// Attribute returns the same as String: `#sdy.sharding<@mesh, [{"x"}]>`.
func (s TensorSharding) Attribute() string { return s.String() }

// Attribute returns the same as String: `#sdy.sharding_per_value<[...]>`.
func (p TensorShardingPerValue) Attribute() string { return p.String() }

// Attribute returns `#sdy<manual_axes{"x", "y"}>`.
func (a ManualAxes) Attribute() string { return generic("manual_axes", a) }

// Attribute returns `#sdy<axis_ref_list{"x", "y"}>`.
func (l AxisRefList) Attribute() string { return generic("axis_ref_list", l) }

// Attribute returns `#sdy<list_of_axis_ref_lists[{"x"}, {}]>`.
func (l ListOfAxisRefLists) Attribute() string { return generic("list_of_axis_ref_lists", l) }

// Attribute returns `#sdy<all_to_all_param{"x"}: 0->1>`.
func (p AllToAllParam) Attribute() string { return generic("all_to_all_param", p) }

// Attribute returns `#sdy<all_to_all_param_list[{"x"}: 0->1]>`.
func (l AllToAllParamList) Attribute() string { return generic("all_to_all_param_list", l) }

// Attribute returns `#sdy.dim_mappingij` (`#sdy.dim_mapping` when empty).
func (d DimMapping) Attribute() string { return pretty(dimMappingPrefix, d) }

// Attribute returns `#sdy<tensor_mapping[i, j]>`.
func (t TensorMapping) Attribute() string { return generic("tensor_mapping", t) }

// Attribute returns the same as String: `#sdy.op_sharding_rule<...>`.
func (r ShardingRule) Attribute() string { return r.String() }

func (Mesh) isAttr()                   {}
func (MeshAxis) isAttr()               {}
func (SubAxisInfo) isAttr()            {}
func (AxisRef) isAttr()                {}
func (DimSharding) isAttr()            {}
func (TensorSharding) isAttr()         {}
func (TensorShardingPerValue) isAttr() {}
func (ManualAxes) isAttr()             {}
func (AxisRefList) isAttr()            {}
func (ListOfAxisRefLists) isAttr()     {}
func (AllToAllParam) isAttr()          {}
func (AllToAllParamList) isAttr()      {}
func (DimMapping) isAttr()             {}
func (TensorMapping) isAttr()          {}
func (ShardingRule) isAttr()           {}
