package pjrttest

import (
	"fmt"
	"os"

	"github.com/xlamesh/xlamesh/pjrt"
)

// CheckLeaks runs the tests of m, the *testing.M of a package's TestMain, and returns the exit
// code for os.Exit: m.Run's, or 1 when the tests passed but left device buffers alive
// (pjrt.LiveBuffers is not 0 after them), which it reports on stderr as "<pkg> tests leaked N
// PJRT buffers".
//
//	func TestMain(m *testing.M) { os.Exit(pjrttest.CheckLeaks(m, "lower")) }
func CheckLeaks(m interface{ Run() int }, pkg string) int {
	code := m.Run()
	if n := pjrt.LiveBuffers(); code == 0 && n != 0 {
		fmt.Fprintf(os.Stderr, "%s tests leaked %d PJRT buffers\n", pkg, n)
		code = 1
	}
	return code
}
