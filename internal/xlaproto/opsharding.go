package xlaproto

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// OpSharding.Type, and the subgroup types of its last_tile_dims.
const (
	Replicated = 0
	Maximal    = 1
	Tuple      = 2
	Other      = 3 // tiled
	Manual     = 4
	Unknown    = 5
	Unreduced  = 6
)

// OpSharding holds the fields of one xla.OpSharding message that xlamesh reads; metadata and
// unknown fields are skipped.
type OpSharding struct {
	Type int64
	// TileDims are the tile counts per dimension (tile_assignment_dimensions).
	TileDims []int64
	// Devices is the explicit tile assignment (tile_assignment_devices); empty when the
	// assignment is an iota (IotaReshape, IotaTranspose).
	Devices []int64
	// Tuple holds the undecoded element messages of a tuple sharding: callers recurse, with a
	// depth limit where the bytes come from a user's file.
	Tuple                      [][]byte
	ReplicateOnLastTileDim     bool
	LastTileDims               []int64
	IotaReshape, IotaTranspose []int64
	// ShardGroup, GroupID and GroupType are is_shard_group, shard_group_id and
	// shard_group_type (0: shard_as, 1: shard_like).
	ShardGroup         bool
	GroupID, GroupType int64
}

// maxIotaDevices bounds the devices an iota tile assignment may expand to: a malformed message
// must not make Assignment allocate gigabytes.
const maxIotaDevices = 1 << 20

// ParseOpSharding decodes an xla.OpSharding message.
func ParseOpSharding(b []byte) (OpSharding, error) {
	var s OpSharding
	err := Walk(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		var err error
		var x int64
		switch num {
		case 1:
			s.Type, err = Scalar(typ, v)
		case 3:
			s.TileDims, err = AppendInts(s.TileDims, typ, v, data)
		case 4:
			s.Devices, err = AppendInts(s.Devices, typ, v, data)
		case 5:
			if typ != protowire.BytesType {
				return fmt.Errorf("field 5: %w: tuple_shardings of wire type %d", ErrMalformed, typ)
			}
			s.Tuple = append(s.Tuple, data)
		case 6:
			x, err = Scalar(typ, v)
			s.ReplicateOnLastTileDim = x != 0
		case 8:
			s.LastTileDims, err = AppendInts(s.LastTileDims, typ, v, data)
		case 9:
			s.IotaReshape, err = AppendInts(s.IotaReshape, typ, v, data)
		case 10:
			s.IotaTranspose, err = AppendInts(s.IotaTranspose, typ, v, data)
		case 11:
			x, err = Scalar(typ, v)
			s.ShardGroup = x != 0
		case 12:
			s.GroupID, err = Scalar(typ, v)
		case 13:
			s.GroupType, err = Scalar(typ, v)
		}
		if err != nil {
			return fmt.Errorf("field %d: %w", num, err)
		}
		return nil
	})
	if err != nil {
		return OpSharding{}, fmt.Errorf("OpSharding: %w", err)
	}
	return s, nil
}

// Assignment returns the tile assignment, the device of each tile in row-major order: Devices,
// or the iota form expanded. It is empty for a sharding with neither.
func (s OpSharding) Assignment() ([]int64, error) {
	if len(s.Devices) > 0 || len(s.IotaReshape) == 0 {
		return s.Devices, nil
	}
	return Iota(s.IotaReshape, s.IotaTranspose)
}

// Iota expands XLA's iota form of a device list (a tile assignment, replica groups):
// iota(prod(reshape)) reshaped to reshape, transposed by perm (the identity when empty),
// flattened.
func Iota(reshape, perm []int64) ([]int64, error) {
	if len(perm) == 0 {
		perm = make([]int64, len(reshape))
		for i := range perm {
			perm[i] = int64(i)
		}
	}
	if len(perm) != len(reshape) {
		return nil, fmt.Errorf("%w: iota reshape %v with transpose %v", ErrMalformed, reshape, perm)
	}
	n := int64(1)
	for _, d := range reshape {
		if d < 0 || (d > 0 && n > maxIotaDevices/d) {
			return nil, fmt.Errorf("%w: iota reshape %v", ErrMalformed, reshape)
		}
		n *= d
	}
	for _, p := range perm {
		if p < 0 || p >= int64(len(reshape)) {
			return nil, fmt.Errorf("%w: iota transpose %v", ErrMalformed, perm)
		}
	}
	stride := make([]int64, len(reshape))
	acc := int64(1)
	for i := len(reshape) - 1; i >= 0; i-- {
		stride[i] = acc
		acc *= reshape[i]
	}
	out := make([]int64, 0, n)
	pos := make([]int64, len(perm)) // position in the transposed array
	for range n {
		src := int64(0)
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
