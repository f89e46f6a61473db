package mesh

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// abcSharding is the mesh of JAX's local_to_global_shape docstring: {'a': 2, 'b': 2, 'c': 2},
// two devices per process (process = position / 2), with the given spec.
func abcSharding(t *testing.T, spec PartitionSpec) NamedSharding {
	t.Helper()
	m, err := New(procDevs(0, 0, 1, 1, 2, 2, 3, 3), []int{2, 2, 2}, "a", "b", "c")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewNamedSharding(m, spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLocalToGlobalShape: the examples of JAX's local_to_global_shape docstring.
func TestLocalToGlobalShape(t *testing.T) {
	tests := []struct {
		spec PartitionSpec
		want []int // for local shape (4, 6)
	}{
		{P(), []int{4, 6}},
		{P(Axes("a", "b", "c"), nil), []int{16, 6}},
		{P(Axes("a", "b"), nil), []int{16, 6}},
		{P(nil, Axes("a", "c")), []int{4, 12}},
		{P(Axes("a", "c"), "b"), []int{8, 12}},
	}
	for _, tt := range tests {
		s := abcSharding(t, tt.spec)
		for p := range 4 {
			got, err := s.LocalToGlobalShape([]int{4, 6}, p)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%s, process %d: got %v, %v; want %v", tt.spec, p, got, err, tt.want)
			}
		}
	}
}

// TestNonUniform: devices permuted across processes so that no process-local size tells the
// global one (the docstring's "randomly permuted" case).
func TestNonUniform(t *testing.T) {
	m, err := New(procDevs(0, 0, 1, 2, 1, 2, 3, 3), []int{2, 2, 2}, "a", "b", "c")
	if err != nil {
		t.Fatal(err)
	}
	s := MustNamedSharding(m, P("a", Axes("b", "c")))
	_, err = s.LocalToGlobalShape([]int{2, 4}, 0)
	if !errors.Is(err, ErrNonUniform) || !strings.Contains(err.Error(), "Partially computed global_shape=(None, None)") {
		t.Errorf("got %v, want ErrNonUniform with (None, None)", err)
	}
	_, _, err = s.ProcessIndexAndCount(0, 2, 0)
	if !errors.Is(err, ErrNonUniform) || !strings.Contains(err.Error(), "dim=0") {
		t.Errorf("ProcessIndexAndCount: got %v", err)
	}
	// An explicit global shape still works: each process loads the blocks it addresses.
	ls, err := s.ProcessLocalShards([]int{4, 8}, []int{2, 4}, 0)
	if err != nil || len(ls) != 2 {
		t.Fatalf("ProcessLocalShards: %v, %v", ls, err)
	}
}

// TestProcessLocalShards: a 2-process 4x2 mesh split by rows; each process loads 4 rows and
// each device gets its row block at its place in them.
func TestProcessLocalShards(t *testing.T) {
	m, err := New(procDevs(0, 0, 0, 0, 1, 1, 1, 1), []int{4, 2}, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	s := MustNamedSharding(m, P("x", "y"))
	local, err := s.ProcessLocalShape([]int{8, 4}, 1)
	if err != nil || !slices.Equal(local, []int{4, 4}) {
		t.Fatalf("ProcessLocalShape: %v, %v", local, err)
	}
	ls, err := s.ProcessLocalShards([]int{8, 4}, local, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sh := range ls {
		got = append(got, sh.Index.String()+"<-"+sh.Local.String())
	}
	want := []string{"[4:6, 0:2]<-[0:2, 0:2]", "[4:6, 2:4]<-[0:2, 2:4]", "[6:8, 0:2]<-[2:4, 0:2]", "[6:8, 2:4]<-[2:4, 2:4]"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The whole global array as local data: each device takes its global index.
	ls, err = s.ProcessLocalShards([]int{8, 4}, []int{8, 4}, 1)
	if err != nil || !ls[0].Local.Equal(ls[0].Index) {
		t.Errorf("full local data: %v, %v", ls, err)
	}
	idx, count, err := s.ProcessIndexAndCount(0, 2, 1)
	if err != nil || idx != 1 || count != 2 {
		t.Errorf("ProcessIndexAndCount(0): %d, %d, %v; want 1, 2", idx, count, err)
	}
	idx, count, err = s.ProcessIndexAndCount(1, 2, 1)
	if err != nil || idx != 0 || count != 1 {
		t.Errorf("ProcessIndexAndCount(1): %d, %d, %v; want 0, 1", idx, count, err)
	}
}

func TestProcessErrors(t *testing.T) {
	m, err := New(procDevs(0, 0, 1, 1), []int{4}, "x")
	if err != nil {
		t.Fatal(err)
	}
	s := MustNamedSharding(m, P("x"))
	abs, err := NewAbstractSharding(m.Abstract(), P("x"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		is   error
		msg  string
	}{
		{"local shape fits nothing", second(s.ProcessLocalShards([]int{8}, []int{3}, 0)), ErrProcessData,
			"In dimension 0, the process data has 3 elements. Process addresses 4 elements and global_shape=(8,)"},
		{"rank mismatch", second(s.ProcessLocalShards([]int{8}, []int{4, 1}, 0)), ErrShape, "differ in rank"},
		{"no devices in the process", second(s.ProcessLocalShape([]int{8}, 7)), ErrNoDevices, "process 7 holds no shard"},
		{"indivisible", second(s.ProcessLocalShape([]int{6}, 0)), ErrIndivisible, ""},
		{"dim out of range", third(s.ProcessIndexAndCount(1, 1, 0)), ErrShape, "dimension 1 of an array of rank 1"},
		{"abstract", third(abs.ProcessIndexAndCount(0, 1, 0)), ErrNoDevices, ""},
		{"process without devices", third(s.ProcessIndexAndCount(0, 1, 5)), ErrNoDevices, "process 5 has no device"},
		{"negative local dim", second(s.LocalToGlobalShape([]int{-1}, 0)), ErrShape, "negative"},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.is) || !strings.Contains(errString(tt.err), tt.msg) {
			t.Errorf("%s: got %v, want %v containing %q", tt.name, tt.err, tt.is, tt.msg)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
