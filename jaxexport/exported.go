package jaxexport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// Exported is a function exported by jax.export, as Read found it in the bytes of
// Exported.serialize(): its signature (avals), the HLO shardings of its arguments and results
// for NrDevices devices, and its module, a StableHLO portable artifact. It is immutable: the
// accessors return copies.
type Exported struct {
	version, calling int
	name             string
	nrDevices        int
	platforms        []string
	in, out          []Aval
	inDims, outDims  [][]string // per aval, its dimensions as JAX writes them when one is symbolic; nil else
	inSpaces         []string
	outSpaces        []string
	jaxVersion       string
	inSh, outSh      []Sharding
	kept             []int
	unordered        []string
	disabled         []string
	globalConstants  bool
	vjp              bool
	module           []byte
}

// FunctionName returns the name of the exported function (fun_name).
func (e *Exported) FunctionName() string { return e.name }

// SerializationVersion returns the serialization version stored in the artifact (JAX stores 2
// or 3 for every layout up to version 11; see the package doc).
func (e *Exported) SerializationVersion() int { return e.version }

// CallingConventionVersion returns the calling convention version of the module (JAX's
// calling_convention_version, 9 or 10 for current exports).
func (e *Exported) CallingConventionVersion() int { return e.calling }

// NrDevices returns the number of devices the module was exported for: its
// mhlo.num_partitions.
func (e *Exported) NrDevices() int { return e.nrDevices }

// Platforms returns the platforms the module was lowered for ("cpu", "cuda", "rocm", "tpu").
// A module for more than one platform takes the platform's index as an extra first argument.
func (e *Exported) Platforms() []string { return slices.Clone(e.platforms) }

// InAvals returns the type of each argument of the exported function, including arguments the
// module dropped (see ModuleKeptVarIdx). A symbolic dimension (shape polymorphism, see
// Polymorphic) is -1 there; InDims says what it is.
func (e *Exported) InAvals() []Aval { return slices.Clone(e.in) }

// OutAvals returns the type of each result; a symbolic dimension is -1, as in InAvals.
func (e *Exported) OutAvals() []Aval { return slices.Clone(e.out) }

// Polymorphic reports whether the function was exported with symbolic shapes
// (jax.export.symbolic_shape): some aval has a dimension that is a dimension variable or an
// expression of them. Its module then has dynamic dimensions, which package refine makes
// static for the shapes of the arguments of a call.
func (e *Exported) Polymorphic() bool {
	for _, d := range append(slices.Clone(e.inDims), e.outDims...) {
		if d != nil {
			return true
		}
	}
	return false
}

// InDims returns the dimensions of each argument as JAX writes them: "8", "b", "2*t + 1".
func (e *Exported) InDims() [][]string { return dimTexts(e.in, e.inDims) }

// OutDims returns the dimensions of each result as JAX writes them, as InDims.
func (e *Exported) OutDims() [][]string { return dimTexts(e.out, e.outDims) }

func dimTexts(avals []Aval, text [][]string) [][]string {
	out := make([][]string, len(avals))
	for i, a := range avals {
		if i < len(text) && text[i] != nil {
			out[i] = slices.Clone(text[i])
			continue
		}
		for _, d := range a.Dims() {
			out[i] = append(out[i], strconv.Itoa(d))
		}
		if out[i] == nil {
			out[i] = []string{}
		}
	}
	return out
}

// InMemorySpaces returns the memory space of each argument: "device", "host" or "any" (JAX's
// core.MemorySpace; "device" for artifacts older than serialization version 5).
func (e *Exported) InMemorySpaces() []string { return slices.Clone(e.inSpaces) }

// OutMemorySpaces returns the memory space of each result, as InMemorySpaces.
func (e *Exported) OutMemorySpaces() []string { return slices.Clone(e.outSpaces) }

// JaxVersion returns the version of JAX that wrote the artifact ("0.12.0.1"), stored from
// serialization version 12 on; "" before.
func (e *Exported) JaxVersion() string { return e.jaxVersion }

// InShardings returns the HLO sharding of each argument (one per InAvals entry).
func (e *Exported) InShardings() []Sharding { return slices.Clone(e.inSh) }

// OutShardings returns the HLO sharding of each result (one per OutAvals entry).
func (e *Exported) OutShardings() []Sharding { return slices.Clone(e.outSh) }

// ModuleKeptVarIdx returns the indices of the arguments the module's @main takes, in
// increasing order: JAX drops arguments the function never reads.
func (e *Exported) ModuleKeptVarIdx() []int { return slices.Clone(e.kept) }

// UnorderedEffects returns the type names of the function's unordered effects.
func (e *Exported) UnorderedEffects() []string { return slices.Clone(e.unordered) }

// DisabledChecks returns the safety checks disabled at export: "platform", or
// "custom_call:<target>" for an allowed custom call target.
func (e *Exported) DisabledChecks() []string { return slices.Clone(e.disabled) }

// UsesGlobalConstants reports whether the module uses global constants: dimension variables
// (Polymorphic) or the platform index of a module for several platforms.
func (e *Exported) UsesGlobalConstants() bool { return e.globalConstants }

// HasVJP reports whether the artifact carries the function's VJP too (not read).
func (e *Exported) HasVJP() bool { return e.vjp }

// Module returns the serialized module: a StableHLO portable artifact, that is MLIR bytecode
// of the VHLO dialect (it starts with "ML\xEFR"). PJRT compiles it as it is.
func (e *Exported) Module() []byte { return slices.Clone(e.module) }

// String returns a one-line summary: "Exported(f, in=[f32[8,4]], out=[f32[8]], 8 devices, cpu)".
func (e *Exported) String() string {
	list := func(as []Aval, dims [][]string) string {
		s := make([]string, len(as))
		for i, a := range as {
			s[i] = shapes.AvalName(a.DType()) + "[" + strings.Join(dims[i], ",") + "]"
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("Exported(%s, in=[%s], out=[%s], %d devices, %s)", e.name, list(e.in, e.InDims()),
		list(e.out, e.OutDims()), e.nrDevices, strings.Join(e.platforms, ","))
}

// Aval is the type of one argument or result: an element type and static dimensions. It is
// [shapes.Shape], xlamesh's one shape type, so an Aval goes straight to stablehlo and pjrt;
// [shapes.Shape.Aval] prints it as JAX does ("f32[8,4]").
type Aval = shapes.Shape

// The schema's DType enum, in its own numbering.
var dtypeOf = map[int8]dtypes.DType{
	0: dtypes.Bool, 1: dtypes.Int8, 2: dtypes.Int16, 3: dtypes.Int32, 4: dtypes.Int64,
	5: dtypes.Uint8, 6: dtypes.Uint16, 7: dtypes.Uint32, 8: dtypes.Uint64,
	9: dtypes.Float16, 10: dtypes.Float32, 11: dtypes.Float64, 12: dtypes.Complex64, 13: dtypes.Complex128,
	14: dtypes.BFloat16, 15: dtypes.S4, 16: dtypes.U4,
	17: dtypes.F8E4M3B11FNUZ, 18: dtypes.F8E4M3FN, 19: dtypes.F8E4M3FNUZ, 20: dtypes.F8E5M2, 21: dtypes.F8E5M2FNUZ,
	23: dtypes.F8E4M3, 24: dtypes.F8E3M4, 25: dtypes.F8E8M0FNU, 26: dtypes.F4E2M1FN,
}

// Element types without a dtypes counterpart, by the schema's names.
var unsupportedDTypes = map[int8]string{22: "float0", 27: "key<fry>", 28: "key<rbg>", 29: "key<unsafe_rbg>"}

// dimExpr reports whether s can be a dimension expression of jax.export: dimension
// variables (identifiers), integers, + - * and JAX's floordiv, mod, max, min and
// non_negative with parentheses and commas; at most 1,000 bytes.
func dimExpr(s string) bool {
	if s == "" || len(s) > 1000 {
		return false
	}
	letter := false
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			letter = true
		case c >= '0' && c <= '9', strings.IndexByte(" +-*(),", c) >= 0:
		default:
			return false
		}
	}
	return letter
}

// parseDim reads one dimension of an aval's shape: a decimal constant (ok), or something
// else, a symbolic expression or junk (not ok).
func parseDim(s string) (int, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}
