package pjrt

// #include <stdlib.h>
// #include "xlamesh_pjrt.h"
import "C"

import (
	"fmt"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/shapes"
)

// This file shows what the compiler made of a program: the collectives of the optimized HLO
// module and the memory the executable needs. The proto fields it reads are named in
// internal/xlaproto.

// Collective is one collective operation of a compiled, partitioned program: an instruction of
// its optimized HLO module that moves data between devices.
type Collective struct {
	// Kind is the HLO opcode, with an asynchronous pair ("all-reduce-start", "-done") reported
	// once under the synchronous name: "all-reduce", "all-gather", "reduce-scatter",
	// "all-to-all", "ragged-all-to-all", "collective-permute" or "collective-broadcast".
	Kind string
	// Name is the instruction's name in the optimized module (e.g. "all-reduce.1"), and
	// Computation the name of the computation that holds it.
	Name, Computation string
	// Operands are the per-device shapes of its operands; XLA combines several collectives of
	// a kind into one with several operands. An element type pjrt has no dtype for is
	// InvalidDType (its bytes are still counted).
	Operands []Shape
	// Dims are the dimensions an all-gather concatenates along, a reduce-scatter splits, or an
	// all-to-all splits (nil for the other kinds).
	Dims []int
	// ReplicaGroups are the groups of devices that take part together, as partition numbers
	// (positions in the executable's device assignment; see Executable.DeviceAssignment).
	// Where the program leaves them out (one group of all), they are written out here:
	// [[0 1 ... n-1]]. A cross-replica collective (no channel id; never made by the SPMD
	// partitioner) runs inside each device's own replica: [[0]], and moves nothing. A
	// collective-permute has Pairs instead.
	ReplicaGroups [][]int
	// Pairs are a collective-permute's (source, target) partitions.
	Pairs [][2]int
	// Bytes is the size of the operands on one device.
	Bytes int64
	// BytesMoved is the number of bytes each device of a group sends, with g devices in the
	// group and the usual ring algorithms: 2(g-1)/g·Bytes for an all-reduce, (g-1)·Bytes for an
	// all-gather (each device's operand reaches the g-1 others), (g-1)/g·Bytes for a
	// reduce-scatter and an all-to-all, and Bytes for a collective-permute or -broadcast.
	// Rounded down to whole bytes.
	BytesMoved int64
}

// GroupSize returns the number of devices in each replica group (in the first group; XLA's
// groups have equal sizes), or 0 for a collective-permute.
func (c Collective) GroupSize() int {
	if len(c.ReplicaGroups) == 0 {
		return 0
	}
	return len(c.ReplicaGroups[0])
}

// String returns a one-line summary, e.g.
// "all-reduce f32[64,64] groups [[0 1 2 3] [4 5 6 7]] moves 24576 B/device".
func (c Collective) String() string {
	var b strings.Builder
	b.WriteString(c.Kind)
	for i, s := range c.Operands {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(s.Aval())
	}
	if len(c.Dims) > 0 {
		fmt.Fprintf(&b, " dims %v", c.Dims)
	}
	if len(c.Pairs) > 0 {
		fmt.Fprintf(&b, " pairs %v", c.Pairs)
	} else {
		fmt.Fprintf(&b, " groups %v", c.ReplicaGroups)
	}
	fmt.Fprintf(&b, " moves %d B/device", c.BytesMoved)
	return b.String()
}

// collectiveKinds maps the opcodes of collectives, synchronous or the start of an
// asynchronous pair, to their kind. The "-done" halves and async-start wrappers are not
// listed: the operation is found once, at its start or in the wrapped computation.
var collectiveKinds = map[string]string{
	"all-reduce": "all-reduce", "all-reduce-start": "all-reduce",
	"all-gather": "all-gather", "all-gather-start": "all-gather",
	"reduce-scatter":     "reduce-scatter",
	"all-to-all":         "all-to-all",
	"ragged-all-to-all":  "ragged-all-to-all",
	"collective-permute": "collective-permute", "collective-permute-start": "collective-permute",
	"collective-broadcast": "collective-broadcast",
}

// Collectives returns every collective of the optimized program, in the order of its
// computations and instructions: what the SPMD partitioner inserted to move data between
// devices. A program that needs no communication has none. Collectives inside a loop are
// listed once, however often they run. A plugin that cannot show its optimized program gives
// an error wrapping ErrUnimplemented; a closed executable one wrapping ErrClosed.
func (e *Executable) Collectives() ([]Collective, error) {
	if !e.gate.Enter() {
		return nil, fmt.Errorf("pjrt: collectives: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
	code, format, err := e.optimizedProgram()
	if err != nil {
		return nil, err
	}
	cs, err := collectives(code, format, e.info.numPartitions)
	if err != nil {
		return nil, fmt.Errorf("pjrt: collectives: %w", err)
	}
	return cs, nil
}

// checkSubByteCollectives refuses an optimized program for n partitions with a collective
// that moves 2-bit integers (s2, u2): XLA's collectives get their packed size wrong, so on the
// CPU runtime the values come back wrong or the process's heap is corrupted (seen with jaxlib
// 0.12 and both pinned CPU plugins: re-sharding a u2[8,4] from P('x', 'y') to P('x', None) on
// a 4x2 mesh gives wrong values, from P('x', None) to replicated aborts with "corrupted size
// vs. prev_size"). 4-bit types are moved correctly.
func checkSubByteCollectives(code []byte, format string, n int) error {
	cs, err := collectives(code, format, n)
	if err != nil {
		return fmt.Errorf("pjrt: compile: reading the program's collectives: %w", err)
	}
	for _, c := range cs {
		for _, s := range c.Operands {
			if d := s.DType(); d == dtypes.S2 || d == dtypes.U2 {
				return fmt.Errorf("pjrt: compile: %w: %s %s moves %s between devices, and XLA's collectives "+
					"corrupt 2-bit arrays (wrong values or a crash); keep 2-bit arrays where they are "+
					"(the same sharding in and out) or convert them to 4 or 8 bits first", ErrCompile, c.Kind, c.Name, s.Aval())
			}
		}
	}
	return nil
}

// hloModule returns the HloModuleProto inside a serialized optimized program.
func hloModule(code []byte, format string) ([]byte, error) {
	switch format {
	case "hlo_with_config":
		return xlaproto.Field(code, xlaproto.HloModuleWithConfigModule)
	case "hlo":
		return code, nil
	}
	return nil, fmt.Errorf("%w: unsupported format %q", errProto, format)
}

// hloInstruction is what Collectives reads of an HloInstructionProto.
type hloInstruction struct {
	name, opcode string
	shape        hloShape
	id           int64
	channel      int64
	operands     []int
	dims         []int
	groups       [][]int
	pairs        [][2]int
}

// hloShape is a ShapeProto: an array, or a tuple of shapes.
type hloShape struct {
	elem  int // PrimitiveType
	dims  []int
	tuple []hloShape
}

// collectives decodes the collectives of an optimized program compiled for n partitions.
func collectives(code []byte, format string, n int) ([]Collective, error) {
	module, err := hloModule(code, format)
	if err != nil {
		return nil, err
	}
	var out []Collective
	err = xlaproto.Walk(module, func(field protowire.Number, wire protowire.Type, _ uint64, data []byte) error {
		if field != xlaproto.HloModuleComputations || wire != protowire.BytesType {
			return nil
		}
		comp, insts, err := parseComputation(data)
		if err != nil {
			return err
		}
		byID := make(map[int64]*hloInstruction, len(insts))
		for i := range insts {
			byID[insts[i].id] = &insts[i]
		}
		for _, in := range insts {
			kind, ok := collectiveKinds[in.opcode]
			if !ok {
				continue
			}
			c := Collective{Kind: kind, Name: in.name, Computation: comp, ReplicaGroups: in.groups, Pairs: in.pairs}
			switch {
			case len(c.Pairs) > 0 || kind == "collective-permute":
				c.ReplicaGroups = nil
			case in.channel == 0:
				c.ReplicaGroups = [][]int{{0}} // one replica: each device alone
			case len(c.ReplicaGroups) == 0:
				all := make([]int, n)
				for i := range all {
					all[i] = i
				}
				c.ReplicaGroups = [][]int{all}
			}
			if kind == "all-gather" || kind == "reduce-scatter" || kind == "all-to-all" {
				c.Dims = in.dims
			}
			for _, id := range in.operands {
				op, ok := byID[int64(id)]
				if !ok {
					return fmt.Errorf("%w: %s %s: operand %d is not in computation %s", errProto, in.opcode, in.name, id, comp)
				}
				for _, s := range op.shape.arrays() {
					c.Operands = append(c.Operands, shapes.Make(hloDType(s.elem), s.dims...))
					c.Bytes += s.bytes()
				}
			}
			c.BytesMoved = bytesMoved(c.Kind, c.Bytes, c.GroupSize())
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// bytesMoved is the per-device traffic of a collective over groups of g devices (see
// Collective.BytesMoved).
func bytesMoved(kind string, bytes int64, g int) int64 {
	if kind == "collective-permute" {
		return bytes
	}
	if g <= 1 {
		return 0
	}
	k := int64(g)
	switch kind {
	case "all-reduce":
		return 2 * (k - 1) * bytes / k
	case "all-gather":
		return (k - 1) * bytes
	case "reduce-scatter", "all-to-all", "ragged-all-to-all":
		return (k - 1) * bytes / k
	}
	return bytes
}

// parseComputation decodes an HloComputationProto's name and instructions.
func parseComputation(b []byte) (string, []hloInstruction, error) {
	var name string
	var insts []hloInstruction
	err := xlaproto.Walk(b, func(field protowire.Number, wire protowire.Type, _ uint64, data []byte) error {
		if wire != protowire.BytesType {
			return nil
		}
		switch field {
		case xlaproto.HloComputationName:
			name = string(data)
		case xlaproto.HloComputationInstructions:
			in, err := parseInstruction(data)
			if err != nil {
				return err
			}
			insts = append(insts, in)
		}
		return nil
	})
	return name, insts, err
}

// parseInstruction decodes the fields of an HloInstructionProto that Collectives reports.
func parseInstruction(b []byte) (hloInstruction, error) {
	var in hloInstruction
	var iota []byte
	err := xlaproto.Walk(b, func(field protowire.Number, wire protowire.Type, v uint64, data []byte) error {
		var err error
		var xs []int
		switch field {
		case xlaproto.HloInstructionName:
			in.name = string(data)
		case xlaproto.HloInstructionOpcode:
			in.opcode = string(data)
		case xlaproto.HloInstructionShape:
			in.shape, err = parseShape(data)
		case xlaproto.HloInstructionDimensions:
			xs, err = varints(wire, v, data)
			in.dims = append(in.dims, xs...)
		case xlaproto.HloInstructionChannelID:
			in.channel = int64(v)
		case xlaproto.HloInstructionID:
			in.id = int64(v)
		case xlaproto.HloInstructionOperandIDs:
			xs, err = varints(wire, v, data)
			in.operands = append(in.operands, xs...)
		case xlaproto.HloInstructionReplicaGroups:
			xs, err = replicaGroup(data)
			in.groups = append(in.groups, xs)
		case xlaproto.HloInstructionSourceTargetPairs:
			var p [2]int
			err = xlaproto.Walk(data, func(field protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch field {
				case xlaproto.SourceTargetPairSource:
					p[0] = int(int64(v))
				case xlaproto.SourceTargetPairTarget:
					p[1] = int(int64(v))
				}
				return nil
			})
			in.pairs = append(in.pairs, p)
		case xlaproto.HloInstructionCollectiveDeviceList:
			err = xlaproto.Walk(data, func(field protowire.Number, wire protowire.Type, _ uint64, data []byte) error {
				if wire != protowire.BytesType {
					return nil
				}
				switch field {
				case xlaproto.CollectiveDeviceListReplicaGroups:
					g, err := replicaGroup(data)
					in.groups = append(in.groups, g)
					return err
				case xlaproto.CollectiveDeviceListIota:
					iota = data
				}
				return nil
			})
		case xlaproto.HloInstructionIotaReplicaGroups:
			if wire == protowire.BytesType {
				iota = data
			}
		}
		return err
	})
	if err != nil {
		return hloInstruction{}, err
	}
	if iota != nil && len(in.groups) == 0 {
		if in.groups, err = iotaGroups(iota); err != nil {
			return hloInstruction{}, err
		}
	}
	return in, nil
}

// replicaGroup decodes a ReplicaGroup's replica_ids.
func replicaGroup(b []byte) ([]int, error) {
	ids := []int{}
	err := xlaproto.Walk(b, func(field protowire.Number, wire protowire.Type, v uint64, data []byte) error {
		if field != xlaproto.ReplicaGroupReplicaIDs {
			return nil
		}
		xs, err := varints(wire, v, data)
		ids = append(ids, xs...)
		return err
	})
	return ids, err
}

// iotaGroups expands an IotaReplicaGroupListProto: num_replica_groups groups of
// num_devices_per_group, taken in order from iota(prod(iota_reshape_dims)) reshaped and
// transposed by iota_transpose_perm.
func iotaGroups(b []byte) ([][]int, error) {
	var groups, per int
	var reshape, perm []int
	err := xlaproto.Walk(b, func(field protowire.Number, wire protowire.Type, v uint64, data []byte) error {
		var err error
		var xs []int
		switch field {
		case xlaproto.IotaGroupsNumGroups:
			groups = int(v)
		case xlaproto.IotaGroupsDevicesPerGroup:
			per = int(v)
		case xlaproto.IotaGroupsReshapeDims:
			xs, err = varints(wire, v, data)
			reshape = append(reshape, xs...)
		case xlaproto.IotaGroupsTransposePerm:
			xs, err = varints(wire, v, data)
			perm = append(perm, xs...)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(reshape) == 0 {
		reshape = []int{groups * per}
	}
	ids, err := xlaproto.Iota(reshape, perm)
	if err != nil {
		return nil, err
	}
	if groups < 0 || per < 0 || groups*per != len(ids) {
		return nil, fmt.Errorf("%w: iota replica groups: %d groups of %d from %d ids", errProto, groups, per, len(ids))
	}
	out := make([][]int, groups)
	for i := range out {
		out[i] = ids[i*per : (i+1)*per]
	}
	return out, nil
}

// parseShape decodes a ShapeProto: element_type, dimensions, tuple_shapes.
func parseShape(b []byte) (hloShape, error) {
	s := hloShape{dims: []int{}}
	err := xlaproto.Walk(b, func(field protowire.Number, wire protowire.Type, v uint64, data []byte) error {
		switch field {
		case xlaproto.ShapeElementType:
			s.elem = int(v)
		case xlaproto.ShapeDimensions:
			xs, err := varints(wire, v, data)
			s.dims = append(s.dims, xs...)
			return err
		case xlaproto.ShapeTupleShapes:
			t, err := parseShape(data)
			s.tuple = append(s.tuple, t)
			return err
		}
		return nil
	})
	return s, err
}

// hloTuple is PrimitiveType TUPLE.
const hloTuple = 13

// arrays returns the array shapes of s: s itself, or the leaves of a tuple.
func (s hloShape) arrays() []hloShape {
	if s.elem != hloTuple {
		return []hloShape{s}
	}
	var out []hloShape
	for _, t := range s.tuple {
		out = append(out, t.arrays()...)
	}
	return out
}

// bytes returns the size of an array shape: elements times the element's bytes (sub-byte
// types count a byte each, as XLA stores them unpacked by default).
func (s hloShape) bytes() int64 {
	n := int64(1)
	for _, d := range s.dims {
		n *= int64(d)
	}
	return n * int64(elementBytes(s.elem))
}

// elementBytes returns the bytes of one element of an XLA PrimitiveType (0 for TUPLE, TOKEN and
// unknown types).
func elementBytes(t int) int {
	switch t {
	case 3, 7, 10, 16: // S16 U16 F16 BF16
		return 2
	case 4, 8, 11: // S32 U32 F32
		return 4
	case 5, 9, 12, 15: // S64 U64 F64 C64
		return 8
	case 18: // C128
		return 16
	case 1, 2, 6, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33: // PRED, 8-bit and smaller
		return 1
	}
	return 0
}

// hloDTypes are the XLA PrimitiveTypes whose number differs from their dtype's.
var hloDTypes = map[int]dtypes.DType{
	15: dtypes.Complex64, 16: dtypes.BFloat16, 18: dtypes.Complex128, 19: dtypes.F8E5M2,
	20: dtypes.F8E4M3FN, 21: dtypes.S4, 22: dtypes.U4, 23: dtypes.F8E4M3B11FNUZ, 24: dtypes.F8E5M2FNUZ,
	25: dtypes.F8E4M3FNUZ, 26: dtypes.S2, 27: dtypes.U2, 28: dtypes.F8E4M3, 29: dtypes.F8E3M4,
	32: dtypes.F4E2M1FN, 33: dtypes.F8E8M0FNU,
}

// hloDType maps an XLA PrimitiveType to its dtype; types without one are InvalidDType.
func hloDType(t int) dtypes.DType {
	if t >= 1 && t <= 12 { // PRED..F64 share their numbers
		return dtypes.DType(t)
	}
	if d, ok := hloDTypes[t]; ok {
		return d
	}
	return dtypes.InvalidDType
}

// CompiledMemoryStats is what the compiler planned for one device to run an executable
// (xla::CompiledMemoryStats), in bytes. Fields a plugin does not fill stay zero; those added to
// the PJRT C API after 0.81 are -1 when the plugin is older than them.
type CompiledMemoryStats struct {
	// Device memory (HBM on a GPU or TPU; host RAM for the CPU plugin).
	GeneratedCode int64 // the compiled code
	Arguments     int64 // the arguments of one device
	Outputs       int64 // the results of one device
	Alias         int64 // argument memory reused for results (donation)
	Temp          int64 // scratch memory during execution
	// Host memory, for programs that place values in host memory.
	HostGeneratedCode, HostArguments, HostOutputs, HostAlias, HostTemp int64
	// Peak is the compiler's estimate of the peak memory of one execution; 0 when the plugin
	// does not estimate it.
	Peak int64
	// Total is the device memory the executable needs in all (-1 when the plugin does not say).
	Total int64
}

// Device returns the device-memory bytes one execution needs on each device: arguments,
// results not aliased to arguments, and scratch memory (generated code excluded).
func (m CompiledMemoryStats) Device() int64 { return m.Arguments + m.Outputs - m.Alias + m.Temp }

// MemoryStats returns the executable's compiled memory statistics
// (PJRT_Executable_GetCompiledMemoryStats). A plugin without that function, or one that does
// not implement it for its executables, gives an error wrapping ErrUnimplemented; a closed
// executable one wrapping ErrClosed.
func (e *Executable) MemoryStats() (CompiledMemoryStats, error) {
	if err := e.client.api.need(fnExecutableMemoryStats); err != nil {
		return CompiledMemoryStats{}, err
	}
	if !e.gate.Enter() {
		return CompiledMemoryStats{}, fmt.Errorf("pjrt: memory stats: executable %w", ErrClosed)
	}
	defer e.gate.Exit()
	var m CompiledMemoryStats
	err := e.withExecutable("memory stats", func(a *api, x *C.PJRT_Executable) error {
		args := C.PJRT_Executable_GetCompiledMemoryStats_Args{executable: x}
		// A plugin older than a field leaves it as it is: -1 says "not reported".
		args.total_size_in_bytes = -1
		if err := a.toError("memory stats", ErrUnimplemented, C.xm_Executable_GetCompiledMemoryStats(a.p, &args)); err != nil {
			return err
		}
		m = CompiledMemoryStats{
			GeneratedCode: int64(args.generated_code_size_in_bytes),
			Arguments:     int64(args.argument_size_in_bytes),
			Outputs:       int64(args.output_size_in_bytes),
			Alias:         int64(args.alias_size_in_bytes),
			Temp:          int64(args.temp_size_in_bytes),

			HostGeneratedCode: int64(args.host_generated_code_size_in_bytes),
			HostArguments:     int64(args.host_argument_size_in_bytes),
			HostOutputs:       int64(args.host_output_size_in_bytes),
			HostAlias:         int64(args.host_alias_size_in_bytes),
			HostTemp:          int64(args.host_temp_size_in_bytes),

			Peak:  int64(args.peak_memory_in_bytes),
			Total: int64(args.total_size_in_bytes),
		}
		return nil
	})
	return m, err
}
