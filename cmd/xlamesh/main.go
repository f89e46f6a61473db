// Command xlamesh is the command-line face of the xlamesh library.
//
//	xlamesh devices [-plugin P] [-devices N]
//	    open a PJRT client and list its devices with their attributes
//	xlamesh visualize -mesh x=4,y=2 -spec x,y -shape 8,8 [-devices N]
//	    print jax.debug.visualize_array_sharding's table for a sharding on the CPU devices
//	xlamesh install-plugin
//	    install the pinned CPU PJRT plugin (runs tools/setup/install-plugin.sh of this checkout)
//	xlamesh bench [-n 1024] [-iters 20] [-devices N]
//	    time a sharded matmul on every 2-D mesh shape of the devices
//
// The plugin is found as pjrt.Open finds it: $XLAMESH_PJRT_PLUGIN, else the pinned CPU plugin.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

const usage = `usage: xlamesh <command> [flags]

commands:
  devices         list the devices of a PJRT client
  visualize       print the sharding table of an array on a mesh
  install-plugin  install the pinned CPU PJRT plugin
  bench           time a sharded matmul over the mesh shapes of the devices

Run 'xlamesh <command> -h' for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "devices":
		err = devices(os.Stdout, args)
	case "visualize":
		err = visualize(os.Stdout, args)
	case "install-plugin":
		err = installPlugin(args)
	case "bench":
		err = bench(os.Stdout, args)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		err = fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xlamesh:", err)
		os.Exit(1)
	}
}

// clientFlags are the flags every command that opens a client shares.
type clientFlags struct {
	plugin  string
	devices int
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.plugin, "plugin", "", "PJRT plugin name or path (default: $XLAMESH_PJRT_PLUGIN or the pinned CPU plugin)")
	fs.IntVar(&c.devices, "devices", 0, fmt.Sprintf("number of CPU devices of a CPU plugin (0: %d for the pinned CPU plugin, the plugin's own default otherwise)", pjrt.DefaultCPUDeviceCount))
}

func (c *clientFlags) open() (*pjrt.Client, error) {
	var opts []pjrt.Option
	if c.devices != 0 {
		opts = append(opts, pjrt.WithCPUDeviceCount(c.devices))
	}
	if c.plugin != "" {
		opts = append(opts, pjrt.WithPlugin(c.plugin))
	}
	return pjrt.Open(opts...)
}

func devices(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	major, minor := c.Plugin().APIVersion()
	fmt.Fprintf(w, "plugin   %s\nAPI      %d.%d\nplatform %s %s\nprocess  %d\n", c.Plugin().Path(), major, minor, c.Platform(), c.PlatformVersion(), c.ProcessIndex())
	for k, v := range c.Plugin().Attributes() {
		fmt.Fprintf(w, "attr     %s = %v\n", k, v)
	}
	fmt.Fprintf(w, "%-4s %-8s %-7s %-8s %-11s %-8s %s\n", "id", "kind", "process", "local_hw", "addressable", "coords", "description")
	for _, d := range c.Devices() {
		fmt.Fprintf(w, "%-4d %-8s %-7d %-8d %-11v %-8v %s\n", d.ID(), d.Kind(), d.ProcessIndex(), d.LocalHardwareID(), d.IsAddressable(), d.Coords(), d)
	}
	return nil
}

// parseMesh reads "x=4,y=2" into sizes and names.
func parseMesh(s string) ([]int, []string, error) {
	var sizes []int
	var names []string
	for _, part := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(size)
		if !ok || err != nil {
			return nil, nil, fmt.Errorf("-mesh %q: want name=size,... (e.g. x=4,y=2)", s)
		}
		names, sizes = append(names, name), append(sizes, n)
	}
	return sizes, names, nil
}

// parseSpec reads "x,y" / "x,_" / "(x y),_" into a PartitionSpec: "_" or "" is None, "?" is
// Unconstrained, "(a b)" is a tuple of axes.
func parseSpec(s string) mesh.PartitionSpec {
	if strings.TrimSpace(s) == "" {
		return mesh.P()
	}
	var entries []any
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "_" || part == "" || part == "None":
			entries = append(entries, nil)
		case part == "?":
			entries = append(entries, mesh.Unconstrained)
		case strings.HasPrefix(part, "(") && strings.HasSuffix(part, ")"):
			entries = append(entries, mesh.Axes(strings.Fields(part[1:len(part)-1])...))
		default:
			entries = append(entries, part)
		}
	}
	return mesh.P(entries...)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a comma-separated list of integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func visualize(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("visualize", flag.ContinueOnError)
	meshFlag := fs.String("mesh", "x=4,y=2", "mesh axes as name=size,...")
	specFlag := fs.String("spec", "x,y", "partition spec: axes per dimension, '_' for None, '(a b)' for a tuple")
	shapeFlag := fs.String("shape", "8,8", "array shape (1-D or 2-D)")
	sim := fs.Bool("sim", false, "use simulated CPU devices instead of opening a PJRT client")
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	sizes, names, err := parseMesh(*meshFlag)
	if err != nil {
		return err
	}
	shape, err := parseInts(*shapeFlag)
	if err != nil {
		return fmt.Errorf("-shape: %w", err)
	}
	var ds []mesh.Device
	if *sim {
		n := cf.devices
		if n == 0 {
			n = pjrt.DefaultCPUDeviceCount
		}
		ds = mesh.SimDevices(n)
	} else {
		c, err := cf.open()
		if err != nil {
			return err
		}
		defer c.Close()
		ds = jit.Devices(c)
	}
	n := 1
	for _, s := range sizes {
		n *= s
	}
	if n > len(ds) {
		return fmt.Errorf("-mesh %s needs %d devices, have %d", *meshFlag, n, len(ds))
	}
	m, err := mesh.New(ds[:n], sizes, names...)
	if err != nil {
		return err
	}
	s, err := mesh.NewNamedSharding(m, parseSpec(*specFlag))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s, shape %v\n", s, shape)
	if err := mesh.Visualize(w, s, shape); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func installPlugin(args []string) error {
	fs := flag.NewFlagSet("install-plugin", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for {
		script := filepath.Join(dir, "tools/setup/install-plugin.sh")
		if _, err := os.Stat(script); err == nil {
			cmd := exec.Command("bash", script)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			return cmd.Run()
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return errors.New("install-plugin: run it inside an xlamesh checkout (it runs tools/setup/install-plugin.sh)")
		}
		dir = parent
	}
}

func bench(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	n := fs.Int("n", 1024, "matrix size: C[n,n] = A[n,n] B[n,n], f32")
	iters := fs.Int("iters", 20, "timed calls per mesh shape")
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := cf.open()
	if err != nil {
		return err
	}
	defer c.Close()
	ds := jit.Devices(c)
	a := make([]float32, *n**n)
	for i := range a {
		a[i] = float32(i%17) / 17
	}
	fmt.Fprintf(w, "matmul f32[%d,%d] x f32[%d,%d], A P('x', None), B P(None, 'y'), C P('x', 'y'), %d devices\n", *n, *n, *n, *n, len(ds))
	fmt.Fprintf(w, "%-8s %12s %12s\n", "mesh", "per call", "GFLOP/s")
	for x := len(ds); x >= 1; x-- {
		if len(ds)%x != 0 || *n%x != 0 || *n%(len(ds)/x) != 0 {
			continue
		}
		y := len(ds) / x
		m, err := mesh.New(ds, []int{x, y}, "x", "y")
		if err != nil {
			return err
		}
		d, err := timeMatMul(c, m, a, *n, *iters)
		if err != nil {
			return fmt.Errorf("mesh %dx%d: %w", x, y, err)
		}
		fmt.Fprintf(w, "%-8s %12v %12.1f\n", fmt.Sprintf("%dx%d", x, y), d.Round(time.Microsecond), 2*float64(*n)*float64(*n)*float64(*n)/d.Seconds()/1e9)
	}
	return nil
}

func timeMatMul(c *pjrt.Client, m mesh.Mesh, data []float32, n, iters int) (time.Duration, error) {
	put := func(spec mesh.PartitionSpec) (*jit.Array, error) {
		s, err := mesh.NewNamedSharding(m, spec)
		if err != nil {
			return nil, err
		}
		return jit.Put(c, data, []int{n, n}, s)
	}
	A, err := put(mesh.P("x", nil))
	if err != nil {
		return 0, err
	}
	defer A.Close()
	B, err := put(mesh.P(nil, "y"))
	if err != nil {
		return 0, err
	}
	defer B.Close()
	f := jit.New("bench_matmul", func(f *lower.Function, v []lower.Value) []lower.Value {
		return []lower.Value{f.MatMul(v[0], v[1])}
	}, jit.OutSpecs(mesh.P("x", "y")))
	call := func(check bool) error {
		out, err := f.Call(c, A, B)
		if err != nil {
			return err
		}
		defer out[0].Close()
		if !check {
			return nil
		}
		got, err := out[0].ToHost()
		if err != nil {
			return err
		}
		return checkMatMul(got.([]float32), data, n)
	}
	if err := call(true); err != nil { // compile, and check the product once
		return 0, err
	}
	start := time.Now()
	for range iters {
		if err := call(false); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(iters), nil
}

// checkMatMul compares 64 entries of c, spread over the matrix, with
// a·a computed on the host in float64, so that a benchmark never times a
// wrong product.
func checkMatMul(c, a []float32, n int) error {
	if len(c) != n*n {
		return fmt.Errorf("product has %d elements, want %d", len(c), n*n)
	}
	for k := range 64 {
		i, j := (k*7919)%n, (k*104729+k/8)%n
		var want float64
		for l := range n {
			want += float64(a[i*n+l]) * float64(a[l*n+j])
		}
		if got := float64(c[i*n+j]); math.Abs(got-want) > 1e-4*max(1, math.Abs(want)) {
			return fmt.Errorf("product C[%d,%d] = %g, want %g", i, j, got, want)
		}
	}
	return nil
}
