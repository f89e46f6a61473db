package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shapes"
)

// A StableHLO file is compiled and run as written: for its mhlo.num_partitions devices (1 when
// the module does not say), the first ones of the client, with the partitioner of -partitioner.

// modulePartitions returns the module's mhlo.num_partitions, or 1 when it has none.
func modulePartitions(text string) (int, error) {
	s := mlir.NewScanner(text)
	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
		if !t.Is(mlir.Ident, "mhlo.num_partitions") {
			continue
		}
		if eq := s.Next(); !eq.Is(mlir.Punct, "=") {
			continue
		}
		v := s.Next()
		n, err := strconv.Atoi(v.Text)
		if v.Kind != mlir.Int || err != nil || n < 1 {
			return 0, fmt.Errorf("mhlo.num_partitions = %s: want a positive integer", v.Text)
		}
		return n, nil
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 1, nil
}

// compileFile compiles the StableHLO file at path as written.
func compileFile(c *pjrt.Client, path string, part pjrt.Partitioner) (*pjrt.Executable, error) {
	text, err := readKernelFile(path)
	if err != nil {
		return nil, err
	}
	n, err := modulePartitions(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ds := c.AddressableDevices()
	if n > len(ds) {
		return nil, fmt.Errorf("%s: the module is written for %d devices (mhlo.num_partitions); the client has %d (try -devices %d)",
			path, n, len(ds), n)
	}
	ids := make([]int, n)
	for i, d := range ds[:n] {
		ids[i] = d.ID()
	}
	exe, err := c.Compile(string(text), pjrt.CompileOptions{DeviceAssignment: ids, Partitioner: part})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return exe, nil
}

// fileArguments puts one argument list per device of exe: each parameter's per-device shape
// (from the optimized program) filled with small values of its type.
func fileArguments(c *pjrt.Client, exe *pjrt.Executable) ([][]*pjrt.Buffer, error) {
	shapes := exe.InputShapes()
	if shapes == nil {
		return nil, fmt.Errorf("the plugin does not show the compiled program's parameters: %w", pjrt.ErrUnimplemented)
	}
	args := make([][]*pjrt.Buffer, len(exe.Devices()))
	for d, dev := range exe.Devices() {
		for i, s := range shapes {
			data, err := fill(s)
			if err != nil {
				closeBuffers(args)
				return nil, fmt.Errorf("parameter %d: %w", i, err)
			}
			b, err := c.BufferFromBytes(dev, s.DType(), s.Dims(), data)
			if err != nil {
				closeBuffers(args)
				return nil, fmt.Errorf("parameter %d: %w", i, err)
			}
			args[d] = append(args[d], b)
		}
	}
	return args, nil
}

// fill returns the row-major bytes of an array of shape s holding small values: floats in
// [-0.5, 0.5) (complex: as the real part; the float8 family zero), integers 0..6 (sub-byte
// ones 0 and 1), booleans alternating.
func fill(s pjrt.Shape) ([]byte, error) {
	n := s.Size()
	size := shapes.ElementBytes(s.DType())
	if !pjrt.Supported(s.DType()) || size == 0 {
		return nil, fmt.Errorf("element type %s is not one bench can fill", s.DType())
	}
	b := make([]byte, n*size)
	le := binary.LittleEndian
	for i := range n {
		f := float64(i%17)/17 - 0.5
		at := b[i*size:]
		switch s.DType() {
		case dtypes.Float32:
			le.PutUint32(at, math.Float32bits(float32(f)))
		case dtypes.Float64:
			le.PutUint64(at, math.Float64bits(f))
		case dtypes.BFloat16:
			le.PutUint16(at, uint16(math.Float32bits(float32(f))>>16))
		case dtypes.Float16:
			le.PutUint16(at, []uint16{0x3800, 0xb800}[i%2]) // ±0.5
		case dtypes.Bool:
			at[0] = byte(i % 2)
		case dtypes.Complex64:
			le.PutUint32(at, math.Float32bits(float32(f)))
		case dtypes.Complex128:
			le.PutUint64(at, math.Float64bits(f))
		default:
			switch {
			case shapes.IsFloat(s.DType()): // the float8 family and f4E2M1FN: 0 is zero, or a small power of 2
				at[0] = 0
			case shapes.Bits(s.DType()) < 8: // int4, int2: 0 and 1 fit every width
				at[0] = byte(i % 2)
			default: // integers, little-endian: the low byte is enough for 0..6
				at[0] = byte(i % 7)
			}
		}
	}
	return b, nil
}

// sweepFile times the file's program as written: one row, with the bytes of its arguments and
// results over every device per second as its rate.
func sweepFile(c *pjrt.Client, path string, part pjrt.Partitioner, iters int, p *progress) (*sweepReport, error) {
	p.printf("xlamesh bench: %s: ", path)
	var exe *pjrt.Executable
	compile, err := p.step("compiling", func() (err error) {
		exe, err = compileFile(c, path, part)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	args, err := fileArguments(c, exe)
	if err != nil {
		return nil, err
	}
	defer closeBuffers(args)
	var per time.Duration
	if _, err := p.step(fmt.Sprintf(", timing %d calls", iters), func() (err error) {
		per, err = timeExecute(exe, args, iters)
		return err
	}); err != nil {
		return nil, err
	}
	p.printf(": %v per call\n", per.Round(time.Microsecond))
	cs, err := exe.Collectives()
	if err != nil {
		return nil, err
	}
	row := sweepRow{Rank: 1, Mesh: "-", Devices: len(exe.Devices()), Strategy: "as written",
		Seconds: per.Seconds(), CompileSeconds: compile.Seconds()}
	row.Collectives, row.BytesMoved = summarize(cs)
	var bytes int
	for _, s := range exe.InputShapes() {
		row.In = append(row.In, s.Aval())
		bytes += s.Bytes()
	}
	for _, s := range exe.OutputShapes() {
		row.Out = append(row.Out, s.Aval())
		bytes += s.Bytes()
	}
	row.Rate = float64(bytes*len(exe.Devices())) / per.Seconds() / 1e9
	return &sweepReport{Kernel: path, Program: path + " (per-device shapes)", Platform: c.Platform(),
		Devices: len(c.AddressableDevices()), Iters: iters, Unit: "GB/s", Rows: []sweepRow{row}}, nil
}
