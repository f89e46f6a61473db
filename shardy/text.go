package shardy

import (
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mlir"
)

// writeQuoted writes s as an MLIR string literal, escaped as MLIR's printer does (see
// mlir.Quote): printable ASCII other than '"' and '\' as is, '\' as "\\", everything else as
// a backslash and two upper-case hex digits ('"' is "\22").
func writeQuoted(b *strings.Builder, s string) { mlir.WriteQuoted(b, s) }

// writeSymbol writes @name, quoting the name when it is not a bare identifier.
func writeSymbol(b *strings.Builder, name string) { b.WriteString(mlir.Symbol(name)) }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func writeInt(b *strings.Builder, v int) {
	var buf [24]byte
	b.Write(strconv.AppendInt(buf[:0], int64(v), 10))
}

// quoteName returns name as an MLIR string literal.
func quoteName(name string) string { return mlir.Quote(name) }

func writeInts(b *strings.Builder, v []int, sep string) {
	for i, x := range v {
		if i > 0 {
			b.WriteString(sep)
		}
		writeInt(b, x)
	}
}
