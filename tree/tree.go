package tree

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Errors. Every error of the package is a *PathError wrapping one of these.
var (
	// ErrNotTree: a value is neither a leaf nor a container (an int where a tree is expected,
	// a map whose keys are not strings or integers, a cycle of pointers).
	ErrNotTree = errors.New("not a tree")
	// ErrStructure: two trees differ in structure (a field, a length, a key, a leaf where a
	// container is), or a type cannot hold a tree's structure.
	ErrStructure = errors.New("tree structures differ")
	// ErrLeaves: the number of leaves given to Build is not the number the Def has.
	ErrLeaves = errors.New("wrong number of leaves")
)

// PathError is the error of a tree operation at one node: the node's Path ("" the root),
// what is wrong there, and the sentinel it wraps.
type PathError struct {
	Path   string
	Reason string
	Err    error
}

// Error reads "tree: <path>: <reason>".
func (e *PathError) Error() string {
	return "tree: " + ShowPath(e.Path) + ": " + e.Reason
}

// Unwrap returns the sentinel.
func (e *PathError) Unwrap() error { return e.Err }

// ShowPath returns a path as errors print it: the path, or "the root" for "".
func ShowPath(p string) string {
	if p == "" {
		return "the root"
	}
	return p
}

func failAt(path string, sentinel error, format string, args ...any) error {
	return &PathError{Path: path, Reason: fmt.Sprintf(format, args...), Err: sentinel}
}

type kind uint8

const (
	leafNode   kind = iota
	noneNode        // a nil pointer, interface, slice or map
	structNode      // children named by field
	listNode        // a slice or an array
	mapNode         // children named by key, sorted
)

// node is one node of a Def. Its fields are set once, when the tree is read.
type node struct {
	kind     kind
	names    []string        // struct: field names; map: key texts as paths show them
	keys     []reflect.Value // map: the keys, sorted
	children []*node
	leaves   int // leaves at or under the node
}

// Def is the structure of a tree: its containers, field names, lengths and keys, without
// the leaves. The zero Def is the structure of an empty tree.
type Def struct{ root *node }

// NumLeaves returns the number of leaves of a tree of structure d.
func (d Def) NumLeaves() int {
	if d.root == nil {
		return 0
	}
	return d.root.leaves
}

// Paths returns the path of each leaf, in leaf order.
func (d Def) Paths() []string {
	out := make([]string, 0, d.NumLeaves())
	d.root.walkPaths("", func(p string) { out = append(out, p) })
	return out
}

func (n *node) walkPaths(path string, visit func(string)) {
	if n == nil {
		return
	}
	switch n.kind {
	case leafNode:
		visit(path)
	case structNode, mapNode, listNode:
		for i, c := range n.children {
			c.walkPaths(path+n.step(i), visit)
		}
	}
}

// step returns the path step to child i.
func (n *node) step(i int) string {
	switch n.kind {
	case structNode:
		return "." + n.names[i]
	case mapNode:
		return "[" + n.names[i] + "]"
	}
	return "[" + strconv.Itoa(i) + "]"
}

// String returns the structure as text, leaves as '*': `{Embed: *, Blocks: [{Wq: *}]}`,
// maps as `map["a": *]`, empty subtrees as "nil". Equal Defs have equal texts.
func (d Def) String() string {
	var b strings.Builder
	d.root.write(&b)
	return b.String()
}

func (n *node) write(b *strings.Builder) {
	if n == nil {
		b.WriteString("nil")
		return
	}
	open, end := "", ""
	switch n.kind {
	case leafNode:
		b.WriteByte('*')
		return
	case noneNode:
		b.WriteString("nil")
		return
	case structNode:
		open, end = "{", "}"
	case listNode:
		open, end = "[", "]"
	case mapNode:
		open, end = "map[", "]"
	}
	b.WriteString(open)
	for i, c := range n.children {
		if i > 0 {
			b.WriteString(", ")
		}
		if n.kind != listNode {
			b.WriteString(n.names[i] + ": ")
		}
		c.write(b)
	}
	b.WriteString(end)
}

// Equal reports whether d and e are the same structure.
func (d Def) Equal(e Def) bool { return d.root.equal(e.root) }

func (n *node) equal(m *node) bool {
	if n == nil || m == nil {
		return n.isNone() && m.isNone()
	}
	if n.kind != m.kind || len(n.children) != len(m.children) || !slices.Equal(n.names, m.names) {
		return false
	}
	for i, c := range n.children {
		if !c.equal(m.children[i]) {
			return false
		}
	}
	return true
}

func (n *node) isNone() bool { return n == nil || n.kind == noneNode }

// Flatten returns the leaves of type L in v, in tree order, and v's structure. v may itself
// be an L (a tree of one leaf) or nil (an empty tree).
func Flatten[L any](v any) ([]L, Def, error) {
	r := reader{leaf: reflect.TypeFor[L](), onPath: map[uintptr]bool{}}
	var leaves []L
	r.emit = func(x reflect.Value) {
		var l L
		if x.IsValid() {
			l, _ = x.Interface().(L)
		}
		leaves = append(leaves, l)
	}
	if v == nil {
		return nil, Def{root: &node{kind: noneNode}}, nil
	}
	rv := reflect.ValueOf(v)
	root, err := r.read(rv, rv.Type(), "")
	if err != nil {
		return nil, Def{}, err
	}
	return leaves, Def{root: root}, nil
}

// reader reads one tree.
type reader struct {
	leaf   reflect.Type
	emit   func(reflect.Value)
	onPath map[uintptr]bool // pointers on the path from the root: a cycle is an error
	depth  int
}

// maxDepth bounds the nesting of a tree, so that a cycle that no pointer closes (a map that
// holds itself through an interface) is an error rather than a stack overflow.
const maxDepth = 1000

// read reads the tree in v, whose static type (the type declared where it sits) is t.
func (r *reader) read(v reflect.Value, t reflect.Type, path string) (*node, error) {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxDepth {
		return nil, failAt(path, ErrNotTree, "deeper than %d levels (a cycle through a map, a slice or an interface?)", maxDepth)
	}
	if t == r.leaf {
		r.emit(v)
		return &node{kind: leafNode, leaves: 1}, nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return &node{kind: noneNode}, nil
		}
		if t.Kind() == reflect.Pointer {
			p := v.Pointer()
			if r.onPath[p] {
				return nil, failAt(path, ErrNotTree, "a cycle of pointers")
			}
			r.onPath[p] = true
			defer delete(r.onPath, p)
		}
		return r.read(v.Elem(), v.Elem().Type(), path)
	case reflect.Struct:
		n := &node{kind: structNode}
		for _, f := range fields(t) {
			c, err := r.read(v.Field(f), t.Field(f).Type, path+"."+t.Field(f).Name)
			if err != nil {
				return nil, err
			}
			n.names = append(n.names, t.Field(f).Name)
			n.add(c)
		}
		return n, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && v.IsNil() {
			return &node{kind: noneNode}, nil
		}
		n := &node{kind: listNode}
		for i := range v.Len() {
			c, err := r.read(v.Index(i), t.Elem(), path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			n.add(c)
		}
		return n, nil
	case reflect.Map:
		if v.IsNil() {
			return &node{kind: noneNode}, nil
		}
		keys, texts, err := sortedKeys(v, t, path)
		if err != nil {
			return nil, err
		}
		n := &node{kind: mapNode, keys: keys}
		for i, k := range keys {
			c, err := r.read(v.MapIndex(k), t.Elem(), path+"["+texts[i]+"]")
			if err != nil {
				return nil, err
			}
			n.add(c)
		}
		n.names = texts
		return n, nil
	}
	return nil, failAt(path, ErrNotTree, "a %s is neither a leaf (%s) nor a container; tag the field `tree:\"-\"` to leave it out", t, r.leaf)
}

func (n *node) add(c *node) {
	n.children = append(n.children, c)
	n.leaves += c.leaves
}

// fields returns the indices of t's fields that are in a tree: exported, not tagged
// `tree:"-"`.
func fields(t reflect.Type) []int {
	var out []int
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && f.Tag.Get("tree") != "-" {
			out = append(out, i)
		}
	}
	return out
}

// sortedKeys returns a map's keys in order and their texts as paths show them: a string
// quoted as Go quotes it, an integer in decimal.
func sortedKeys(v reflect.Value, t reflect.Type, path string) ([]reflect.Value, []string, error) {
	keys := v.MapKeys()
	switch t.Key().Kind() {
	case reflect.String:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Int(), b.Int()) })
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Uint(), b.Uint()) })
	default:
		return nil, nil, failAt(path, ErrNotTree, "a map keyed by %s: tree maps are keyed by strings or integers", t.Key())
	}
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = keyText(k)
	}
	return keys, texts, nil
}

func keyText(k reflect.Value) string {
	switch k.Kind() {
	case reflect.String:
		return strconv.Quote(k.String())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return strconv.FormatInt(k.Int(), 10)
}

// Build returns a value of type T with structure d whose leaves are leaves, in order. T's
// containers must hold d's structure: a struct with the same tree fields in the same order,
// a slice (or an array of the same length) for a list, a map whose keys the Def's keys
// convert to; a nil subtree of d stays T's zero value there. Each leaf position of T must
// have a type that an L can be assigned to. Mismatches are ErrStructure errors naming the
// path; a wrong number of leaves is ErrLeaves.
func Build[T, L any](d Def, leaves []L) (T, error) {
	var out T
	if err := BuildInto(&out, d, leaves); err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// BuildInto is Build into the value dst points to, whose type is the tree's type only at run
// time (as json.Unmarshal fills a value): dst must be a non-nil pointer.
func BuildInto[L any](dst any, d Def, leaves []L) error {
	p := reflect.ValueOf(dst)
	if !p.IsValid() || p.Kind() != reflect.Pointer || p.IsNil() {
		return failAt("", ErrStructure, "BuildInto needs a non-nil pointer, not %T", dst)
	}
	if len(leaves) != d.NumLeaves() {
		return failAt("", ErrLeaves, "%d leaves for a tree of %d", len(leaves), d.NumLeaves())
	}
	w := writer{leaf: reflect.TypeFor[L]()}
	for _, l := range leaves {
		w.leaves = append(w.leaves, reflect.ValueOf(&l).Elem())
	}
	root := d.root
	if root == nil {
		root = &node{kind: noneNode}
	}
	return w.write(p.Elem(), root, "")
}

type writer struct {
	leaf   reflect.Type
	leaves []reflect.Value
	next   int
}

// write sets v (settable, of its static type) to the tree of n.
func (w *writer) write(v reflect.Value, n *node, path string) error {
	t := v.Type()
	if n.kind == noneNode {
		v.SetZero()
		return nil
	}
	if n.kind == leafNode && (w.leaf.AssignableTo(t) || t.Kind() != reflect.Pointer) {
		if !w.leaf.AssignableTo(t) {
			return failAt(path, ErrStructure, "a leaf (%s) where the type has a %s", w.leaf, t)
		}
		v.Set(w.leaves[w.next])
		w.next++
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		e := reflect.New(t.Elem())
		if err := w.write(e.Elem(), n, path); err != nil {
			return err
		}
		v.Set(e)
		return nil
	case reflect.Struct:
		if n.kind != structNode {
			return failAt(path, ErrStructure, "a %s where the tree has %s", t, n.describe())
		}
		fs := fields(t)
		for i, name := range n.names {
			if i >= len(fs) || t.Field(fs[i]).Name != name {
				return failAt(path, ErrStructure, "%s has no tree field %s at position %d (its tree fields: %s)", t, name, i, fieldNames(t, fs))
			}
		}
		if len(fs) != len(n.names) {
			return failAt(path, ErrStructure, "%s has tree fields %s, the tree %s", t, fieldNames(t, fs), strings.Join(n.names, ", "))
		}
		for i, f := range fs {
			if err := w.write(v.Field(f), n.children[i], path+"."+n.names[i]); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if n.kind != listNode {
			return failAt(path, ErrStructure, "a %s where the tree has %s", t, n.describe())
		}
		if t.Kind() == reflect.Array && t.Len() != len(n.children) {
			return failAt(path, ErrStructure, "a %s where the tree has a list of %d", t, len(n.children))
		}
		if t.Kind() == reflect.Slice {
			v.Set(reflect.MakeSlice(t, len(n.children), len(n.children)))
		}
		for i, c := range n.children {
			if err := w.write(v.Index(i), c, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.kind != mapNode {
			return failAt(path, ErrStructure, "a %s where the tree has %s", t, n.describe())
		}
		m := reflect.MakeMapWithSize(t, len(n.children))
		for i, c := range n.children {
			k := n.keys[i]
			if !k.Type().ConvertibleTo(t.Key()) || (k.Kind() == reflect.String) != (t.Key().Kind() == reflect.String) {
				return failAt(path, ErrStructure, "a %s cannot hold the key %s", t, n.names[i])
			}
			e := reflect.New(t.Elem()).Elem()
			if err := w.write(e, c, path+"["+n.names[i]+"]"); err != nil {
				return err
			}
			m.SetMapIndex(k.Convert(t.Key()), e)
		}
		v.Set(m)
		return nil
	}
	return failAt(path, ErrStructure, "a %s cannot hold %s", t, n.describe())
}

func (n *node) describe() string {
	switch n.kind {
	case structNode:
		return "a struct {" + strings.Join(n.names, ", ") + "}"
	case listNode:
		return fmt.Sprintf("a list of %d", len(n.children))
	case mapNode:
		return "a map [" + strings.Join(n.names, ", ") + "]"
	}
	return "a leaf"
}

func fieldNames(t reflect.Type, fs []int) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = t.Field(f).Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Expand reads prefix, a tree of L whose structure is a prefix of full (jax.jit's prefix
// trees of shardings): each leaf of prefix stands for every leaf of full in the subtree at
// its path. It returns one L per leaf of full, in full's order. Where prefix has a container
// full must have the same one (ErrStructure naming the path); an empty subtree of prefix
// (nil) covers only an empty subtree of full.
func Expand[L any](prefix any, full Def) ([]L, error) {
	leaves, pd, err := Flatten[L](prefix)
	if err != nil {
		return nil, err
	}
	out := make([]L, 0, full.NumLeaves())
	next := 0
	var walk func(p, f *node, path string) error
	walk = func(p, f *node, path string) error {
		switch {
		case p.kind == leafNode:
			l := leaves[next]
			next++
			for range f.leaves {
				out = append(out, l)
			}
			return nil
		case p.isNone() || f.isNone():
			if p.isNone() && f.leaves == 0 || f.isNone() && p.leaves == 0 {
				return nil
			}
			if p.isNone() {
				return failAt(path, ErrStructure, "the prefix has nothing for %s", f.describe())
			}
			return failAt(path, ErrStructure, "the prefix has %s where the tree has nothing", p.describe())
		case f.kind == leafNode:
			return failAt(path, ErrStructure, "the prefix has %s where the tree has a leaf", p.describe())
		case p.kind != f.kind || !slices.Equal(p.names, f.names) || len(p.children) != len(f.children):
			return failAt(path, ErrStructure, "the prefix has %s where the tree has %s", p.describe(), f.describe())
		}
		for i, c := range p.children {
			if err := walk(c, f.children[i], path+f.step(i)); err != nil {
				return err
			}
		}
		return nil
	}
	fr := full.root
	if fr == nil {
		fr = &node{kind: noneNode}
	}
	if err := walk(pd.root, fr, ""); err != nil {
		return nil, err
	}
	return out, nil
}

// Children returns the structures of the children of d's root, in order: a struct's fields,
// a list's elements, a map's values by sorted key. A leaf or an empty tree has none.
func (d Def) Children() []Def {
	if d.root == nil {
		return nil
	}
	out := make([]Def, len(d.root.children))
	for i, c := range d.root.children {
		out[i] = Def{root: c}
	}
	return out
}
