package xlaproto

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of xla.OpSharding, as numbered in xla/xla_data.proto. tile_shape and metadata are
// skipped when decoding.
const (
	opShardingType                   = 1
	opShardingTileShape              = 2
	opShardingTileAssignmentDims     = 3
	opShardingTileAssignmentDevices  = 4
	opShardingTupleShardings         = 5
	opShardingReplicateOnLastTileDim = 6
	opShardingMetadata               = 7
	opShardingLastTileDims           = 8
	opShardingIotaReshapeDims        = 9
	opShardingIotaTransposePerm      = 10
	opShardingIsShardGroup           = 11
	opShardingShardGroupID           = 12
	opShardingShardGroupType         = 13
)

// ShardingType is the kind of an HloSharding (xla.OpSharding.Type), and the kind of each
// subgroup dimension of a tiled sharding (last_tile_dims). The values are the proto's enum
// numbers, so, unlike xlamesh's own enums, the zero value is valid: Replicated, the proto's
// default.
type ShardingType int

// The kinds of sharding, with the proto's numbers.
const (
	Replicated ShardingType = 0 // every device holds the whole value
	Maximal    ShardingType = 1 // one device holds it
	Tuple      ShardingType = 2 // one sharding per element of a tuple
	Tiled      ShardingType = 3 // OTHER in the proto: tiles over a tile assignment
	Manual     ShardingType = 4 // partitioned by the program itself (shard_map)
	Unknown    ShardingType = 5 // to be decided by the partitioner
	Unreduced  ShardingType = 6 // partial values still to be reduced
)

var shardingTypeNames = [...]string{"replicated", "maximal", "tuple", "other", "manual", "unknown", "unreduced"}

// String returns the kind's name as HloSharding text writes it ("replicated", "manual", ...;
// "other" for Tiled, as the proto names it), or "ShardingType(n)".
func (t ShardingType) String() string {
	if t >= 0 && int(t) < len(shardingTypeNames) {
		return shardingTypeNames[t]
	}
	return fmt.Sprintf("ShardingType(%d)", int(t))
}

// ShardGroupType is how a value's shard group ties it to the others of its group
// (xla.OpSharding.ShardGroupType).
type ShardGroupType int

// The kinds of shard group, with the proto's numbers.
const (
	ShardAs   ShardGroupType = 0 // the members share one sharding
	ShardLike ShardGroupType = 1 // the members take the group's sharding as a hint
)

// OpSharding is one HloSharding: how XLA lays out one value over the devices of a program, as
// the xla.OpSharding proto holds it and HloSharding::ToString prints it. It is the one value of
// the concept in xlamesh: pjrt reads it from compiled programs, jaxexport from jax.export
// artifacts, shardy builds it as the GSPMD form of a Shardy sharding and converts it back to a
// PartitionSpec.
//
// Devices in a tile assignment are numbered as the program's partitions: positions in its
// device assignment, which is the mesh's device order for programs xlamesh compiles.
//
// An OpSharding is immutable: the constructors copy their inputs and accessors return copies.
// The zero value is {replicated}.
type OpSharding struct {
	typ ShardingType
	// tileDims are the tile counts per dimension (tile_assignment_dimensions), the trailing
	// subgroup dimensions included.
	tileDims []int
	// devices is the explicit tile assignment (tile_assignment_devices; for Maximal the one
	// device); nil when the assignment is an iota.
	devices []int
	// iotaReshape and iotaTranspose are the iota form of the tile assignment.
	iotaReshape, iotaTranspose []int
	replicateOnLastTileDim     bool
	lastTileDims               []ShardingType
	tuple                      []OpSharding
	shardGroup                 bool
	groupID                    int64
	groupType                  ShardGroupType
}

// NewReplicated returns {replicated}.
func NewReplicated() OpSharding { return OpSharding{typ: Replicated} }

// NewManual returns {manual}.
func NewManual() OpSharding { return OpSharding{typ: Manual} }

// NewMaximal returns {maximal device=N}. A negative device gives an error wrapping
// ErrMalformed.
func NewMaximal(device int) (OpSharding, error) {
	s := OpSharding{typ: Maximal, devices: []int{device}}
	return s, s.validate()
}

// NewTuple returns the sharding of a tuple, one sharding per element: {{...}, {...}}.
func NewTuple(elements ...OpSharding) OpSharding {
	return OpSharding{typ: Tuple, tuple: slices.Clone(elements)}
}

// NewTiled returns a tiled sharding: tileDims tiles per dimension, tile i (row-major) on
// devices[i]. subgroups are the kinds of the trailing subgroup dimensions of tileDims (none
// for a plain tiling); a lone Replicated subgroup is written as last_tile_dim_replicate, as
// XLA's HloSharding::Subgroup does. Tile counts that do not multiply to len(devices), devices
// not naming 0..n-1 once each, or subgroup kinds other than Replicated, Manual and Unreduced
// give an error wrapping ErrMalformed.
func NewTiled(tileDims, devices []int, subgroups ...ShardingType) (OpSharding, error) {
	s := OpSharding{typ: Tiled, tileDims: slices.Clone(tileDims), devices: slices.Clone(devices)}
	s.setSubgroups(subgroups)
	return s, s.validate()
}

// NewIotaTiled is NewTiled with the tile assignment in XLA's iota form: the devices
// 0..n-1 reshaped to reshape, transposed by perm (nil for the identity) and flattened. The form
// is canonicalised as XLA's IotaTileAssignment does (size-1 dimensions dropped, runs that stay
// in order merged, an identity written as one dimension), so the text is the one XLA prints:
// `<=[8]`, `<=[4,2]T(1,0)`. Errors are those of NewTiled, and a perm that is not a
// permutation of reshape's dimensions.
func NewIotaTiled(tileDims, reshape, perm []int, subgroups ...ShardingType) (OpSharding, error) {
	if perm == nil {
		perm = identity(len(reshape))
	}
	if err := checkPerm(reshape, perm); err != nil {
		return OpSharding{}, err
	}
	r, p := canonicalIota(reshape, perm)
	s := OpSharding{typ: Tiled, tileDims: slices.Clone(tileDims), iotaReshape: r, iotaTranspose: p}
	s.setSubgroups(subgroups)
	return s, s.validate()
}

func (s *OpSharding) setSubgroups(kinds []ShardingType) {
	if len(kinds) == 1 && kinds[0] == Replicated {
		s.replicateOnLastTileDim = true
		return
	}
	s.lastTileDims = slices.Clone(kinds)
}

// Type returns the kind of sharding.
func (s OpSharding) Type() ShardingType { return s.typ }

// IsReplicated reports whether every device holds the whole value: {replicated}.
func (s OpSharding) IsReplicated() bool { return s.typ == Replicated }

// IsTiled reports whether s is a tiling: {devices=[...]...}.
func (s OpSharding) IsTiled() bool { return s.typ == Tiled }

// TileDims returns the tile counts per dimension of a tiled sharding, the trailing subgroup
// dimensions included (tile_assignment_dimensions); nil for the other kinds.
func (s OpSharding) TileDims() []int { return slices.Clone(s.tileDims) }

// Devices returns the explicit tile assignment (tile_assignment_devices), or the device of a
// maximal sharding; nil when the assignment is in iota form (see Iota and Assignment).
func (s OpSharding) Devices() []int { return slices.Clone(s.devices) }

// Iota returns the iota form of the tile assignment, reshape dims and transpose permutation;
// nil when the assignment is explicit.
func (s OpSharding) Iota() (reshape, perm []int) {
	return slices.Clone(s.iotaReshape), slices.Clone(s.iotaTranspose)
}

// Assignment returns the tile assignment, the device of each tile in row-major order over
// TileDims: Devices, or the iota form expanded. It is nil for a sharding with neither. An iota
// form of more than 2^20 devices is not expanded: the error wraps ErrMalformed.
func (s OpSharding) Assignment() ([]int, error) {
	if s.devices != nil || s.iotaReshape == nil {
		return slices.Clone(s.devices), nil
	}
	return Iota(s.iotaReshape, s.iotaTranspose)
}

// ReplicateOnLastTileDim reports whether the last tile dimension counts the replicas of each
// tile (last_tile_dim_replicate).
func (s OpSharding) ReplicateOnLastTileDim() bool { return s.replicateOnLastTileDim }

// LastTileDims returns the kinds of the trailing subgroup dimensions (last_tile_dims={...}).
func (s OpSharding) LastTileDims() []ShardingType { return slices.Clone(s.lastTileDims) }

// Subgroups returns the number of trailing subgroup dimensions of TileDims: 1 with
// last_tile_dim_replicate, else the length of LastTileDims.
func (s OpSharding) Subgroups() int {
	if s.replicateOnLastTileDim {
		return 1
	}
	return len(s.lastTileDims)
}

// Tuple returns the element shardings of a tuple sharding; nil for the other kinds.
func (s OpSharding) Tuple() []OpSharding { return slices.Clone(s.tuple) }

// ShardGroup returns the shard group of s (is_shard_group, shard_group_id and
// shard_group_type), and false when s is in none.
func (s OpSharding) ShardGroup() (id int64, kind ShardGroupType, ok bool) {
	return s.groupID, s.groupType, s.shardGroup
}

// Explicit returns s with every iota tile assignment (its own, its tuple elements') written
// out as a device list: `{devices=[4,2]<=[4,2]T(1,0)}` becomes
// `{devices=[4,2]0,2,4,6,1,3,5,7}`. Errors are those of Assignment.
func (s OpSharding) Explicit() (OpSharding, error) {
	if s.iotaReshape != nil && s.devices == nil {
		devices, err := s.Assignment()
		if err != nil {
			return OpSharding{}, err
		}
		s.devices, s.iotaReshape, s.iotaTranspose = devices, nil, nil
	}
	if s.tuple != nil {
		tuple := make([]OpSharding, len(s.tuple))
		for i, t := range s.tuple {
			var err error
			if tuple[i], err = t.Explicit(); err != nil {
				return OpSharding{}, err
			}
		}
		s.tuple = tuple
	}
	return s, nil
}

// maxIotaDevices bounds the devices an iota tile assignment may expand to: a malformed message
// must not make Assignment allocate gigabytes.
const maxIotaDevices = 1 << 20

// maxTiles bounds the tiles of a tiled sharding (2^31, the devices Shardy's meshes may have),
// so that counts never overflow.
const maxTiles = 1 << 31

// MaxTupleDepth bounds the nesting of tuple shardings ParseOpSharding follows.
const MaxTupleDepth = 8

// ParseOpSharding decodes an xla.OpSharding message and checks what XLA's HloSharding
// requires of it: a known kind, one device for a maximal sharding, a tile assignment whose
// size is the product of the tile counts and which names each device once, subgroup kinds
// replicated, manual or unreduced, a known shard group kind, tuples nested at most
// MaxTupleDepth deep. A message that breaks them or does not decode gives an error wrapping
// ErrMalformed.
func ParseOpSharding(b []byte) (OpSharding, error) {
	s, err := parseOpSharding(b, 0)
	if err != nil {
		return OpSharding{}, fmt.Errorf("OpSharding: %w", err)
	}
	return s, nil
}

func parseOpSharding(b []byte, depth int) (OpSharding, error) {
	var s OpSharding
	var typ, groupType int64
	var tuple [][]byte
	var lastTileDims []int64
	err := Walk(b, func(num protowire.Number, wire protowire.Type, v uint64, data []byte) error {
		var err error
		var x int64
		switch num {
		case opShardingType:
			typ, err = Scalar(wire, v)
		case opShardingTileAssignmentDims:
			s.tileDims, err = appendInts(s.tileDims, wire, v, data)
		case opShardingTileAssignmentDevices:
			s.devices, err = appendInts(s.devices, wire, v, data)
		case opShardingTupleShardings:
			if wire != protowire.BytesType {
				return fmt.Errorf("field %d: %w: tuple_shardings of wire type %d", num, ErrMalformed, wire)
			}
			tuple = append(tuple, data)
		case opShardingReplicateOnLastTileDim:
			x, err = Scalar(wire, v)
			s.replicateOnLastTileDim = x != 0
		case opShardingLastTileDims:
			lastTileDims, err = AppendInts(lastTileDims, wire, v, data)
		case opShardingIotaReshapeDims:
			s.iotaReshape, err = appendInts(s.iotaReshape, wire, v, data)
		case opShardingIotaTransposePerm:
			s.iotaTranspose, err = appendInts(s.iotaTranspose, wire, v, data)
		case opShardingIsShardGroup:
			x, err = Scalar(wire, v)
			s.shardGroup = x != 0
		case opShardingShardGroupID:
			s.groupID, err = Scalar(wire, v)
		case opShardingShardGroupType:
			groupType, err = Scalar(wire, v)
		case opShardingTileShape, opShardingMetadata: // not read
		}
		if err != nil {
			return fmt.Errorf("field %d: %w", num, err)
		}
		return nil
	})
	if err != nil {
		return OpSharding{}, err
	}
	if typ < 0 || typ > int64(Unreduced) {
		return OpSharding{}, fmt.Errorf("%w: unknown sharding type %d", ErrMalformed, typ)
	}
	s.typ = ShardingType(typ)
	if groupType != int64(ShardAs) && groupType != int64(ShardLike) {
		return OpSharding{}, fmt.Errorf("%w: shard group type %d", ErrMalformed, groupType)
	}
	s.groupType = ShardGroupType(groupType)
	for _, t := range lastTileDims {
		if t < 0 || t > int64(Unreduced) {
			return OpSharding{}, fmt.Errorf("%w: subgroup type %d in last_tile_dims", ErrMalformed, t)
		}
		s.lastTileDims = append(s.lastTileDims, ShardingType(t))
	}
	if s.typ == Tuple && len(tuple) > 0 && depth >= MaxTupleDepth {
		return OpSharding{}, fmt.Errorf("%w: tuple shardings nest deeper than %d", ErrMalformed, MaxTupleDepth)
	}
	for i, raw := range tuple {
		t, err := parseOpSharding(raw, depth+1)
		if err != nil {
			return OpSharding{}, fmt.Errorf("tuple element %d: %w", i, err)
		}
		s.tuple = append(s.tuple, t)
	}
	if len(s.iotaReshape) > 0 && len(s.iotaTranspose) == 0 {
		s.iotaTranspose = identity(len(s.iotaReshape))
	}
	if s.devices != nil {
		s.iotaReshape, s.iotaTranspose = nil, nil // XLA reads the explicit list first
	}
	return s, s.validate()
}

// validate checks the invariants ParseOpSharding documents.
func (s OpSharding) validate() error {
	switch s.typ {
	case Maximal:
		if len(s.devices) != 1 || s.devices[0] < 0 {
			return fmt.Errorf("%w: a maximal sharding with devices %v", ErrMalformed, s.devices)
		}
	case Tiled:
		return s.validateTiling()
	}
	return nil
}

func (s OpSharding) validateTiling() error {
	if s.replicateOnLastTileDim && len(s.lastTileDims) > 0 {
		return fmt.Errorf("%w: both last_tile_dim_replicate and last_tile_dims %v", ErrMalformed, s.lastTileDims)
	}
	for _, t := range s.lastTileDims {
		if t != Replicated && t != Manual && t != Unreduced {
			return fmt.Errorf("%w: subgroup type %d in last_tile_dims", ErrMalformed, t)
		}
	}
	if n := s.Subgroups(); n > len(s.tileDims) {
		return fmt.Errorf("%w: %d subgroup dimensions in tile dimensions %v", ErrMalformed, n, s.tileDims)
	}
	n := 1
	for _, d := range s.tileDims {
		if d < 1 || n > maxTiles/d {
			return fmt.Errorf("%w: tile dimensions %v", ErrMalformed, s.tileDims)
		}
		n *= d
	}
	if s.devices == nil {
		// An iota names each device once; only its size needs checking, without expanding it.
		if s.iotaReshape == nil {
			return fmt.Errorf("%w: a tiled sharding without a tile assignment", ErrMalformed)
		}
		if err := checkPerm(s.iotaReshape, s.iotaTranspose); err != nil {
			return err
		}
		size := 1
		for _, d := range s.iotaReshape {
			if d < 1 || size > maxTiles/d {
				return fmt.Errorf("%w: iota reshape %v", ErrMalformed, s.iotaReshape)
			}
			size *= d
		}
		if size != n {
			return fmt.Errorf("%w: iota tile assignment %v of %d devices for tile dimensions %v", ErrMalformed, s.iotaReshape, size, s.tileDims)
		}
		return nil
	}
	if len(s.devices) != n {
		return fmt.Errorf("%w: tile assignment of %d devices for tile dimensions %v", ErrMalformed, len(s.devices), s.tileDims)
	}
	seen := make([]bool, n)
	for _, d := range s.devices {
		if d < 0 || d >= n || seen[d] {
			return fmt.Errorf("%w: tile assignment %v does not name each of 0..%d once", ErrMalformed, s.devices, n-1)
		}
		seen[d] = true
	}
	return nil
}

// appendInts is AppendInts into ints.
func appendInts(out []int, wire protowire.Type, v uint64, data []byte) ([]int, error) {
	xs, err := AppendInts(nil, wire, v, data)
	for _, x := range xs {
		out = append(out, int(x))
	}
	return out, err
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func checkPerm(reshape, perm []int) error {
	if len(perm) != len(reshape) {
		return fmt.Errorf("%w: iota reshape %v with transpose %v", ErrMalformed, reshape, perm)
	}
	seen := make([]bool, len(perm))
	for _, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			return fmt.Errorf("%w: iota transpose %v", ErrMalformed, perm)
		}
		seen[p] = true
	}
	return nil
}

// Iota expands XLA's iota form of a device list (a tile assignment, replica groups):
// iota(prod(reshape)) reshaped to reshape, transposed by perm (the identity when empty),
// flattened. A perm that is not a permutation of reshape's dimensions, a negative dimension or
// more than 2^20 devices give an error wrapping ErrMalformed.
func Iota(reshape, perm []int) ([]int, error) {
	if len(perm) == 0 {
		perm = identity(len(reshape))
	}
	if err := checkPerm(reshape, perm); err != nil {
		return nil, err
	}
	n := 1
	for _, d := range reshape {
		if d < 0 || (d > 0 && n > maxIotaDevices/d) {
			return nil, fmt.Errorf("%w: iota reshape %v", ErrMalformed, reshape)
		}
		n *= d
	}
	stride := make([]int, len(reshape))
	acc := 1
	for i := len(reshape) - 1; i >= 0; i-- {
		stride[i] = acc
		acc *= reshape[i]
	}
	out := make([]int, 0, n)
	pos := make([]int, len(perm)) // position in the transposed array
	for range n {
		src := 0
		for k, p := range perm {
			src += pos[k] * stride[p]
		}
		out = append(out, src)
		for k := len(pos) - 1; k >= 0; k-- {
			pos[k]++
			if pos[k] < reshape[perm[k]] {
				break
			}
			pos[k] = 0
		}
	}
	return out, nil
}

// canonicalIota is XLA's CanonicalizeIotaDims followed by IotaTileAssignment::Create's
// identity check: repeatedly drop size-1 dims and merge runs of dims that stay adjacent and in
// order under perm; an identity (or empty) result becomes [product] with no transpose.
func canonicalIota(reshape, perm []int) ([]int, []int) {
	total := 1
	for _, d := range reshape {
		total *= d
	}
	dims, p := slices.Clone(reshape), slices.Clone(perm)
	if len(dims) > 1 {
		for {
			// Drop dims of size one.
			oldToNew := make([]int, len(dims))
			var nd []int
			for i, d := range dims {
				oldToNew[i] = -1
				if d != 1 {
					oldToNew[i] = len(nd)
					nd = append(nd, d)
				}
			}
			var np []int
			for _, x := range p {
				if n := oldToNew[x]; n >= 0 {
					np = append(np, n)
				}
			}
			dims, p = nd, np
			// Merge major-to-minor runs.
			changed := false
			for i, base := 1, 0; i < len(dims); i++ {
				if p[base]+(i-base) == p[i] {
					dims[p[base]] *= dims[p[i]]
					dims[p[i]] = 1
					changed = true
				} else {
					base = i
				}
			}
			if !changed {
				break
			}
		}
	}
	ident := true
	for i, x := range p {
		if x != i {
			ident = false
		}
	}
	if len(dims) == 0 || ident {
		return []int{total}, []int{0}
	}
	return dims, p
}
