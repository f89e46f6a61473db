package tree_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/tree"
)

type block[T any] struct {
	Wq, Wo T
	Norm   *T
	Config int `tree:"-"`
	hidden int
}

type model[T any] struct {
	Embed  T
	Blocks []block[T]
	Heads  map[string]T
	ByID   map[int]T
	Pair   [2]T
	Extra  any
}

type id string

func sample() model[id] {
	norm := id("n1")
	return model[id]{
		Embed:  "e",
		Blocks: []block[id]{{Wq: "q0", Wo: "o0", Config: 7, hidden: 1}, {Wq: "q1", Wo: "o1", Norm: &norm}},
		Heads:  map[string]id{"lm": "lm", "cls": "cls"},
		ByID:   map[int]id{10: "ten", -2: "minus two", 3: "three"},
		Pair:   [2]id{"p0", "p1"},
	}
}

func TestFlatten(t *testing.T) {
	leaves, d, err := tree.Flatten[id](sample())
	require.NoError(t, err)
	assert.Equal(t, []id{"e", "q0", "o0", "q1", "o1", "n1", "cls", "lm", "minus two", "three", "ten", "p0", "p1"}, leaves)
	assert.Equal(t, []string{".Embed", ".Blocks[0].Wq", ".Blocks[0].Wo", ".Blocks[1].Wq", ".Blocks[1].Wo", ".Blocks[1].Norm",
		`.Heads["cls"]`, `.Heads["lm"]`, ".ByID[-2]", ".ByID[3]", ".ByID[10]", ".Pair[0]", ".Pair[1]"}, d.Paths())
	assert.Equal(t, 13, d.NumLeaves())
	assert.Equal(t, `{Embed: *, Blocks: [{Wq: *, Wo: *, Norm: nil}, {Wq: *, Wo: *, Norm: *}], `+
		`Heads: map["cls": *, "lm": *], ByID: map[-2: *, 3: *, 10: *], Pair: [*, *], Extra: nil}`, d.String())
}

func TestFlattenLeafAndEmpty(t *testing.T) {
	leaves, d, err := tree.Flatten[id](id("x"))
	require.NoError(t, err)
	assert.Equal(t, []id{"x"}, leaves)
	assert.Equal(t, []string{""}, d.Paths())
	assert.Equal(t, "*", d.String())

	leaves, d, err = tree.Flatten[id](nil)
	require.NoError(t, err)
	assert.Empty(t, leaves)
	assert.Equal(t, "nil", d.String())
	assert.Equal(t, 0, d.NumLeaves())
	assert.Empty(t, tree.Def{}.Paths())
	assert.Equal(t, "nil", tree.Def{}.String())
	assert.True(t, d.Equal(tree.Def{}))

	// An interface holding a leaf is a leaf; a pointer to a tree is the tree.
	s := sample()
	s.Extra = id("x")
	leaves, d, err = tree.Flatten[id](&s)
	require.NoError(t, err)
	assert.Equal(t, id("x"), leaves[len(leaves)-1])
	assert.Equal(t, ".Extra", d.Paths()[len(leaves)-1])
}

func TestBuild(t *testing.T) {
	_, d, err := tree.Flatten[id](sample())
	require.NoError(t, err)
	nums := make([]int, d.NumLeaves())
	for i := range nums {
		nums[i] = i * 10
	}
	m, err := tree.Build[model[int]](d, nums)
	require.NoError(t, err)
	thirty := 50
	assert.Equal(t, model[int]{
		Embed:  0,
		Blocks: []block[int]{{Wq: 10, Wo: 20}, {Wq: 30, Wo: 40, Norm: &thirty}},
		Heads:  map[string]int{"cls": 60, "lm": 70},
		ByID:   map[int]int{-2: 80, 3: 90, 10: 100},
		Pair:   [2]int{110, 120},
	}, m)
	again, d2, err := tree.Flatten[int](m)
	require.NoError(t, err)
	assert.Equal(t, nums, again)
	assert.True(t, d.Equal(d2))

	var into model[int]
	require.NoError(t, tree.BuildInto(&into, d, nums))
	assert.Equal(t, m, into)
}

func TestBuildErrors(t *testing.T) {
	_, d, err := tree.Flatten[id](sample())
	require.NoError(t, err)
	nums := make([]int, d.NumLeaves())
	type other struct{ Embed, Blocks int }
	type reordered[T any] struct {
		Blocks []block[T]
		Embed  T
	}
	cases := []struct {
		name string
		do   func() error
		want error
		msg  string
	}{
		{"count", func() error { _, err := tree.Build[model[int]](d, nums[1:]); return err }, tree.ErrLeaves,
			"tree: the root: 12 leaves for a tree of 13"},
		{"leaf type", func() error { _, err := tree.Build[model[string]](d, nums); return err }, tree.ErrStructure,
			"tree: .Embed: a leaf (int) where the type has a string"},
		{"fields", func() error { _, err := tree.Build[other](d, nums); return err }, tree.ErrStructure,
			"tree: the root: tree_test.other has no tree field Heads at position 2 (its tree fields: Embed, Blocks)"},
		{"order", func() error { _, err := tree.Build[reordered[int]](d, nums); return err }, tree.ErrStructure,
			"tree: the root: tree_test.reordered[int] has no tree field Embed at position 0 (its tree fields: Blocks, Embed)"},
		{"array length", func() error {
			_, d, _ := tree.Flatten[int]([]int{1, 2, 3})
			_, err := tree.Build[[2]int](d, []int{1, 2, 3})
			return err
		}, tree.ErrStructure, "tree: the root: a [2]int where the tree has a list of 3"},
		{"map keys", func() error {
			_, d, _ := tree.Flatten[int](map[string]int{"a": 1})
			_, err := tree.Build[map[int]int](d, []int{1})
			return err
		}, tree.ErrStructure, `tree: the root: a map[int]int cannot hold the key "a"`},
		{"list for map", func() error {
			_, d, _ := tree.Flatten[int]([]int{1})
			_, err := tree.Build[map[string]int](d, []int{1})
			return err
		}, tree.ErrStructure, "tree: the root: a map[string]int where the tree has a list of 1"},
		{"not a pointer", func() error { return tree.BuildInto(model[int]{}, d, nums) }, tree.ErrStructure,
			"tree: the root: BuildInto needs a non-nil pointer, not tree_test.model[int]"},
		{"int field", func() error {
			_, _, err := tree.Flatten[id](struct {
				A id
				N int
			}{})
			return err
		}, tree.ErrNotTree, "tree: .N: a int is neither a leaf (tree_test.id) nor a container; tag the field `tree:\"-\"` to leave it out"},
		{"map key", func() error {
			_, _, err := tree.Flatten[id](map[float64]id{1: "a"})
			return err
		}, tree.ErrNotTree, "tree: the root: a map keyed by float64: tree maps are keyed by strings or integers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			require.ErrorIs(t, err, c.want)
			assert.EqualError(t, err, c.msg)
			var pe *tree.PathError
			assert.True(t, errors.As(err, &pe))
		})
	}
}

type cyclic struct {
	A    id
	Next *cyclic
}

func TestCycles(t *testing.T) {
	c := &cyclic{A: "a"}
	c.Next = &cyclic{A: "b", Next: c}
	_, _, err := tree.Flatten[id](c)
	require.ErrorIs(t, err, tree.ErrNotTree)
	assert.EqualError(t, err, "tree: .Next.Next: a cycle of pointers")

	m := map[string]any{}
	m["self"] = m
	_, _, err = tree.Flatten[id](m)
	require.ErrorIs(t, err, tree.ErrNotTree)
	assert.Contains(t, err.Error(), "deeper than 1000 levels")

	// The same pointer twice, side by side, is no cycle.
	shared := &cyclic{A: "s"}
	leaves, _, err := tree.Flatten[id]([]*cyclic{shared, shared})
	require.NoError(t, err)
	assert.Equal(t, []id{"s", "s"}, leaves)
}

func TestExpand(t *testing.T) {
	_, d, err := tree.Flatten[id](sample())
	require.NoError(t, err)
	type prefix struct {
		Embed  id
		Blocks id
		Heads  map[string]id
		ByID   id
		Pair   [2]id
		Extra  any
	}
	got, err := tree.Expand[id](prefix{Embed: "E", Blocks: "B", Heads: map[string]id{"cls": "C", "lm": "L"}, ByID: "I", Pair: [2]id{"P", "Q"}}, d)
	require.NoError(t, err)
	assert.Equal(t, []id{"E", "B", "B", "B", "B", "B", "C", "L", "I", "I", "I", "P", "Q"}, got)

	// One leaf for the whole tree.
	got, err = tree.Expand[id](id("all"), d)
	require.NoError(t, err)
	assert.Len(t, got, 13)

	// The full tree is its own prefix.
	got, err = tree.Expand[id](sample(), d)
	require.NoError(t, err)
	want, _, _ := tree.Flatten[id](sample())
	assert.Equal(t, want, got)

	_, err = tree.Expand[id](prefix{Embed: "E", Blocks: "B", Heads: map[string]id{"cls": "C"}, ByID: "I"}, d)
	require.ErrorIs(t, err, tree.ErrStructure)
	assert.EqualError(t, err, `tree: .Heads: the prefix has a map ["cls"] where the tree has a map ["cls", "lm"]`)

	_, err = tree.Expand[id](prefix{Embed: "E", Blocks: "B", ByID: "I"}, d)
	assert.EqualError(t, err, `tree: .Heads: the prefix has nothing for a map ["cls", "lm"]`)

	s := sample()
	s.Extra = []id{"x"}
	_, err = tree.Expand[id](s, d)
	assert.EqualError(t, err, `tree: .Extra: the prefix has a list of 1 where the tree has nothing`)

	s = sample()
	s.Embed = ""
	_, d2, _ := tree.Flatten[id](struct{ Embed []id }{Embed: []id{"a"}})
	_, err = tree.Expand[id](struct{ Embed struct{ A id } }{}, d2)
	assert.EqualError(t, err, `tree: .Embed: the prefix has a struct {A} where the tree has a list of 1`)
}

func TestChildren(t *testing.T) {
	_, d, err := tree.Flatten[id]([]any{id("a"), []id{"b", "c"}, nil})
	require.NoError(t, err)
	cs := d.Children()
	require.Len(t, cs, 3)
	assert.Equal(t, []string{"*", "[*, *]", "nil"}, []string{cs[0].String(), cs[1].String(), cs[2].String()})
	assert.Equal(t, []int{1, 2, 0}, []int{cs[0].NumLeaves(), cs[1].NumLeaves(), cs[2].NumLeaves()})
	assert.Empty(t, cs[0].Children())
	assert.Empty(t, tree.Def{}.Children())
}
