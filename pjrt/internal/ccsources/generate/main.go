// Command generate writes pjrt/cc_sources.go, the sha256 of the C sources that cgo compiles
// into package pjrt from ../cc (see package pjrt/internal/ccsources). `go generate ./pjrt`
// runs it in the pjrt directory:
//
//	go run ./internal/ccsources/generate
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/xlamesh/xlamesh/pjrt/internal/ccsources"
)

func main() {
	if err := run("../cc", "cc_sources.go"); err != nil {
		fmt.Fprintln(os.Stderr, "pjrt: generate:", err)
		os.Exit(1)
	}
}

// run writes out for the C sources below ccDir, leaving the file untouched when it is current.
func run(ccDir, out string) error {
	src, err := ccsources.File(ccDir)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, src) {
		return nil
	}
	return os.WriteFile(out, src, 0o644)
}
