package shardy

import (
	"strconv"
	"strings"
)

const hexDigits = "0123456789ABCDEF"

// writeQuoted writes s as an MLIR string literal, escaping as MLIR's
// printer does: printable ASCII other than '"' and '\' as is, '\' as "\\",
// everything else as a backslash and two upper-case hex digits ('"' is "\22").
func writeQuoted(b *strings.Builder, s string) {
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

// isBareID reports whether s is an MLIR bare identifier:
// [a-zA-Z_][a-zA-Z0-9_$.]*.
func isBareID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || isLetter(c):
		case i > 0 && (isDigit(c) || c == '$' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// writeSymbol writes @name, quoting the name when it is not a bare identifier.
func writeSymbol(b *strings.Builder, name string) {
	b.WriteByte('@')
	if isBareID(name) {
		b.WriteString(name)
		return
	}
	writeQuoted(b, name)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func writeInt(b *strings.Builder, v int) {
	var buf [24]byte
	b.Write(strconv.AppendInt(buf[:0], int64(v), 10))
}

// quoteName returns name as an MLIR string literal.
func quoteName(name string) string {
	var b strings.Builder
	writeQuoted(&b, name)
	return b.String()
}
