package lower

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/xlamesh/xlamesh/mesh"
)

// Donate marks arguments of @main as donated, as jax.jit's donate_argnums: the caller gives
// up their buffers, and Build tells XLA which results may take their memory. It may be
// called more than once; an index out of range is an error at Build, naming it.
//
// Build pairs donated arguments with results as JAX's lowering does. An argument whose
// per-device shard has a result's shard shape, element type and memory kind (the first such
// result not yet taken, arguments in order) is aliased to it (`tf.aliasing_output = i`),
// when the result's sharding is fully given or the module runs on one device; a donated
// argument paired with a result whose layout XLA chooses, or matching a result only by its
// element count, is left to XLA (`jax.buffer_donor = true`), as is every unpaired donated
// argument of a partitioned module with such a result. A donated argument nothing matches
// gets no attribute: its buffer is still consumed by the call, but its memory is not reused.
func (f *Function) Donate(args ...int) {
	if f.IsRegion() || f.m.Main() != f {
		f.Failf("func.func argument", -1, Value{}, ErrSharding, "donation is for @main's arguments, not @%s", f.Name())
		return
	}
	f.m.donated = append(f.m.donated, args...)
}

// shardKey is what pairs a donated argument with a result: the per-device shard's element
// type and dimensions (or, in the second pass, its element count alone) and its memory kind.
type shardKey struct {
	dims   string
	memory string
}

// annotateDonation writes tf.aliasing_output and jax.buffer_donor on @main's donated
// arguments (see Donate). It runs after annotateEntry and annotateMemory, when every
// argument's sharding and every given result sharding is known.
func (m *Module) annotateDonation(f *Function) error {
	if len(m.donated) == 0 {
		return nil
	}
	nargs := len(f.Args())
	donated := make([]bool, nargs)
	for _, i := range m.donated {
		if i < 0 || i >= nargs {
			return &OpError{Pkg: "lower", Func: "main", Op: "func.func argument", Operand: i,
				Err: fmt.Errorf("%w: donated argument %d out of range for %d arguments", ErrSharding, i, nargs)}
		}
		donated[i] = true
	}
	partitioned := m.numPartitions() > 1
	argShape := func(i int) ([]int, error) { return shardDims(f.argSh[i], f.Args()[i].Shape()) }
	results := f.Results()
	resShape := func(j int) ([]int, error) { return shardDims(f.resSh[j], results[j].Shape()) }

	// Arguments by their exact shard type, in order.
	exact := make(map[shardKey][]int)
	for i := range nargs {
		if !donated[i] {
			continue
		}
		dims, err := argShape(i)
		if err != nil {
			return &OpError{Pkg: "lower", Func: "main", Op: "func.func argument", Operand: i, Err: err}
		}
		k := shardKey{typeKey(f.Args()[i].Shape().DType().String(), dims), memoryKindOf(f.argSh[i])}
		exact[k] = append(exact[k], i)
	}
	alias := make(map[int]int)  // argument -> result
	donor := make(map[int]bool) // arguments left to XLA
	taken := make([]bool, len(results))
	open := false // some result's layout is XLA's to choose
	for j, r := range results {
		given := f.resSh[j] != nil && !hasUnconstrained(f.resSh[j].Spec())
		open = open || !given
		dims, err := resShape(j)
		if err != nil {
			return &OpError{Pkg: "lower", Func: "main", Op: "func.func result", Operand: j, Err: err}
		}
		k := shardKey{typeKey(r.Shape().DType().String(), dims), memoryKindOf(f.resSh[j])}
		q := exact[k]
		if len(q) == 0 {
			continue
		}
		i := q[0]
		exact[k] = q[1:]
		if given || !partitioned {
			alias[i], taken[j] = j, true
		} else {
			donor[i] = true
		}
	}
	// What is left pairs by element count only, for XLA to decide.
	bySize := make(map[shardKey]int)
	for j := range results {
		if taken[j] {
			continue
		}
		dims, _ := resShape(j)
		bySize[shardKey{strconv.Itoa(product(dims)), memoryKindOf(f.resSh[j])}]++
	}
	for i := range nargs {
		if !donated[i] || donor[i] {
			continue
		}
		if _, ok := alias[i]; ok {
			continue
		}
		dims, _ := argShape(i)
		k := shardKey{strconv.Itoa(product(dims)), memoryKindOf(f.argSh[i])}
		if bySize[k] > 0 {
			bySize[k]--
			donor[i] = true
		} else if partitioned && open {
			donor[i] = true
		}
	}
	for i := range nargs {
		if j, ok := alias[i]; ok {
			f.SetArgAttr(i, "tf.aliasing_output", strconv.Itoa(j)+" : i32")
		} else if donor[i] {
			f.SetArgAttr(i, "jax.buffer_donor", "true")
		}
	}
	return nil
}

// shardDims returns the per-device dimensions of a value of shape s with sharding sh (the
// whole shape when sh is nil, a module without a mesh). Unconstrained dimensions count as
// whole, as JAX's sharded avals do before XLA chooses.
func shardDims(sh *mesh.NamedSharding, s Shape) ([]int, error) {
	dims := s.Dims()
	if sh == nil {
		return dims, nil
	}
	if hasUnconstrained(sh.Spec()) {
		return dims, nil
	}
	return sh.ShardShape(dims)
}

func hasUnconstrained(p mesh.PartitionSpec) bool {
	return slices.ContainsFunc(p.Dims(), mesh.Dim.IsUnconstrained)
}

func typeKey(dtype string, dims []int) string {
	b := []byte(dtype)
	for _, d := range dims {
		b = append(b, 'x')
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(b)
}

func product(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}
