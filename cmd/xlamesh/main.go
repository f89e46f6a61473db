// Command xlamesh is the command-line face of the xlamesh library.
//
//	xlamesh devices [-plugin P] [-devices N]
//	    open a PJRT client and list its devices with their attributes
//	xlamesh visualize -mesh x=4,y=2 -spec x,y -shape 8,8 [-devices N]
//	    print jax.debug.visualize_array_sharding's table for a sharding on the CPU devices
//	xlamesh install-plugin [-plugin cpu|cpu-0.81|cuda12|cuda13|tpu[,...]] [-version V] [-dir D] [-check] [-path] [-index URL]
//	    download a pinned PJRT plugin from PyPI into the user cache (no Python needed) and print
//	    its path; pjrt.Open finds the CPU plugin there by default. An installed plugin whose size
//	    or sha256 is not the one installed is downloaded again (-check reports it)
//	xlamesh bench [-kernel matmul|mlp|attention|FILE.mlir] [-n N] [-iters 20] [-format table|csv|json]
//	              [-plot out.svg] [-what sweep,chain,transfer] [-chain 1000] [-mib 256] [-q] [-devices N]
//	    time a kernel on every 2-D mesh shape of the devices with each of its shardings and rank
//	    them (time per call, GFLOP/s, speed-up over one device, collectives and the bytes they
//	    move), or a StableHLO file as written; -plot draws the ranking as an SVG bar chart. chain
//	    times calls that do not wait in between, transfer Put and ToHost against a Go copy
//	xlamesh inspect [-kernel matmul|mlp|attention|FILE.mlir] [-mesh x=2,y=4] [-strategy S | -in 'x,_;_,y' -out 'x,y']
//	                [-n N] [-format table|json] [-devices N]
//	    compile and report what XLA's partitioner did: every collective (kind, operand shapes,
//	    replica groups, bytes each device sends), the compiled memory plan per device, and the
//	    output shardings
//	xlamesh ckpt ls [-format table|json] DIR
//	    list the arrays of a checkpoint (package checkpoint's, or JAX's zarr arrays): name, dtype,
//	    shape, chunk shape, chunk files and bytes on disk
//
// The plugin is found as pjrt.Open finds it: $XLAMESH_PJRT_PLUGIN, else the pinned CPU plugin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/install"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

const usage = `usage: xlamesh <command> [flags]

commands:
  devices         list the devices of a PJRT client
  visualize       print the sharding table of an array on a mesh
  install-plugin  download a pinned PJRT plugin into the user cache
  launch          run N processes of one multi-process job (xlamesh launch -n 4 -- program)
  bench           rank the shardings of a kernel over the mesh shapes by speed; chained calls, transfers
  inspect         show the collectives, memory and output shardings XLA chose for a sharding
  ckpt            list what a checkpoint holds (xlamesh ckpt ls DIR)

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
		err = installPlugin(os.Stdout, os.Stderr, args)
	case "launch":
		err = launch(os.Stdout, args)
	case "bench":
		err = bench(os.Stdout, os.Stderr, args)
	case "inspect":
		err = inspect(os.Stdout, os.Stderr, args)
	case "ckpt":
		err = ckpt(os.Stdout, args)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		err = fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	var ue *usageErr
	if errors.As(err, &ue) {
		fmt.Fprintln(os.Stderr, "xlamesh:", err)
		ue.fs.SetOutput(os.Stderr)
		ue.fs.Usage()
		os.Exit(2)
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
	abs, err := mesh.NewAbstract(sizes, names) // checks sizes, names and their product first
	if err != nil {
		return err
	}
	n := abs.Size()
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

// installPlugin installs the plugins of -plugin (Install keeps an intact one and repairs a damaged
// one). With -check it also reports a damaged plugin (install.Verify) before repairing it, checks
// the result again, and loads each plugin to compare its PJRT C API version with the pin.
func installPlugin(w, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("install-plugin", flag.ContinueOnError)
	var names []string
	for _, p := range plugins.Known {
		names = append(names, p.Name)
	}
	names = append(names, plugins.LAPACK.Name)
	namesFlag := fs.String("plugin", "cpu", "which plugins, comma-separated: "+strings.Join(names, ", ")+
		" (lapack: the LAPACK library jnp.linalg programs need on CPU plugins)")
	version := fs.String("version", "", "a PyPI version other than the pinned one (its sha256 is then the index's; one plugin only)")
	dir := fs.String("dir", "", "cache directory (default $XLAMESH_CACHE_DIR, else the user cache directory + /xlamesh)")
	pathOnly := fs.Bool("path", false, "print where the plugins are installed; install nothing")
	check := fs.Bool("check", false, "report an installed plugin whose size or sha256 is not the one installed (then reinstall it), "+
		"and load each plugin to check the PJRT C API version it reports against the pin")
	index := fs.String("index", "", "the package index's JSON API root, e.g. a mirror (default https://pypi.org/pypi)")
	quiet := fs.Bool("q", false, "no progress output")
	if err := fs.Parse(args); err != nil {
		return usageError(fs, "%v", err)
	}
	if fs.NArg() > 0 {
		return usageError(fs, "unexpected arguments %q", fs.Args())
	}
	var list []plugins.Plugin
	for _, name := range strings.Split(*namesFlag, ",") {
		p, err := plugins.Lookup(strings.TrimSpace(name))
		if err != nil {
			return usageError(fs, "%v", err)
		}
		list = append(list, p)
	}
	if *version != "" {
		if len(list) != 1 {
			return usageError(fs, "-version needs exactly one -plugin")
		}
		if *version != list[0].Version {
			list[0].Version, list[0].SHA256, list[0].API = *version, "", ""
			list[0].SOSize, list[0].SOSHA256 = 0, ""
		}
	}
	if *dir == "" {
		var err error
		if *dir, err = plugins.Dir(); err != nil {
			return err
		}
	}
	// Ctrl-C or SIGTERM cancels a download, which then removes its partial file.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, p := range list {
		if *pathOnly {
			fmt.Fprintln(w, p.Path(*dir))
			continue
		}
		opts := install.Options{Index: *index}
		if !*quiet {
			opts.Progress = stderr // Install says there why it reinstalls
		}
		if *check && *quiet {
			if err := install.Verify(p, *dir); errors.Is(err, install.ErrDamaged) {
				fmt.Fprintf(stderr, "%v; reinstalling\n", err)
			}
		}
		path, err := install.Install(ctx, p, *dir, opts)
		if err != nil {
			return err
		}
		if *check {
			if err := install.Verify(p, *dir); err != nil {
				return fmt.Errorf("install-plugin: after installing: %w", err)
			}
		}
		if *check && p.API != "" {
			pl, err := pjrt.LoadPlugin(path)
			if err != nil {
				return err
			}
			if major, minor := pl.APIVersion(); fmt.Sprintf("%d.%d", major, minor) != p.API {
				return fmt.Errorf("install-plugin: %s==%s reports PJRT C API %d.%d, the pin says %s", p.Package, p.Version, major, minor, p.API)
			}
		}
		if !*quiet && p.API != "" {
			fmt.Fprintf(stderr, "xlamesh: %s==%s (PJRT C API %s) installed\n", p.Package, p.Version, p.API)
		} else if !*quiet {
			fmt.Fprintf(stderr, "xlamesh: %s==%s installed\n", p.Package, p.Version)
		}
		fmt.Fprintln(w, path)
	}
	return nil
}
