package jaxexport

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
)

func TestRead(t *testing.T) {
	e, err := Read(valid().bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.String(), "Exported(f, in=[f32[8,4], i32[4]], out=[f32[8]], 8 devices, cpu)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	in := e.InAvals()
	if in[0].DType() != dtypes.Float32 || !slices.Equal(in[0].Dims(), []int{8, 4}) || in[1].DType() != dtypes.Int32 || in[1].Rank() != 1 {
		t.Errorf("InAvals() = %v", in)
	}
	sh := e.InShardings()
	if sh[0].HLO() != "{devices=[4,2]<=[8]}" || sh[1].Specified() || sh[1].String() != "unspecified" {
		t.Errorf("InShardings() = %v", sh)
	}
	if got := e.OutShardings()[0].String(); got != "{devices=[4,2]<=[8] last_tile_dim_replicate}" {
		t.Errorf("OutShardings()[0] = %q", got)
	}
	if e.NrDevices() != 8 || e.SerializationVersion() != 2 || e.CallingConventionVersion() != 10 ||
		!slices.Equal(e.Platforms(), []string{"cpu"}) || !slices.Equal(e.ModuleKeptVarIdx(), []int{0, 1}) ||
		string(e.Module()) != "ML\xefR module bytes" || e.HasVJP() || e.UsesGlobalConstants() {
		t.Errorf("read %v: devices %d, version %d, calling %d, platforms %v, kept %v, module %q",
			e, e.NrDevices(), e.SerializationVersion(), e.CallingConventionVersion(), e.Platforms(), e.ModuleKeptVarIdx(), e.Module())
	}
	// Accessors return copies.
	e.Module()[0] = 'X'
	e.InAvals()[0].Dims()[0] = 99
	e.InAvals()[0] = Aval{}
	if e.Module()[0] != 'M' || e.InAvals()[0].Dims()[0] != 8 {
		t.Error("accessors share memory with the Exported")
	}
}

// TestReadSymbolic reads avals with symbolic dimensions (jax.export.symbolic_shape): they are
// -1 in the Avals, written out by InDims and OutDims and String.
func TestReadSymbolic(t *testing.T) {
	a := valid()
	a.in[0].dims = []string{"b", "4"}
	a.out[0].dims = []string{"2*b + 1"}
	a.globalConsts = true
	e, err := Read(a.bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.String(), "Exported(f, in=[f32[b,4], i32[4]], out=[f32[2*b + 1]], 8 devices, cpu)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !e.Polymorphic() || !e.UsesGlobalConstants() || !slices.Equal(e.InAvals()[0].Dims(), []int{-1, 4}) ||
		!slices.Equal(e.InDims()[0], []string{"b", "4"}) || !slices.Equal(e.InDims()[1], []string{"4"}) ||
		!slices.Equal(e.OutDims()[0], []string{"2*b + 1"}) || !slices.Equal(e.OutAvals()[0].Dims(), []int{-1}) {
		t.Errorf("read %v: polymorphic %v, in %v %v, out %v %v", e, e.Polymorphic(), e.InAvals(), e.InDims(), e.OutAvals(), e.OutDims())
	}
	if v, err := Read(valid().bytes()); err != nil || v.Polymorphic() {
		t.Errorf("a static artifact reads as polymorphic (%v)", err)
	}
}

func TestReadLayouts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*artifact)
		check func(*Exported) string
	}{
		{"nr_devices of version 5", func(a *artifact) { a.nrShort, a.nr = 0, 4; a.inSh[0], a.outSh[0] = sharding{}, sharding{} }, func(e *Exported) string {
			if e.NrDevices() != 4 {
				return "NrDevices() != 4"
			}
			return ""
		}},
		{"avals by index (version 10)", func(a *artifact) { a.idxForm = true }, func(e *Exported) string {
			if e.InAvals()[1].Aval() != "i32[4]" || e.OutAvals()[0].Aval() != "f32[8]" {
				return "avals " + e.String()
			}
			return ""
		}},
		{"host memory space", func(a *artifact) { a.in[0].memory, a.out[0].memory = 2, 3 }, func(e *Exported) string {
			if !slices.Equal(e.InMemorySpaces(), []string{"host", "device"}) || !slices.Equal(e.OutMemorySpaces(), []string{"any"}) {
				return fmt.Sprintf("memory spaces %v %v", e.InMemorySpaces(), e.OutMemorySpaces())
			}
			return ""
		}},
		{"no shardings by index (version 10)", func(a *artifact) { a.shardingIdx = []uint32{0, 0} }, func(e *Exported) string {
			if e.InShardings()[0].Specified() || e.InShardings()[1].Specified() {
				return "in shardings " + e.InShardings()[0].String()
			}
			return ""
		}},
		{"two platforms use a global constant", func(a *artifact) { a.globalConsts, a.platforms = true, []string{"cpu", "cuda"} }, func(e *Exported) string {
			if !slices.Equal(e.Platforms(), []string{"cpu", "cuda"}) || !e.UsesGlobalConstants() {
				return fmt.Sprintf("platforms %v", e.Platforms())
			}
			return ""
		}},
		{"no module_kept_var_idx: all kept", func(a *artifact) { a.kept = nil }, func(e *Exported) string {
			if !slices.Equal(e.ModuleKeptVarIdx(), []int{0, 1}) {
				return "kept"
			}
			return ""
		}},
		{"no shardings: unspecified", func(a *artifact) { a.inSh, a.outSh = nil, nil }, func(e *Exported) string {
			if e.InShardings()[0].Specified() || len(e.OutShardings()) != 1 {
				return "shardings"
			}
			return ""
		}},
		{"named sharding with its proto (versions 6 to 8)", func(a *artifact) { a.inSh[0].kind = 2 }, func(e *Exported) string {
			if e.InShardings()[0].HLO() != "{devices=[4,2]<=[8]}" {
				return "sharding " + e.InShardings()[0].HLO()
			}
			return ""
		}},
		{"transposed iota", func(a *artifact) {
			a.inSh[1] = sharding{kind: 1, proto: iotaProto([]int64{2, 4}, []int64{4, 2}, []int64{1, 0}, true)}
		}, func(e *Exported) string {
			if got := e.InShardings()[1].HLO(); got != "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}" {
				return "sharding " + got
			}
			return ""
		}},
		{"effects and checks", func(a *artifact) { a.unordered, a.disabledCheck = []string{"Debug"}, "my_target" }, func(e *Exported) string {
			if !slices.Equal(e.UnorderedEffects(), []string{"Debug"}) || !slices.Equal(e.DisabledChecks(), []string{"custom_call:my_target"}) {
				return "effects"
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := valid()
			tc.edit(&a)
			e, err := Read(a.bytes())
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(e); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*artifact)
		kind error
		msg  string
	}{
		{"version 0", func(a *artifact) { a.version = 0 }, ErrVersion, "serialization_version: unsupported jax.export serialization: version 0"},
		{"version 13", func(a *artifact) { a.version = 13 }, ErrVersion, "version 13; this reader reads 1 to 12"},
		{"junk dimension", func(a *artifact) { a.in[1].dims = []string{"b$"} }, ErrSymbolicShape, `in_avals[1]: symbolic dimension: dimension 0 is "b$", neither an integer nor a dimension expression`},
		{"number-only expression", func(a *artifact) { a.out[0].dims = []string{"2*3"} }, ErrSymbolicShape, `out_avals[0]`},
		{"global constants", func(a *artifact) { a.globalConsts = true }, ErrSymbolicShape, "the module uses dimension variables, the avals have none"},
		{"ordered effects", func(a *artifact) { a.ordered = []string{"IOEffect"} }, ErrEffects, `ordered_effects[0]: ordered effects: "IOEffect"`},
		{"float0", func(a *artifact) { a.in[0].dtype = 22 }, ErrDType, "in_avals[0]: unsupported element type: float0"},
		{"key type", func(a *artifact) { a.out[0].dtype = 27 }, ErrDType, "key<fry>"},
		{"unknown dtype", func(a *artifact) { a.out[0].dtype = 100 }, ErrFormat, "unknown dtype 100"},
		{"unknown memory space", func(a *artifact) { a.in[0].memory = 4 }, ErrFormat, "in_avals[0]: malformed jax.export artifact: unknown memory space 4"},
		{"token", func(a *artifact) { a.in[0].kind = 1 }, ErrUnsupported, "not an array"},
		{"no devices", func(a *artifact) { a.nrShort = 0 }, ErrFormat, "nr_devices: malformed jax.export artifact: 0 devices"},
		{"no platform", func(a *artifact) { a.platforms = nil }, ErrFormat, "no platform"},
		{"no module", func(a *artifact) { a.module = nil }, ErrFormat, "mlir_module_serialized"},
		{"kept out of range", func(a *artifact) { a.kept = []uint16{0, 2} }, ErrFormat, "module_kept_var_idx[1]"},
		{"kept not increasing", func(a *artifact) { a.kept = []uint16{1, 0} }, ErrFormat, "not increasing"},
		{"sharding count", func(a *artifact) { a.inSh = a.inSh[:1] }, ErrFormat, "1 shardings for 2 avals"},
		{"sharding for 4 devices", func(a *artifact) { a.nrShort = 4 }, ErrFormat, "in_shardings[0]: malformed jax.export artifact: mlir: invalid mhlo.sharding"},
		{"bad proto", func(a *artifact) { a.inSh[0].proto = []byte{0x08} }, ErrFormat, "OpSharding: malformed XLA protobuf"},
		{"unknown sharding type", func(a *artifact) { a.inSh[0].proto = []byte{0x08, 0x09} }, ErrFormat, "unknown sharding type 9"},
		{"named sharding kind without its table", func(a *artifact) { a.inSh[0] = sharding{kind: 2} }, ErrFormat, "in_shardings[0]: malformed jax.export artifact: a named sharding without its table"},
		{"sharding index out of range", func(a *artifact) { a.shardingIdx = []uint32{0, 1} }, ErrFormat, "in_shardings_idxs[1]: malformed jax.export artifact: index 1; unique_named_shardings has 0"},
		{"sharding index count", func(a *artifact) { a.shardingIdx = []uint32{0} }, ErrFormat, "1 shardings for 2 avals"},
		{"global constants, one platform", func(a *artifact) { a.globalConsts, a.platforms = true, []string{"cuda"} }, ErrSymbolicShape, "dimension variables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := valid()
			tc.edit(&a)
			_, err := Read(a.bytes())
			var e *Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Read: %v; want %v containing %q", err, tc.kind, tc.msg)
			}
		})
	}
}

// TestReadTruncated reads every prefix of a valid artifact, and the artifact with each byte
// flipped: never a panic, and every error is an *Error.
func TestReadTruncated(t *testing.T) {
	b := valid().bytes()
	for n := range len(b) {
		if _, err := Read(b[:n]); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("prefix %d: %v is not an *Error", n, err)
			}
		}
	}
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0xff
		if _, err := Read(c); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("byte %d flipped: %v is not an *Error", i, err)
			}
		}
	}
}
