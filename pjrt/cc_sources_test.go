package pjrt

import (
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/internal/ccsources"
)

// TestCCSourcesCurrent fails when a C file below ../cc changed (or came or went) without
// `go generate ./pjrt`: the go command would then link a stale C object into this package.
func TestCCSourcesCurrent(t *testing.T) {
	got, err := ccsources.List("../cc")
	if err != nil {
		t.Fatal(err)
	}
	if got != ccSources[1:] {
		t.Fatalf("%s\ncc_sources.go has:\n%scc/ has:\n%s", ccsources.Stale, ccSources[1:], got)
	}
}
