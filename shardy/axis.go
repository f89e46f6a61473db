package shardy

import "strings"

// AxisRef refers to a mesh axis, whole (`"x"`) or a sub-axis (`"x":(m)k`).
//
// A sub-axis `"x":(m)k` is the middle factor when axis x is split major to
// minor as [m, k, size(x)/(m·k)]: m (the pre-size) is the product of the
// more major part. So on x=4, `"x":(1)2` is the major half and `"x":(2)2`
// the minor half. AxisRef is a comparable value; == compares refs.
type AxisRef struct {
	name    string
	sub     bool
	preSize int
	size    int
}

// Axis returns a reference to the whole axis name: `"x"`.
func Axis(name string) AxisRef { return AxisRef{name: name} }

// SubAxis returns a reference to the sub-axis `"name":(preSize)size`.
// It does not validate; sub-axis rules are checked by Validate.
func SubAxis(name string, preSize, size int) AxisRef {
	return AxisRef{name: name, sub: true, preSize: preSize, size: size}
}

// AxisRefs returns a whole-axis reference for each name.
func AxisRefs(names ...string) []AxisRef {
	refs := make([]AxisRef, len(names))
	for i, n := range names {
		refs[i] = Axis(n)
	}
	return refs
}

// Name returns the name of the (full) axis referred to.
func (a AxisRef) Name() string { return a.name }

// IsSubAxis reports whether a refers to a sub-axis.
func (a AxisRef) IsSubAxis() bool { return a.sub }

// PreSize returns the sub-axis pre-size m of `"x":(m)k`, or 0 for a whole axis.
func (a AxisRef) PreSize() int { return a.preSize }

// SubSize returns the sub-axis size k of `"x":(m)k`, or 0 for a whole axis.
func (a AxisRef) SubSize() int { return a.size }

// Size returns the number of shards a splits a dimension into on mesh m:
// the sub-axis size, or the axis size for a whole axis (0 if m lacks it).
func (a AxisRef) Size(m Mesh) int {
	if a.sub {
		return a.size
	}
	s, _ := m.AxisSize(a.name)
	return s
}

// String returns the reference text: `"x"` or `"x":(1)2`.
func (a AxisRef) String() string {
	var b strings.Builder
	a.writeTo(&b)
	return b.String()
}

func (a AxisRef) writeTo(b *strings.Builder) {
	writeQuoted(b, a.name)
	if a.sub {
		b.WriteString(":(")
		writeInt(b, a.preSize)
		b.WriteByte(')')
		writeInt(b, a.size)
	}
}

func writeAxisList(b *strings.Builder, refs []AxisRef) {
	b.WriteByte('{')
	for i, r := range refs {
		if i > 0 {
			b.WriteString(", ")
		}
		r.writeTo(b)
	}
	b.WriteByte('}')
}
