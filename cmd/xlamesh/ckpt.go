package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/shapes"
)

// ckpt runs `xlamesh ckpt ls DIR`: what a checkpoint holds, from its metadata.
func ckpt(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("ckpt", flag.ContinueOnError)
	format := fs.String("format", "table", "table or json")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: xlamesh ckpt ls [-format table|json] DIR\n\n"+
			"List the arrays of a checkpoint (package checkpoint's, JAX's zarr and zarr3 arrays, Orbax's OCDBT\n"+
			"layout): name, format, dtype, shape, chunk shape (the shards at save time), chunk files and bytes.")
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "ls" {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if err := fs.Parse(args); err != nil {
				return err
			}
		}
		return usageError(fs, "want the subcommand ls")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fs, "want one checkpoint directory, got %d arguments", fs.NArg())
	}
	if *format != "table" && *format != "json" {
		return usageError(fs, "-format %q: want table or json", *format)
	}
	infos, err := checkpoint.Info(fs.Arg(0))
	if err != nil {
		return err
	}
	if *format == "json" {
		type row struct {
			Name   string `json:"name"`
			Format string `json:"format"`
			DType  string `json:"dtype"`
			Shape  []int  `json:"shape"`
			Chunks []int  `json:"chunks"`
			Files  int    `json:"files"`
			Bytes  int64  `json:"bytes"` // -1 in an OCDBT database
			OCDBT  bool   `json:"ocdbt"`
		}
		rows := make([]row, len(infos))
		for i, in := range infos {
			rows[i] = row{in.Name, in.Format.String(), shapes.NumPyName(in.DType), in.Shape, in.Chunks, in.Files, in.Bytes, in.OCDBT}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFORMAT\tDTYPE\tSHAPE\tCHUNKS\tFILES\tBYTES")
	var total int64
	for _, in := range infos {
		name := in.Name
		if name == "" {
			name = "."
		}
		format := in.Format.String()
		if in.OCDBT {
			format += " in ocdbt"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", name, format, shapes.NumPyName(in.DType),
			shapes.PyTuple(in.Shape), shapes.PyTuple(in.Chunks), in.Files, size(in.Bytes))
		if total >= 0 && in.Bytes >= 0 {
			total += in.Bytes
		} else {
			total = -1
		}
	}
	fmt.Fprintf(tw, "%d arrays\t\t\t\t\t\t%s\n", len(infos), size(total))
	return tw.Flush()
}

// size prints a byte count, "?" where it is not known (values inside an OCDBT database).
func size(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}
