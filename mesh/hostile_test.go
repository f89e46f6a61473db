package mesh

import (
	"errors"
	"strings"
	"testing"
)

// TestAxisNamePolicy: axis names are printable ASCII other than the backslash; every other
// byte is refused with an *AxisNameError naming the axis and the byte.
func TestAxisNamePolicy(t *testing.T) {
	accepted := []string{"x", "data", "X_1", "1", "a-b", "a.b", "a b", " ", `a"b`, `"`, "a'b", "{}[]<>()", "@#%$", "a,b=c:d;e", "~`!?*+|^&/"}
	for _, n := range accepted {
		if _, err := NewAbstract([]int{2}, []string{n}); err != nil {
			t.Errorf("NewAbstract(%q): %v", n, err)
		}
	}
	refused := []struct {
		name   string
		at     int
		reason string
	}{
		{`a\b`, 1, "a backslash"},
		{"a\x00", 1, "a NUL byte"},
		{"a\nb", 1, "the control byte 0x0A"},
		{"\t", 0, "the control byte 0x09"},
		{"x\x7f", 1, "the control byte 0x7F"},
		{"é", 0, "the byte 0xC3, outside ASCII"},
		{"データ", 0, "the byte 0xE3, outside ASCII"},
		{"ok\xff", 2, "the byte 0xFF, outside ASCII"},
	}
	for _, tc := range refused {
		_, err := NewAbstract([]int{2, 2}, []string{"y", tc.name})
		var ne *AxisNameError
		if !errors.As(err, &ne) || !errors.Is(err, ErrAxisName) || !errors.Is(err, ErrInvalidMesh) {
			t.Fatalf("NewAbstract(%q) = %v, want an *AxisNameError", tc.name, err)
		}
		if ne.Axis != 1 || ne.Name != tc.name || ne.Byte != tc.at || ne.Reason != tc.reason {
			t.Errorf("NewAbstract(%q): %+v", tc.name, *ne)
		}
		if !strings.Contains(err.Error(), "mesh: invalid mesh: axis 1 name ") {
			t.Errorf("message: %v", err)
		}
		if _, err := New(SimDevices(4), []int{2, 2}, "y", tc.name); !errors.Is(err, ErrAxisName) {
			t.Errorf("New(%q) = %v, want ErrAxisName", tc.name, err)
		}
	}
}

// TestMeshSizeOverflow: axis sizes whose product overflows or exceeds MaxSize are errors,
// never a wrapped size.
func TestMeshSizeOverflow(t *testing.T) {
	for _, sizes := range [][]int{{1 << 40, 1 << 40}, {1<<61 + 1, 8}, {1 << 31}, {1 << 16, 1 << 16}, {3, 1 << 62, 4}} {
		names := []string{"a", "b", "c"}[:len(sizes)]
		a, err := NewAbstract(sizes, names)
		if !errors.Is(err, ErrMeshSize) || !errors.Is(err, ErrInvalidMesh) {
			t.Errorf("NewAbstract(%v) = %v (size %d), want ErrMeshSize", sizes, err, a.Size())
		}
	}
	// (2^61+1) * 8 wraps to 8 in int arithmetic: it must not pass for 8 devices.
	if _, err := New(SimDevices(8), []int{1<<61 + 1, 8}, "x", "y"); !errors.Is(err, ErrMeshSize) {
		t.Errorf("New(8 devices, {2^61+1, 8}) = %v, want ErrMeshSize", err)
	}
	if _, err := Create(SimDevices(8), []int{1<<61 + 1, 8}, []string{"x", "y"}); !errors.Is(err, ErrMeshSize) {
		t.Errorf("Create = %v, want ErrMeshSize", err)
	}
	if _, err := CreateHybrid(SimDevices(8), []int{1 << 62, 2}, []int{4, 1}, []string{"x", "y"}, ProcessIsGranule()); !errors.Is(err, ErrMeshSize) {
		t.Errorf("CreateHybrid = %v, want ErrMeshSize", err)
	}
	if a, err := NewAbstract([]int{MaxSize}, []string{"x"}); err != nil || a.Size() != MaxSize {
		t.Errorf("NewAbstract(MaxSize) = %v, %v", a, err)
	}
}

// TestVisualizeHostile: a nil writer or an absurd size is an error, not a panic or a
// billion-line table.
func TestVisualizeHostile(t *testing.T) {
	m := MustNew(SimDevices(8), []int{4, 2}, "x", "y")
	s := MustNamedSharding(m, P("x", "y"))
	if err := Visualize(nil, s, []int{8, 4}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Visualize(nil) = %v", err)
	}
	var b strings.Builder
	if err := Visualize(&b, NamedSharding{}, []int{8, 4}); err == nil {
		t.Error("Visualize of the zero sharding: no error")
	}
	for _, c := range []VisualizeConfig{{Scale: 1e12}, {Scale: -1}, {MinWidth: 1 << 40}, {MaxWidth: -3}} {
		if err := c.Fprint(&b, s, []int{8, 4}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
