package mlp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/examples/mlp"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestStepCollectives shows what the partitioner makes of the data+model-parallel SGD step:
// the Go program names no collective, and the compiled one has exactly two all-reduces, in
// Shardy and GSPMD mode alike:
//
//   - over "model" (groups [[0 1 2 3] [4 5 6 7]]): the partial sums of the row-parallel
//     h W2, f32[8,4] per device (8 rows of the batch);
//   - over "data" (groups [[0 4] [1 5] [2 6] [3 7]]): the loss and the gradients of w1, b1,
//     w2 and b2, each device's block of them, combined by XLA into one all-reduce: the
//     data-parallel gradient all-reduce, produced by the partitioner from the shardings.
//     (The newer XLA of the second CPU plugin writes this one over all 8 devices instead.)
func TestStepCollectives(t *testing.T) {
	c := pjrttest.Client(t)
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	if err != nil {
		t.Fatal(err)
	}
	var args []jit.ArgType
	for i, d := range mlp.Small.Shapes() {
		args = append(args, jit.ArgType{Shape: lower.NewShape(dtypes.Float32, d...), Spec: mlp.Specs()[i]})
	}
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		t.Run(p.String(), func(t *testing.T) {
			step := jit.New("sgd_step", mlp.SGD(0.1), append(mlp.StepOptions(), jit.WithPartitioner(p))...)
			defer step.Close()
			prog, err := step.Lower(m.Abstract(), args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range []string{"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute"} {
				if strings.Contains(prog.Text(), op) {
					t.Errorf("the lowered step names %s; the partitioner should make every collective", op)
				}
			}
			exe, err := c.Compile(prog.Text(), pjrt.CompileOptions{DeviceAssignment: m.DeviceIDs(), Partitioner: prog.Partitioner()})
			if err != nil {
				t.Fatal(err)
			}
			defer exe.Close()
			cs, err := exe.Collectives()
			if err != nil {
				t.Fatal(err)
			}
			overModel := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
			overData := [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}
			overAll := [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}
			var model, data []int // element counts of the operands of each kind
			for _, x := range cs {
				t.Log(x)
				if x.Kind != "all-reduce" {
					t.Errorf("unexpected collective %v", x)
					continue
				}
				for _, s := range x.Operands {
					n := 1
					for _, d := range s.Dims() {
						n *= d
					}
					switch {
					case slices.EqualFunc(x.ReplicaGroups, overModel, slices.Equal[[]int]):
						model = append(model, n)
					case slices.EqualFunc(x.ReplicaGroups, overData, slices.Equal[[]int]),
						slices.EqualFunc(x.ReplicaGroups, overAll, slices.Equal[[]int]):
						data = append(data, n)
					default:
						t.Errorf("all-reduce over unexpected groups: %v", x)
					}
				}
			}
			slices.Sort(model)
			slices.Sort(data)
			// h W2's partial sums: 8 rows x 4 outputs.
			if !slices.Equal(model, []int{32}) {
				t.Errorf("all-reduce over model: element counts %v, want [32]", model)
			}
			// The loss (1), b2 (4), b1's block (8), w2's block (8x4), w1's block (8x8).
			if !slices.Equal(data, []int{1, 4, 8, 32, 64}) {
				t.Errorf("all-reduce over data: element counts %v, want [1 4 8 32 64]", data)
			}
		})
	}
}
