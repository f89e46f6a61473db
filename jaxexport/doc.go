// Package jaxexport reads the artifacts of jax.export: the bytes of Exported.serialize(), a
// function JAX lowered and serialized, with its signature, its shardings and its module.
//
// Read decodes the bytes into an *Exported: the function name, the avals (element type and
// static shape) of its arguments and results, their HLO shardings for NrDevices devices (XLA's
// HloSharding text, "{devices=[4,2]<=[8]}"), the platforms, module_kept_var_idx (the arguments
// the module's @main still takes) and the module itself: a StableHLO portable artifact, MLIR
// bytecode of the VHLO dialect, which PJRT compiles as it is. Package jit runs it
// (jit.FromExported); package mlir/bytecode turns the module into text for package lower/wrap
// to re-shard.
//
//	e, err := jaxexport.Read(data)
//	if err != nil { ... } // *jaxexport.Error wrapping ErrFormat, ErrSymbolicShape, ...
//	fmt.Println(e)        // Exported(f, in=[f32[8,4]], out=[f32[8]], 8 devices, cpu)
//
// The package sits beside mlir, below jit, and imports neither jit nor pjrt.
//
// # Format
//
// The artifact is a FlatBuffer whose schema is JAX's jax/_src/export/serialization.fbs. The
// package reads it with the FlatBuffers Go runtime (github.com/google/flatbuffers/go), the
// format's own library, through hand-written accessors for the fields it needs; the shardings
// inside are xla.OpSharding protos, read by internal/xlaproto, like every XLA proto in xlamesh.
// FlatBuffers' runtime trusts the bytes, so every offset and length is checked against the
// buffer first: Read never panics, on truncated or hostile bytes it returns an *Error wrapping
// ErrFormat (FuzzRead checks this).
//
// Read reads serialization versions 1 to 12, everything JAX 0.4.x to 0.12 writes. JAX 0.8
// writes version 2 with HLO sharding protos; later JAX versions write version 3 in the version
// field (so that older readers accept it) for newer layouts, and JAX 0.12 the real number, 12:
// a 32-bit nr_devices and aval memory spaces (version 5), named shardings over an abstract mesh
// with a partition spec, beside the HLO sharding proto (6 to 8) or alone (9 on), avals, abstract
// meshes and named shardings stored once and referenced by index (10 on), and the JAX version
// of the writer (12). A named sharding reads as a mesh.NamedSharding over the exported
// mesh.Abstract (Sharding.Named); HLO() is "" where the artifact stored no proto.
//
// # What is refused
//
// Read returns typed errors for what xlamesh cannot run: symbolic dimensions (shape
// polymorphism, ErrSymbolicShape), ordered effects (they thread a token through @main,
// ErrEffects, naming the first), float0 and PRNG key element types (ErrDType), token avals and
// partition specs with reduced or unreduced axes (ErrUnsupported). Memory spaces ("device",
// "host", "any") are read and reported (InMemorySpaces), not refused; so are the disabled
// safety checks (DisabledChecks). A module exported for several platforms takes the platform
// index as a global constant: Read accepts it (its avals are static) and jit picks the client's
// platform. Donation is not part of the artifact (JAX's schema has no field for
// it); the caller says which arguments to donate.
package jaxexport
