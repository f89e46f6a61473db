package xlaproto

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrMalformed is wrapped by every error of a message that does not decode.
var ErrMalformed = errors.New("malformed XLA protobuf")

// Walk calls visit for each varint and length-delimited field of message b, in order: a varint
// in v, a length-delimited field in data. Fixed-width fields are skipped. visit's error stops
// the walk and is returned.
func Walk(b []byte, visit func(field protowire.Number, typ protowire.Type, v uint64, data []byte) error) error {
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
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.VarintType && typ != protowire.BytesType {
			continue
		}
		if err := visit(num, typ, v, data); err != nil {
			return err
		}
	}
	return nil
}

// Field returns the bytes of the first length-delimited field number n of message b, or nil
// when there is none.
func Field(b []byte, n protowire.Number) ([]byte, error) {
	var found []byte
	err := Walk(b, func(field protowire.Number, typ protowire.Type, _ uint64, data []byte) error {
		if field == n && typ == protowire.BytesType && found == nil {
			found = data
		}
		return nil
	})
	return found, err
}

// AppendInts appends the elements of a repeated integer field, as Walk gave it: packed (bytes)
// or one element (varint).
func AppendInts(out []int64, typ protowire.Type, v uint64, data []byte) ([]int64, error) {
	switch typ {
	case protowire.VarintType:
		return append(out, int64(v)), nil
	case protowire.BytesType:
		for len(data) > 0 {
			x, n := protowire.ConsumeVarint(data)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
			}
			out = append(out, int64(x))
			data = data[n:]
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: wire type %d for a repeated integer", ErrMalformed, typ)
}

// Scalar returns the value of an integer, enum or bool field, as Walk gave it.
func Scalar(typ protowire.Type, v uint64) (int64, error) {
	if typ != protowire.VarintType {
		return 0, fmt.Errorf("%w: wire type %d for a scalar", ErrMalformed, typ)
	}
	return int64(v), nil
}
