package distributed

import (
	"testing"
	"time"
)

// TestLeaseTTL: the heartbeat timeout becomes a lease TTL rounded up to whole seconds, at
// least 1; rounded down, a process would be declared lost before its timeout.
func TestLeaseTTL(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		want    int64
	}{
		{0, 1},
		{time.Nanosecond, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2},
		{2 * time.Second, 2},
		{2*time.Second + time.Millisecond, 3},
		{10 * time.Second, 10},
	} {
		if got := (Config{HeartbeatTimeout: tc.timeout}).leaseTTL(); got != tc.want {
			t.Errorf("HeartbeatTimeout %v: lease TTL %d s, want %d s", tc.timeout, got, tc.want)
		}
	}
}
