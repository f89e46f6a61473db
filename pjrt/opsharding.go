package pjrt

import (
	"fmt"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
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
	if !e.gate.Enter() {
		return nil, fmt.Errorf("pjrt: output shardings: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
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
	if !e.gate.Enter() {
		return nil, fmt.Errorf("pjrt: input shardings: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
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

// errProto is wrapped by the errors of an optimized program that does not decode.
var errProto = xlaproto.ErrMalformed

// outputSharding finds spmd_output_sharding in a serialized HloModuleProto ("hlo") or
// HloModuleProtoWithConfig ("hlo_with_config", whose field 1 is the module).
func outputSharding(code []byte, format string) (OpSharding, error) {
	module, err := hloModule(code, format)
	if err != nil {
		return OpSharding{}, err
	}
	raw, err := xlaproto.Field(module, 12) // HloModuleProto.spmd_output_sharding
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
	module, err := hloModule(code, format)
	if err != nil {
		return nil, err
	}
	var out []OpSharding
	err = xlaproto.Walk(module, func(field protowire.Number, typ protowire.Type, _ uint64, data []byte) error {
		if field != 14 || typ != protowire.BytesType {
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

// varints decodes a repeated integer field, as xlaproto.Walk gave it, into ints.
func varints(typ protowire.Type, v uint64, data []byte) ([]int, error) {
	xs, err := xlaproto.AppendInts(nil, typ, v, data)
	return toInts(xs), err
}

func toInts(xs []int64) []int {
	if xs == nil {
		return nil
	}
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// parseOpSharding decodes an xla.OpSharding message; an iota tile assignment is expanded.
func parseOpSharding(b []byte) (OpSharding, error) {
	m, err := xlaproto.ParseOpSharding(b)
	if err != nil {
		return OpSharding{}, err
	}
	devices, err := m.Assignment()
	if err != nil {
		return OpSharding{}, err
	}
	s := OpSharding{Type: OpShardingType(m.Type), TileDims: toInts(m.TileDims), Partitions: toInts(devices),
		ReplicateOnLastTileDim: m.ReplicateOnLastTileDim}
	for _, t := range m.LastTileDims {
		s.LastTileDims = append(s.LastTileDims, OpShardingType(t))
	}
	for _, raw := range m.Tuple {
		t, err := parseOpSharding(raw)
		if err != nil {
			return OpSharding{}, err
		}
		s.Tuple = append(s.Tuple, t)
	}
	return s, nil
}

// parameterShapes reads the entry computation's parameter shapes (per partition, after SPMD
// partitioning) from a serialized optimized program: HloModuleProto.host_program_shape (4),
// ProgramShapeProto.parameters (1), ShapeProto.element_type (2, mapped by hloDType) and
// dimensions (3). A tuple or an element type pjrt does not move gives InvalidDType, which no
// argument matches.
func parameterShapes(code []byte, format string) ([]Shape, error) {
	module, err := hloModule(code, format)
	if err != nil {
		return nil, err
	}
	program, err := xlaproto.Field(module, 4)
	if err != nil {
		return nil, err
	}
	params := []Shape{}
	err = xlaproto.Walk(program, func(field protowire.Number, typ protowire.Type, _ uint64, data []byte) error {
		if field != 1 || typ != protowire.BytesType {
			return nil
		}
		var dt dtypes.DType
		dims := []int{}
		err := xlaproto.Walk(data, func(field protowire.Number, typ protowire.Type, v uint64, data []byte) error {
			switch field {
			case 2:
				dt = hloDType(int(v))
			case 3:
				ds, err := varints(typ, v, data)
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
