package bytecode

// VHLO dialect encodings (StableHLO's VhloBytecode.cpp): a varint code, then the fields.

// VHLO attribute codes.
const (
	vArray                = 1
	vBoolean              = 2
	vComparisonDirection  = 3
	vComparisonType       = 4
	vCustomCallAPIVersion = 5
	vDictionary           = 6
	vFftType              = 7
	vFloat                = 8
	vInteger              = 9
	vOutputOperandAlias   = 10
	vPrecision            = 11
	vRngAlgorithm         = 12
	vRngDistribution      = 13
	vString               = 14
	vTensor               = 15
	vTranspose            = 16
	vType                 = 17
	vTypeExtensions       = 18
	vResultAccuracyMode   = 19
	vResultAccuracy       = 20
	vSubAxisInfo          = 21
	vAxisRef              = 22
	vReplicaGroupMeshAxes = 23
	vMeshAxis             = 24
	vMesh                 = 25
)

// enumNames are the cases of VHLO's enums (VhloEnums.td), by value.
var enumNames = map[enumKind]map[uint64]string{
	enumComparisonDirection: {0: "EQ", 1: "NE", 2: "GE", 3: "GT", 4: "LE", 5: "LT"},
	enumComparisonType:      {0: "NOTYPE", 1: "FLOAT", 2: "TOTALORDER", 3: "SIGNED", 4: "UNSIGNED"},
	enumCustomCallAPIVersion: {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
		3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"},
	enumFftType:            {0: "FFT", 1: "IFFT", 2: "RFFT", 3: "IRFFT"},
	enumPrecision:          {0: "DEFAULT", 1: "HIGH", 2: "HIGHEST"},
	enumRngAlgorithm:       {0: "DEFAULT", 1: "THREE_FRY", 2: "PHILOX"},
	enumRngDistribution:    {1: "UNIFORM", 2: "NORMAL"},
	enumTranspose:          {0: "TRANSPOSE_INVALID", 1: "NO_TRANSPOSE", 2: "TRANSPOSE", 3: "ADJOINT"},
	enumResultAccuracyMode: {0: "DEFAULT", 1: "HIGHEST", 2: "TOLERANCE"},
}

var vhloEnumCodes = map[uint64]enumKind{
	vComparisonDirection:  enumComparisonDirection,
	vComparisonType:       enumComparisonType,
	vCustomCallAPIVersion: enumCustomCallAPIVersion,
	vFftType:              enumFftType,
	vPrecision:            enumPrecision,
	vRngAlgorithm:         enumRngAlgorithm,
	vRngDistribution:      enumRngDistribution,
	vTranspose:            enumTranspose,
	vResultAccuracyMode:   enumResultAccuracyMode,
}

// vhloTypes maps the VHLO type codes without fields to their types.
var vhloTypes = map[uint64]typ{
	0: tBool{}, 2: tFloat("bf16"), 3: tFloat("f16"), 4: tFloat("f32"), 5: tFloat("f64"),
	6: tFloat("f8E4M3FN"), 7: tFloat("f8E5M2"), 9: tIndex{},
	10: tInt{4, 0}, 11: tInt{8, 0}, 12: tInt{16, 0}, 13: tInt{32, 0}, 14: tInt{64, 0},
	15: tInt{4, 2}, 16: tInt{8, 2}, 17: tInt{16, 2}, 18: tInt{32, 2}, 19: tInt{64, 2},
	22: tToken{}, 26: tWitness{}, 27: tFloat("f8E4M3FNUZ"), 28: tFloat("f8E5M2FNUZ"),
	29: tFloat("f8E4M3B11FNUZ"), 31: tInt{2, 0}, 32: tInt{2, 2}, 33: tNone{}, 34: tFloat("tf32"),
	35: tFloat("f8E4M3"), 36: tFloat("f8E3M4"), 37: tFloat("f4E2M1FN"), 38: tFloat("f6E2M3FN"),
	39: tFloat("f6E3M2FN"), 40: tFloat("f8E8M0FNU"),
}

// VHLO type codes with fields.
const (
	vtComplex                  = 1
	vtFunction                 = 8
	vtRankedTensor             = 20
	vtRankedTensorWithEncoding = 21
	vtTuple                    = 23
	vtUniformQuantized         = 24
	vtUnrankedTensor           = 25
	vtUniformQuantizedPerAxis  = 30
	vtRankedBuffer             = 41
	vtFuture                   = 42
)

func (f *file) vhloAttr(d *decoder) attr {
	code := d.varint()
	if d.err != nil {
		return nil
	}
	if k, ok := vhloEnumCodes[code]; ok {
		v := d.varint()
		if _, known := enumNames[k][v]; d.err == nil && !known {
			d.failKind(ErrUnsupported, "value %d of a VHLO enum (attribute code %d)", v, code)
		}
		return aEnum{kind: k, v: v}
	}
	switch code {
	case vArray:
		return aArray(f.attrList(d))
	case vBoolean:
		v := d.varint()
		if d.err == nil && v > 1 {
			d.fail("boolean value %d", v)
		}
		return aBool(v == 1)
	case vDictionary:
		n := d.count(2, "dictionary entry")
		dict := make(aDict, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			name := f.attrRef(d)
			dict = append(dict, namedAttr{name, f.attrRef(d)})
		}
		return dict
	case vFloat:
		t := f.typeRef(d)
		return aFloat{typ: t, bits: f.apint(d, floatWidth(d, t))}
	case vInteger:
		t := f.typeRef(d)
		return aInt{typ: t, v: f.apint(d, intWidth(d, t))}
	case vOutputOperandAlias:
		out := f.svarints(d)
		idx := d.svarint()
		return aOutputOperandAlias{outputTupleIndices: out, operandIndex: idx, operandTupleIndices: f.svarints(d)}
	case vString:
		return aString{s: f.str(d)}
	case vTensor:
		t := f.typeRef(d)
		data := f.blob(d)
		if d.err != nil {
			return nil
		}
		return aTensor{typ: t, data: unpackBools(d, t, data)}
	case vType:
		return aType{f.typeRef(d)}
	case vTypeExtensions:
		return aTypeExtensions{bounds: f.svarints(d)}
	case vResultAccuracy:
		atol := f.apint(d, 64)
		rtol := f.apint(d, 64)
		ulps := d.svarint()
		return aResultAccuracy{atol: atol, rtol: rtol, ulps: ulps, mode: f.attrRef(d)}
	case vSubAxisInfo:
		pre := d.svarint()
		return aSubAxisInfo{preSize: pre, size: d.svarint()}
	case vAxisRef:
		name := f.attrRef(d)
		var sub attr
		if d.varint() != 0 {
			sub = f.attrRef(d)
		}
		return aAxisRef{name: name, subAxis: sub}
	case vReplicaGroupMeshAxes:
		mesh := f.attrRef(d)
		return aReplicaGroupMeshAxes{mesh: mesh, axes: f.attrRef(d)}
	case vMeshAxis:
		name := f.attrRef(d)
		return aMeshAxis{name: name, size: d.svarint()}
	case vMesh:
		axes := f.attrRef(d)
		var ids attr
		if i, ok := d.flagged(); ok {
			ids = f.attrAt(d, i)
		}
		return aMesh{axes: axes, deviceIDs: ids}
	}
	d.failKind(ErrUnsupported, "VHLO attribute code %d", code)
	return nil
}

// unpackBools undoes the packing of boolean tensors: the writer stores eight elements a
// byte, or 0xFF (and 0x00) for a splat; the rest of the reader wants a byte an element.
func unpackBools(d *decoder, t typ, data []byte) []byte {
	tt, ok := t.(tTensor)
	if !ok {
		return data
	}
	if _, isBool := tt.elem.(tBool); !isBool {
		return data
	}
	n, ok := elementCount(tt.shape)
	if !ok {
		return data
	}
	if len(data) == 1 && data[0] == 0xFF {
		return []byte{1}
	}
	if packed := (n + 7) / 8; uint64(len(data)) == packed && uint64(len(data)) != n {
		out := make([]byte, n)
		for i := range out {
			if data[i/8]&(1<<(i%8)) != 0 {
				out[i] = 1
			}
		}
		return out
	}
	return data
}

func (f *file) vhloType(d *decoder) typ {
	code := d.varint()
	if d.err != nil {
		return nil
	}
	if t, ok := vhloTypes[code]; ok {
		return t
	}
	switch code {
	case vtComplex:
		return tComplex{f.typeRef(d)}
	case vtFunction:
		in := f.typeList(d)
		return tFunc{in: in, out: f.typeList(d)}
	case vtRankedTensor:
		shape := f.shape(d)
		return tTensor{shape: shape, elem: f.typeRef(d)}
	case vtRankedTensorWithEncoding:
		enc := f.attrRef(d)
		checkEncoding(d, enc)
		shape := f.shape(d)
		return tTensor{shape: shape, elem: f.typeRef(d), encoding: enc}
	case vtTuple:
		return tTuple(f.typeList(d))
	case vtFuture:
		return tFuture(f.typeList(d))
	case vtUnrankedTensor:
		return tUnranked{f.typeRef(d)}
	case vtRankedBuffer:
		shape := f.shape(d)
		return tBuffer{shape: shape, elem: f.typeRef(d)}
	case vtUniformQuantized, vtUniformQuantizedPerAxis:
		d.failKind(ErrUnsupported, "quantized types")
		return nil
	}
	d.failKind(ErrUnsupported, "VHLO type code %d", code)
	return nil
}
