package jit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// A Function owns its executables until Close; CallContext and ToHostContext stop waiting when
// their context ends.
func ExampleFunction_CallContext() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	m, _ := mesh.New(jit.Devices(c), []int{2}, "x")
	s, _ := mesh.NewNamedSharding(m, mesh.P("x"))
	x, err := jit.Put(c, []float32{1, 2, 3, 4}, []int{4}, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	double := jit.New("double", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(2))}
	})
	defer double.Close() // frees its executable before the client goes

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ys, err := double.CallContext(ctx, c, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ys[0].Close()
	v, err := ys[0].ToHostContext(ctx)
	fmt.Println(v, err)

	cancel()
	_, err = double.CallContext(ctx, c, x)
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// [2 4 6 8] <nil>
	// true
}
