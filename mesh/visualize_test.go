package mesh

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestVisualize(t *testing.T) {
	blank := "│           │           │\n"
	tests := []struct {
		name  string
		sizes []int
		names []string
		spec  PartitionSpec
		shape []int
		want  string
		err   error
	}{
		// jax_semantics.md §8: (8,8) on a 4x2 mesh with P(None,'y'): 11-wide
		// columns, 4 blank lines above and below the labels.
		{name: "none_y", sizes: []int{4, 2}, names: []string{"x", "y"}, spec: P(nil, "y"), shape: []int{8, 8},
			want: "┌───────────┬───────────┐\n" + strings.Repeat(blank, 4) +
				"│CPU 0,2,4,6│CPU 1,3,5,7│\n" + strings.Repeat(blank, 4) +
				"└───────────┴───────────┘\n"},
		// 1-D, 8 chunks: width int(1/8*1*2.5)=0 clamps to 9; label "CPU 0": (lp,r)=divmod(9-5-2,2)=(1,0).
		{name: "1d 8 chunks", sizes: []int{8}, names: []string{"x"}, spec: P("x"), shape: []int{8},
			want: "┌───────┬───────┬───────┬───────┬───────┬───────┬───────┬───────┐\n" +
				"│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │\n" +
				"└───────┴───────┴───────┴───────┴───────┴───────┴───────┴───────┘\n"},
		// 1-D fully replicated (8,): base width int(10/8)=1, width int(1*1*2.5)=2 -> 9.
		{name: "1d replicated", sizes: []int{8}, names: []string{"x"}, spec: P(), shape: []int{8},
			want: "┌───────────────────┐\n│CPU 0,1,2,3,4,5,6,7│\n└───────────────────┘\n"},
		// 2-D P('x','y') on 2x2, shape (4,4): h=int(0.5*10)=5 -> tp,bp = 1,2; w=int(0.5*10*2.5)=12 -> lp,rp=2,3.
		{name: "2x2 x_y", sizes: []int{2, 2}, names: []string{"x", "y"}, spec: P("x", "y"), shape: []int{4, 4},
			want: "┌──────────┬──────────┐\n" +
				"│          │          │\n" +
				"│  CPU 0   │  CPU 1   │\n" +
				"│          │          │\n" +
				"│          │          │\n" +
				"├──────────┼──────────┤\n" +
				"│          │          │\n" +
				"│  CPU 2   │  CPU 3   │\n" +
				"│          │          │\n" +
				"│          │          │\n" +
				"└──────────┴──────────┘\n"},
		// JAX 0.8.1 oracle visualize/2d_2x4_none_y_label_cut: 4 columns of 23 are
		// shrunk to 19, 19, 19, 18 (rich's ratio_reduce); inside the 8+8 padding
		// a label gets 3 or 2 columns, wraps between words and is cut with "…".
		{name: "label cut", sizes: []int{2, 4}, names: []string{"x", "y"}, spec: P(nil, "y"), shape: []int{16, 64},
			want: "┌───────────────────┬───────────────────┬───────────────────┬──────────────────┐\n" +
				strings.Repeat("│                   │                   │                   │                  │\n", 4) +
				"│        CPU        │        CPU        │        CPU        │        C…        │\n" +
				"│        0,4        │        1,5        │        2,6        │        3…        │\n" +
				strings.Repeat("│                   │                   │                   │                  │\n", 4) +
				"└───────────────────┴───────────────────┴───────────────────┴──────────────────┘\n"},
		// JAX 0.8.1 oracle visualize/2d_1x8_none_y_label_gone: the padding (8 each
		// side) leaves a label no room, so it has no line: the row is its 4+4
		// lines of padding, not 4+1+4.
		{name: "label gone", sizes: []int{1, 8}, names: []string{"x", "y"}, spec: P(nil, "y"), shape: []int{3, 64},
			want: "┌─────────┬─────────┬─────────┬─────────┬─────────┬─────────┬────────┬─────────┐\n" +
				strings.Repeat("│         │         │         │         │         │         │        │         │\n", 8) +
				"└─────────┴─────────┴─────────┴─────────┴─────────┴─────────┴────────┴─────────┘\n"},
		{name: "rank 3", sizes: []int{2}, names: []string{"x"}, spec: P(), shape: []int{2, 2, 2}, err: ErrUnsupported},
		{name: "scalar", sizes: []int{2}, names: []string{"x"}, spec: P(), shape: []int{}, err: ErrUnsupported},
		{name: "indivisible", sizes: []int{2}, names: []string{"x"}, spec: P("x"), shape: []int{3}, err: ErrIndivisible},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMesh(t, nil, tc.sizes, tc.names...)
			var b strings.Builder
			err := Visualize(&b, MustNamedSharding(m, tc.spec), tc.shape)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
	as, _ := NewAbstractSharding(MustAbstract([]int{2}, []string{"x"}), P("x"))
	if err := Visualize(&strings.Builder{}, as, []int{4}); !errors.Is(err, ErrNoDevices) {
		t.Errorf("abstract err = %v", err)
	}
}

// TestCutLines checks the wrapping of rich's Text.wrap with overflow
// "ellipsis", which a table column uses: break between words, keep a long
// word whole, then cut every line to the width with "…". The wanted lines are
// what rich 14.2.0 (JAX 0.8.1's oracle venv) returns for
// Text(text).wrap(console, width, justify="left", overflow="ellipsis").
func TestCutLines(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"CPU 0,4", 7, []string{"CPU 0,4"}},
		{"CPU 0,4", 9, []string{"CPU 0,4  "}},
		{"CPU 0,4", 3, []string{"CPU", "0,4"}},
		{"CPU 3,7", 2, []string{"C…", "3…"}},
		{"CPU 3,7", 1, []string{"…", "…"}},
		{"CPU 0,1,2,3", 6, []string{"CPU   ", "0,1,2…"}},
		{"CPU 0 1", 5, []string{"CPU 0", "1    "}},
	}
	for _, tc := range tests {
		got := cutLines(tc.text, tc.width)
		if !slices.Equal(got, tc.want) {
			t.Errorf("cutLines(%q, %d) = %q, want %q", tc.text, tc.width, got, tc.want)
		}
	}
}

// TestVisualizePodScale: JAX 0.8.1's output at 512 and 8,192 devices (issue 31), made with
// XLA_FLAGS=--xla_force_host_platform_device_count=N and jax.debug.visualize_sharding(shape,
// NamedSharding(mesh, spec), use_color=False). A 1-D array over N devices is a table of N
// columns of width 0, which rich's console crops to its 80 columns: 3 lines of 80. A (1024, 8)
// array over a (1024, 8) mesh is 2,049 lines of 73 columns, uncropped
// (testdata/visualize_8192_1024x8.txt).
func TestVisualizePodScale(t *testing.T) {
	line := func(l, mid string) string { return l + strings.Repeat(mid, 79) + "\n" }
	cropped := line("┌", "┬") + line("│", "│") + line("└", "┴")
	golden, err := os.ReadFile("testdata/visualize_8192_1024x8.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		sizes []int
		names []string
		spec  PartitionSpec
		shape []int
		want  string
	}{
		{"1d 512", []int{512}, []string{"x"}, P("x"), []int{512}, cropped},
		{"1d 8192", []int{8192}, []string{"x"}, P("x"), []int{8192}, cropped},
		{"2d 1024x8", []int{1024, 8}, []string{"x", "y"}, P("x", "y"), []int{1024, 8}, string(golden)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 1
			for _, k := range tc.sizes {
				n *= k
			}
			m, err := New(SimDevices(n), tc.sizes, tc.names...)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := Visualize(&b, MustNamedSharding(m, tc.spec), tc.shape); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tc.want {
				gl, wl := strings.Split(got, "\n"), strings.Split(tc.want, "\n")
				t.Fatalf("got %d lines (first %q), want %d (first %q)", len(gl), gl[0], len(wl), wl[0])
			}
		})
	}
}
