package pjrt_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// BenchmarkExecute1Device is the binding's own per-call cost: one f32[4] add on one device,
// execute + wait, no jit layer.
func BenchmarkExecute1Device(b *testing.B) {
	c := pjrttest.Client(b)
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer exe.Close()
	x, err := c.BufferFromHost(exe.Devices()[0], []float32{0, 1, 2, 3}, []int{4})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	args := [][]*pjrt.Buffer{{x}}
	b.ReportAllocs()
	for b.Loop() {
		outs, err := exe.Execute(args)
		if err != nil {
			b.Fatal(err)
		}
		if err := outs[0][0].Wait(); err != nil {
			b.Fatal(err)
		}
		outs[0][0].Close()
	}
}

// BenchmarkExecuteChained1Device: executions that consume the previous result, waited once per
// 100.
func BenchmarkExecuteChained1Device(b *testing.B) {
	c := pjrttest.Client(b)
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer exe.Close()
	x0, err := c.BufferFromHost(exe.Devices()[0], []float32{0, 1, 2, 3}, []int{4})
	if err != nil {
		b.Fatal(err)
	}
	defer x0.Close()
	b.ReportAllocs()
	for b.Loop() {
		x := x0
		for i := range 100 {
			outs, err := exe.Execute([][]*pjrt.Buffer{{x}})
			if err != nil {
				b.Fatal(err)
			}
			if i > 0 {
				x.Close()
			}
			x = outs[0][0]
		}
		if err := x.Wait(); err != nil {
			b.Fatal(err)
		}
		x.Close()
	}
}
