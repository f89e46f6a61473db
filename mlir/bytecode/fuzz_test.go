package bytecode

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/jaxexport"
)

// FuzzToText checks the reader on any bytes: it never panics, never writes more text than
// its output limit, answers the same twice, and every error is an *Error wrapping
// ErrBytecode or ErrUnsupported whose offset lies inside the input.
func FuzzToText(f *testing.F) {
	for _, s := range seedArtifacts(f) {
		f.Add(s)
	}
	f.Add([]byte(magic))
	f.Add([]byte("ML\xefR\x0dx\x00\x00\x03\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		text, err := ToText(b)
		text2, err2 := ToText(b)
		if text != text2 || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("two answers: %v / %v", err, err2)
		}
		if len(text) > outputLimit(len(b)) {
			t.Fatalf("%d bytes of text for %d bytes of input", len(text), len(b))
		}
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) || !(errors.Is(err, ErrBytecode) || errors.Is(err, ErrUnsupported)) {
			t.Fatalf("error %#v", err)
		}
		if e.Off < -1 || e.Off > len(b) {
			t.Fatalf("%v: offset %d outside %d bytes", err, e.Off, len(b))
		}
	})
}

// seedArtifacts returns the modules of the golden programs: real artifacts to mutate.
func seedArtifacts(tb testing.TB) [][]byte {
	raw, err := os.ReadFile("../../testdata/oracle/bytecode.json")
	if err != nil {
		tb.Fatal(err)
	}
	var f struct {
		Programs []struct{ Name, Exported string }
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, p := range f.Programs {
		b, err := base64.StdEncoding.DecodeString(p.Exported)
		if err != nil {
			tb.Fatal(err)
		}
		e, err := jaxexport.Read(b)
		if err != nil {
			tb.Fatalf("%s: %v", p.Name, err)
		}
		out = append(out, e.Module())
	}
	return out
}
