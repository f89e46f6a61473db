package jaxexport

import (
	flatbuffers "github.com/google/flatbuffers/go"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
)

// artifact describes an Exported table for the tests to serialize with the FlatBuffers
// builder, the way JAX's serializer lays it out.
type artifact struct {
	version       uint16
	name          string
	in, out       []aval
	inSh, outSh   []sharding // nil: the vector is left out
	nrShort       int16
	nr            uint32
	platforms     []string
	ordered       []string
	unordered     []string
	module        []byte
	calling       uint16
	kept          []uint16    // nil: left out
	idxForm       bool        // write in_avals_idxs/out_avals_idxs into unique_avals (version 10)
	shardingIdx   []uint32    // nil: no in_shardings_idxs (version 10)
	meshes        []testMesh  // unique_abstract_meshes (version 10)
	named         []testNamed // unique_named_shardings (version 10)
	globalConsts  bool
	disabledCheck string
}

type aval struct {
	dims   []string
	dtype  int8
	kind   int8
	memory int8
}

type sharding struct {
	kind  int8
	proto []byte
	named *testNamed // Sharding.named_sharding (versions 6 to 9), its mesh inline
}

// testMesh is an AbstractMesh table; testNamed a NamedSharding table, its mesh an index into
// the artifact's meshes (inline when written inside a Sharding).
type testMesh struct {
	sizes []uint32
	names []string
	types []byte
}

type testNamed struct {
	mesh       int
	spec       [][]string
	reduced    []string
	memoryKind string
}

// valid returns the artifact of f(a: f32[8,4], b: i32[4]) -> f32[8] on 8 devices.
func valid() artifact {
	return artifact{
		version: 2, name: "f", calling: 10, nrShort: 8, platforms: []string{"cpu"},
		in:     []aval{{dims: []string{"8", "4"}, dtype: 10}, {dims: []string{"4"}, dtype: 3}},
		out:    []aval{{dims: []string{"8"}, dtype: 10}},
		inSh:   []sharding{{kind: 1, proto: iotaProto([]int64{4, 2}, []int64{8}, nil, false)}, {kind: 0}},
		outSh:  []sharding{{kind: 1, proto: iotaProto([]int64{4, 2}, []int64{8}, nil, true)}},
		module: []byte("ML\xefR module bytes"),
		kept:   []uint16{0, 1},
	}
}

// iotaProto encodes an OpSharding of type OTHER with an iota tile assignment.
func iotaProto(tile, reshape, perm []int64, replicateLast bool) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(xlaproto.Tiled))
	b = appendPacked(b, 3, tile)
	b = appendPacked(b, 9, reshape)
	if perm != nil {
		b = appendPacked(b, 10, perm)
	}
	if replicateLast {
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	return b
}

func appendPacked(b []byte, num protowire.Number, v []int64) []byte {
	var p []byte
	for _, x := range v {
		p = protowire.AppendVarint(p, uint64(x))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

func (a artifact) bytes() []byte {
	b := flatbuffers.NewBuilder(1024)
	strs := func(ss []string) flatbuffers.UOffsetT {
		offs := make([]flatbuffers.UOffsetT, len(ss))
		for i, s := range ss {
			offs[i] = b.CreateString(s)
		}
		return offsets(b, offs)
	}
	avals := func(as []aval) flatbuffers.UOffsetT {
		offs := make([]flatbuffers.UOffsetT, len(as))
		for i, x := range as {
			shape := strs(x.dims)
			b.StartObject(4)
			b.PrependInt8Slot(fAvalKind, x.kind, 0)
			b.PrependUOffsetTSlot(fAvalShape, shape, 0)
			b.PrependInt8Slot(fAvalDType, x.dtype, 0)
			b.PrependInt8Slot(fAvalMemory, x.memory, 0)
			offs[i] = b.EndObject()
		}
		return offsets(b, offs)
	}
	meshT := func(m testMesh) flatbuffers.UOffsetT {
		b.StartVector(4, len(m.sizes), 4)
		for i := len(m.sizes) - 1; i >= 0; i-- {
			b.PrependUint32(m.sizes[i])
		}
		sizes := b.EndVector(len(m.sizes))
		names := strs(m.names)
		types := b.CreateByteVector(m.types)
		b.StartObject(4)
		b.PrependUOffsetTSlot(fMeshSizes, sizes, 0)
		b.PrependUOffsetTSlot(fMeshNames, names, 0)
		b.PrependUOffsetTSlot(fMeshTypes, types, 0)
		return b.EndObject()
	}
	namedT := func(n testNamed, inline bool) flatbuffers.UOffsetT {
		var mesh flatbuffers.UOffsetT
		if inline {
			mesh = meshT(a.meshes[n.mesh])
		}
		parts := make([]flatbuffers.UOffsetT, len(n.spec))
		for i, axes := range n.spec {
			v := strs(axes)
			b.StartObject(1)
			b.PrependUOffsetTSlot(fOneAxisAxes, v, 0)
			parts[i] = b.EndObject()
		}
		pv, red := offsets(b, parts), strs(n.reduced)
		b.StartObject(3)
		b.PrependUOffsetTSlot(fSpecPartitions, pv, 0)
		b.PrependUOffsetTSlot(fSpecReduced, red, 0)
		spec := b.EndObject()
		var memory flatbuffers.UOffsetT
		if n.memoryKind != "" {
			memory = b.CreateString(n.memoryKind)
		}
		b.StartObject(4)
		if inline {
			b.PrependUOffsetTSlot(fNamedMesh, mesh, 0)
		}
		b.PrependUOffsetTSlot(fNamedSpec, spec, 0)
		b.PrependUOffsetTSlot(fNamedMemory, memory, 0)
		b.PrependUint32Slot(fNamedMeshIdx, uint32(n.mesh), 0)
		return b.EndObject()
	}
	shardings := func(ss []sharding) flatbuffers.UOffsetT {
		offs := make([]flatbuffers.UOffsetT, len(ss))
		for i, s := range ss {
			var proto, named flatbuffers.UOffsetT
			if s.proto != nil {
				proto = b.CreateByteVector(s.proto)
			}
			if s.named != nil {
				named = namedT(*s.named, true)
			}
			b.StartObject(3)
			b.PrependInt8Slot(fShardingKind, s.kind, 0)
			if s.proto != nil {
				b.PrependUOffsetTSlot(fShardingProto, proto, 0)
			}
			b.PrependUOffsetTSlot(fShardingNamed, named, 0)
			offs[i] = b.EndObject()
		}
		return offsets(b, offs)
	}
	effects := func(names []string) flatbuffers.UOffsetT {
		offs := make([]flatbuffers.UOffsetT, len(names))
		for i, n := range names {
			s := b.CreateString(n)
			b.StartObject(1)
			b.PrependUOffsetTSlot(fEffectName, s, 0)
			offs[i] = b.EndObject()
		}
		return offsets(b, offs)
	}
	u32s := func(v []uint32) flatbuffers.UOffsetT {
		b.StartVector(4, len(v), 4)
		for i := len(v) - 1; i >= 0; i-- {
			b.PrependUint32(v[i])
		}
		return b.EndVector(len(v))
	}
	name := b.CreateString(a.name)
	var inAvals, outAvals, unique, inIdx, outIdx flatbuffers.UOffsetT
	if a.idxForm {
		unique = avals(append(append([]aval{}, a.in...), a.out...))
		var ii, oi []uint32
		for i := range a.in {
			ii = append(ii, uint32(i))
		}
		for i := range a.out {
			oi = append(oi, uint32(len(a.in)+i))
		}
		inIdx, outIdx = u32s(ii), u32s(oi)
	} else {
		inAvals, outAvals = avals(a.in), avals(a.out)
	}
	var inSh, outSh, shIdx flatbuffers.UOffsetT
	if a.inSh != nil {
		inSh = shardings(a.inSh)
	}
	if a.outSh != nil {
		outSh = shardings(a.outSh)
	}
	if a.shardingIdx != nil {
		shIdx = u32s(a.shardingIdx)
	}
	var uMeshes, uNamed flatbuffers.UOffsetT
	if a.named != nil {
		ms := make([]flatbuffers.UOffsetT, len(a.meshes))
		for i, m := range a.meshes {
			ms[i] = meshT(m)
		}
		uMeshes = offsets(b, ms)
		ns := make([]flatbuffers.UOffsetT, len(a.named))
		for i, n := range a.named {
			ns[i] = namedT(n, false)
		}
		uNamed = offsets(b, ns)
	}
	platforms := strs(a.platforms)
	ordered, unordered := effects(a.ordered), effects(a.unordered)
	var checks flatbuffers.UOffsetT
	if a.disabledCheck != "" {
		target := b.CreateString(a.disabledCheck)
		b.StartObject(2)
		b.PrependInt8Slot(fCheckKind, 1, 0)
		b.PrependUOffsetTSlot(fCheckTarget, target, 0)
		checks = offsets(b, []flatbuffers.UOffsetT{b.EndObject()})
	}
	var module flatbuffers.UOffsetT
	if a.module != nil {
		module = b.CreateByteVector(a.module)
	}
	var kept flatbuffers.UOffsetT
	if a.kept != nil {
		b.StartVector(2, len(a.kept), 2)
		for i := len(a.kept) - 1; i >= 0; i-- {
			b.PrependUint16(a.kept[i])
		}
		kept = b.EndVector(len(a.kept))
	}
	b.StartObject(27)
	b.PrependUint16Slot(fVersion, a.version, 0)
	b.PrependUOffsetTSlot(fName, name, 0)
	b.PrependUOffsetTSlot(fInAvals, inAvals, 0)
	b.PrependUOffsetTSlot(fOutAvals, outAvals, 0)
	b.PrependInt16Slot(fNrDevicesShort, a.nrShort, 0)
	b.PrependUOffsetTSlot(fInShardings, inSh, 0)
	b.PrependUOffsetTSlot(fOutShardings, outSh, 0)
	b.PrependUOffsetTSlot(fPlatforms, platforms, 0)
	b.PrependUOffsetTSlot(fOrderedEffects, ordered, 0)
	b.PrependUOffsetTSlot(fUnordered, unordered, 0)
	b.PrependUOffsetTSlot(fDisabledChecks, checks, 0)
	b.PrependUOffsetTSlot(fModule, module, 0)
	b.PrependUint16Slot(fCalling, a.calling, 0)
	b.PrependUOffsetTSlot(fKept, kept, 0)
	b.PrependBoolSlot(fGlobalConsts, a.globalConsts, false)
	b.PrependUint32Slot(fNrDevices, a.nr, 0)
	b.PrependUOffsetTSlot(fUniqueAvals, unique, 0)
	b.PrependUOffsetTSlot(fInAvalsIdxs, inIdx, 0)
	b.PrependUOffsetTSlot(fOutAvalsIdxs, outIdx, 0)
	b.PrependUOffsetTSlot(fInShardingIdxs, shIdx, 0)
	b.PrependUOffsetTSlot(fUniqueMeshes, uMeshes, 0)
	b.PrependUOffsetTSlot(fUniqueShardings, uNamed, 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

func offsets(b *flatbuffers.Builder, offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	b.StartVector(4, len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offs[i])
	}
	return b.EndVector(len(offs))
}
