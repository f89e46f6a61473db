package shardy_test

import (
	"errors"
	"fmt"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shardy"
)

func ExampleFromNamedSharding() {
	a, _ := mesh.NewAbstract([]int{4, 2}, []string{"x", "y"})
	ns, _ := mesh.NewAbstractSharding(a, mesh.P("x", nil, "y"))
	s, err := shardy.FromNamedSharding(ns, "mesh", 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(shardy.NewMeshOp("mesh", shardy.MeshFromAbstract(a, nil)))
	fmt.Println(s)
	fmt.Println(s.Stripped())
	// Output:
	// sdy.mesh @mesh = <["x"=4, "y"=2]>
	// #sdy.sharding<@mesh, [{"x"}, {}, {"y"}, {}]>
	// <@mesh, [{"x"}, {}, {"y"}, {}]>
}

func ExampleMeshFromAbstract() {
	a, _ := mesh.NewAbstract([]int{2, 4}, []string{"x", "y"})
	fmt.Println(shardy.MeshFromAbstract(a, []int{0, 1, 2, 3, 4, 5, 6, 7})) // iota: not printed
	fmt.Println(shardy.MeshFromAbstract(a, []int{0, 2, 4, 6, 1, 3, 5, 7}))
	fmt.Println(shardy.MaximalMesh(3))
	fmt.Println(shardy.EmptyMesh())
	// Output:
	// <["x"=2, "y"=4]>
	// <["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>
	// <[], device_ids=[3]>
	// <[]>
}

func ExampleNewTensorSharding() {
	s := shardy.NewTensorSharding("mesh",
		shardy.Closed(shardy.Axis("x")).WithPriority(0),
		shardy.Open(),
	).WithReplicated(shardy.Axis("y"))
	fmt.Println(s)
	sub := shardy.NewTensorSharding("mesh", shardy.Closed(shardy.SubAxis("y", 1, 2)), shardy.Closed())
	fmt.Println(sub)
	fmt.Println(shardy.NewTensorShardingPerValue(s, sub))
	// Output:
	// #sdy.sharding<@mesh, [{"x"}p0, {?}], replicated={"y"}>
	// #sdy.sharding<@mesh, [{"y":(1)2}, {}]>
	// #sdy.sharding_per_value<[<@mesh, [{"x"}p0, {?}], replicated={"y"}>, <@mesh, [{"y":(1)2}, {}]>]>
}

func ExampleParseTensorSharding() {
	s, err := shardy.ParseTensorSharding(`#sdy.sharding<@mesh, [{"x", "y"}, {?}p1]>`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, d := range s.Dims() {
		p, ok := d.Priority()
		fmt.Println(i, d.Axes(), d.IsOpen(), p, ok)
	}
	_, err = shardy.ParseTensorSharding(`#sdy.sharding<@mesh, [{"x" "y"}]>`)
	var pe *shardy.ParseError
	fmt.Println(err, errors.As(err, &pe) && pe.Offset == 27)
	// Output:
	// 0 ["x" "y"] false 0 false
	// 1 [] true 1 true
	// shardy: offset 27: expected ',' or '}', found "y" true
}

func ExampleTensorSharding_ValidateIn() {
	ops, _ := shardy.ParseMeshOps(`sdy.mesh @mesh = <["x"=4, "y"=2]>`)
	for _, text := range []string{
		`<@mesh, [{"x"}, {}]>`,
		`<@mesh, [{"x"}, {"z"}]>`,
		`<@mesh, [{"x"}, {"x"}]>`,
		`<@mesh, [{}], replicated={"y", "x"}>`,
		`<@other, [{}]>`,
	} {
		s, _ := shardy.ParseTensorSharding(text)
		fmt.Println(s.ValidateIn(ops, 2))
	}
	// Output:
	// <nil>
	// shardy: dim 1: unknown axis name: "z"
	// shardy: dim 1: duplicate axis ref: "x"
	// shardy: sharding doesn't match tensor rank: 1 != 2
	// shardy: unknown mesh: @other
}

func ExampleGSPMD() {
	a, _ := mesh.NewAbstract([]int{4, 2}, []string{"x", "y"})
	for _, spec := range []mesh.PartitionSpec{
		mesh.P("x", "y"), mesh.P("y", "x"), mesh.P("x"), mesh.P("y"), mesh.P(),
	} {
		ns, _ := mesh.NewAbstractSharding(a, spec)
		text, _ := shardy.GSPMD(ns, 2)
		fmt.Println(text)
	}
	// Output:
	// {devices=[4,2]<=[8]}
	// {devices=[2,4]<=[4,2]T(1,0)}
	// {devices=[4,1,2]<=[8] last_tile_dim_replicate}
	// {devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}
	// {replicated}
}

func ExampleTensorSharding_GSPMD() {
	m := shardy.MustParseMesh(`<["x"=4, "y"=2], device_ids=[0, 1, 3, 2, 6, 7, 5, 4]>`)
	s := shardy.MustParseTensorSharding(`#sdy.sharding<@mesh, [{"x"}, {"y"}]>`)
	text, _ := s.GSPMD(m)
	fmt.Println(text)
	text, _ = shardy.MustParseTensorSharding(`<@maximal_mesh_0, []>`).GSPMD(shardy.MaximalMesh(0))
	fmt.Println(text)
	// Output:
	// {devices=[4,2]0,1,3,2,6,7,5,4}
	// {maximal device=0}
}
