package xlaproto_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
)

// space is an XSpace with one plane "p" of one line (id 2, at 5 ns) holding one event of
// metadata 9 ("op") at offset 3 ps for 4 ps, with an int64 stat 1 ("n") of -1.
func space() []byte {
	tag := protowire.AppendTag
	var stat, ev, line, meta, statMeta, plane, s []byte
	stat = protowire.AppendVarint(tag(stat, 1, protowire.VarintType), 1)
	stat = protowire.AppendVarint(tag(stat, 4, protowire.VarintType), ^uint64(0)) // int64 -1, as a varint
	ev = protowire.AppendVarint(tag(ev, 1, protowire.VarintType), 9)
	ev = protowire.AppendVarint(tag(ev, 2, protowire.VarintType), 3)
	ev = protowire.AppendVarint(tag(ev, 3, protowire.VarintType), 4)
	ev = protowire.AppendBytes(tag(ev, 4, protowire.BytesType), stat)
	line = protowire.AppendVarint(tag(line, 1, protowire.VarintType), 2)
	line = protowire.AppendVarint(tag(line, 3, protowire.VarintType), 5)
	line = protowire.AppendBytes(tag(line, 4, protowire.BytesType), ev)
	meta = protowire.AppendVarint(tag(meta, 1, protowire.VarintType), 9)
	meta = protowire.AppendBytes(tag(meta, 2, protowire.BytesType), protowire.AppendString(tag(nil, 2, protowire.BytesType), "op"))
	statMeta = protowire.AppendVarint(tag(statMeta, 1, protowire.VarintType), 1)
	statMeta = protowire.AppendBytes(tag(statMeta, 2, protowire.BytesType), protowire.AppendString(tag(nil, 2, protowire.BytesType), "n"))
	plane = protowire.AppendString(tag(plane, 2, protowire.BytesType), "p")
	plane = protowire.AppendBytes(tag(plane, 3, protowire.BytesType), line)
	plane = protowire.AppendBytes(tag(plane, 4, protowire.BytesType), meta)
	plane = protowire.AppendBytes(tag(plane, 5, protowire.BytesType), statMeta)
	return protowire.AppendBytes(tag(s, 1, protowire.BytesType), plane)
}

func TestReadXSpace(t *testing.T) {
	s, err := xlaproto.ReadXSpace(space())
	require.NoError(t, err)
	want := &xlaproto.XSpace{Planes: []xlaproto.XPlane{{
		Name:      "p",
		Lines:     []xlaproto.XLine{{ID: 2, TimestampNs: 5, Events: []xlaproto.XEvent{{MetadataID: 9, OffsetPs: 3, DurationPs: 4, Stats: []xlaproto.XStat{{MetadataID: 1, Value: int64(-1)}}}}}},
		EventName: map[int64]string{9: "op"},
		StatName:  map[int64]string{1: "n"},
	}}}
	assert.Equal(t, want, s)

	_, err = xlaproto.ReadXSpace(space()[:7])
	assert.True(t, errors.Is(err, xlaproto.ErrMalformed), "%v", err)
}

// FuzzReadXSpace: no input panics; an input that decodes decodes the same again.
func FuzzReadXSpace(f *testing.F) {
	f.Add(space())
	f.Add(append(space(), 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := xlaproto.ReadXSpace(b)
		if err != nil {
			require.ErrorIs(t, err, xlaproto.ErrMalformed)
			return
		}
		again, err := xlaproto.ReadXSpace(b)
		require.NoError(t, err)
		// Reading is deterministic, compared as printed: a double stat may be NaN, which is not
		// equal to itself (testdata/fuzz/FuzzReadXSpace holds such an input).
		require.Equal(t, fmt.Sprintf("%#v", s), fmt.Sprintf("%#v", again))
	})
}
