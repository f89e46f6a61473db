package mlir

import (
	"fmt"
	"strings"
)

const hexDigits = "0123456789ABCDEF"

// Quote returns s as an MLIR string literal, escaped as MLIR's printer does
// (llvm::printEscapedString): printable ASCII other than '"' and '\' as is, '\' as \\, and
// every other byte as a backslash and two upper-case hex digits ('"' is \22, a newline \0A).
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	WriteQuoted(&b, s)
	return b.String()
}

// WriteQuoted writes Quote(s) to b.
func WriteQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f && c != '"':
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	b.WriteByte('"')
}

// Unquote returns the value of the MLIR string literal lit (with its quotes), reading the
// escapes MLIR's lexer reads: \" \\ \n \t and \XX. Anything else is an error wrapping
// ErrSyntax.
func Unquote(lit string) (string, error) {
	if len(lit) < 2 || lit[0] != '"' {
		return "", errorAt(lit, 0, ErrSyntax, "", "expected a string literal")
	}
	end, err := scanString(lit, 0)
	if err != nil {
		return "", errorAt(lit, err.Off, ErrSyntax, "", err.Msg)
	}
	if end != len(lit) {
		return "", errorAt(lit, end, ErrSyntax, "", "text after the string literal")
	}
	body := lit[1 : len(lit)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body, nil
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		// scanString accepted the literal, so every escape is well formed.
		switch e := body[i+1]; e {
		case 'n':
			b.WriteByte('\n')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case '"', '\\':
			b.WriteByte(e)
			i++
		default:
			b.WriteByte(unhex(e)<<4 | unhex(body[i+2]))
			i += 2
		}
	}
	return b.String(), nil
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// IsBareIdent reports whether s is an MLIR bare identifier, [a-zA-Z_][a-zA-Z0-9_$.]*: the
// form a symbol name may take after '@' without quotes.
func IsBareIdent(s string) bool {
	if s == "" || !(isLetter(s[0]) || s[0] == '_') {
		return false
	}
	return scanWhile(s, 1, isBareIDChar) == len(s)
}

// Symbol returns the MLIR symbol reference to name: @name when name is a bare identifier,
// else @ and the quoted name (@"jit_my-fn").
func Symbol(name string) string {
	if IsBareIdent(name) {
		return "@" + name
	}
	var b strings.Builder
	b.WriteByte('@')
	WriteQuoted(&b, name)
	return b.String()
}

// CheckName reports whether name can be a symbol name (module, function, sdy.mesh) or a
// Shardy mesh axis name in a module XLA compiles. Accepted: a non-empty name of printable
// ASCII bytes (0x20 to 0x7E) other than the backslash. MLIR itself reads any name once quoted
// and escaped (Quote), but XLA does not survive the rest:
//
//   - a backslash or any byte of 0x80 and above (so every non-ASCII letter, and invalid
//     UTF-8): Shardy's export hands the escaped name to absl::CUnescape, which aborts the
//     process ("Unknown escape sequence"), or the name comes back changed and XLA crashes;
//   - control bytes (below 0x20, and 0x7F): CUnescape reads their \XX escapes as octal, so two
//     different names can come back as one.
//
// kind names the thing in the error ("axis", "symbol"); the error is an *Error wrapping
// ErrName that names the first byte at fault.
func CheckName(kind, name string) error {
	if name == "" {
		return &Error{Kind: ErrName, Off: -1, What: kind + " " + Quote(name), Msg: "the name is empty"}
	}
	for i := 0; i < len(name); i++ {
		if msg := badNameByte(name[i]); msg != "" {
			return &Error{Kind: ErrName, Off: -1, What: kind + " " + Quote(name),
				Msg: fmt.Sprintf("byte %d is %s; names are printable ASCII other than '\\'", i, msg)}
		}
	}
	return nil
}

// badNameByte describes c if names may not hold it, else returns "".
func badNameByte(c byte) string {
	switch {
	case c == '\\':
		return "a backslash"
	case c == 0:
		return "a NUL byte"
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("the control byte 0x%02X", c)
	case c >= 0x80:
		return fmt.Sprintf("0x%02X, outside ASCII", c)
	}
	return ""
}
