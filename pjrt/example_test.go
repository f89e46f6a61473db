package pjrt_test

import (
	"fmt"

	"github.com/xlamesh/xlamesh/pjrt"
)

// Open the pinned CPU plugin with 4 devices and look at what the client reports.
func ExampleOpen() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(4))
	if err != nil {
		fmt.Println(err) // says how to install the plugin
		return
	}
	defer c.Close()
	major, minor := c.Plugin().APIVersion()
	fmt.Printf("%s, PJRT API 0.%d or newer: %v\n", c, pjrt.MinAPIMinor, major == 0 && minor >= pjrt.MinAPIMinor)
	for _, d := range c.Devices() {
		fmt.Println(d.ID(), d.Kind(), d)
	}
	// Output:
	// Client(cpu, 4 devices), PJRT API 0.81 or newer: true
	// 0 cpu CpuDevice(id=0)
	// 1 cpu CpuDevice(id=1)
	// 2 cpu CpuDevice(id=2)
	// 3 cpu CpuDevice(id=3)
}

// Compile a Shardy-annotated module for two devices, give each device its half of the input,
// and run it.
func ExampleClient_Compile() {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	const module = `module @jit_inc attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %one : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}`
	exe, err := c.Compile(module, pjrt.CompileOptions{DeviceAssignment: []int{1, 0}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer exe.Close()
	var args [][]*pjrt.Buffer
	for i, d := range exe.Devices() { // device 1 holds x[0:2], device 0 holds x[2:4]
		b, _ := c.BufferFromHost(d, []float32{float32(2 * i), float32(2*i + 1)}, []int{2})
		defer b.Close()
		args = append(args, []*pjrt.Buffer{b})
	}
	outs, err := exe.Execute(args)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, out := range outs {
		v, _ := out[0].ToHost()
		fmt.Println(exe.Devices()[i], v)
		out[0].Close()
	}
	// Output:
	// CpuDevice(id=1) [1 2]
	// CpuDevice(id=0) [3 4]
}
