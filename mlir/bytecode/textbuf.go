package bytecode

import "strings"

// budget is how many bytes of text one conversion may still write, over all its buffers.
// Attributes and types can share parts (an array holding the same array twice, a tuple of
// the same tuple), so a few kilobytes of hostile bytecode can describe text of exponential
// size: with every write counted against one budget, printing stops (and fails) after a
// number of steps linear in the input.
type budget struct{ left int }

// textBuf is a strings.Builder whose writes draw on a budget. Past it, writes are dropped
// and over is set; the printers check over (and the budget) to return early.
type textBuf struct {
	strings.Builder
	bud  *budget
	over bool
}

func (b *textBuf) WriteString(s string) {
	if b.over || len(s) > b.bud.left {
		b.over, b.bud.left = true, 0
		return
	}
	b.bud.left -= len(s)
	b.Builder.WriteString(s)
}

// WriteByte writes c; it never fails (the error is io.ByteWriter's).
func (b *textBuf) WriteByte(c byte) error {
	if b.over || b.bud.left < 1 {
		b.over, b.bud.left = true, 0
		return nil
	}
	b.bud.left--
	return b.Builder.WriteByte(c)
}

// done reports whether the budget is spent: the printers stop early.
func (b *textBuf) done() bool { return b.over || b.bud.left == 0 }

// shortType prints a type for an error message, cut at 200 bytes.
func shortType(t typ) string {
	b := &textBuf{bud: &budget{left: 200}}
	writeType(b, t)
	if b.over {
		return b.String() + "..."
	}
	return b.String()
}
