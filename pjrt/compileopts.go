package pjrt

import (
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// compileOptionsProto encodes the xla.CompileOptionsProto (xla/pjrt/proto/compile_options.proto)
// for an SPMD program of n partitions on the given devices, with protowire. Only the fields below
// are set; every other field keeps its proto default:
//
//	CompileOptionsProto.executable_build_options (3): ExecutableBuildOptionsProto {
//	  device_ordinal (1) = -1, num_replicas (4) = 1, num_partitions (5) = n,
//	  use_spmd_partitioning (6) = true,
//	  device_assignment (9) = DeviceAssignmentProto { replica_count (1) = 1,
//	    computation_count (2) = n, computation_devices (3) = [{replica_device_ids (1) = [id]}...] },
//	  use_shardy_partitioner (19) = partitioner == Shardy }
//	CompileOptionsProto.compile_portable_executable (4) = false (the default, not written)
//	CompileOptionsProto.env_option_overrides (7) = {jaxSemantics..., extra...}: OptionOverrideProto{
//	  string_field (1) | bool_field (2) | int_field (3) | double_field (4) }
//
// minor is the plugin's PJRT C API minor version: an override goes only to plugins that know it.
// extra are the caller's CompilerOptions, checked by checkCompilerOptions, written in name order
// after jaxSemantics (a name in both is written once, with the caller's value).
func compileOptionsProto(assignment []int, p Partitioner, minor int, extra map[string]any) []byte {
	var da []byte
	da = protowire.AppendTag(da, 1, protowire.VarintType)
	da = protowire.AppendVarint(da, 1)
	da = protowire.AppendTag(da, 2, protowire.VarintType)
	da = protowire.AppendVarint(da, uint64(len(assignment)))
	for _, id := range assignment {
		var cd []byte
		cd = protowire.AppendTag(cd, 1, protowire.VarintType)
		cd = protowire.AppendVarint(cd, uint64(int64(id)))
		da = protowire.AppendTag(da, 3, protowire.BytesType)
		da = protowire.AppendBytes(da, cd)
	}
	var eb []byte
	eb = protowire.AppendTag(eb, 1, protowire.VarintType)
	eb = protowire.AppendVarint(eb, math.MaxUint64) // int64 -1, two's complement
	eb = protowire.AppendTag(eb, 4, protowire.VarintType)
	eb = protowire.AppendVarint(eb, 1)
	eb = protowire.AppendTag(eb, 5, protowire.VarintType)
	eb = protowire.AppendVarint(eb, uint64(len(assignment)))
	eb = protowire.AppendTag(eb, 6, protowire.VarintType)
	eb = protowire.AppendVarint(eb, 1)
	eb = protowire.AppendTag(eb, 9, protowire.BytesType)
	eb = protowire.AppendBytes(eb, da)
	if p != GSPMD {
		eb = protowire.AppendTag(eb, 19, protowire.VarintType)
		eb = protowire.AppendVarint(eb, 1)
	}
	var out []byte
	out = protowire.AppendTag(out, 3, protowire.BytesType)
	out = protowire.AppendBytes(out, eb)
	override := func(name string, v any) {
		var ov []byte
		switch v := v.(type) {
		case string:
			ov = protowire.AppendTag(ov, 1, protowire.BytesType)
			ov = protowire.AppendString(ov, v)
		case bool:
			ov = protowire.AppendTag(ov, 2, protowire.VarintType)
			ov = protowire.AppendVarint(ov, protowire.EncodeBool(v))
		case int:
			ov = protowire.AppendTag(ov, 3, protowire.VarintType)
			ov = protowire.AppendVarint(ov, uint64(int64(v)))
		case int64:
			ov = protowire.AppendTag(ov, 3, protowire.VarintType)
			ov = protowire.AppendVarint(ov, uint64(v))
		case float64:
			ov = protowire.AppendTag(ov, 4, protowire.Fixed64Type)
			ov = protowire.AppendFixed64(ov, math.Float64bits(v))
		}
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, name)
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendBytes(entry, ov)
		out = protowire.AppendTag(out, 7, protowire.BytesType)
		out = protowire.AppendBytes(out, entry)
	}
	for _, o := range jaxSemantics {
		if _, mine := extra[o.name]; minor >= o.minMinor && !mine {
			override(o.name, o.value)
		}
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		override(name, extra[name])
	}
	return out
}

// checkCompilerOptions checks CompileOptions.CompilerOptions: names not empty, values of the
// types an OptionOverrideProto holds.
func checkCompilerOptions(opts map[string]any) error {
	for name, v := range opts {
		if name == "" {
			return fmt.Errorf("pjrt: compile: %w: a compiler option with an empty name", ErrCompile)
		}
		switch v.(type) {
		case string, bool, int, int64, float64:
		default:
			return fmt.Errorf("pjrt: compile: %w: compiler option %s=%v is a %T; want a string, bool, int, int64 or float64", ErrCompile, name, v, v)
		}
	}
	return nil
}

// jaxSemantics are the XLA compile options every program is compiled with so that it
// computes what JAX computes, whatever the plugin's own defaults. They travel as
// CompileOptionsProto.env_option_overrides, the way jax passes compiler options, so they
// override single flags and leave the plugin's other debug options alone.
//
// An override has the oldest PJRT C API minor version whose XLA knows it: XLA refuses a
// compile that names an option it does not know ("No such compile option").
//
// xla_cpu_enable_fast_min_max=false: max/min propagate NaN (IEEE maximum, as jnp.max and
// lax.max do). The pinned xla-cpu-pjrt 0.0.1 plugin defaults it to true, so without this
// max(NaN, 4) is 4 there while jaxlib's XLA gives NaN.
//
// xla_enable_hlo_sharding_v3=false (API 0.115 and newer, which default it to true): xlamesh's
// programs carry Shardy's own sdy attributes, and with HloShardingV3 on, XLA's Shardy pass
// turns it off for every such module anyway, after printing a shardy_xla_pass.cc warning to
// stderr on each compile. Off from the start, the compile is the same and quiet.
var jaxSemantics = []struct {
	name     string
	value    bool
	minMinor int
}{
	{"xla_cpu_enable_fast_min_max", false, 0},
	{"xla_enable_hlo_sharding_v3", false, 115},
}
