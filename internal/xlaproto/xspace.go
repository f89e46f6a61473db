package xlaproto

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of tensorflow.profiler.XSpace and its parts read here, as numbered in
// tsl/profiler/protobuf/xplane.proto.
const (
	xspacePlanes = 1

	xplaneID            = 1
	xplaneName          = 2
	xplaneLines         = 3
	xplaneEventMetadata = 4 // map<int64, XEventMetadata>
	xplaneStatMetadata  = 5 // map<int64, XStatMetadata>

	xlineID          = 1
	xlineName        = 2
	xlineTimestampNs = 3
	xlineEvents      = 4
	xlineDisplayName = 11

	xeventMetadataID     = 1
	xeventOffsetPs       = 2
	xeventDurationPs     = 3
	xeventStats          = 4
	xeventNumOccurrences = 5

	xstatMetadataID = 1
	xstatDouble     = 2
	xstatUint64     = 3
	xstatInt64      = 4
	xstatStr        = 5
	xstatBytes      = 6
	xstatRef        = 7

	metadataName         = 2
	eventMetaDisplayName = 4

	mapKey   = 1
	mapValue = 2
)

// XSpace is the part of a tensorflow.profiler.XSpace (a profiler's collected data) that a
// timeline needs.
type XSpace struct {
	Planes []XPlane
}

// XPlane is one profiling source (a device, the host threads): its timelines and the names of
// its events and stats.
type XPlane struct {
	ID        int64
	Name      string
	Lines     []XLine
	EventName map[int64]string // XEventMetadata display name, else name, by id
	StatName  map[int64]string // XStatMetadata name by id
}

// XLine is one timeline of a plane (a thread, a stream).
type XLine struct {
	ID          int64
	Name        string // the display name when there is one
	TimestampNs int64  // the start of the line, ns since the Unix epoch
	Events      []XEvent
}

// XEvent is one event of a line. Aggregated events (num_occurrences) are not kept.
type XEvent struct {
	MetadataID int64
	OffsetPs   int64 // from the line's TimestampNs
	DurationPs int64
	Stats      []XStat
}

// XStat is a value attached to an event. Value is a float64, uint64, int64, string or []byte;
// a ref_value is the string it refers to (the name of stat metadata Ref), left for the caller.
type XStat struct {
	MetadataID int64
	Value      any
	Ref        int64 // non-zero for a ref_value
}

// ReadXSpace decodes a serialized XSpace. A zero byte where a field tag should start ends the
// message: XLA's profiler plugin hands out its serialization with one trailing zero byte.
func ReadXSpace(b []byte) (*XSpace, error) {
	s := &XSpace{}
	err := walkAll(trimZeroTail(b), func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		if num != xspacePlanes || typ != protowire.BytesType {
			return nil
		}
		p, err := readPlane(data)
		if err != nil {
			return fmt.Errorf("plane %d: %w", len(s.Planes), err)
		}
		s.Planes = append(s.Planes, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("xlaproto: XSpace: %w", err)
	}
	return s, nil
}

// trimZeroTail cuts b at a zero byte in tag position at the top level.
func trimZeroTail(b []byte) []byte {
	rest := b
	for len(rest) > 0 {
		if rest[0] == 0 {
			return b[:len(b)-len(rest)]
		}
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return b
		}
		rest = rest[n+m:]
	}
	return b
}

// walkAll is Walk that also hands fixed-width fields to visit (their value in v).
func walkAll(b []byte, visit func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var w uint32
			w, n = protowire.ConsumeFixed32(b)
			v = uint64(w)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := visit(num, typ, v, data); err != nil {
			return err
		}
	}
	return nil
}

func readPlane(b []byte) (XPlane, error) {
	p := XPlane{EventName: map[int64]string{}, StatName: map[int64]string{}}
	err := walkAll(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == xplaneID && typ == protowire.VarintType:
			p.ID = int64(v)
		case num == xplaneName && typ == protowire.BytesType:
			p.Name = string(data)
		case num == xplaneLines && typ == protowire.BytesType:
			l, err := readLine(data)
			if err != nil {
				return fmt.Errorf("line %d: %w", len(p.Lines), err)
			}
			p.Lines = append(p.Lines, l)
		case (num == xplaneEventMetadata || num == xplaneStatMetadata) && typ == protowire.BytesType:
			key, name, err := readMetadataEntry(data, num == xplaneEventMetadata)
			if err != nil {
				return err
			}
			if num == xplaneEventMetadata {
				p.EventName[key] = name
			} else {
				p.StatName[key] = name
			}
		}
		return nil
	})
	return p, err
}

// readMetadataEntry reads one map entry of XPlane.event_metadata or stat_metadata: its key and
// the metadata's name (for an event, its display name when it has one).
func readMetadataEntry(b []byte, event bool) (int64, string, error) {
	var key int64
	var name, display string
	err := walkAll(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == mapKey && typ == protowire.VarintType:
			key = int64(v)
		case num == mapValue && typ == protowire.BytesType:
			return walkAll(data, func(num protowire.Number, typ protowire.Type, _ uint64, data []byte) error {
				switch {
				case num == metadataName && typ == protowire.BytesType:
					name = string(data)
				case event && num == eventMetaDisplayName && typ == protowire.BytesType:
					display = string(data)
				}
				return nil
			})
		}
		return nil
	})
	if display != "" {
		name = display
	}
	if err != nil {
		return 0, "", fmt.Errorf("metadata entry: %w", err)
	}
	return key, name, nil
}

func readLine(b []byte) (XLine, error) {
	var l XLine
	var name, display string
	err := walkAll(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == xlineID && typ == protowire.VarintType:
			l.ID = int64(v)
		case num == xlineName && typ == protowire.BytesType:
			name = string(data)
		case num == xlineDisplayName && typ == protowire.BytesType:
			display = string(data)
		case num == xlineTimestampNs && typ == protowire.VarintType:
			l.TimestampNs = int64(v)
		case num == xlineEvents && typ == protowire.BytesType:
			e, keep, err := readEvent(data)
			if err != nil {
				return fmt.Errorf("event %d: %w", len(l.Events), err)
			}
			if keep {
				l.Events = append(l.Events, e)
			}
		}
		return nil
	})
	l.Name = name
	if display != "" {
		l.Name = display
	}
	return l, err
}

// readEvent reads an event; keep is false for an aggregated one.
func readEvent(b []byte) (e XEvent, keep bool, err error) {
	keep = true
	err = walkAll(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == xeventMetadataID && typ == protowire.VarintType:
			e.MetadataID = int64(v)
		case num == xeventOffsetPs && typ == protowire.VarintType:
			e.OffsetPs = int64(v)
		case num == xeventDurationPs && typ == protowire.VarintType:
			e.DurationPs = int64(v)
		case num == xeventNumOccurrences && typ == protowire.VarintType:
			keep = false
		case num == xeventStats && typ == protowire.BytesType:
			s, err := readStat(data)
			if err != nil {
				return fmt.Errorf("stat %d: %w", len(e.Stats), err)
			}
			e.Stats = append(e.Stats, s)
		}
		return nil
	})
	return e, keep, err
}

func readStat(b []byte) (XStat, error) {
	var s XStat
	err := walkAll(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == xstatMetadataID && typ == protowire.VarintType:
			s.MetadataID = int64(v)
		case num == xstatDouble && typ == protowire.Fixed64Type:
			s.Value = math.Float64frombits(v)
		case num == xstatUint64 && typ == protowire.VarintType:
			s.Value = v
		case num == xstatInt64 && typ == protowire.VarintType:
			s.Value = int64(v)
		case num == xstatStr && typ == protowire.BytesType:
			s.Value = string(data)
		case num == xstatBytes && typ == protowire.BytesType:
			s.Value = append([]byte(nil), data...)
		case num == xstatRef && typ == protowire.VarintType:
			s.Ref = int64(v)
		}
		return nil
	})
	return s, err
}
