package shardy

import (
	"slices"
	"strings"
)

// DimSharding is the sharding of one tensor dimension: the axes it is split
// over (major to minor), whether it is closed (`{}`, `{"x"}`) or open to
// further sharding by propagation (`{?}`, `{"x", ?}`), and an optional
// priority (`{"x"}p0`; lower numbers take precedence, no priority is the
// highest).
//
// DimSharding is an immutable value; accessors return copies.
type DimSharding struct {
	axes        []AxisRef
	open        bool
	priority    int
	hasPriority bool
}

// Closed returns a closed dimension sharding over axes: `{"x", "y"}`, or
// `{}` (unsharded) with no axes.
func Closed(axes ...AxisRef) DimSharding { return DimSharding{axes: slices.Clone(axes)} }

// Open returns an open dimension sharding: `{?}`, or `{"x", ?}` with axes.
func Open(axes ...AxisRef) DimSharding {
	return DimSharding{axes: slices.Clone(axes), open: true}
}

// WithPriority returns d with priority p (`pN`). Validate rejects negative
// priorities and priorities on empty closed dimensions.
func (d DimSharding) WithPriority(p int) DimSharding {
	d.axes = slices.Clone(d.axes)
	d.priority, d.hasPriority = p, true
	return d
}

// WithoutPriority returns d with no priority.
func (d DimSharding) WithoutPriority() DimSharding {
	d.axes = slices.Clone(d.axes)
	d.priority, d.hasPriority = 0, false
	return d
}

// Axes returns a copy of the axes, major to minor.
func (d DimSharding) Axes() []AxisRef { return slices.Clone(d.axes) }

// IsOpen reports whether propagation may add axes (`?`).
func (d DimSharding) IsOpen() bool { return d.open }

// IsClosed reports whether the dimension is closed.
func (d DimSharding) IsClosed() bool { return !d.open }

// Priority returns the priority and whether one is set.
func (d DimSharding) Priority() (int, bool) { return d.priority, d.hasPriority }

// IsReplicated reports whether no axis shards the dimension.
func (d DimSharding) IsReplicated() bool { return len(d.axes) == 0 }

// Equal reports whether d and o are the same dimension sharding.
func (d DimSharding) Equal(o DimSharding) bool {
	return slices.Equal(d.axes, o.axes) && d.open == o.open &&
		d.hasPriority == o.hasPriority && d.priority == o.priority
}

// String returns the dimension text: `{}`, `{?}`, `{"x", ?}`, `{"x"}p0`.
func (d DimSharding) String() string {
	var b strings.Builder
	d.writeTo(&b)
	return b.String()
}

func (d DimSharding) writeTo(b *strings.Builder) {
	b.WriteByte('{')
	for i, a := range d.axes {
		if i > 0 {
			b.WriteString(", ")
		}
		a.writeTo(b)
	}
	if d.open {
		if len(d.axes) > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('?')
	}
	b.WriteByte('}')
	if d.hasPriority {
		b.WriteByte('p')
		writeInt(b, d.priority)
	}
}
