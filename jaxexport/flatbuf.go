package jaxexport

import (
	"fmt"
	"math"
	"unicode/utf8"

	flatbuffers "github.com/google/flatbuffers/go"
)

// The FlatBuffers runtime reads without checking: an offset or a length from the bytes is
// used as an index as it is, so hostile bytes would panic inside it. Every accessor here first
// checks, in uint64 arithmetic, that what it is about to read lies inside the buffer and inside
// its table, and only then asks the runtime to read it.

// table is one verified table of the buffer: its vtable and inline size are in bounds.
type table struct {
	t     flatbuffers.Table
	vsize uint64 // bytes of the vtable, including its two header fields
	tsize uint64 // bytes of the table's inline part, including its vtable offset
	name  string // the schema's table name, for messages
}

// buffer holds the artifact's bytes and the field being read, for errors.
type buffer struct {
	b     []byte
	field string
	index int
}

func (r *buffer) fail(format string, args ...any) error {
	return &Error{Kind: ErrFormat, Field: r.field, Index: r.index, Msg: fmt.Sprintf(format, args...)}
}

// has reports whether n bytes at off lie inside the buffer.
func (r *buffer) has(off, n uint64) bool { return off <= uint64(len(r.b)) && n <= uint64(len(r.b))-off }

// root returns the root table (the buffer starts with its offset).
func (r *buffer) root() (table, error) {
	if uint64(len(r.b)) > math.MaxUint32 {
		return table{}, r.fail("%d bytes: larger than a FlatBuffer can address", len(r.b))
	}
	if !r.has(0, 8) {
		return table{}, r.fail("%d bytes: too short for a FlatBuffer", len(r.b))
	}
	return r.table(uint64(flatbuffers.GetUOffsetT(r.b)), "Exported")
}

// table checks the table at pos and returns it.
func (r *buffer) table(pos uint64, name string) (table, error) {
	if !r.has(pos, 4) {
		return table{}, r.fail("%s table at byte %d: outside the %d bytes", name, pos, len(r.b))
	}
	vt := int64(pos) - int64(flatbuffers.GetSOffsetT(r.b[pos:]))
	if vt < 0 || !r.has(uint64(vt), 4) {
		return table{}, r.fail("%s table at byte %d: vtable at byte %d is outside the buffer", name, pos, vt)
	}
	vsize := uint64(flatbuffers.GetVOffsetT(r.b[vt:]))
	tsize := uint64(flatbuffers.GetVOffsetT(r.b[vt+2:]))
	if vsize < 4 || vsize%2 != 0 || !r.has(uint64(vt), vsize) || tsize < 4 || !r.has(pos, tsize) {
		return table{}, r.fail("%s table at byte %d: vtable of %d bytes, table of %d bytes do not fit", name, pos, vsize, tsize)
	}
	return table{t: flatbuffers.Table{Bytes: r.b, Pos: flatbuffers.UOffsetT(pos)}, vsize: vsize, tsize: tsize, name: name}, nil
}

// slot returns the offset within t of field slot (the schema's field id), 0 when absent, after
// checking that size bytes there lie inside the table.
func (r *buffer) slot(t table, slot int, size uint64) (uint64, error) {
	voff := uint64(4 + 2*slot)
	if voff+2 > t.vsize {
		return 0, nil
	}
	o := uint64(t.t.Offset(flatbuffers.VOffsetT(voff)))
	if o == 0 {
		return 0, nil
	}
	if o < 4 || o+size > t.tsize {
		return 0, r.fail("%s field %d at table offset %d: %d bytes do not fit a table of %d bytes", t.name, slot, o, size, t.tsize)
	}
	return o, nil
}

func (r *buffer) uint16(t table, slot int, def uint16) (uint16, error) {
	o, err := r.slot(t, slot, 2)
	if err != nil || o == 0 {
		return def, err
	}
	return t.t.GetUint16(t.t.Pos + flatbuffers.UOffsetT(o)), nil
}

func (r *buffer) int16(t table, slot int, def int16) (int16, error) {
	o, err := r.slot(t, slot, 2)
	if err != nil || o == 0 {
		return def, err
	}
	return t.t.GetInt16(t.t.Pos + flatbuffers.UOffsetT(o)), nil
}

func (r *buffer) uint32(t table, slot int, def uint32) (uint32, error) {
	o, err := r.slot(t, slot, 4)
	if err != nil || o == 0 {
		return def, err
	}
	return t.t.GetUint32(t.t.Pos + flatbuffers.UOffsetT(o)), nil
}

func (r *buffer) int8(t table, slot int, def int8) (int8, error) {
	o, err := r.slot(t, slot, 1)
	if err != nil || o == 0 {
		return def, err
	}
	return t.t.GetInt8(t.t.Pos + flatbuffers.UOffsetT(o)), nil
}

func (r *buffer) bool(t table, slot int) (bool, error) {
	o, err := r.slot(t, slot, 1)
	if err != nil || o == 0 {
		return false, err
	}
	return t.t.GetBool(t.t.Pos + flatbuffers.UOffsetT(o)), nil
}

// target follows the offset stored at absolute position at and checks that 4 bytes there
// (a vector's length or a table's vtable offset) lie inside the buffer.
func (r *buffer) target(at uint64, what string) (uint64, error) {
	if !r.has(at, 4) {
		return 0, r.fail("%s offset at byte %d: outside the buffer", what, at)
	}
	pos := uint64(flatbuffers.GetUOffsetT(r.b[at:])) + at
	if !r.has(pos, 4) {
		return 0, r.fail("%s at byte %d: outside the %d bytes", what, pos, len(r.b))
	}
	return pos, nil
}

// vector is a verified vector: n elements of size bytes from data on.
type vector struct {
	data, n, size uint64
}

// vec returns the vector in field slot of t (present false when the field is absent), after
// checking that its elements lie inside the buffer.
func (r *buffer) vec(t table, slot int, size uint64) (v vector, present bool, err error) {
	o, err := r.slot(t, slot, 4)
	if err != nil || o == 0 {
		return vector{}, false, err
	}
	return r.vecAt(uint64(t.t.Pos)+o, size)
}

func (r *buffer) vecAt(at, size uint64) (vector, bool, error) {
	pos, err := r.target(at, "vector")
	if err != nil {
		return vector{}, false, err
	}
	n := uint64(flatbuffers.GetUOffsetT(r.b[pos:]))
	if !r.has(pos+4, n*size) || n > uint64(len(r.b)) {
		return vector{}, false, r.fail("vector at byte %d: %d elements of %d bytes do not fit", pos, n, size)
	}
	return vector{data: pos + 4, n: n, size: size}, true, nil
}

// bytes returns the [ubyte]/[byte] vector in field slot of t (nil when absent). The result
// aliases the buffer.
func (r *buffer) bytes(t table, slot int) ([]byte, error) {
	v, ok, err := r.vec(t, slot, 1)
	if err != nil || !ok {
		return nil, err
	}
	return r.b[v.data : v.data+v.n : v.data+v.n], nil
}

// str returns the string in field slot of t, "" when absent; it must be UTF-8.
func (r *buffer) str(t table, slot int) (string, bool, error) {
	o, err := r.slot(t, slot, 4)
	if err != nil || o == 0 {
		return "", false, err
	}
	s, err := r.strAt(uint64(t.t.Pos) + o)
	return s, true, err
}

func (r *buffer) strAt(at uint64) (string, error) {
	v, _, err := r.vecAt(at, 1)
	if err != nil {
		return "", err
	}
	s := string(r.b[v.data : v.data+v.n])
	if !utf8.ValidString(s) {
		return "", r.fail("string at byte %d is not UTF-8", v.data)
	}
	return s, nil
}

// tableAt returns the table whose offset is stored at absolute position at.
func (r *buffer) tableAt(at uint64, name string) (table, error) {
	pos, err := r.target(at, name+" table")
	if err != nil {
		return table{}, err
	}
	return r.table(pos, name)
}

// subtable returns the table in field slot of t (present false when absent).
func (r *buffer) subtable(t table, slot int, name string) (table, bool, error) {
	o, err := r.slot(t, slot, 4)
	if err != nil || o == 0 {
		return table{}, false, err
	}
	st, err := r.tableAt(uint64(t.t.Pos)+o, name)
	return st, err == nil, err
}

// uint16s and uint32s read scalar vectors.
func (r *buffer) uint16s(v vector) []int {
	out := make([]int, v.n)
	for i := range out {
		out[i] = int(flatbuffers.GetUint16(r.b[v.data+2*uint64(i):]))
	}
	return out
}

func (r *buffer) uint32s(v vector) []int {
	out := make([]int, v.n)
	for i := range out {
		out[i] = int(flatbuffers.GetUint32(r.b[v.data+4*uint64(i):]))
	}
	return out
}
