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
// When a or want is in host memory (mesh.NamedSharding.WithMemoryKind: JAX's jax.device_put of
// an array to host memory and back), each shard is copied between the memories of its device
// (pjrt.Buffer.CopyToMemory), before and after the identity, which runs in device memory: the
// move works on every plugin that lists memories.
//
// ReshardArray keeps nothing: it compiles its identity, runs it and frees it, so every call
// compiles. To move arrays between the same layouts repeatedly, keep a Function that does it
// (jit.New with an identity Body and OutSpecs, or InSpecs with Reshard on the consuming
// function), which caches its executable until it is closed.
func ReshardArray(c *pjrt.Client, a *Array, want mesh.NamedSharding) (*Array, error) {
	if a == nil {
		return nil, fmt.Errorf("jit: reshard: %w: nil *Array", ErrNil)
	}
	from, to := memoryKind(a.sharding), memoryKind(want)
	if from == mesh.MemoryDevice && to == mesh.MemoryDevice {
		fn := newIdentity(want.Spec())
		defer fn.Close()
		return reshardWith(context.Background(), fn, c, a, want)
	}
	wm, err := want.Mesh()
	if err != nil {
		return nil, fmt.Errorf("jit: reshard: %w", err)
	}
	if am, err := a.sharding.Mesh(); err != nil || !am.Equal(wm) {
		return nil, fmt.Errorf("jit: reshard: %w: array is on %s, target sharding on %s", ErrArguments, am, wm)
	}
	// Into device memory, laid out as want there, then into want's memory.
	cur := a
	defer func() {
		if cur != a {
			_ = cur.Close()
		}
	}()
	step := func(next *Array, err error) error {
		if err != nil {
			return err
		}
		if cur != a {
			_ = cur.Close()
		}
		cur = next
		return nil
	}
	if from != mesh.MemoryDevice {
		if err := step(copyToMemory(c, cur, mesh.MemoryDevice)); err != nil {
			return nil, err
		}
	}
	if !cur.sharding.Spec().Equal(want.Spec()) {
		fn := newIdentity(want.Spec())
		defer fn.Close()
		dev, err := mesh.NewNamedSharding(wm, want.Spec())
		if err != nil {
			return nil, fmt.Errorf("jit: reshard: %w", err)
		}
		if err := step(reshardWith(context.Background(), fn, c, cur, dev)); err != nil {
			return nil, err
		}
	}
	if to != mesh.MemoryDevice {
		if err := step(copyToMemory(c, cur, to)); err != nil {
			return nil, err
		}
	}
	out := cur
	cur = a // kept: the caller owns it
	return out, nil
}

// memoryKind returns the memory kind of a sharding, mesh.MemoryDevice for the default.
func memoryKind(s mesh.NamedSharding) string {
	if k := s.MemoryKind(); k != "" {
		return k
	}
	return mesh.MemoryDevice
}

// copyToMemory returns a copy of a whose every shard is in its device's memory of the given kind.
func copyToMemory(c *pjrt.Client, a *Array, kind string) (*Array, error) {
	s, err := a.sharding.WithMemoryKind(kind)
	if err != nil {
		return nil, fmt.Errorf("jit: reshard: %w", err)
	}
	if !a.enter() {
		return nil, fmt.Errorf("jit: reshard: %w", ErrClosed)
	}
	defer a.exit()
	shards := make([]Shard, len(a.shards))
	for i, sh := range a.shards {
		if sh.Device.Client() != c {
			err = fmt.Errorf("%w: the array is on devices of another client than %s", ErrDevice, c)
		}
		var m *pjrt.Memory
		if err == nil {
			m, err = sh.Device.Memory(kind)
		}
		var b *pjrt.Buffer
		if err == nil {
			b, err = sh.Data.CopyToMemory(m)
		}
		if err != nil {
			for _, done := range shards[:i] {
				_ = done.Data.Close()
			}
			return nil, fmt.Errorf("jit: reshard to %s: %w", s, err)
		}
		shards[i] = sh
		shards[i].Data = b
	}
	return newArray(a.shape, a.dtype, s, shards), nil
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
