package pjrt

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/shapes"
)

// OpSharding is how XLA laid out one value of a compiled program, its HloSharding: which
// partition (position in the device assignment) holds which tile. String gives XLA's text,
// with the tile assignment written out ("{devices=[4,2]0,2,4,6,1,3,5,7}", "{replicated}");
// TileDims, Assignment, IsReplicated and IsTiled read it.
//
// It is xlamesh's one HloSharding value, defined in the internal package that decodes XLA's
// protos (which jaxexport and shardy use as well); this alias is its public name, since a type
// of an internal package cannot be named outside the module.
type OpSharding = xlaproto.OpSharding

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
	if s.Type() == xlaproto.Tuple {
		return s.Tuple(), nil
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
	raw, err := xlaproto.Field(module, xlaproto.HloModuleSpmdOutputSharding)
	if err != nil {
		return OpSharding{}, err
	}
	if raw == nil {
		return xlaproto.NewReplicated(), nil // not partitioned
	}
	return parseOpSharding(raw)
}

// parameterShardings reads HloModuleProto.spmd_parameters_shardings; with none, every parameter
// of the entry computation (host_program_shape) is replicated.
func parameterShardings(code []byte, format string) ([]OpSharding, error) {
	module, err := hloModule(code, format)
	if err != nil {
		return nil, err
	}
	var out []OpSharding
	err = xlaproto.Walk(module, func(field protowire.Number, typ protowire.Type, _ uint64, data []byte) error {
		if field != xlaproto.HloModuleSpmdParametersShardings || typ != protowire.BytesType {
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
		out[i] = xlaproto.NewReplicated()
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

// parseOpSharding decodes an xla.OpSharding message, with its iota tile assignments written
// out.
func parseOpSharding(b []byte) (OpSharding, error) {
	s, err := xlaproto.ParseOpSharding(b)
	if err != nil {
		return OpSharding{}, err
	}
	return s.Explicit()
}

// parameterShapes reads the entry computation's parameter shapes (per partition, after SPMD
// partitioning) from a serialized optimized program: HloModuleProto.host_program_shape,
// ProgramShapeProto.parameters, ShapeProto.element_type (mapped by hloDType) and dimensions. A
// tuple or an element type pjrt does not move gives InvalidDType, which no
// argument matches.
func parameterShapes(code []byte, format string) ([]Shape, error) {
	module, err := hloModule(code, format)
	if err != nil {
		return nil, err
	}
	program, err := xlaproto.Field(module, xlaproto.HloModuleHostProgramShape)
	if err != nil {
		return nil, err
	}
	params := []Shape{}
	err = xlaproto.Walk(program, func(field protowire.Number, typ protowire.Type, _ uint64, data []byte) error {
		if field != xlaproto.ProgramShapeParameters || typ != protowire.BytesType {
			return nil
		}
		var dt dtypes.DType
		dims := []int{}
		err := xlaproto.Walk(data, func(field protowire.Number, typ protowire.Type, v uint64, data []byte) error {
			switch field {
			case xlaproto.ShapeElementType:
				dt = hloDType(int(v))
			case xlaproto.ShapeDimensions:
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
