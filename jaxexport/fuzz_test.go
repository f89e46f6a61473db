package jaxexport

import (
	"errors"
	"testing"
)

// FuzzRead checks Read on any bytes: it never panics; an error is an *Error wrapping one of the
// sentinels; an Exported it returns is consistent (one sharding per aval, kept indices in
// range, a module, at least one device and platform).
func FuzzRead(f *testing.F) {
	a := valid()
	f.Add(a.bytes())
	a.idxForm = true
	f.Add(a.bytes())
	a = valid()
	a.in[1].dims = []string{"b"}
	f.Add(a.bytes())
	_, artifacts, _ := corpus(f)
	f.Add(artifacts["mlp"])
	f.Add(artifacts["smap_psum_gspmd"])
	for _, name := range []string{"times2_2x4", "shard_map_psum", "times2_cpu_cuda"} {
		f.Add(corpus012(f)[name]) // version 12: named shardings by index
	}
	f.Add([]byte{})
	f.Add([]byte{8, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Read(b)
		if err != nil {
			var xe *Error
			if !errors.As(err, &xe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			for _, k := range []error{ErrFormat, ErrVersion, ErrSymbolicShape, ErrDType, ErrEffects, ErrUnsupported} {
				if errors.Is(err, k) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		if len(e.InShardings()) != len(e.InAvals()) || len(e.OutShardings()) != len(e.OutAvals()) {
			t.Fatalf("%v: %d/%d shardings for %d/%d avals", e, len(e.InShardings()), len(e.OutShardings()), len(e.InAvals()), len(e.OutAvals()))
		}
		for _, k := range e.ModuleKeptVarIdx() {
			if k < 0 || k >= len(e.InAvals()) {
				t.Fatalf("kept index %d of %d arguments", k, len(e.InAvals()))
			}
		}
		if len(e.Module()) == 0 || e.NrDevices() < 1 || len(e.Platforms()) == 0 {
			t.Fatalf("%v: incomplete", e)
		}
		if len(e.InMemorySpaces()) != len(e.InAvals()) || len(e.OutMemorySpaces()) != len(e.OutAvals()) {
			t.Fatalf("%v: memory spaces %v %v", e, e.InMemorySpaces(), e.OutMemorySpaces())
		}
		for _, s := range append(e.InShardings(), e.OutShardings()...) {
			_ = s.String()
		}
		_ = e.String()
	})
}
