package pjrt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
)

// traceEvent is one event of the Chrome trace event format (the JSON that ui.perfetto.dev and
// chrome://tracing open): a complete event ("X") or a name of a process or thread ("M").
type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Pid  int            `json:"pid"`
	Tid  *int64         `json:"tid,omitempty"`
	Ts   *json.Number   `json:"ts,omitempty"`
	Dur  *json.Number   `json:"dur,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteChromeTrace converts xspace, a serialized tensorflow.profiler.XSpace (what Profiler.Stop
// returns), into a trace in the Chrome trace event format, which ui.perfetto.dev opens: each
// XPlane becomes a process (pid = its index + 1, named after the plane), each XLine a thread of
// it (tid = the line's id), each XEvent a complete event with its stats as args. Times are in
// microseconds from the earliest line's start, which otherData.start_ns gives (ns since the
// Unix epoch). Aggregated events (no time) are left out. Malformed input is an error wrapping
// xlaproto.ErrMalformed.
func WriteChromeTrace(w io.Writer, xspace []byte) error {
	s, err := xlaproto.ReadXSpace(xspace)
	if err != nil {
		return fmt.Errorf("pjrt: trace: %w", err)
	}
	start := int64(math.MaxInt64)
	for _, p := range s.Planes {
		for _, l := range p.Lines {
			if len(l.Events) > 0 && l.TimestampNs < start {
				start = l.TimestampNs
			}
		}
	}
	if start == math.MaxInt64 {
		start = 0
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"start_ns\":%d},\"traceEvents\":[", start)
	first := true
	emit := func(e traceEvent) error {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("pjrt: trace: event %q: %w", e.Name, err)
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.WriteString("\n")
		bw.Write(b)
		return nil
	}
	for i, p := range s.Planes {
		pid := i + 1
		if err := emit(traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": p.Name}}); err != nil {
			return err
		}
		for _, l := range p.Lines {
			tid := l.ID
			if err := emit(traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: &tid, Args: map[string]any{"name": l.Name}}); err != nil {
				return err
			}
			for _, e := range l.Events {
				ts := micros((l.TimestampNs-start)*1000 + e.OffsetPs)
				dur := micros(e.DurationPs)
				ev := traceEvent{Name: eventName(p, e), Ph: "X", Pid: pid, Tid: &tid, Ts: &ts, Dur: &dur}
				if len(e.Stats) > 0 {
					ev.Args = map[string]any{}
					for _, st := range e.Stats {
						ev.Args[statName(p, st.MetadataID)] = statValue(p, st)
					}
				}
				if err := emit(ev); err != nil {
					return err
				}
			}
		}
	}
	bw.WriteString("\n]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("pjrt: trace: %w", err)
	}
	return nil
}

// micros writes ps picoseconds as microseconds, exactly.
func micros(ps int64) json.Number {
	sign := ""
	u := uint64(ps)
	if ps < 0 {
		sign, u = "-", uint64(-ps)
	}
	frac := strconv.FormatUint(u%1_000_000+1_000_000, 10)[1:]
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	s := sign + strconv.FormatUint(u/1_000_000, 10)
	if frac != "" {
		s += "." + frac
	}
	return json.Number(s)
}

func eventName(p xlaproto.XPlane, e xlaproto.XEvent) string {
	if n, ok := p.EventName[e.MetadataID]; ok && n != "" {
		return n
	}
	return "event " + strconv.FormatInt(e.MetadataID, 10)
}

func statName(p xlaproto.XPlane, id int64) string {
	if n, ok := p.StatName[id]; ok && n != "" {
		return n
	}
	return "stat " + strconv.FormatInt(id, 10)
}

// statValue is a stat's value as JSON can carry it: a ref_value is the name it refers to, a
// float that JSON cannot hold (NaN, ±Inf) its text.
func statValue(p xlaproto.XPlane, st xlaproto.XStat) any {
	if st.Ref != 0 {
		return statName(p, st.Ref)
	}
	if f, ok := st.Value.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return st.Value
}
