package mlir

import (
	"errors"
	"strings"
	"testing"
)

func TestScannerTokens(t *testing.T) {
	tests := []struct {
		src  string
		want string // tokens as Kind:Text, space-separated
	}{
		{`module @m {}`, `Ident:module AtIdent:@m Punct:{ Punct:}`},
		{`func.func public @"jit_my-fn"(%arg0: tensor<8x2xf32>) -> tensor<8x2xf32>`,
			`Ident:func.func Ident:public AtIdent:@"jit_my-fn" Punct:( PercentIdent:%arg0 Punct:: Ident:tensor Punct:< Int:8 Ident:x2xf32 Punct:> Punct:) Punct:-> Ident:tensor Punct:< Int:8 Ident:x2xf32 Punct:>`},
		{`tensor<0x2xf32>`, `Ident:tensor Punct:< Int:0x2 Ident:xf32 Punct:>`},
		{`tensor<0xi32>`, `Ident:tensor Punct:< Int:0 Ident:xi32 Punct:>`},
		{`%0#1 ^bb0 !stablehlo.token #sdy.sharding #loc1`, `PercentIdent:%0 HashIdent:#1 CaretIdent:^bb0 BangIdent:!stablehlo.token HashIdent:#sdy.sharding HashIdent:#loc1`},
		{`1.5 2.0e-3 1. 7E 3e+`, `Float:1.5 Float:2.0e-3 Float:1. Int:7 Ident:E Int:3 Ident:e Punct:+`},
		{`a = "x\22y\\z" // "unterminated in a comment {[(<`, `Ident:a Punct:= String:"x\22y\\z"`},
		{`"{[(<"`, `String:"{[(<"`},
		{`? * + | - ... , :`, `Punct:? Punct:* Punct:+ Punct:| Punct:- Punct:... Punct:, Punct::`},
		{"{-# dialect_resources: {} #-}", `Punct:{-# Ident:dialect_resources Punct:: Punct:{ Punct:} Punct:#-}`},
		{"\"raw\rreturn\x00nul\"", "String:\"raw\rreturn\x00nul\""},
	}
	for _, tc := range tests {
		s := NewScanner(tc.src)
		var got []string
		for tok := s.Next(); tok.Kind != EOF; tok = s.Next() {
			if tc.src[tok.Off:tok.End()] != tok.Text {
				t.Errorf("%q: token %q at %d does not match the source", tc.src, tok.Text, tok.Off)
			}
			got = append(got, tok.Kind.String()+":"+tok.Text)
		}
		if err := s.Err(); err != nil {
			t.Errorf("%q: %v", tc.src, err)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, g, tc.want)
		}
	}
}

func TestScannerErrors(t *testing.T) {
	tests := []struct {
		src       string
		kind      error
		line, col int
		msg       string
	}{
		{`a = "abc`, ErrSyntax, 1, 5, "unterminated string literal"},
		{"a = \"ab\ncd\"", ErrSyntax, 1, 5, "unterminated string literal"},
		{`"a\qb"`, ErrSyntax, 1, 3, "unknown escape in string literal"},
		{`"a\4"`, ErrSyntax, 1, 3, "unknown escape in string literal"},
		{"f(x]", ErrSyntax, 1, 4, `"]" does not close "(" opened at 1:2`},
		{"{\n  (\n}", ErrSyntax, 3, 1, `"}" does not close "(" opened at 2:3`},
		{"x)", ErrSyntax, 1, 2, `")" closes nothing`},
		{"module {\n  func.func @f() {\n", ErrSyntax, 2, 18, `"{" opened at 2:18 is never closed`},
		{"{-# x }", ErrSyntax, 1, 7, `"}" does not close "{-#" opened at 1:1`},
		{"{ #-}", ErrSyntax, 1, 3, `"#-}" does not close "{" opened at 1:1`},
		{"a \\ b", ErrSyntax, 1, 3, `unexpected character '\\'`},
		{"a ; b", ErrSyntax, 1, 3, `unexpected character ';'`},
		{"a \xc3\xa9", ErrSyntax, 1, 3, `unexpected byte 0xC3`},
		{"a / b", ErrSyntax, 1, 3, `unexpected character '/'`},
		{"a . b", ErrSyntax, 1, 3, `expected three consecutive dots for an ellipsis`},
		{"@1x", ErrSyntax, 1, 1, `@ identifier expected to start with letter or '_'`},
		{"% x", ErrSyntax, 1, 1, `invalid % identifier`},
		{strings.Repeat("(", MaxNesting+1), ErrNesting, 1, MaxNesting + 1, "brackets nest deeper than 256"},
	}
	for _, tc := range tests {
		s := NewScanner(tc.src)
		for s.Next().Kind != EOF {
		}
		var e *Error
		if !errors.As(s.Err(), &e) || !errors.Is(e, tc.kind) || e.Line != tc.line || e.Col != tc.col || e.Msg != tc.msg {
			t.Errorf("%q: got %#v, want %v at %d:%d %q", tc.src, s.Err(), tc.kind, tc.line, tc.col, tc.msg)
		}
		if s.Next().Kind != EOF {
			t.Errorf("%q: a token after the error", tc.src)
		}
	}
}

func TestScannerDepthAndPeek(t *testing.T) {
	s := NewScanner(`a(b<c>)`)
	var depths []int
	for {
		p := s.Peek()
		tok := s.Next()
		if p != tok {
			t.Fatalf("Peek %v, Next %v", p, tok)
		}
		if tok.Kind == EOF {
			break
		}
		depths = append(depths, s.Depth())
	}
	if want := []int{0, 1, 1, 2, 2, 1, 0}; !equalInts(depths, want) {
		t.Errorf("depths %v, want %v", depths, want)
	}
	s = NewScanner(`((x`)
	s.Next()
	s.Next()
	if s.Depth() != 2 || s.Open(0) != 0 || s.Open(1) != 1 {
		t.Errorf("depth %d", s.Depth())
	}
	s.Peek() // x, then an error at the end: Peek must not change anything
	if s.Err() != nil || s.Next().Text != "x" {
		t.Errorf("Peek changed the scanner: %v", s.Err())
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadString(t *testing.T) {
	v, end, err := ReadString(`x = "a\0Ab\"" rest`, 4)
	if err != nil || v != "a\nb\"" || end != 13 {
		t.Errorf("got %q %d %v", v, end, err)
	}
	if _, _, err := ReadString(`x = "a`, 4); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "1:5: malformed MLIR: unterminated string literal") {
		t.Errorf("got %v", err)
	}
	if _, _, err := ReadString(`abc`, 1); !errors.Is(err, ErrSyntax) {
		t.Errorf("got %v", err)
	}
}

func TestPosition(t *testing.T) {
	src := "ab\ncd\n"
	for _, tc := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {99, 3, 1}, {-1, 1, 1}} {
		if l, c := Position(src, tc.off); l != tc.line || c != tc.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
}
