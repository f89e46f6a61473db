package jaxexport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
)

// Sharding is the sharding of one argument or result, as JAX exported it: XLA's HloSharding
// (serialization versions up to 8), a NamedSharding over an abstract mesh (versions 6 and
// later; the only form from version 9 on), both, or unspecified (None in JAX: XLA chooses).
// The HLO text is the one XLA's HloSharding::ToString prints and GSPMD's mhlo.sharding
// attributes hold, e.g. "{devices=[4,2]<=[8]}" or "{replicated}".
type Sharding struct {
	hlo        string
	named      mesh.NamedSharding
	hasNamed   bool
	memoryKind string
}

// Specified reports whether the sharding is given; the zero Sharding is unspecified.
func (s Sharding) Specified() bool { return s.hlo != "" || s.hasNamed }

// HLO returns the HloSharding text, "" when unspecified or when the artifact stored only the
// named sharding (serialization version 9 and later).
func (s Sharding) HLO() string { return s.hlo }

// Named returns the named sharding over the exported abstract mesh, and false when the
// artifact stored none (serialization versions up to 5, or an unspecified sharding).
func (s Sharding) Named() (mesh.NamedSharding, bool) { return s.named, s.hasNamed }

// MemoryKind returns the named sharding's memory kind ("device", "pinned_host", ...), "" when
// the artifact stored none.
func (s Sharding) MemoryKind() string { return s.memoryKind }

// String returns the HloSharding text, else the named sharding
// ("NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))"), or "unspecified".
func (s Sharding) String() string {
	switch {
	case s.hlo != "":
		return s.hlo
	case s.hasNamed:
		return s.named.String()
	}
	return "unspecified"
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

var subgroupNames = map[int64]string{xlaproto.Replicated: "replicated", xlaproto.Manual: "manual", xlaproto.Unreduced: "unreduced"}

// writeOpSharding writes the HloSharding text of the OpSharding message b, as
// HloSharding::ToString prints it.
func writeOpSharding(w *strings.Builder, b []byte, depth int) error {
	s, err := xlaproto.ParseOpSharding(b)
	if err != nil {
		return err
	}
	switch s.Type {
	case xlaproto.Replicated:
		w.WriteString("{replicated")
	case xlaproto.Manual:
		w.WriteString("{manual")
	case xlaproto.Unknown:
		w.WriteString("{unknown")
	case xlaproto.Unreduced:
		w.WriteString("{unreduced")
	case xlaproto.Maximal:
		if len(s.Devices) != 1 {
			return fmt.Errorf("%w: a maximal sharding with %d devices", xlaproto.ErrMalformed, len(s.Devices))
		}
		w.WriteString("{maximal device=" + strconv.FormatInt(s.Devices[0], 10))
	case xlaproto.Tuple:
		if depth >= maxTupleDepth {
			return fmt.Errorf("%w: tuple shardings nest deeper than %d", xlaproto.ErrMalformed, maxTupleDepth)
		}
		w.WriteByte('{')
		for i, t := range s.Tuple {
			if i > 0 {
				w.WriteString(", ")
			}
			if err := writeOpSharding(w, t, depth+1); err != nil {
				return err
			}
		}
		w.WriteByte('}')
		return nil
	case xlaproto.Other:
		w.WriteString("{devices=[")
		writeInts(w, s.TileDims)
		w.WriteByte(']')
		switch {
		case len(s.IotaReshape) > 0 && len(s.Devices) == 0:
			w.WriteString("<=[")
			writeInts(w, s.IotaReshape)
			w.WriteByte(']')
			if len(s.IotaReshape) > 1 {
				perm := s.IotaTranspose
				if len(perm) == 0 {
					for i := range s.IotaReshape {
						perm = append(perm, int64(i))
					}
				}
				w.WriteString("T(")
				writeInts(w, perm)
				w.WriteByte(')')
			}
		case len(s.Devices) > 0:
			writeInts(w, s.Devices)
		default:
			return fmt.Errorf("%w: a tiled sharding without a tile assignment", xlaproto.ErrMalformed)
		}
		if s.ReplicateOnLastTileDim {
			w.WriteString(" last_tile_dim_replicate")
		} else if len(s.LastTileDims) > 0 {
			w.WriteString(" last_tile_dims={")
			for i, t := range s.LastTileDims {
				name, ok := subgroupNames[t]
				if !ok {
					return fmt.Errorf("%w: subgroup type %d in last_tile_dims", xlaproto.ErrMalformed, t)
				}
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(name)
			}
			w.WriteByte('}')
		}
	default:
		return fmt.Errorf("%w: unknown sharding type %d", xlaproto.ErrMalformed, s.Type)
	}
	if s.ShardGroup {
		switch s.GroupType {
		case 0:
			w.WriteString(" shard_as " + strconv.FormatInt(s.GroupID, 10))
		case 1:
			w.WriteString(" shard_like " + strconv.FormatInt(s.GroupID, 10))
		default:
			return fmt.Errorf("%w: shard group type %d", xlaproto.ErrMalformed, s.GroupType)
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
