package jit

import (
	"fmt"
	"sync"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// reshards caches one identity Function per target spec; each caches its own lowerings and
// executables, so moving arrays between two layouts compiles once.
var reshards sync.Map // spec key -> *Function

// ReshardArray returns a new Array with a's data laid out as want (on a's mesh), moved between
// devices by XLA: a jitted identity whose input is a's sharding and whose output is want. a is
// left untouched; the caller owns both.
func ReshardArray(c *pjrt.Client, a *Array, want mesh.NamedSharding) (*Array, error) {
	wm, err := want.Mesh()
	if err != nil {
		return nil, fmt.Errorf("jit: reshard: %w", err)
	}
	am, err := a.sharding.Mesh()
	if err != nil || !am.Equal(wm) {
		return nil, fmt.Errorf("jit: reshard: %w: array is on %s, target sharding on %s", ErrArguments, am, wm)
	}
	key := want.Spec().String()
	fn, ok := reshards.Load(key)
	if !ok {
		fn, _ = reshards.LoadOrStore(key, New("reshard", func(f *lower.Function, args []lower.Value) []lower.Value {
			return args
		}, OutSpecs(want.Spec())))
	}
	out, err := fn.(*Function).Call(c, a)
	if err != nil {
		return nil, fmt.Errorf("jit: reshard to %s: %w", want, err)
	}
	return out[0], nil
}
