package mlir

import (
	"errors"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"x", `"x"`},
		{`a"b`, `"a\22b"`},
		{`a\b`, `"a\\b"`},
		{"a\nb\tc\x00", `"a\0Ab\09c\00"`},
		{"é", `"\C3\A9"`},
		{"\x7f~ ", "\"\\7F~ \""},
	}
	for _, tc := range tests {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// Every byte round-trips.
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	if got, err := Unquote(Quote(all.String())); err != nil || got != all.String() {
		t.Errorf("round trip of all bytes: %q, %v", got, err)
	}
}

func TestUnquote(t *testing.T) {
	for lit, want := range map[string]string{`"a\nb"`: "a\nb", `"\t\\\""`: "\t\\\"", `"\4a\4A"`: "JJ", `""`: ""} {
		if got, err := Unquote(lit); err != nil || got != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", lit, got, err, want)
		}
	}
	for _, lit := range []string{``, `"`, `x`, `"a`, `"a"b`, `"\q"`, `"\4"`, "\"a\nb\""} {
		if _, err := Unquote(lit); !errors.Is(err, ErrSyntax) {
			t.Errorf("Unquote(%q) = %v, want ErrSyntax", lit, err)
		}
	}
}

func TestSymbol(t *testing.T) {
	for name, want := range map[string]string{
		"main": "@main", "_f.x$1": "@_f.x$1", "jit_my-fn": `@"jit_my-fn"`, "1f": `@"1f"`, "a b": `@"a b"`, "": `@""`, `q"`: `@"q\22"`,
	} {
		if got := Symbol(name); got != want {
			t.Errorf("Symbol(%q) = %s, want %s", name, got, want)
		}
		if IsBareIdent(name) != (want == "@"+name) {
			t.Errorf("IsBareIdent(%q) = %v", name, IsBareIdent(name))
		}
		s := NewScanner(Symbol(name))
		tok := s.Next()
		if got, err := tok.Symbol(); err != nil || got != name || s.Next().Kind != EOF {
			t.Errorf("scanning %s: %q, %v", Symbol(name), got, err)
		}
	}
	if _, err := (Token{Kind: Ident, Text: "x"}).Symbol(); err == nil {
		t.Error("Symbol of an Ident: no error")
	}
}

func TestCheckName(t *testing.T) {
	for c := range 256 {
		name := "a" + string([]byte{byte(c)})
		err := CheckName("axis", name)
		ok := c >= 0x20 && c <= 0x7e && c != '\\'
		if ok != (err == nil) {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
		if err != nil && !errors.Is(err, ErrName) {
			t.Errorf("CheckName(%q) = %v, not ErrName", name, err)
		}
	}
	err := CheckName("axis", `a\b`)
	if err == nil || err.Error() != `mlir: unsupported name: axis "a\\b": byte 1 is a backslash; names are printable ASCII other than '\'` {
		t.Errorf("got %v", err)
	}
	if err := CheckName("symbol", ""); err == nil || !strings.Contains(err.Error(), "the name is empty") {
		t.Errorf("got %v", err)
	}
}
