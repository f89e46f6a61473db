package jit

import (
	"context"
	"fmt"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// ReshardArray returns a new Array with a's data laid out as want (on a's mesh), moved between
// devices by XLA: a jitted identity whose input is a's sharding and whose output is want. a is
// left untouched; the caller owns both.
//
// ReshardArray keeps nothing: it compiles its identity, runs it and frees it, so every call
// compiles. To move arrays between the same layouts repeatedly, keep a Function that does it
// (jit.New with an identity Body and OutSpecs, or InSpecs with Reshard on the consuming
// function), which caches its executable until it is closed.
func ReshardArray(c *pjrt.Client, a *Array, want mesh.NamedSharding) (*Array, error) {
	if a == nil {
		return nil, fmt.Errorf("jit: reshard: %w: nil *Array", ErrNil)
	}
	fn := newIdentity(want.Spec())
	defer fn.Close()
	return reshardWith(context.Background(), fn, c, a, want)
}

// newIdentity returns a Function that returns its argument laid out as spec.
func newIdentity(spec mesh.PartitionSpec) *Function {
	return New("reshard", func(f *lower.Function, args []lower.Value) []lower.Value {
		return args
	}, OutSpecs(spec))
}

// reshardWith moves a to want with fn, an identity made by newIdentity(want.Spec()).
func reshardWith(ctx context.Context, fn *Function, c *pjrt.Client, a *Array, want mesh.NamedSharding) (*Array, error) {
	wm, err := want.Mesh()
	if err != nil {
		return nil, fmt.Errorf("jit: reshard: %w", err)
	}
	am, err := a.sharding.Mesh()
	if err != nil || !am.Equal(wm) {
		return nil, fmt.Errorf("jit: reshard: %w: array is on %s, target sharding on %s", ErrArguments, am, wm)
	}
	out, err := fn.CallContext(ctx, c, a)
	if err != nil {
		return nil, fmt.Errorf("jit: reshard to %s: %w", want, err)
	}
	return out[0], nil
}
