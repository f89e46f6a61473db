package bytecode

import (
	"bytes"

	"github.com/xlamesh/xlamesh/mlir"
)

// The bytecode versions this reader knows (MLIR's Encoding.h).
const (
	versionDialectVersioning       = 1 // dialects may carry a version
	versionLazyLoading             = 2 // isolated regions are sections
	versionUseListOrdering         = 3 // use-list orders follow results and block arguments
	versionElideUnknownBlockArgLoc = 4 // block arguments flag their location; op count in the dialect section
	versionNativeProperties        = 5 // properties section; op names say whether they were registered
	versionMax                     = 6
)

// Section ids.
const (
	secString = iota
	secDialect
	secAttrType
	secAttrTypeOffset
	secIR
	secResource
	secResourceOffset
	secDialectVersions
	secProperties
	numSections
)

var sectionNames = [numSections]string{"string", "dialect", "attr/type", "attr/type offset", "ir", "resource", "resource offset", "dialect version", "properties"}

// magic starts every MLIR bytecode file.
const magic = "ML\xefR"

// Resource entry kinds (AsmResourceEntryKind).
const (
	resourceBlob = iota
	resourceBool
	resourceString
)

// file is a parsed bytecode file: its tables, with attributes and types decoded on demand.
type file struct {
	in       []byte
	version  uint64
	producer string
	strs     []string
	dialects []dialect
	opNames  []opName
	attrs    []entry
	types    []entry
	props    []span // raw property blobs, by index
	handles  []resourceHandle
	// values counts the value slots reserved so far; a well-formed file reserves at most
	// one per byte, which bounds memory on hostile input.
	values int
	depth  int // current attribute/type decoding depth
	// sdyLeft is how much more text the Shardy attributes may print (see sdyText).
	sdyLeft int
}

type dialect struct {
	name    string
	version []byte
}

type opName struct {
	dialect    int
	name       string
	registered int // 1 registered, 0 not, -1 not recorded (bytecode < 5)
}

func (o opName) full(f *file) string { return f.dialects[o.dialect].name + "." + o.name }

type span struct{ start, end int }

// entry is one attribute or type of the tables.
type entry struct {
	dialect int
	custom  bool // dialect encoding; otherwise NUL-terminated assembly text
	span
	state int8 // 0 not read, 1 being read (a cycle if seen again), 2 read
	attr  attr
	typ   typ
	size  int // a Shardy attribute's text length, where another holds it (sdyNestedLen)
}

type resourceHandle struct {
	dialect int
	key     string
	kind    byte
	data    []byte // blob contents (kind resourceBlob), nil if the entry was empty
	found   bool
}

// IsBytecode reports whether b starts with MLIR bytecode's magic number "ML\xefR".
func IsBytecode(b []byte) bool { return bytes.HasPrefix(b, []byte(magic)) }

// Info is the header of a bytecode file.
type Info struct {
	Version  uint64 // the bytecode format version (0 to 6)
	Producer string // for a StableHLO portable artifact, "StableHLO_v" and the StableHLO version
}

// ReadInfo returns the header of b. Errors are *Error wrapping ErrBytecode (not bytecode)
// or ErrUnsupported (a format version newer than 6).
func ReadInfo(b []byte) (Info, error) {
	d := newDecoder(b, 0, len(b), "header")
	info := readHeader(d)
	return info, d.err
}

func readHeader(d *decoder) Info {
	if !IsBytecode(d.in[d.pos:d.end]) {
		d.fail("no MLIR bytecode magic number")
		return Info{}
	}
	d.pos += len(magic)
	v := d.varint()
	if d.err == nil && v > versionMax {
		d.failKind(ErrUnsupported, "bytecode version %d (this reader knows 0 to %d)", v, versionMax)
	}
	p := d.cstring()
	return Info{Version: v, Producer: p}
}

// parse reads the header and every table of b, and the IR.
func parse(b []byte) (*file, *op, error) {
	f := &file{in: b, sdyLeft: sdyLimit(len(b))}
	d := newDecoder(b, 0, len(b), "header")
	info := readHeader(d)
	if d.err != nil {
		return nil, nil, d.err
	}
	f.version, f.producer = info.Version, info.Producer
	var secs [numSections]*decoder
	for !d.empty() {
		start := d.pos
		id, body := d.section("header")
		if d.err != nil {
			break
		}
		if int(id) >= numSections || id == secDialectVersions {
			d.pos = start
			d.fail("unknown top-level section id %d", id)
			break
		}
		if secs[id] != nil {
			d.pos = start
			d.fail("second %s section", sectionNames[id])
			break
		}
		body.sec = sectionNames[id]
		secs[id] = body
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	for id, s := range secs {
		optional := id == secResource || id == secResourceOffset || id == secDialectVersions ||
			(id == secProperties && f.version < versionNativeProperties)
		if s == nil && !optional {
			return nil, nil, &Error{Kind: ErrBytecode, Section: "header", Off: -1, Msg: "no " + sectionNames[id] + " section"}
		}
	}
	for _, step := range []func() error{
		func() error { return f.readStrings(secs[secString]) },
		func() error { return f.readProperties(secs[secProperties]) },
		func() error { return f.readDialects(secs[secDialect]) },
		func() error { return f.readResources(secs[secResource], secs[secResourceOffset]) },
		func() error { return f.readAttrTypeOffsets(secs[secAttrType], secs[secAttrTypeOffset]) },
	} {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	top, err := f.readIR(secs[secIR])
	if err != nil {
		return nil, nil, err
	}
	return f, top, nil
}

func (f *file) readStrings(d *decoder) error {
	n := d.count(1, "string")
	f.strs = make([]string, n)
	// Lengths come first, in reverse order; the NUL-terminated data ends the section.
	dataEnd := d.end
	for i := n - 1; i >= 0 && d.err == nil; i-- {
		size := d.varint()
		if d.err != nil {
			break
		}
		// The lengths and the data share the section: the data left for this string is
		// what lies between the end of the lengths read so far and the start of the
		// strings read so far. Once the lengths run into the data there is none (the
		// difference is negative and must not be converted to unsigned).
		if avail := dataEnd - d.pos; size == 0 || avail <= 0 || size > uint64(avail) {
			d.fail("string %d has size %d, more than the section holds", i, size)
			break
		}
		start := dataEnd - int(size)
		if f.in[dataEnd-1] != 0 {
			d.fail("string %d is not NUL-terminated", i)
			break
		}
		f.strs[i] = string(f.in[start : dataEnd-1])
		dataEnd = start
	}
	if d.err == nil && d.pos != dataEnd {
		d.fail("%d bytes between the string lengths and their data", dataEnd-d.pos)
	}
	return d.err
}

func (f *file) str(d *decoder) string {
	i := d.varint()
	if d.err != nil {
		return ""
	}
	if i >= uint64(len(f.strs)) {
		d.fail("string index %d out of range (%d strings)", i, len(f.strs))
		return ""
	}
	return f.strs[i]
}

func (f *file) readProperties(d *decoder) error {
	if d == nil || d.empty() {
		return nil
	}
	n := d.count(1, "properties")
	f.props = make([]span, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		size := d.varint()
		start := d.pos
		d.bytes(size)
		f.props = append(f.props, span{start, d.pos})
	}
	if d.err == nil && !d.empty() {
		d.fail("%d bytes after the last property entry", d.left())
	}
	return d.err
}

func (f *file) readDialects(d *decoder) error {
	n := d.count(1, "dialect")
	f.dialects = make([]dialect, n)
	for i := 0; i < n && d.err == nil; i++ {
		if f.version < versionDialectVersioning {
			f.dialects[i].name = f.str(d)
			continue
		}
		idx, versioned := d.flagged()
		if d.err == nil && idx >= uint64(len(f.strs)) {
			d.fail("dialect name index %d out of range", idx)
			break
		}
		if d.err != nil {
			break
		}
		f.dialects[i].name = f.strs[idx]
		if versioned {
			id, body := d.section("dialect")
			if d.err == nil && id != secDialectVersions {
				d.fail("dialect %q: section id %d, want a dialect version section", f.dialects[i].name, id)
			}
			f.dialects[i].version = f.in[body.pos:body.end]
		}
	}
	if f.version >= versionElideUnknownBlockArgLoc {
		d.varint() // the number of op names, a size hint
	}
	for !d.empty() {
		di := f.dialectIndex(d)
		cnt := d.count(1, "op name")
		for j := 0; j < cnt && d.err == nil; j++ {
			o := opName{dialect: di, registered: -1}
			if f.version < versionNativeProperties {
				o.name = f.str(d)
			} else {
				idx, reg := d.flagged()
				if d.err == nil && idx >= uint64(len(f.strs)) {
					d.fail("op name index %d out of range", idx)
					break
				}
				if d.err != nil {
					break
				}
				o.name = f.strs[idx]
				o.registered = 0
				if reg {
					o.registered = 1
				}
			}
			f.opNames = append(f.opNames, o)
		}
	}
	return d.err
}

func (f *file) dialectIndex(d *decoder) int {
	i := d.varint()
	if d.err == nil && i >= uint64(len(f.dialects)) {
		d.fail("dialect index %d out of range (%d dialects)", i, len(f.dialects))
	}
	if d.err != nil {
		return 0
	}
	return int(i)
}

func (f *file) readResources(data, offsets *decoder) error {
	if data == nil && offsets == nil {
		return nil
	}
	if data == nil || offsets == nil {
		return &Error{Kind: ErrBytecode, Section: "resource", Off: -1, Msg: "a resource section without its offset section, or the reverse"}
	}
	group := func(di int, external bool) {
		n := offsets.count(1, "resource")
		for i := 0; i < n && offsets.err == nil; i++ {
			key := f.str(offsets)
			size := offsets.varint()
			kind := offsets.byte()
			body := data.sub(size, "resource")
			if offsets.err != nil || data.err != nil {
				return
			}
			if external {
				continue
			}
			h := resourceHandle{dialect: di, key: key, kind: kind}
			if !body.empty() && kind == resourceBlob {
				align := body.varint()
				sz := body.varint()
				body.alignTo(align)
				h.data = body.bytes(sz)
				h.found = body.err == nil
				if body.err == nil && !body.empty() {
					body.fail("%d bytes after resource %q", body.left(), key)
				}
				if body.err != nil {
					data.err = body.err
					return
				}
			}
			f.handles = append(f.handles, h)
		}
	}
	ext := offsets.count(1, "external resource group")
	for i := 0; i < ext && offsets.err == nil && data.err == nil; i++ {
		f.str(offsets)
		group(0, true)
	}
	for !offsets.empty() && data.err == nil {
		di := f.dialectIndex(offsets)
		if offsets.err != nil {
			break
		}
		group(di, false)
	}
	if offsets.err != nil {
		return offsets.err
	}
	return data.err
}

func (f *file) readAttrTypeOffsets(data, d *decoder) error {
	nAttrs := d.count(1, "attribute")
	nTypes := d.count(1, "type")
	if d.err == nil && nAttrs+nTypes > d.left() {
		d.fail("%d attributes and %d types exceed the %d bytes of offsets", nAttrs, nTypes, d.left())
	}
	if d.err != nil {
		return d.err
	}
	f.attrs = make([]entry, nAttrs)
	f.types = make([]entry, nTypes)
	cur := data.pos
	for _, table := range [][]entry{f.attrs, f.types} {
		for i := 0; i < len(table) && d.err == nil; {
			di := f.dialectIndex(d)
			n := d.varint()
			if d.err == nil && n > uint64(len(table)-i) {
				d.fail("group of %d entries, only %d left", n, len(table)-i)
			}
			for j := uint64(0); j < n && d.err == nil; j++ {
				size, custom := d.flagged()
				if d.err == nil && size > uint64(data.end-cur) {
					d.fail("entry %d of %d bytes runs past the attr/type section", i, size)
					break
				}
				table[i] = entry{dialect: di, custom: custom, span: span{cur, cur + int(size)}}
				cur += int(size)
				i++
			}
		}
	}
	if d.err == nil && !d.empty() {
		d.fail("%d bytes after the last offset", d.left())
	}
	return d.err
}

// op is one operation of the IR.
type op struct {
	name       *opName
	off        int // offset of the op in the input, for errors
	attrs      attr
	props      attr  // properties, decoded as a dictionary (nil if none)
	propsRaw   *span // raw properties of a registered op
	results    []value
	operands   []int // value ids
	successors []int // block indexes in the parent region
	regions    []*region
	isolated   bool
}

type value struct {
	id  int
	typ typ
}

type region struct{ blocks []*block }

type block struct {
	args []value
	ops  []*op
}

// irReader holds the state of reading the IR section: value scopes map the bytecode's
// value indexes to ids unique in the file.
type irReader struct {
	f      *file
	scopes [][]int // per isolated region: slot -> value id
	next   []int   // per open region: the next slot to define (in the current scope)
	limit  []int   // per open region: the end of its slots
	// declared is, per open region, the number of values it declared; in a region that
	// declared none (the top level), op results are not numbered.
	declared []int
	defined  []bool // by value id
	depth    int
}

func (f *file) readIR(d *decoder) (*op, error) {
	r := &irReader{f: f, scopes: [][]int{nil}}
	top := &op{off: d.pos}
	b := &block{}
	// The IR section is one block without values, holding the top-level ops.
	n, hasArgs := d.flagged()
	if hasArgs {
		d.fail("top-level block with arguments")
	}
	if d.err == nil && n > uint64(d.left()) {
		d.fail("%d ops exceed the %d bytes left", n, d.left())
	}
	r.next = append(r.next, 0)
	r.limit = append(r.limit, 0)
	r.declared = append(r.declared, 0)
	if d.err == nil && n == 0 {
		d.fail("no top-level op")
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		b.ops = append(b.ops, r.op(d, nil))
	}
	if d.err == nil && !d.empty() {
		d.fail("%d bytes after the top-level ops", d.left())
	}
	top.regions = []*region{{blocks: []*block{b}}}
	if d.err != nil {
		return nil, d.err
	}
	for id, ok := range r.defined {
		if !ok {
			return nil, &Error{Kind: ErrBytecode, Section: "ir", Off: -1, Msg: "a value is used but never defined (id " + itoa(id) + ")"}
		}
	}
	return top, nil
}

// defineValue gives the next slot of the current region to a new value.
func (r *irReader) defineValue(d *decoder, t typ) value {
	scope := r.scopes[len(r.scopes)-1]
	slot := r.next[len(r.next)-1]
	if r.declared[len(r.declared)-1] == 0 {
		return value{id: -1, typ: t} // a region without values: results stay unnamed
	}
	if slot >= r.limit[len(r.limit)-1] {
		d.fail("region defines more values than it declared")
		return value{}
	}
	r.next[len(r.next)-1]++
	id := scope[slot]
	r.defined[id] = true
	return value{id: id, typ: t}
}

func (r *irReader) operand(d *decoder) int {
	i := d.varint()
	scope := r.scopes[len(r.scopes)-1]
	if d.err == nil && i >= uint64(len(scope)) {
		d.fail("value index %d out of range (%d values in scope)", i, len(scope))
	}
	if d.err != nil {
		return 0
	}
	return scope[i]
}

func (r *irReader) op(d *decoder, blocks []*block) *op {
	o := &op{off: d.pos}
	f := r.f
	ni := d.varint()
	if d.err == nil && ni >= uint64(len(f.opNames)) {
		d.fail("op name index %d out of range (%d names)", ni, len(f.opNames))
	}
	if d.err != nil {
		return o
	}
	o.name = &f.opNames[ni]
	mask := d.byte()
	d.varint() // location: not printed
	if mask&0x01 != 0 {
		o.attrs = f.attrRef(d)
	}
	if mask&0x40 != 0 {
		switch o.name.registered {
		case -1:
			d.fail("op %s has properties in bytecode version %d", o.name.full(f), f.version)
		case 1:
			i := d.varint()
			if d.err == nil && i >= uint64(len(f.props)) {
				d.fail("properties index %d out of range (%d entries)", i, len(f.props))
			}
			if d.err == nil {
				o.propsRaw = &f.props[i]
			}
		default:
			o.props = f.attrRef(d)
		}
	}
	var resultTypes []typ
	if mask&0x02 != 0 {
		n := d.count(1, "result")
		for i := 0; i < n && d.err == nil; i++ {
			resultTypes = append(resultTypes, f.typeRef(d))
		}
	}
	if mask&0x04 != 0 {
		n := d.count(1, "operand")
		for i := 0; i < n && d.err == nil; i++ {
			o.operands = append(o.operands, r.operand(d))
		}
	}
	if mask&0x08 != 0 {
		n := d.count(1, "successor")
		for i := 0; i < n && d.err == nil; i++ {
			s := d.varint()
			if d.err == nil && s >= uint64(len(blocks)) {
				d.fail("successor %d out of range (%d blocks)", s, len(blocks))
			}
			o.successors = append(o.successors, int(s))
		}
	}
	if f.version >= versionUseListOrdering && mask&0x20 != 0 {
		skipUseLists(d, len(resultTypes))
	}
	var nRegions uint64
	if mask&0x10 != 0 {
		nRegions, o.isolated = d.flagged()
		if d.err == nil && nRegions > uint64(d.left()) {
			d.fail("%d regions exceed the %d bytes left", nRegions, d.left())
		}
	}
	if d.err != nil {
		return o
	}
	for _, t := range resultTypes {
		o.results = append(o.results, r.defineValue(d, t))
	}
	if nRegions == 0 || d.err != nil {
		return o
	}
	if r.depth++; r.depth > mlir.MaxRegionDepth {
		d.failKind(ErrUnsupported, "regions nest deeper than %d", mlir.MaxRegionDepth)
		return o
	}
	defer func() { r.depth-- }()
	rd := d
	if o.isolated {
		if f.version >= versionLazyLoading {
			var id byte
			id, rd = d.section("ir")
			if d.err == nil && id != secIR {
				d.fail("section id %d for the regions of %s, want an IR section", id, o.name.full(f))
			}
			if d.err != nil {
				return o
			}
		}
		r.scopes = append(r.scopes, nil)
		defer func() { r.scopes = r.scopes[:len(r.scopes)-1] }()
	}
	for i := uint64(0); i < nRegions && rd.err == nil; i++ {
		o.regions = append(o.regions, r.region(rd))
	}
	if rd.err != nil && d.err == nil {
		d.err = rd.err
	}
	return o
}

func (r *irReader) region(d *decoder) *region {
	reg := &region{}
	nBlocks := d.count(1, "block")
	if nBlocks == 0 || d.err != nil {
		return reg
	}
	nValues := d.varint()
	if d.err == nil && (nValues > uint64(len(r.f.in)) || r.f.values+int(nValues) > len(r.f.in)) {
		d.fail("region declares %d values, more than the input could define", nValues)
	}
	if d.err != nil {
		return reg
	}
	r.f.values += int(nValues)
	// Reserve the region's slots in the current scope; they are freed when it ends.
	si := len(r.scopes) - 1
	base := len(r.scopes[si])
	for i := 0; i < int(nValues); i++ {
		r.scopes[si] = append(r.scopes[si], len(r.defined))
		r.defined = append(r.defined, false)
	}
	r.next = append(r.next, base)
	r.limit = append(r.limit, base+int(nValues))
	r.declared = append(r.declared, int(nValues))
	defer func() {
		r.scopes[si] = r.scopes[si][:base]
		r.next = r.next[:len(r.next)-1]
		r.limit = r.limit[:len(r.limit)-1]
		r.declared = r.declared[:len(r.declared)-1]
	}()
	reg.blocks = make([]*block, nBlocks)
	for i := range reg.blocks {
		reg.blocks[i] = &block{}
	}
	for _, b := range reg.blocks {
		nOps, hasArgs := d.flagged()
		if hasArgs {
			nArgs := d.count(1, "block argument")
			for i := 0; i < nArgs && d.err == nil; i++ {
				var t typ
				if r.f.version >= versionElideUnknownBlockArgLoc {
					ti, hasLoc := d.flagged()
					t = r.f.typeAt(d, ti)
					if hasLoc {
						d.varint()
					}
				} else {
					t = r.f.typeRef(d)
					d.varint()
				}
				if d.err == nil {
					b.args = append(b.args, r.defineValue(d, t))
				}
			}
			if r.f.version >= versionUseListOrdering && d.byte() != 0 {
				skipUseLists(d, nArgs)
			}
		}
		if d.err == nil && nOps > uint64(d.left()) {
			d.fail("%d ops exceed the %d bytes left", nOps, d.left())
		}
		for i := uint64(0); i < nOps && d.err == nil; i++ {
			b.ops = append(b.ops, r.op(d, reg.blocks))
		}
		if d.err != nil {
			break
		}
	}
	return reg
}

// skipUseLists reads and drops the use-list orders of a range of n values: they change
// the order of uses in memory, never the program.
func skipUseLists(d *decoder, n int) {
	count := uint64(1)
	if n > 1 {
		count = d.varint()
	}
	if d.err == nil && count > uint64(d.left()) {
		d.fail("%d use lists exceed the %d bytes left", count, d.left())
	}
	for i := uint64(0); i < count && d.err == nil; i++ {
		if n > 1 {
			d.varint()
		}
		k, _ := d.flagged()
		if d.err == nil && k > uint64(d.left()) {
			d.fail("use list of %d entries exceeds the %d bytes left", k, d.left())
		}
		for j := uint64(0); j < k && d.err == nil; j++ {
			d.varint()
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	var b [24]byte
	p := len(b)
	u := uint64(i)
	if neg {
		u = uint64(-i)
	}
	for u > 0 {
		p--
		b[p] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
