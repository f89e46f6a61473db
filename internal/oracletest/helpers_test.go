package oracletest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
)

// unconstrained is how the corpus writes P.UNCONSTRAINED.
const unconstrained = "?"

// kinds maps a corpus error kind to the mesh sentinel the xlamesh error must wrap.
var kinds = map[string]error{
	"invalid_mesh":   mesh.ErrInvalidMesh,
	"device_count":   mesh.ErrDeviceCount,
	"no_assignment":  mesh.ErrNoAssignment,
	"duplicate_axis": mesh.ErrDuplicateAxis,
	"unknown_axis":   mesh.ErrUnknownAxis,
	"unconstrained":  mesh.ErrUnconstrained,
	"rank":           mesh.ErrRank,
	"indivisible":    mesh.ErrIndivisible,
	"invalid_spec":   mesh.ErrInvalidSpec,
	"rule":           mesh.ErrRule,
	"unsupported":    mesh.ErrUnsupported,
}

// cpuDevices are the oracle's 8 CPU devices (ids 0..7, process 0), as
// simulated devices: geometry never needs a real client.
var cpuDevices = mesh.SimDevices(8)

var axisTypes = map[string]mesh.AxisType{"Auto": mesh.Auto, "Explicit": mesh.Explicit, "Manual": mesh.Manual}

// buildMesh makes the corpus mesh mj over the CPU devices.
func buildMesh(mj meshJSON) (mesh.Mesh, error) {
	ids := mj.Devices
	if ids == nil {
		n := 1
		for _, s := range mj.Shape {
			n *= s
		}
		for i := range n {
			ids = append(ids, i)
		}
	}
	devs := make([]mesh.Device, len(ids))
	for i, id := range ids {
		devs[i] = cpuDevices[id]
	}
	m, err := mesh.New(devs, mj.Shape, mj.Names...)
	if err != nil || mj.Types == nil {
		return m, err
	}
	types, err := parseTypes(mj.Types)
	if err != nil {
		return mesh.Mesh{}, err
	}
	return m.WithAxisTypes(types...)
}

func parseTypes(names []string) ([]mesh.AxisType, error) {
	out := make([]mesh.AxisType, len(names))
	for i, n := range names {
		t, ok := axisTypes[n]
		if !ok {
			return nil, fmt.Errorf("oracle: unknown axis type %q", n)
		}
		out[i] = t
	}
	return out, nil
}

// specOf turns a corpus spec (JSON) into mesh.P's arguments.
func specOf(entries []any) mesh.PartitionSpec {
	args := make([]any, len(entries))
	for i, e := range entries {
		switch v := e.(type) {
		case string:
			if v == unconstrained {
				args[i] = mesh.Unconstrained
			} else {
				args[i] = v
			}
		case []any:
			names := make([]string, 0, len(v))
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					args[i] = v // nested tuple: let P report it
					break
				}
				names = append(names, s)
			}
			if args[i] == nil {
				args[i] = names
			}
		default:
			args[i] = e
		}
	}
	return mesh.P(args...)
}

// specJSON is the corpus form of a PartitionSpec's canonical entries.
func specJSON(p mesh.PartitionSpec) []any {
	out := make([]any, 0, p.Len())
	for _, d := range p.Dims() {
		switch {
		case d.IsUnconstrained():
			out = append(out, unconstrained)
		case d.IsReplicated():
			out = append(out, nil)
		case len(d.Axes()) == 1:
			out = append(out, d.Axes()[0])
		default:
			var l []any
			for _, a := range d.Axes() {
				l = append(l, a)
			}
			out = append(out, l)
		}
	}
	return out
}

// pyRepr normalises JAX's text forms to xlamesh's documented ones:
// PartitionSpec(...) is spelled P(...), as JAX itself does from 0.10. Mesh
// and AbstractMesh texts are compared as JAX 0.8.1 prints them.
func pyRepr(s string) string {
	return strings.ReplaceAll(s, "PartitionSpec(", "P(")
}

// errDiffs compares xlamesh's err with the JAX error a case expects.
func errDiffs(h caseHead, je *jaxError, err error) []string {
	if je == nil {
		return []string{"golden has no JAX error for an error case"}
	}
	if err == nil {
		return []string{fmt.Sprintf("JAX raises %s(%q); xlamesh returns no error", je.Class, je.Message)}
	}
	var d []string
	want, ok := kinds[h.Kind]
	if !ok {
		return []string{fmt.Sprintf("corpus kind %q has no sentinel", h.Kind)}
	}
	if !errors.Is(err, want) {
		d = append(d, fmt.Sprintf("error kind: want wrapping %v, got %q", want, err))
	}
	var missing []string
	for _, p := range h.Phrases {
		if !strings.Contains(err.Error(), p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		d = append(d, fmt.Sprintf("message lacks %q: %q (JAX: %q)", missing, err, shorten(je.Message, 300)))
	}
	return d
}

// okDiffs reports an xlamesh error where JAX succeeded, with JAX's answer
// (the case's golden "jax" object, as compact JSON) so that a known
// difference pins both sides.
func okDiffs(jax any, err error) []string {
	if err == nil {
		return nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if jerr := enc.Encode(jax); jerr != nil {
		return []string{fmt.Sprintf("JAX succeeds with %v; xlamesh: %v", jax, err)}
	}
	return []string{fmt.Sprintf("JAX succeeds with %s; xlamesh: %v", strings.TrimSpace(b.String()), err)}
}

func eq[T comparable](d *[]string, what string, want, got []T) {
	if !slices.Equal(want, got) {
		*d = append(*d, fmt.Sprintf("%s: JAX %v, xlamesh %v", what, want, got))
	}
}

func eq1[T comparable](d *[]string, what string, want, got T) {
	if want != got {
		*d = append(*d, fmt.Sprintf("%s: JAX %v, xlamesh %v", what, want, got))
	}
}

// shorten cuts s to at most n bytes, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// devicesNeeded is how many devices of the tests' client a mesh of the given shape over the
// device ids (nil: 0, 1, ... in order) needs: the highest id plus one.
func devicesNeeded(shape, ids []int) int {
	if ids == nil {
		return prod(shape)
	}
	return slices.Max(ids) + 1
}
