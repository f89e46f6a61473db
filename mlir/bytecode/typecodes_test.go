package bytecode

import "testing"

// TestVHLOFloatTypeCodes pins the VHLO type codes of the floating-point types without fields
// to StableHLO's vhlo_encoding::TypeCode (VhloBytecode.cpp): kFloatBF16V1Type = 2 through
// kFloatF8E5M2V1Type = 7. Two float8 codes swapped would read every f8E4M3FN tensor as
// f8E5M2 and back, with no error anywhere else.
func TestVHLOFloatTypeCodes(t *testing.T) {
	want := map[uint64]string{2: "bf16", 3: "f16", 4: "f32", 5: "f64", 6: "f8E4M3FN", 7: "f8E5M2"}
	for code, name := range want {
		got, ok := vhloTypes[code].(tFloat)
		if !ok || string(got) != name {
			t.Errorf("VHLO type code %d: %#v, want tFloat(%q)", code, vhloTypes[code], name)
		}
	}
	if _, ok := vhloTypes[8]; ok {
		t.Errorf("VHLO type code 8 is FunctionV1Type, which has fields: %#v", vhloTypes[8])
	}
}
