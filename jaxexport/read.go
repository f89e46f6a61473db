package jaxexport

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/xlamesh/xlamesh/shapes"
)

// Field ids of the schema's tables (jax/_src/export/serialization.fbs); a field's vtable slot is
// 4 + 2*id.
const (
	fVersion         = 0  // serialization_version: uint16
	fName            = 1  // function_name: string
	fInAvals         = 3  // in_avals: [AbstractValue]
	fOutAvals        = 5  // out_avals: [AbstractValue]
	fNrDevicesShort  = 6  // nr_devices_short: short (before version 5)
	fInShardings     = 7  // in_shardings: [Sharding]
	fOutShardings    = 8  // out_shardings: [Sharding]
	fPlatforms       = 9  // platforms: [string]
	fOrderedEffects  = 10 // ordered_effects: [Effect]
	fUnordered       = 11 // unordered_effects: [Effect]
	fDisabledChecks  = 12 // disabled_checks: [DisabledSafetyCheck]
	fModule          = 13 // mlir_module_serialized: [byte]
	fCalling         = 14 // calling_convention_version: uint16
	fKept            = 15 // module_kept_var_idx: [uint16]
	fGlobalConsts    = 16 // uses_global_constants: bool
	fVJP             = 17 // vjp: Exported
	fNrDevices       = 18 // nr_devices: uint32 (version 5 on)
	fUniqueAvals     = 19 // unique_avals: [AbstractValue] (version 10 on)
	fInAvalsIdxs     = 22 // in_avals_idxs: [uint32]
	fOutAvalsIdxs    = 23 // out_avals_idxs: [uint32]
	fInShardingIdxs  = 24 // in_shardings_idxs: [uint32]
	fOutShardingIdxs = 25 // out_shardings_idxs: [uint32]

	// AbstractValue
	fAvalKind   = 0 // kind: AbstractValueKind (0 shapedArray)
	fAvalShape  = 1 // shape: [string]
	fAvalDType  = 2 // dtype: DType
	fAvalMemory = 3 // memory_space: MemorySpace (0 missing, 1 device, 2 host, 3 any)

	// Sharding
	fShardingKind  = 0 // kind: ShardingKind (0 unspecified, 1 hlo_sharding, 2 named_sharding)
	fShardingProto = 1 // hlo_sharding_proto: [byte]

	// Effect, DisabledSafetyCheck
	fEffectName  = 0 // type_name: string
	fCheckKind   = 0 // kind: DisabledSafetyCheckKind
	fCheckTarget = 1 // custom_call_target: string
)

// Serialization versions Read accepts. JAX writes 2 (versions 1 and 2), or 3 for every later
// layout up to version 11 (so that older readers accept it); since July 2026 (JAX 0.12) it
// stores the real number, 12.
const (
	MinVersion = 1
	MaxVersion = 12
)

// MaxDevices bounds NrDevices.
const MaxDevices = 1 << 20

// Read decodes the bytes of jax.export's Exported.serialize(). It never panics, whatever the
// bytes: every error is an *Error wrapping ErrFormat (truncated or inconsistent bytes, a
// missing module, a sharding proto XLA would not read), ErrVersion (a serialization version
// outside MinVersion..MaxVersion), ErrSymbolicShape (shape polymorphism), ErrDType (float0,
// PRNG keys), ErrEffects (ordered effects, named) or ErrUnsupported (token avals, reduced or
// unreduced partition spec axes). The result does not alias b.
func Read(b []byte) (*Exported, error) {
	r := &buffer{b: b, index: -1}
	root, err := r.root()
	if err != nil {
		return nil, err
	}
	e := &Exported{}
	r.field = "serialization_version"
	v, err := r.uint16(root, fVersion, 0)
	if err != nil {
		return nil, err
	}
	if e.version = int(v); e.version < MinVersion || e.version > MaxVersion {
		return nil, &Error{Kind: ErrVersion, Field: r.field, Index: -1,
			Msg: fmt.Sprintf("version %d; this reader reads %d to %d", e.version, MinVersion, MaxVersion)}
	}
	r.field = "function_name"
	if e.name, _, err = r.str(root, fName); err != nil {
		return nil, err
	}
	r.field = "calling_convention_version"
	c, err := r.uint16(root, fCalling, 0)
	if err != nil {
		return nil, err
	}
	e.calling = int(c)
	if err := e.readDevices(r, root); err != nil {
		return nil, err
	}
	if err := e.readEffects(r, root); err != nil {
		return nil, err
	}
	if e.in, e.inSpaces, e.inDims, err = readAvals(r, root, "in_avals", fInAvals, fInAvalsIdxs); err != nil {
		return nil, err
	}
	if e.out, e.outSpaces, e.outDims, err = readAvals(r, root, "out_avals", fOutAvals, fOutAvalsIdxs); err != nil {
		return nil, err
	}
	named, err := newNamedReader(r, root)
	if err != nil {
		return nil, err
	}
	if e.inSh, err = readShardings(r, named, root, "in_shardings", fInShardings, fInShardingIdxs, len(e.in), e.nrDevices); err != nil {
		return nil, err
	}
	if e.outSh, err = readShardings(r, named, root, "out_shardings", fOutShardings, fOutShardingIdxs, len(e.out), e.nrDevices); err != nil {
		return nil, err
	}
	if err := e.readModule(r, root); err != nil {
		return nil, err
	}
	r.field, r.index = "uses_global_constants", -1
	if e.globalConstants, err = r.bool(root, fGlobalConsts); err != nil {
		return nil, err
	}
	// A module for several platforms takes the platform index as a global constant, and one
	// with symbolic avals its dimension variables; with static avals and one platform it has
	// none to use.
	if e.globalConstants && len(e.platforms) == 1 && !e.Polymorphic() {
		return nil, &Error{Kind: ErrSymbolicShape, Field: r.field, Index: -1, Msg: "the module uses dimension variables, the avals have none"}
	}
	r.field = "jax_version"
	if e.jaxVersion, _, err = r.str(root, fJaxVersion); err != nil {
		return nil, err
	}
	r.field = "vjp"
	if _, e.vjp, err = r.subtable(root, fVJP, "Exported"); err != nil {
		return nil, err
	}
	return e, nil
}

// readDevices reads nr_devices (or the older nr_devices_short) and platforms.
func (e *Exported) readDevices(r *buffer, root table) error {
	r.field, r.index = "nr_devices", -1
	n, err := r.uint32(root, fNrDevices, 0)
	if err != nil {
		return err
	}
	e.nrDevices = int(n)
	if n == 0 {
		r.field = "nr_devices_short"
		s, err := r.int16(root, fNrDevicesShort, 0)
		if err != nil {
			return err
		}
		e.nrDevices = int(s)
	}
	r.field = "nr_devices"
	if e.nrDevices < 1 || e.nrDevices > MaxDevices {
		return r.fail("%d devices; want 1 to %d", e.nrDevices, MaxDevices)
	}
	r.field = "platforms"
	v, _, err := r.vec(root, fPlatforms, 4)
	if err != nil {
		return err
	}
	for i := range v.n {
		r.index = int(i)
		s, err := r.strAt(v.data + 4*i)
		if err != nil {
			return err
		}
		e.platforms = append(e.platforms, s)
	}
	r.index = -1
	if len(e.platforms) == 0 {
		return r.fail("no platform")
	}
	return nil
}

// readEffects refuses ordered effects and reads the unordered ones and the disabled checks.
func (e *Exported) readEffects(r *buffer, root table) error {
	names := func(field string, slot int) ([]string, error) {
		r.field, r.index = field, -1
		v, _, err := r.vec(root, slot, 4)
		if err != nil {
			return nil, err
		}
		var out []string
		for i := range v.n {
			r.index = int(i)
			t, err := r.tableAt(v.data+4*i, "Effect")
			if err != nil {
				return nil, err
			}
			s, _, err := r.str(t, fEffectName)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		r.index = -1
		return out, nil
	}
	ordered, err := names("ordered_effects", fOrderedEffects)
	if err != nil {
		return err
	}
	if len(ordered) > 0 {
		return &Error{Kind: ErrEffects, Field: "ordered_effects", Index: 0,
			Msg: fmt.Sprintf("%q: an ordered effect threads a token through @main that only JAX provides", ordered[0])}
	}
	if e.unordered, err = names("unordered_effects", fUnordered); err != nil {
		return err
	}
	r.field = "disabled_checks"
	v, _, err := r.vec(root, fDisabledChecks, 4)
	if err != nil {
		return err
	}
	for i := range v.n {
		r.index = int(i)
		t, err := r.tableAt(v.data+4*i, "DisabledSafetyCheck")
		if err != nil {
			return err
		}
		kind, err := r.int8(t, fCheckKind, 0)
		if err != nil {
			return err
		}
		switch kind {
		case 0:
			e.disabled = append(e.disabled, "platform")
		case 1:
			target, _, err := r.str(t, fCheckTarget)
			if err != nil {
				return err
			}
			e.disabled = append(e.disabled, "custom_call:"+target)
		case 2:
			// shape_assertions: a no-op since June 2024.
		default:
			return r.fail("unknown kind %d", kind)
		}
	}
	r.index = -1
	return nil
}

// readAvals reads a vector of AbstractValue, or, from version 10 on, the indices into
// unique_avals that replace it.
func readAvals(r *buffer, root table, field string, slot, idxSlot int) ([]Aval, []string, [][]string, error) {
	r.field, r.index = field+"_idxs", -1
	idx, hasIdx, err := r.vec(root, idxSlot, 4)
	if err != nil {
		return nil, nil, nil, err
	}
	var tables []uint64 // absolute positions of the offsets to the AbstractValue tables
	if hasIdx {
		r.field = "unique_avals"
		uniq, _, err := r.vec(root, fUniqueAvals, 4)
		if err != nil {
			return nil, nil, nil, err
		}
		r.field = field + "_idxs"
		for i, k := range r.uint32s(idx) {
			if uint64(k) >= uniq.n {
				r.index = i
				return nil, nil, nil, r.fail("index %d; unique_avals has %d", k, uniq.n)
			}
			tables = append(tables, uniq.data+4*uint64(k))
		}
	} else {
		r.field = field
		v, _, err := r.vec(root, slot, 4)
		if err != nil {
			return nil, nil, nil, err
		}
		for i := range v.n {
			tables = append(tables, v.data+4*i)
		}
	}
	r.field = field
	out, spaces, dims := make([]Aval, len(tables)), make([]string, len(tables)), make([][]string, len(tables))
	for i, at := range tables {
		r.index = i
		if out[i], spaces[i], dims[i], err = readAval(r, at); err != nil {
			return nil, nil, nil, err
		}
	}
	r.index = -1
	return out, spaces, dims, nil
}

// memorySpaces names the schema's MemorySpace values as JAX's core.MemorySpace does; Missing
// (written before version 5) is device memory.
var memorySpaces = map[int8]string{0: "device", 1: "device", 2: "host", 3: "any"}

func readAval(r *buffer, at uint64) (Aval, string, []string, error) {
	t, err := r.tableAt(at, "AbstractValue")
	if err != nil {
		return Aval{}, "", nil, err
	}
	kind, err := r.int8(t, fAvalKind, 0)
	if err != nil {
		return Aval{}, "", nil, err
	}
	if kind != 0 {
		return Aval{}, "", nil, &Error{Kind: ErrUnsupported, Field: r.field, Index: r.index, Msg: fmt.Sprintf("abstract value kind %d is not an array", kind)}
	}
	mem, err := r.int8(t, fAvalMemory, 0)
	if err != nil {
		return Aval{}, "", nil, err
	}
	space, ok := memorySpaces[mem]
	if !ok {
		return Aval{}, "", nil, r.fail("unknown memory space %d", mem)
	}
	code, err := r.int8(t, fAvalDType, 0)
	if err != nil {
		return Aval{}, "", nil, err
	}
	d, ok := dtypeOf[code]
	if !ok {
		name, known := unsupportedDTypes[code]
		if !known {
			return Aval{}, "", nil, r.fail("unknown dtype %d", code)
		}
		return Aval{}, "", nil, &Error{Kind: ErrDType, Field: r.field, Index: r.index, Msg: name}
	}
	v, _, err := r.vec(t, fAvalShape, 4)
	if err != nil {
		return Aval{}, "", nil, err
	}
	dims := make([]int, v.n)
	var text []string // each dimension as written, when one is symbolic
	count := uint64(1)
	for i := range v.n {
		s, err := r.strAt(v.data + 4*i)
		if err != nil {
			return Aval{}, "", nil, err
		}
		n, ok := parseDim(s)
		if !ok {
			if !dimExpr(s) {
				return Aval{}, "", nil, &Error{Kind: ErrSymbolicShape, Field: r.field, Index: r.index,
					Msg: fmt.Sprintf("dimension %d is %q, neither an integer nor a dimension expression", i, s)}
			}
			if text == nil {
				text = make([]string, v.n)
			}
			dims[i], text[i] = -1, s
			continue
		}
		dims[i] = n
		hi, lo := bits.Mul64(count, uint64(n))
		if hi != 0 || lo > math.MaxInt64 {
			return Aval{}, "", nil, r.fail("%v has more than %d elements", dims[:i+1], int64(math.MaxInt64))
		}
		count = lo
	}
	if text != nil {
		for i, n := range dims {
			if n >= 0 {
				text[i] = strconv.Itoa(n)
			}
		}
	}
	return shapes.Make(d, dims...), space, text, nil
}

// readShardings reads a vector of Sharding with one entry per aval (or none at all: every one
// unspecified), or, from version 10 on, the indices into unique_named_shardings that replace it
// (0 for unspecified, k+1 for entry k).
func readShardings(r *buffer, named *namedReader, root table, field string, slot, idxSlot, n, devices int) ([]Sharding, error) {
	r.field, r.index = field+"_idxs", -1
	idx, hasIdx, err := r.vec(root, idxSlot, 4)
	if err != nil {
		return nil, err
	}
	out := make([]Sharding, n)
	if hasIdx {
		if int(idx.n) != n {
			return nil, r.fail("%d shardings for %d avals", idx.n, n)
		}
		r.field = "unique_named_shardings"
		uniq, _, err := r.vec(root, fUniqueShardings, 4)
		if err != nil {
			return nil, err
		}
		for i, k := range r.uint32s(idx) {
			if k == 0 {
				continue
			}
			r.field, r.index = field+"_idxs", i
			if uint64(k) > uniq.n {
				return nil, r.fail("index %d; unique_named_shardings has %d", k, uniq.n)
			}
			r.field, r.index = "unique_named_shardings", k-1
			if out[i], err = named.sharding(uniq.data + 4*uint64(k-1)); err != nil {
				return nil, err
			}
		}
		r.index = -1
		return out, nil
	}
	r.field = field
	v, present, err := r.vec(root, slot, 4)
	if err != nil {
		return nil, err
	}
	if !present {
		return out, nil
	}
	if int(v.n) != n {
		return nil, r.fail("%d shardings for %d avals", v.n, n)
	}
	for i := range v.n {
		r.field, r.index = field, int(i)
		t, err := r.tableAt(v.data+4*i, "Sharding")
		if err != nil {
			return nil, err
		}
		kind, err := r.int8(t, fShardingKind, 0)
		if err != nil {
			return nil, err
		}
		proto, err := r.bytes(t, fShardingProto)
		if err != nil {
			return nil, err
		}
		// Versions 6 to 8 write the named sharding with the HLO sharding proto; version 9 the
		// named sharding alone.
		namedAt, err := r.slot(t, fShardingNamed, 4)
		if err != nil {
			return nil, err
		}
		if namedAt != 0 {
			if out[i], err = named.sharding(uint64(t.t.Pos) + namedAt); err != nil {
				return nil, err
			}
		}
		switch {
		case kind == 0 && namedAt == 0:
			continue // unspecified
		case proto != nil && (kind == 1 || kind == 2):
			hlo, err := decodeSharding(proto, devices)
			if err != nil {
				return nil, &Error{Kind: ErrFormat, Field: field, Index: int(i), Msg: err.Error()}
			}
			out[i].hlo = hlo.hlo
		case namedAt != 0:
			// the named sharding alone
		case kind == 2:
			return nil, r.fail("a named sharding without its table")
		default:
			return nil, r.fail("unknown sharding kind %d", kind)
		}
	}
	r.index = -1
	return out, nil
}

// readModule reads the module bytes and module_kept_var_idx.
func (e *Exported) readModule(r *buffer, root table) error {
	r.field, r.index = "mlir_module_serialized", -1
	m, err := r.bytes(root, fModule)
	if err != nil {
		return err
	}
	if len(m) == 0 {
		return r.fail("no module")
	}
	e.module = slices.Clone(m)
	r.field = "module_kept_var_idx"
	v, present, err := r.vec(root, fKept, 2)
	if err != nil {
		return err
	}
	if !present {
		e.kept = make([]int, len(e.in))
		for i := range e.kept {
			e.kept[i] = i
		}
		return nil
	}
	e.kept = r.uint16s(v)
	for i, k := range e.kept {
		if k >= len(e.in) || i > 0 && k <= e.kept[i-1] {
			r.index = i
			return r.fail("index %d: not increasing below %d arguments", k, len(e.in))
		}
	}
	return nil
}
