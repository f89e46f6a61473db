package jaxexport

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every error of Read is an *Error whose Kind is one of them: test with
// errors.Is, read the field and the index with errors.As.
var (
	// ErrFormat: the bytes are not a well-formed artifact: too short, an offset or a length
	// pointing outside the buffer, a table whose layout is broken, a required field missing,
	// a value out of its range, or a sharding proto XLA would not read.
	ErrFormat = errors.New("malformed jax.export artifact")
	// ErrVersion: the artifact uses a serialization version this reader does not read
	// (outside MinVersion..MaxVersion).
	ErrVersion = errors.New("unsupported jax.export serialization")
	// ErrSymbolicShape: an aval has a symbolic dimension (shape polymorphism); only static
	// shapes are run.
	ErrSymbolicShape = errors.New("symbolic dimension")
	// ErrDType: an aval's element type has no counterpart in dtypes (float0, PRNG key types).
	ErrDType = errors.New("unsupported element type")
	// ErrEffects: the function has ordered effects, which thread a token through @main that
	// nothing outside JAX provides.
	ErrEffects = errors.New("ordered effects")
)

// Error is a problem with one field of an artifact.
type Error struct {
	Kind  error  // one of the sentinels
	Field string // the Exported field at fault, as the schema names it ("in_avals", "nr_devices")
	Index int    // the element of a vector field at fault; -1 when none
	Msg   string // what is wrong with it
}

// Error formats as "jaxexport: in_avals[1]: symbolic dimension: dimension 0 is "b"".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("jaxexport: ")
	if e.Field != "" {
		b.WriteString(e.Field)
		if e.Index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.Index))
			b.WriteByte(']')
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// ErrUnsupported: the artifact uses a feature xlamesh does not run: a token aval, a partition
// spec with reduced or unreduced axes.
var ErrUnsupported = errors.New("unsupported jax.export feature")
