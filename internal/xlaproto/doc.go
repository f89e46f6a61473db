// Package xlaproto reads the few fields of XLA's protobuf messages that xlamesh needs: an
// xla.OpSharding (jax.export's shardings, jaxexport; a compiled program's layouts, pjrt) and the
// fields of HloModuleProto that pjrt's inspection walks. It decodes with protowire rather than
// generated code: XLA's .proto files are not published as a Go module, and the handful of fields
// read here do not justify vendoring them.
//
// It sits below pjrt and jaxexport and imports no other xlamesh package.
package xlaproto
