package pjrt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/shapes"
)

// OpShardingType is the kind of an XLA sharding (xla.OpSharding.Type).
type OpShardingType int

// The kinds of OpSharding.
const (
	ShardingReplicated OpShardingType = 0
	ShardingMaximal    OpShardingType = 1
	ShardingTuple      OpShardingType = 2
	ShardingOther      OpShardingType = 3 // tiled
	ShardingManual     OpShardingType = 4
	ShardingUnknown    OpShardingType = 5
	ShardingUnreduced  OpShardingType = 6
)

// OpSharding is how XLA laid out one value of a compiled program (its HloSharding): which
// partition (position in the device assignment) holds which tile.
type OpSharding struct {
	Type OpShardingType
	// TileDims are the tile counts per dimension; with ReplicateOnLastTileDim (or a replicated
	// LastTileDims entry) the last one counts the replicas of each tile.
	TileDims []int
	// Partitions lists, for each tile in row-major order over TileDims, the partition holding it.
	Partitions             []int
	ReplicateOnLastTileDim bool
	LastTileDims           []OpShardingType
	Tuple                  []OpSharding // for ShardingTuple: one per element
}

// String returns XLA's text form, e.g. "{devices=[4,2]0,1,2,3,4,5,6,7}" or "{replicated}".
func (s OpSharding) String() string {
	switch s.Type {
	case ShardingReplicated:
		return "{replicated}"
	case ShardingManual:
		return "{manual}"
	case ShardingMaximal:
		if len(s.Partitions) > 0 {
			return fmt.Sprintf("{maximal device=%d}", s.Partitions[0])
		}
		return "{maximal}"
	case ShardingTuple:
		parts := make([]string, len(s.Tuple))
		for i, t := range s.Tuple {
			parts[i] = t.String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var b strings.Builder
	b.WriteString("{devices=[")
	for i, d := range s.TileDims {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, d)
	}
	b.WriteByte(']')
	for i, p := range s.Partitions {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, p)
	}
	if s.ReplicateOnLastTileDim {
		b.WriteString(" last_tile_dim_replicate")
	}
	b.WriteByte('}')
	return b.String()
}

// OutputShardings returns how XLA laid out each result, read from the optimized program
// (HloModuleProto.spmd_output_sharding); a single result is returned as a one-element list.
func (e *Executable) OutputShardings() ([]OpSharding, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, fmt.Errorf("pjrt: output shardings: executable %w", ErrClosed)
	}
	code, format, err := e.optimizedProgram()
	if err != nil {
		return nil, err
	}
	s, err := outputSharding(code, format)
	if err != nil {
		return nil, fmt.Errorf("pjrt: output shardings: %w", err)
	}
	if s.Type == ShardingTuple {
		return s.Tuple, nil
	}
	return []OpSharding{s}, nil
}

// InputShardings returns how the compiled program expects each argument laid out, read from
// the optimized program (HloModuleProto.spmd_parameters_shardings): one entry per parameter of
// the entry computation. A program compiled without partitioning reports every argument
// replicated.
func (e *Executable) InputShardings() ([]OpSharding, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, fmt.Errorf("pjrt: input shardings: executable %w", ErrClosed)
	}
	code, format, err := e.optimizedProgram()
	if err != nil {
		return nil, err
	}
	s, err := parameterShardings(code, format)
	if err != nil {
		return nil, fmt.Errorf("pjrt: input shardings: %w", err)
	}
	return s, nil
}

var errProto = errors.New("malformed optimized program")

// outputSharding finds spmd_output_sharding in a serialized HloModuleProto ("hlo") or
// HloModuleProtoWithConfig ("hlo_with_config", whose field 1 is the module).
func outputSharding(code []byte, format string) (OpSharding, error) {
	module := code
	switch format {
	case "hlo_with_config":
		var err error
		if module, err = protoField(code, 1); err != nil {
			return OpSharding{}, err
		}
	case "hlo":
	default:
		return OpSharding{}, fmt.Errorf("%w: unsupported format %q", errProto, format)
	}
	raw, err := protoField(module, 12) // HloModuleProto.spmd_output_sharding
	if err != nil {
		return OpSharding{}, err
	}
	if raw == nil {
		return OpSharding{Type: ShardingReplicated}, nil // not partitioned
	}
	return parseOpSharding(raw)
}

// parameterShardings reads HloModuleProto.spmd_parameters_shardings (field 14); with none, every
// parameter of the entry computation (host_program_shape, field 4) is replicated.
func parameterShardings(code []byte, format string) ([]OpSharding, error) {
	module := code
	switch format {
	case "hlo_with_config":
		var err error
		if module, err = protoField(code, 1); err != nil {
			return nil, err
		}
	case "hlo":
	default:
		return nil, fmt.Errorf("%w: unsupported format %q", errProto, format)
	}
	var out []OpSharding
	err := walkProto(module, func(field, wire int, _ uint64, data []byte) error {
		if field != 14 || protowire.Type(wire) != protowire.BytesType {
			return nil
		}
		s, err := parseOpSharding(data)
		out = append(out, s)
		return err
	})
	if err != nil || out != nil {
		return out, err
	}
	shapes, err := parameterShapes(code, format)
	if err != nil {
		return nil, err
	}
	out = make([]OpSharding, len(shapes))
	for i := range out {
		out[i] = OpSharding{Type: ShardingReplicated}
	}
	return out, nil
}

// protoField returns the bytes of the first length-delimited field number n, or nil.
func protoField(b []byte, n int) ([]byte, error) {
	var found []byte
	err := walkProto(b, func(field, wire int, v uint64, data []byte) error {
		if field == n && protowire.Type(wire) == protowire.BytesType && found == nil {
			found = data
		}
		return nil
	})
	return found, err
}

// walkProto calls visit for each field of a protobuf message: varints in v, length-delimited
// fields in data; fixed-width fields are skipped.
func walkProto(b []byte, visit func(field, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", errProto, protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %v", errProto, num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.VarintType && typ != protowire.BytesType {
			continue
		}
		if err := visit(int(num), int(typ), v, data); err != nil {
			return err
		}
	}
	return nil
}

// varints decodes a repeated integer field given packed (bytes) or one element (varint).
func varints(wire int, v uint64, data []byte) ([]int, error) {
	if protowire.Type(wire) == protowire.VarintType {
		return []int{int(int64(v))}, nil
	}
	var out []int
	for len(data) > 0 {
		x, n := protowire.ConsumeVarint(data)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", errProto, protowire.ParseError(n))
		}
		out = append(out, int(int64(x)))
		data = data[n:]
	}
	return out, nil
}

// parseOpSharding decodes an xla.OpSharding message; an iota tile assignment is expanded.
func parseOpSharding(b []byte) (OpSharding, error) {
	var s OpSharding
	var devices, reshape, perm []int
	err := walkProto(b, func(field, wire int, v uint64, data []byte) error {
		var err error
		var xs []int
		switch field {
		case 1:
			s.Type = OpShardingType(v)
		case 3:
			xs, err = varints(wire, v, data)
			s.TileDims = append(s.TileDims, xs...)
		case 4:
			xs, err = varints(wire, v, data)
			devices = append(devices, xs...)
		case 5:
			var t OpSharding
			t, err = parseOpSharding(data)
			s.Tuple = append(s.Tuple, t)
		case 6:
			s.ReplicateOnLastTileDim = v != 0
		case 8:
			xs, err = varints(wire, v, data)
			for _, x := range xs {
				s.LastTileDims = append(s.LastTileDims, OpShardingType(x))
			}
		case 9:
			xs, err = varints(wire, v, data)
			reshape = append(reshape, xs...)
		case 10:
			xs, err = varints(wire, v, data)
			perm = append(perm, xs...)
		}
		return err
	})
	if err != nil {
		return OpSharding{}, err
	}
	if len(devices) == 0 && len(reshape) > 0 {
		devices, err = iotaDevices(reshape, perm)
		if err != nil {
			return OpSharding{}, err
		}
	}
	s.Partitions = devices
	return s, nil
}

// iotaDevices expands XLA's iota tile assignment: iota(prod(reshape)) reshaped to reshape,
// transposed by perm, flattened.
func iotaDevices(reshape, perm []int) ([]int, error) {
	if len(perm) == 0 {
		perm = make([]int, len(reshape))
		for i := range perm {
			perm[i] = i
		}
	}
	if len(perm) != len(reshape) {
		return nil, fmt.Errorf("%w: iota reshape %v with transpose %v", errProto, reshape, perm)
	}
	n := 1
	for _, d := range reshape {
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
			if p < 0 || p >= len(reshape) {
				return nil, fmt.Errorf("%w: iota transpose %v", errProto, perm)
			}
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

// parameterShapes reads the entry computation's parameter shapes (per partition, after SPMD
// partitioning) from a serialized optimized program: HloModuleProto.host_program_shape (4),
// ProgramShapeProto.parameters (1), ShapeProto.element_type (2) and dimensions (3). A tuple or
// an element type pjrt does not move gives InvalidDType, which no argument matches.
func parameterShapes(code []byte, format string) ([]Shape, error) {
	module := code
	if format == "hlo_with_config" {
		var err error
		if module, err = protoField(module, 1); err != nil {
			return nil, err
		}
	} else if format != "hlo" {
		return nil, fmt.Errorf("%w: unsupported format %q", errProto, format)
	}
	program, err := protoField(module, 4)
	if err != nil {
		return nil, err
	}
	params := []Shape{}
	err = walkProto(program, func(field, wire int, _ uint64, data []byte) error {
		if field != 1 || protowire.Type(wire) != protowire.BytesType {
			return nil
		}
		var dt dtypes.DType
		dims := []int{}
		err := walkProto(data, func(field, wire int, v uint64, data []byte) error {
			switch field {
			case 2:
				dt = fromPrimitiveType(int(v))
			case 3:
				ds, err := varints(wire, v, data)
				dims = append(dims, ds...)
				return err
			}
			return nil
		})
		params = append(params, shapes.Make(dt, dims...))
		return err
	})
	return params, err
}

// fromPrimitiveType maps XLA's PrimitiveType numbers (xla_data.proto) to dtypes: they equal
// PJRT_Buffer_Type for the integer and 16/32/64-bit float types except BF16 (16 in XLA, 13 in
// PJRT); everything else pjrt does not move is InvalidDType.
func fromPrimitiveType(t int) dtypes.DType {
	switch {
	case t >= 1 && t <= 12:
		return dtypes.DType(t)
	case t == 16:
		return dtypes.BFloat16
	}
	return dtypes.InvalidDType
}
