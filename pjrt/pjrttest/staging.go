package pjrttest

import (
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/pjrt"
)

// WaitStaging waits, up to 10 seconds, until pjrt.Staging reports want live staging blocks,
// and fails t if it does not: the plugin gives a block back from one of its threads when the
// buffer living in it is destroyed, which may be after the call that destroyed it returned.
func WaitStaging(t testing.TB, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for pjrt.Staging().LiveBlocks != want {
		if time.Now().After(deadline) {
			t.Fatalf("staging blocks still live: %+v, want %d", pjrt.Staging(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// StagingBaseline waits until no staging block is live (the plugin gives a block back only once
// the execution or copy using its buffer has ended, which may be after an earlier test
// returned) and returns that count, 0, for a later WaitStaging.
func StagingBaseline(t testing.TB) int64 {
	t.Helper()
	WaitStaging(t, 0)
	return 0
}
