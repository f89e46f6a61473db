package jaxexport

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/mlir"
)

// Sharding is the HLO sharding of one argument or result, as JAX exported it
// (Exported.in_shardings_hlo): XLA's HloSharding, or unspecified (nil in JAX: XLA chooses).
// Its text is the one XLA's HloSharding::ToString prints and GSPMD's mhlo.sharding attributes
// hold, e.g. "{devices=[4,2]<=[8]}" or "{replicated}".
type Sharding struct{ hlo string }

// Specified reports whether the sharding is given; the zero Sharding is unspecified.
func (s Sharding) Specified() bool { return s.hlo != "" }

// HLO returns the HloSharding text, "" when unspecified.
func (s Sharding) HLO() string { return s.hlo }

// String returns the HloSharding text, or "unspecified".
func (s Sharding) String() string {
	if s.hlo == "" {
		return "unspecified"
	}
	return s.hlo
}

// maxTupleDepth bounds the nesting of tuple shardings decodeSharding follows.
const maxTupleDepth = 8

// decodeSharding decodes an xla.OpSharding proto into HloSharding text and checks that XLA
// reads that text back, for the given number of devices (mlir.CheckSharding).
func decodeSharding(proto []byte, devices int) (Sharding, error) {
	var b strings.Builder
	if err := writeOpSharding(&b, proto, 0); err != nil {
		return Sharding{}, err
	}
	text := b.String()
	if err := mlir.CheckSharding(text, devices); err != nil {
		return Sharding{}, err
	}
	return Sharding{hlo: text}, nil
}

var errProto = errors.New("malformed OpSharding proto")

// OpSharding.Type and the subgroup types of last_tile_dims.
const (
	opReplicated = 0
	opMaximal    = 1
	opTuple      = 2
	opOther      = 3
	opManual     = 4
	opUnknown    = 5
	opUnreduced  = 6
)

var subgroupNames = map[int64]string{opReplicated: "replicated", opManual: "manual", opUnreduced: "unreduced"}

// opSharding holds the fields of xla.OpSharding that its text shows.
type opSharding struct {
	typ                  int64
	tileDims, devices    []int64
	tuple                [][]byte
	replicateOnLast      bool
	lastTileDims         []int64
	iotaReshape, iotaPer []int64
	shardGroup           bool
	groupID, groupType   int64
}

// writeOpSharding writes the HloSharding text of the OpSharding message b, as
// HloSharding::ToString prints it.
func writeOpSharding(w *strings.Builder, b []byte, depth int) error {
	s, err := parseOpSharding(b)
	if err != nil {
		return err
	}
	switch s.typ {
	case opReplicated:
		w.WriteString("{replicated")
	case opManual:
		w.WriteString("{manual")
	case opUnknown:
		w.WriteString("{unknown")
	case opUnreduced:
		w.WriteString("{unreduced")
	case opMaximal:
		if len(s.devices) != 1 {
			return fmt.Errorf("%w: a maximal sharding with %d devices", errProto, len(s.devices))
		}
		w.WriteString("{maximal device=" + strconv.FormatInt(s.devices[0], 10))
	case opTuple:
		if depth >= maxTupleDepth {
			return fmt.Errorf("%w: tuple shardings nest deeper than %d", errProto, maxTupleDepth)
		}
		w.WriteByte('{')
		for i, t := range s.tuple {
			if i > 0 {
				w.WriteString(", ")
			}
			if err := writeOpSharding(w, t, depth+1); err != nil {
				return err
			}
		}
		w.WriteByte('}')
		return nil
	case opOther:
		w.WriteString("{devices=[")
		writeInts(w, s.tileDims)
		w.WriteByte(']')
		switch {
		case len(s.iotaReshape) > 0 && len(s.devices) == 0:
			w.WriteString("<=[")
			writeInts(w, s.iotaReshape)
			w.WriteByte(']')
			if len(s.iotaReshape) > 1 {
				perm := s.iotaPer
				if len(perm) == 0 {
					for i := range s.iotaReshape {
						perm = append(perm, int64(i))
					}
				}
				w.WriteString("T(")
				writeInts(w, perm)
				w.WriteByte(')')
			}
		case len(s.devices) > 0:
			writeInts(w, s.devices)
		default:
			return fmt.Errorf("%w: a tiled sharding without a tile assignment", errProto)
		}
		if s.replicateOnLast {
			w.WriteString(" last_tile_dim_replicate")
		} else if len(s.lastTileDims) > 0 {
			w.WriteString(" last_tile_dims={")
			for i, t := range s.lastTileDims {
				name, ok := subgroupNames[t]
				if !ok {
					return fmt.Errorf("%w: subgroup type %d in last_tile_dims", errProto, t)
				}
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(name)
			}
			w.WriteByte('}')
		}
	default:
		return fmt.Errorf("%w: unknown sharding type %d", errProto, s.typ)
	}
	if s.shardGroup {
		switch s.groupType {
		case 0:
			w.WriteString(" shard_as " + strconv.FormatInt(s.groupID, 10))
		case 1:
			w.WriteString(" shard_like " + strconv.FormatInt(s.groupID, 10))
		default:
			return fmt.Errorf("%w: shard group type %d", errProto, s.groupType)
		}
	}
	w.WriteByte('}')
	return nil
}

func writeInts(w *strings.Builder, v []int64) {
	for i, x := range v {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString(strconv.FormatInt(x, 10))
	}
}

// parseOpSharding reads the fields of one OpSharding message with protowire; unknown fields and
// metadata are skipped.
func parseOpSharding(b []byte) (opSharding, error) {
	var s opSharding
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return s, fmt.Errorf("%w: %v", errProto, protowire.ParseError(n))
		}
		b = b[n:]
		var (
			v    uint64
			data []byte
		)
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return s, fmt.Errorf("%w: field %d: %v", errProto, num, protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		switch num {
		case 1:
			s.typ, err = scalar(typ, v)
		case 3:
			s.tileDims, err = appendInts(s.tileDims, typ, v, data)
		case 4:
			s.devices, err = appendInts(s.devices, typ, v, data)
		case 5:
			if typ != protowire.BytesType {
				return s, fmt.Errorf("%w: tuple_shardings of wire type %d", errProto, typ)
			}
			s.tuple = append(s.tuple, data)
		case 6:
			var x int64
			x, err = scalar(typ, v)
			s.replicateOnLast = x != 0
		case 8:
			s.lastTileDims, err = appendInts(s.lastTileDims, typ, v, data)
		case 9:
			s.iotaReshape, err = appendInts(s.iotaReshape, typ, v, data)
		case 10:
			s.iotaPer, err = appendInts(s.iotaPer, typ, v, data)
		case 11:
			var x int64
			x, err = scalar(typ, v)
			s.shardGroup = x != 0
		case 12:
			s.groupID, err = scalar(typ, v)
		case 13:
			s.groupType, err = scalar(typ, v)
		}
		if err != nil {
			return s, fmt.Errorf("field %d: %w", num, err)
		}
	}
	return s, nil
}

func scalar(typ protowire.Type, v uint64) (int64, error) {
	if typ != protowire.VarintType {
		return 0, fmt.Errorf("%w: wire type %d for a scalar", errProto, typ)
	}
	return int64(v), nil
}

// appendInts appends a repeated integer field, packed (bytes) or one element (varint).
func appendInts(out []int64, typ protowire.Type, v uint64, data []byte) ([]int64, error) {
	switch typ {
	case protowire.VarintType:
		return append(out, int64(v)), nil
	case protowire.BytesType:
		for len(data) > 0 {
			x, n := protowire.ConsumeVarint(data)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", errProto, protowire.ParseError(n))
			}
			out = append(out, int64(x))
			data = data[n:]
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: wire type %d for a repeated integer", errProto, typ)
}
