package xlaproto

import (
	"strconv"
	"strings"
)

// String returns the HloSharding text of s, as XLA's HloSharding::ToString prints it and
// GSPMD's mhlo.sharding attributes hold it: `{replicated}`, `{manual}`, `{maximal device=3}`,
// `{devices=[4,2]<=[8]}`, `{devices=[2,4]<=[4,2]T(1,0)}`, `{devices=[4,2]0,2,4,6,1,3,5,7}`,
// `{devices=[4,1,2]<=[8] last_tile_dim_replicate}`,
// `{devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}`, `{unknown shard_like 1}`, tuples as
// `{{replicated}, {manual}}`. An iota assignment prints in the form it has (Explicit writes it
// out).
func (s OpSharding) String() string {
	var b strings.Builder
	s.writeTo(&b)
	return b.String()
}

func (s OpSharding) writeTo(b *strings.Builder) {
	b.WriteByte('{')
	switch s.typ {
	case Tuple:
		for i, t := range s.tuple {
			if i > 0 {
				b.WriteString(", ")
			}
			t.writeTo(b)
		}
		b.WriteByte('}')
		return
	case Maximal:
		b.WriteString("maximal device=")
		if len(s.devices) > 0 {
			b.WriteString(strconv.Itoa(s.devices[0]))
		}
	case Tiled:
		s.writeTiling(b)
	default:
		b.WriteString(s.typ.String())
	}
	if s.shardGroup {
		if s.groupType == ShardLike {
			b.WriteString(" shard_like ")
		} else {
			b.WriteString(" shard_as ")
		}
		b.WriteString(strconv.FormatInt(s.groupID, 10))
	}
	b.WriteByte('}')
}

// writeTiling writes `devices=[...]` with the tile assignment and the subgroup dimensions.
func (s OpSharding) writeTiling(b *strings.Builder) {
	b.WriteString("devices=[")
	writeInts(b, s.tileDims)
	b.WriteByte(']')
	if s.devices == nil && s.iotaReshape != nil {
		b.WriteString("<=[")
		writeInts(b, s.iotaReshape)
		b.WriteByte(']')
		if len(s.iotaReshape) > 1 {
			b.WriteString("T(")
			writeInts(b, s.iotaTranspose)
			b.WriteByte(')')
		}
	} else {
		writeInts(b, s.devices)
	}
	switch {
	case s.replicateOnLastTileDim:
		b.WriteString(" last_tile_dim_replicate")
	case len(s.lastTileDims) > 0:
		b.WriteString(" last_tile_dims={")
		for i, t := range s.lastTileDims {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.String())
		}
		b.WriteByte('}')
	}
}

func writeInts(b *strings.Builder, v []int) {
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x))
	}
}
