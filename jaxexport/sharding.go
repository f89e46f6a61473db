package jaxexport

import (
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

// decodeSharding decodes an xla.OpSharding proto into HloSharding text and checks that XLA
// reads that text back, for the given number of devices (mlir.CheckSharding).
func decodeSharding(proto []byte, devices int) (Sharding, error) {
	op, err := xlaproto.ParseOpSharding(proto)
	if err != nil {
		return Sharding{}, err
	}
	text := op.String()
	if err := mlir.CheckSharding(text, devices); err != nil {
		return Sharding{}, err
	}
	return Sharding{hlo: text}, nil
}
