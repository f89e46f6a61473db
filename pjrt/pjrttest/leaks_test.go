package pjrttest

import (
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

// runner is a *testing.M whose Run calls run.
type runner func() int

func (r runner) Run() int { return r() }

// TestCheckLeaks: CheckLeaks keeps a failing code, and turns a passing one into 1 only while a
// buffer is alive.
func TestCheckLeaks(t *testing.T) {
	c := Client(t)
	if n := pjrt.LiveBuffers(); n != 0 {
		t.Fatalf("%d buffers alive before the test", n)
	}
	var b *pjrt.Buffer
	leak := func(code int) runner {
		return func() int {
			var err error
			b, err = c.BufferFromHost(c.Devices()[0], []float32{1, 2}, []int{2})
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
	}
	for _, tc := range []struct {
		name string
		m    runner
		want int
	}{
		{"pass", func() int { return 0 }, 0},
		{"fail", func() int { return 3 }, 3},
		{"pass leaking", leak(0), 1},
		{"fail leaking", leak(2), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b = nil
			if got := CheckLeaks(tc.m, "pjrttest"); got != tc.want {
				t.Errorf("CheckLeaks = %d, want %d", got, tc.want)
			}
			if b != nil {
				b.Close()
			}
		})
	}
}
