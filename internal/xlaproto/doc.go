// Package xlaproto reads the few fields of XLA's protobuf messages that xlamesh needs, and is
// the home of xlamesh's one HloSharding value.
//
// # HloSharding
//
// OpSharding is how XLA lays out a value over a program's devices: decoded from an
// xla.OpSharding proto (ParseOpSharding; jax.export's shardings in jaxexport, a compiled
// program's layouts in pjrt, which names it pjrt.OpSharding), or built (NewTiled,
// NewIotaTiled, NewReplicated, ...; shardy's GSPMD form). Its String is the text XLA's
// HloSharding::ToString prints, "{devices=[4,2]<=[8]}", "{replicated}". shardy.FromGSPMD turns
// one back into a PartitionSpec.
//
// # HLO modules and profiles
//
// The fields of HloModuleProto that pjrt's inspection walks are named here (HloModule...,
// HloInstruction...); ReadXSpace decodes a profiler's XSpace.
//
// It decodes with protowire rather than generated code: XLA's .proto files are not published
// as a Go module, and the handful of fields read here do not justify vendoring them. Field
// numbers are named constants, as xla_data.proto, hlo.proto and xplane.proto number them.
//
// It sits below pjrt, jaxexport and shardy and imports no other xlamesh package.
package xlaproto
