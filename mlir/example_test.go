package mlir_test

import (
	"errors"
	"fmt"

	"github.com/xlamesh/xlamesh/mlir"
)

func ExampleScanner() {
	s := mlir.NewScanner(`func.func @"jit_my-fn"(%x: tensor<2xf32> {a = "}"}) // {`)
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		fmt.Println(s.Depth(), t.Kind, t.Text)
	}
	fmt.Println(s.Err())
	// Output:
	// 0 Ident func.func
	// 0 AtIdent @"jit_my-fn"
	// 1 Punct (
	// 1 PercentIdent %x
	// 1 Punct :
	// 1 Ident tensor
	// 2 Punct <
	// 2 Int 2
	// 2 Ident xf32
	// 1 Punct >
	// 2 Punct {
	// 2 Ident a
	// 2 Punct =
	// 2 String "}"
	// 1 Punct }
	// 0 Punct )
	// <nil>
}

func ExampleCheck() {
	module := `module attributes {mhlo.num_partitions = 8 : i32} {
  func.func public @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @f(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}`
	err := mlir.Check(module, mlir.Partitions(8))
	fmt.Println(errors.Is(err, mlir.ErrRecursion))
	fmt.Println(err)
	err = mlir.Check(module, mlir.Partitions(1))
	fmt.Println(err)
	// Output:
	// true
	// mlir: 7:20: recursive call: @f: @f calls @f; XLA cannot compile recursion
	// mlir: 1:20: partition count mismatch: mhlo.num_partitions: the module is annotated for 8 partitions but is compiled for 1 device; pass a device assignment of 8 devices
}

func ExampleQuote() {
	fmt.Println(mlir.Quote("a\"b\\c\n"))
	v, _ := mlir.Unquote(`"a\22b\\c\0A"`)
	fmt.Printf("%q\n", v)
	fmt.Println(mlir.Symbol("main"), mlir.Symbol("jit_my-fn"))
	// Output:
	// "a\22b\\c\0A"
	// "a\"b\\c\n"
	// @main @"jit_my-fn"
}

func ExampleCheckName() {
	for _, name := range []string{"data", "a b-c", "é", `a\b`} {
		fmt.Println(mlir.CheckName("axis", name))
	}
	// Output:
	// <nil>
	// <nil>
	// mlir: unsupported name: axis "\C3\A9": byte 0 is 0xC3, outside ASCII; names are printable ASCII other than '\'
	// mlir: unsupported name: axis "a\\b": byte 1 is a backslash; names are printable ASCII other than '\'
}
