package mlir

import (
	"fmt"
	"strconv"
)

// Kind is the kind of a token. The names follow MLIR's lexer (mlir/lib/AsmParser/Token.h).
type Kind uint8

const (
	// EOF ends the token stream, at the end of the text or at the first error.
	EOF Kind = iota + 1
	// Ident is a bare identifier or keyword: module, func.func, stablehlo.add, i32, x2xf32.
	Ident
	// AtIdent is a symbol reference: @main or @"any name".
	AtIdent
	// PercentIdent is an SSA value: %0, %arg0.
	PercentIdent
	// CaretIdent is a block label: ^bb0.
	CaretIdent
	// HashIdent is an attribute alias or dialect attribute (#loc1, #sdy.sharding) or a result
	// number (the #1 of %0#1).
	HashIdent
	// BangIdent is a type alias or dialect type: !stablehlo.token.
	BangIdent
	// Int is an integer literal without sign: 12, 0x1F.
	Int
	// Float is a floating-point literal without sign: 1.5, 2.0e-3.
	Float
	// String is a string literal with its quotes and MLIR escapes; Unquote reads its value.
	String
	// Punct is punctuation: ( ) [ ] { } < > , : = ? * + - | ... -> and the file metadata
	// brackets {-# and #-}.
	Punct
)

var kindNames = [...]string{EOF: "EOF", Ident: "Ident", AtIdent: "AtIdent", PercentIdent: "PercentIdent",
	CaretIdent: "CaretIdent", HashIdent: "HashIdent", BangIdent: "BangIdent", Int: "Int", Float: "Float",
	String: "String", Punct: "Punct"}

// String returns the kind's name, e.g. "Ident".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one token of MLIR text.
type Token struct {
	Kind Kind   // what the token is; EOF at the end and after an error
	Off  int    // byte offset of the token's first byte
	Text string // the token as written; a String token includes its quotes
}

// End returns the offset just past the token.
func (t Token) End() int { return t.Off + len(t.Text) }

// Is reports whether t is of kind k with text s.
func (t Token) Is(k Kind, s string) bool { return t.Kind == k && t.Text == s }

// Symbol returns the name an AtIdent refers to, without '@' and unquoted.
func (t Token) Symbol() (string, error) {
	if t.Kind != AtIdent {
		return "", fmt.Errorf("mlir: %s token %q is not a symbol reference", t.Kind, t.Text)
	}
	if len(t.Text) > 1 && t.Text[1] == '"' {
		return Unquote(t.Text[1:])
	}
	return t.Text[1:], nil
}

// MaxNesting is the deepest bracket nesting (of ( [ { < and {-# together) a Scanner reads; one
// more is an error wrapping ErrNesting. It bounds the scanner's memory, and it is far deeper
// than any module XLA compiles (the checker's own limits, MaxRegionDepth and MaxTypeDepth,
// stop much earlier).
const MaxNesting = 256

// A Scanner splits MLIR text into tokens, as MLIR's lexer does, and checks that brackets
// nest: each ), ], }, > and #-} closes the innermost open bracket of its kind. Whitespace and
// // comments between tokens are skipped. The zero Scanner is not usable; call NewScanner. A
// Scanner is not safe for concurrent use.
type Scanner struct {
	src   string
	off   int
	stack []int // offsets of the open brackets, innermost last
	err   *Error
}

// NewScanner returns a scanner at the start of src.
func NewScanner(src string) *Scanner { return &Scanner{src: src} }

// Err returns the first error, an *Error wrapping ErrSyntax or ErrNesting, or nil.
func (s *Scanner) Err() error {
	if s.err == nil {
		return nil
	}
	return s.err
}

// Depth returns the number of brackets open after the last token returned: an opening
// bracket counts itself, a closing one no longer counts.
func (s *Scanner) Depth() int { return len(s.stack) }

// Open returns the offset of the i-th open bracket, 0 the outermost; the byte there is one of
// ( [ { <.
func (s *Scanner) Open(i int) int { return s.stack[i] }

// Offset returns the offset just past the last token returned.
func (s *Scanner) Offset() int { return s.off }

// Src returns the text being scanned.
func (s *Scanner) Src() string { return s.src }

// Peek returns the next token without consuming it (nor changing Depth).
func (s *Scanner) Peek() Token {
	save, depth, err := s.off, len(s.stack), s.err
	var top int
	if depth > 0 {
		top = s.stack[depth-1]
	}
	t := s.Next()
	// Restore: Next pushed at most one bracket or popped at most one.
	s.off, s.err = save, err
	switch {
	case len(s.stack) > depth:
		s.stack = s.stack[:depth]
	case len(s.stack) < depth:
		s.stack = append(s.stack, top)
	}
	return t
}

// fail records the first error and returns the EOF token at off.
func (s *Scanner) fail(off int, kind error, format string, args ...any) Token {
	if s.err == nil {
		s.err = errorAt(s.src, off, kind, "", fmt.Sprintf(format, args...))
	}
	s.off = len(s.src)
	return Token{Kind: EOF, Off: off}
}

// Next returns the next token. At the end of the text, and after an error (see Err), it
// returns an EOF token. Unclosed brackets at the end are an error.
func (s *Scanner) Next() Token {
	if s.err != nil {
		return Token{Kind: EOF, Off: len(s.src)}
	}
	s.off = SkipSpace(s.src, s.off)
	src, start := s.src, s.off
	if start >= len(src) {
		if n := len(s.stack); n > 0 {
			open := s.stack[n-1]
			return s.fail(open, ErrSyntax, "%s is never closed", describeOpen(src, open))
		}
		return Token{Kind: EOF, Off: start}
	}
	c := src[start]
	tok := func(k Kind, end int) Token {
		s.off = end
		return Token{Kind: k, Off: start, Text: src[start:end]}
	}
	switch {
	case isLetter(c) || c == '_':
		return tok(Ident, scanWhile(src, start+1, isBareIDChar))
	case isDigit(c):
		return s.number(start)
	}
	switch c {
	case '"':
		end, err := scanString(src, start)
		if err != nil {
			return s.fail(err.Off, ErrSyntax, "%s", err.Msg)
		}
		return tok(String, end)
	case '@':
		if start+1 < len(src) && src[start+1] == '"' {
			end, err := scanString(src, start+1)
			if err != nil {
				return s.fail(err.Off, ErrSyntax, "%s", err.Msg)
			}
			return tok(AtIdent, end)
		}
		if start+1 >= len(src) || !(isLetter(src[start+1]) || src[start+1] == '_') {
			return s.fail(start, ErrSyntax, "@ identifier expected to start with letter or '_'")
		}
		return tok(AtIdent, scanWhile(src, start+2, isBareIDChar))
	case '%', '^', '!':
		return s.prefixed(start)
	case '#':
		if start+2 < len(src) && src[start+1] == '-' && src[start+2] == '}' {
			if !s.pop(start, '{') {
				return Token{Kind: EOF, Off: start}
			}
			return tok(Punct, start+3)
		}
		return s.prefixed(start)
	case '{':
		if start+2 < len(src) && src[start+1] == '-' && src[start+2] == '#' {
			if !s.push(start) {
				return Token{Kind: EOF, Off: start}
			}
			return tok(Punct, start+3)
		}
		fallthrough
	case '(', '[', '<':
		if !s.push(start) {
			return Token{Kind: EOF, Off: start}
		}
		return tok(Punct, start+1)
	case ')', ']', '}', '>':
		if !s.pop(start, opener(c)) {
			return Token{Kind: EOF, Off: start}
		}
		return tok(Punct, start+1)
	case '-':
		if start+1 < len(src) && src[start+1] == '>' {
			return tok(Punct, start+2)
		}
		return tok(Punct, start+1)
	case ',', ':', '=', '?', '*', '+', '|':
		return tok(Punct, start+1)
	case '.':
		if start+2 < len(src) && src[start+1] == '.' && src[start+2] == '.' {
			return tok(Punct, start+3)
		}
		return s.fail(start, ErrSyntax, "expected three consecutive dots for an ellipsis")
	}
	if c < 0x20 || c >= 0x7f {
		return s.fail(start, ErrSyntax, "unexpected byte 0x%02X", c)
	}
	return s.fail(start, ErrSyntax, "unexpected character %q", c)
}

func (s *Scanner) push(off int) bool {
	if len(s.stack) >= MaxNesting {
		s.fail(off, ErrNesting, "brackets nest deeper than %d", MaxNesting)
		return false
	}
	s.stack = append(s.stack, off)
	return true
}

// pop closes the innermost bracket, which must open with want ('{' also for "{-#").
func (s *Scanner) pop(off int, want byte) bool {
	n := len(s.stack)
	closer := s.src[off : off+1]
	if want == '{' && s.src[off] == '#' {
		closer = "#-}"
	}
	if n == 0 {
		s.fail(off, ErrSyntax, "%q closes nothing", closer)
		return false
	}
	open := s.stack[n-1]
	isMeta := s.src[open] == '{' && open+2 < len(s.src) && s.src[open+1] == '-' && s.src[open+2] == '#'
	if s.src[open] != want || isMeta != (closer == "#-}") {
		s.fail(off, ErrSyntax, "%q does not close %s", closer, describeOpen(s.src, open))
		return false
	}
	s.stack = s.stack[:n-1]
	return true
}

func opener(c byte) byte {
	switch c {
	case ')':
		return '('
	case ']':
		return '['
	case '}':
		return '{'
	}
	return '<'
}

func describeOpen(src string, off int) string {
	line, col := Position(src, off)
	b := src[off : off+1]
	if b == "{" && off+2 < len(src) && src[off+1] == '-' && src[off+2] == '#' {
		b = "{-#"
	}
	return fmt.Sprintf("%q opened at %d:%d", b, line, col)
}

// number lexes an integer or float literal starting at a digit, as MLIR's lexNumber.
func (s *Scanner) number(start int) Token {
	src := s.src
	i := start + 1
	if src[start] == '0' && i < len(src) && src[i] == 'x' {
		// 0x1F is hexadecimal; 0xi32 is the integer 0 followed by the identifier xi32.
		if i+1 < len(src) && isHex(src[i+1]) {
			end := scanWhile(src, i+1, isHex)
			s.off = end
			return Token{Kind: Int, Off: start, Text: src[start:end]}
		}
		s.off = i
		return Token{Kind: Int, Off: start, Text: src[start:i]}
	}
	i = scanWhile(src, i, isDigit)
	if i >= len(src) || src[i] != '.' {
		s.off = i
		return Token{Kind: Int, Off: start, Text: src[start:i]}
	}
	i = scanWhile(src, i+1, isDigit)
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '-' || src[j] == '+') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			i = scanWhile(src, j, isDigit)
		}
	}
	s.off = i
	return Token{Kind: Float, Off: start, Text: src[start:i]}
}

// prefixed lexes %, ^, # and ! identifiers: the prefix and a suffix-id, which is digits or
// [a-zA-Z$._-][a-zA-Z0-9$._-]*.
func (s *Scanner) prefixed(start int) Token {
	src := s.src
	i := start + 1
	switch {
	case i < len(src) && isDigit(src[i]):
		i = scanWhile(src, i, isDigit)
	case i < len(src) && (isLetter(src[i]) || isIDPunct(src[i])):
		i = scanWhile(src, i, func(c byte) bool { return isLetter(c) || isDigit(c) || isIDPunct(c) })
	default:
		return s.fail(start, ErrSyntax, "invalid %c identifier", src[start])
	}
	kind := BangIdent
	switch src[start] {
	case '%':
		kind = PercentIdent
	case '^':
		kind = CaretIdent
	case '#':
		kind = HashIdent
	}
	s.off = i
	return Token{Kind: kind, Off: start, Text: src[start:i]}
}

// SkipSpace returns the offset of the first byte at or after off that is neither whitespace
// (space, tab, newline, carriage return) nor inside a // comment.
func SkipSpace(src string, off int) int {
	for off < len(src) {
		switch src[off] {
		case ' ', '\t', '\n', '\r':
			off++
		case '/':
			if off+1 >= len(src) || src[off+1] != '/' {
				return off
			}
			for off < len(src) && src[off] != '\n' {
				off++
			}
		default:
			return off
		}
	}
	return off
}

// ReadString reads the string literal at src[off] (which must be '"'), as the Scanner does,
// and returns its value and the offset just past it. The error is an *Error wrapping
// ErrSyntax, positioned in src: "unterminated string literal" or "unknown escape in string
// literal".
func ReadString(src string, off int) (value string, end int, err error) {
	if off < 0 || off >= len(src) || src[off] != '"' {
		return "", off, errorAt(src, off, ErrSyntax, "", "expected a string literal")
	}
	end, e := scanString(src, off)
	if e != nil {
		return "", off, errorAt(src, e.Off, ErrSyntax, "", e.Msg)
	}
	value, err = Unquote(src[off:end])
	return value, end, err
}

// scanString returns the offset just past the string literal starting at src[start] == '"',
// following MLIR's lexString: the escapes \" \\ \n \t and \XX (two hex digits); a raw
// newline, vertical tab or form feed, or the end of the text, ends it unterminated.
func scanString(src string, start int) (int, *Error) {
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '"':
			return i + 1, nil
		case '\n', '\v', '\f':
			return 0, &Error{Off: start, Msg: "unterminated string literal"}
		case '\\':
			switch {
			case i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '\\' || src[i+1] == 'n' || src[i+1] == 't'):
				i++
			case i+2 < len(src) && isHex(src[i+1]) && isHex(src[i+2]):
				i += 2
			default:
				return 0, &Error{Off: i, Msg: "unknown escape in string literal"}
			}
		}
	}
	return 0, &Error{Off: start, Msg: "unterminated string literal"}
}

func scanWhile(src string, i int, ok func(byte) bool) int {
	for i < len(src) && ok(src[i]) {
		i++
	}
	return i
}

func isLetter(c byte) bool     { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isHex(c byte) bool        { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isIDPunct(c byte) bool    { return c == '$' || c == '.' || c == '_' || c == '-' }
func isBareIDChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '$' || c == '.' }
