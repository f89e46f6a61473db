package bytecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/shardy"
)

// sv encodes a signed varint's value (zigzag).
func sv(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// tableEntry is an entry of a hand-made attribute table: its dialect (0 builtin, 1 sdy)
// and its encoding.
type tableEntry struct {
	dialect int
	enc     enc
}

// attrTable builds a file whose attribute table holds the given entries, over the
// strings "x", "y", "m".
func attrTable(entries ...tableEntry) *file {
	f := &file{strs: []string{"x", "y", "m"}, dialects: []dialect{{name: "builtin"}, {name: "sdy"}}}
	for _, e := range entries {
		start := len(f.in)
		f.in = append(f.in, e.enc...)
		f.attrs = append(f.attrs, entry{dialect: e.dialect, custom: true, span: span{start, len(f.in)}})
	}
	f.sdyLeft = sdyLimit(len(f.in))
	return f
}

func sdyEntry(e *enc) tableEntry { return tableEntry{1, *e} }

// sdyTable is one of each Shardy attribute, with the text of each. The texts are what
// jaxlib 0.12.0.1 prints for these attributes.
func sdyTable() (*file, map[int]string) {
	var e []enc
	add := func(x *enc) { e = append(e, *x) }
	add(new(enc).varint(bString).varint(0))                   // a0 "x"
	add(new(enc).varint(bString).varint(1))                   // a1 "y"
	add(new(enc).varint(bString).varint(2))                   // a2 "m"
	add(new(enc).varint(bFlatSymbolRef).varint(2))            // a3 @m
	add(new(enc).varint(sdyMeshAxis).varint(0).varint(sv(4))) // a4 "x"=4
	add(new(enc).varint(sdyMeshAxis).varint(1).varint(sv(2))) // a5 "y"=2
	add(new(enc).varint(sdyMesh).varint(2).varint(4).varint(5).varint(0))
	iota := new(enc).varint(sdyMesh).varint(2).varint(4).varint(5).varint(8)
	rev := new(enc).varint(sdyMesh).varint(2).varint(4).varint(5).varint(8)
	for i := range 8 {
		iota.varint(sv(int64(i)))
		rev.varint(sv(int64(7 - i)))
	}
	add(iota)                                                        // a7
	add(rev)                                                         // a8
	add(new(enc).varint(sdySubAxisInfo).varint(sv(1)).varint(sv(2))) // a9 (1)2
	add(new(enc).varint(sdyAxisRef).varint(0).flagged(0, false))     // a10 "x"
	add(new(enc).varint(sdyAxisRef).varint(1).flagged(9, true))      // a11 "y":(1)2
	add(new(enc).varint(sdyDimensionSharding).varint(1).varint(10).raw(1).flagged(0, false))
	add(new(enc).varint(sdyDimensionSharding).varint(1).varint(11).raw(0).flagged(3, true))
	add(new(enc).varint(sdyTensorShardingV1).varint(3).varint(2).varint(12).varint(13).varint(1).varint(11))
	add(new(enc).varint(sdyTensorShardingV2).varint(6).varint(1).varint(12).varint(0).varint(1).varint(11))
	add(new(enc).varint(sdyTensorShardingV3).varint(3).varint(0).varint(0).varint(1).varint(10).varint(sv(sdyReduceMax)))
	add(new(enc).varint(sdyTensorShardingPerValueV1).varint(2).varint(14).varint(16)) // a17
	add(new(enc).varint(sdyManualAxes).varint(2).varint(0).varint(1))                 // a18
	add(new(enc).varint(sdyAxisRefList).varint(2).varint(10).varint(11))              // a19
	add(new(enc).varint(sdyAxisRefList).varint(0))                                    // a20
	add(new(enc).varint(sdyListOfAxisRefLists).varint(2).varint(19).varint(20))       // a21
	add(new(enc).varint(sdyAllToAllParam).varint(1).varint(10).varint(sv(0)).varint(sv(1)))
	add(new(enc).varint(sdyAllToAllParamList).varint(2).varint(22).varint(22)) // a23
	add(new(enc).varint(sdyDimMapping).varint(1).varint(sv(0)))                // a24 i
	add(new(enc).varint(sdyDimMapping).varint(2).varint(sv(1)).varint(sv(2)))  // a25 jk
	add(new(enc).varint(sdyTensorMapping).varint(2).varint(24).varint(25))     // a26
	add(new(enc).varint(sdyTensorMapping).varint(1).varint(24))                // a27
	add(new(enc).varint(sdyOpShardingRule).varint(3).varint(sv(8)).varint(sv(16)).varint(sv(8)).
		varint(1).varint(26).varint(1).varint(27).
		varint(1).varint(sv(1)).varint(0).varint(0).varint(1).varint(sv(2)).raw(1)) // a28
	add(new(enc).varint(sdyMesh).varint(0).varint(1).varint(sv(3)))                                            // a29
	add(new(enc).varint(sdyTensorShardingV1).varint(29).varint(0).varint(0))                                   // a30
	add(new(enc).varint(sdyDimMapping).varint(0))                                                              // a31
	add(new(enc).varint(sdyTensorMapping).varint(2).varint(31).varint(24))                                     // a32
	add(new(enc).varint(sdyTensorShardingV3).varint(3).varint(0).varint(0).varint(1).varint(10).varint(sv(7))) // a33
	var entries []tableEntry
	for i := range e {
		entries = append(entries, tableEntry{min(i/4, 1), e[i]}) // a0 to a3 are builtin
	}
	return attrTable(entries...), map[int]string{
		4:  `#sdy<mesh_axis"x"=4>`,
		6:  `#sdy.mesh<["x"=4, "y"=2]>`,
		7:  `#sdy.mesh<["x"=4, "y"=2]>`, // device ids equal to iota are dropped, as Shardy's MeshAttr builder does
		8:  `#sdy.mesh<["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>`,
		9:  `#sdy<sub_axis_info(1)2>`,
		10: `#sdy<axis_ref"x">`,
		11: `#sdy<axis_ref"y":(1)2>`,
		12: `#sdy<dimension_sharding{"x"}>`,
		13: `#sdy<dimension_sharding{"y":(1)2, ?}p3>`,
		14: `#sdy.sharding<@m, [{"x"}, {"y":(1)2, ?}p3], replicated={"y":(1)2}>`,
		15: `#sdy.sharding<mesh<["x"=4, "y"=2]>, [{"x"}], unreduced={"y":(1)2}>`,
		16: `#sdy.sharding<@m, [], unreduced=max{"x"}>`,
		17: `#sdy.sharding_per_value<[<@m, [{"x"}, {"y":(1)2, ?}p3], replicated={"y":(1)2}>, <@m, [], unreduced=max{"x"}>]>`,
		18: `#sdy<manual_axes{"x", "y"}>`,
		19: `#sdy<axis_ref_list{"x", "y":(1)2}>`,
		21: `#sdy<list_of_axis_ref_lists[{"x", "y":(1)2}, {}]>`,
		22: `#sdy<all_to_all_param{"x"}: 0->1>`,
		23: `#sdy<all_to_all_param_list[{"x"}: 0->1, {"x"}: 0->1]>`,
		24: `#sdy.dim_mappingi`,
		26: `#sdy<tensor_mapping[i, jk]>`,
		28: `#sdy.op_sharding_rule<([i, jk])->([i]) {i=8, j=16, k=8} reduction={j} blocked_propagation={k}, custom>`,
		30: `#sdy.sharding<mesh<[], device_ids=[3]>, []>`,
		32: `#sdy<tensor_mapping[#sdy.dim_mapping, i]>`,
		33: `#sdy.sharding<@m, [], unreduced={"x"}>`, // a ReductionOp Shardy does not know prints as sum
	}
}

// TestSdyAttributes decodes one of each Shardy attribute and prints it with package
// shardy's printer.
func TestSdyAttributes(t *testing.T) {
	f, want := sdyTable()
	for i, w := range want {
		d := newDecoder(nil, 0, 0, "test")
		a := f.attrAt(d, uint64(i))
		if d.err != nil {
			t.Errorf("a%d: %v", i, d.err)
			continue
		}
		b := &textBuf{bud: &budget{left: 1 << 20}}
		if !writeSdy(b, a) {
			t.Errorf("a%d: %T is not a Shardy attribute", i, a)
			continue
		}
		if got := b.String(); got != w {
			t.Errorf("a%d = %s, want %s", i, got, w)
		}
		if got, v := f.attrs[i].size, a.(shardy.Attr); got != sdyNestedLen(v) || got == 0 {
			t.Errorf("a%d: size %d, text %d", i, got, sdyNestedLen(v))
		}
	}
}

// TestSdyErrors: references to attributes of the wrong kind, codes this reader does not
// know, and attributes whose text would grow past the limit are errors.
func TestSdyErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		enc  *enc
		kind error
		msg  string
	}{
		{"axis ref is a mesh axis", new(enc).varint(sdyDimensionSharding).varint(1).varint(4).raw(1).flagged(0, false), ErrBytecode, "sdy axis ref of another kind"},
		{"mesh is a string", new(enc).varint(sdyTensorShardingV1).varint(0).varint(0).varint(0), ErrBytecode, "sdy sharding whose mesh is neither a mesh nor a symbol"},
		{"sub-axis is an axis ref", new(enc).varint(sdyAxisRef).varint(0).flagged(10, true), ErrBytecode, "sdy sub-axis info of another kind"},
		{"unknown code", new(enc).varint(18), ErrUnsupported, "sdy attribute code 18"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _ := sdyTable()
			f = attrTable(append(entriesOf(f), sdyEntry(c.enc))...)
			d := newDecoder(nil, 0, 0, "test")
			f.attrAt(d, uint64(len(f.attrs)-1))
			if !errors.Is(d.err, c.kind) || !strings.Contains(d.err.Error(), c.msg) {
				t.Fatalf("error %v, want %v with %q", d.err, c.kind, c.msg)
			}
		})
	}
}

// TestSdyBlowup: a per-value list of n references to a sharding of n references to a
// dimension of n references to one axis is a few kilobytes of bytecode and n³ axis
// references of text; decoding it fails once the text passes sdyLimit, without building
// it.
func TestSdyBlowup(t *testing.T) {
	const n = 3000
	dim := new(enc).varint(sdyDimensionSharding).varint(n)
	sharding := new(enc).varint(sdyTensorShardingV1).varint(3).varint(n)
	perValue := new(enc).varint(sdyTensorShardingPerValueV1).varint(n)
	for range n {
		dim.varint(10)
		sharding.varint(34)
		perValue.varint(35)
	}
	dim.raw(1).flagged(0, false)
	sharding.varint(0)
	f, _ := sdyTable()
	f = attrTable(append(entriesOf(f), sdyEntry(dim), sdyEntry(sharding), sdyEntry(perValue))...)
	d := newDecoder(nil, 0, 0, "test")
	f.attrAt(d, 34)
	if d.err != nil {
		t.Fatalf("the dimension (%d bytes of text): %v", f.attrs[34].size, d.err)
	}
	f.attrAt(d, 36)
	if !errors.Is(d.err, ErrUnsupported) || !strings.Contains(d.err.Error(), "Shardy attributes would print more than") {
		t.Fatalf("error %v", d.err)
	}
	if f.attrs[35].state == 2 {
		t.Errorf("the sharding was built: %d bytes of text", f.attrs[35].size)
	}
}

// entriesOf returns the entries of a file attrTable built.
func entriesOf(f *file) []tableEntry {
	var out []tableEntry
	for _, e := range f.attrs {
		out = append(out, tableEntry{e.dialect, enc(f.in[e.start:e.end])})
	}
	return out
}
