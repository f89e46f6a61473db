package hostile

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The artifact mutation test: every real jax.export artifact of testdata/oracle, mutated by
// seeded random byte edits, through the whole path up to compile (jaxexport.Read, then
// Client.Compile of the module as jit.FromExported compiles it, bytecode read as text and
// checked first), each mutant in a child process so that a crash is counted, not fatal.
//
//	go test ./internal/hostile -run TestArtifactMutants -v                       # the default count
//	go test ./internal/hostile -run TestArtifactMutants -v -mutants 5000 -timeout 60m
var (
	mutantCount = flag.Int("mutants", 64, "TestArtifactMutants: how many mutants of the oracle's artifacts to compile")
	mutantSeed  = flag.Uint64("mutant-seed", 1, "TestArtifactMutants: the seed of the mutations")
)

const (
	envMutants     = "XLAMESH_MUTANT_CHILD" // "seed:from:to": the child compiles mutants from..to-1
	mutantTimeout  = 45 * time.Second       // a mutant still compiling after this is a hang
	mutantsPerProc = 400                    // a child compiles at most this many mutants (bounds its memory)
)

// Mutant outcomes. The first five pass; crash, hang and untyped fail the test.
const (
	mutReader   = "refused by the readers" // jaxexport.Read, or bytecode.ToText in Compile
	mutChecker  = "refused by mlir.Check"
	mutXLA      = "refused by XLA" // a *pjrt.Error from the plugin's compile
	mutOther    = "other typed error"
	mutCompiled = "compiled"
	mutCrash    = "crash"
	mutHang     = "hang"
	mutUntyped  = "untyped error"
)

// mutantEvent is one line of a mutant child's report.
type mutantEvent struct {
	Index  int    `json:"i"`
	Start  bool   `json:"start,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Detail string `json:"detail,omitempty"`
}

var (
	oracleArtifactsOnce sync.Once
	oracleArtifacts     []namedArtifact
	oracleArtifactsErr  error
)

type namedArtifact struct {
	name string
	raw  []byte
}

// loadOracleArtifacts returns every jax.export artifact of testdata/oracle (bytecode.json and
// programs.json), in a fixed order: parent and children must agree on what mutant i is.
func loadOracleArtifacts() ([]namedArtifact, error) {
	oracleArtifactsOnce.Do(func() {
		for _, file := range []string{"bytecode.json", "programs.json"} {
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "oracle", file))
			if err != nil {
				oracleArtifactsErr = err
				return
			}
			var f struct {
				Programs []struct{ Name, Exported string }
			}
			if err := json.Unmarshal(raw, &f); err != nil {
				oracleArtifactsErr = fmt.Errorf("%s: %w", file, err)
				return
			}
			for _, p := range f.Programs {
				if p.Exported == "" {
					continue
				}
				b, err := base64.StdEncoding.DecodeString(p.Exported)
				if err != nil {
					oracleArtifactsErr = fmt.Errorf("%s: %s: %w", file, p.Name, err)
					return
				}
				oracleArtifacts = append(oracleArtifacts, namedArtifact{strings.TrimSuffix(file, ".json") + "/" + p.Name, b})
			}
		}
		if len(oracleArtifacts) == 0 {
			oracleArtifactsErr = errors.New("no jax.export artifacts in testdata/oracle")
		}
	})
	return oracleArtifacts, oracleArtifactsErr
}

// mutant is mutant i: which artifact, whether the artifact itself or only its module is
// mutated, and the edits, all drawn from (seed, i).
type mutant struct {
	artifact   int
	moduleOnly bool
	edits      []string
}

// mutate returns mutant i of the artifacts (the artifact bytes to read, or the module bytes to
// compile when moduleOnly) and what it did.
func mutate(arts []namedArtifact, seed uint64, i int) (m mutant, artifact, module []byte, err error) {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	m.artifact = r.IntN(len(arts))
	m.moduleOnly = r.IntN(2) == 1
	b := arts[m.artifact].raw
	if m.moduleOnly {
		e, err := jaxexport.Read(b)
		if err != nil {
			return m, nil, nil, fmt.Errorf("%s: %w", arts[m.artifact].name, err)
		}
		b = e.Module()
	}
	b = append([]byte(nil), b...)
	interesting := []byte{0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x0F}
	for range 1 + r.IntN(4) {
		if len(b) == 0 {
			break
		}
		at := r.IntN(len(b))
		switch op := r.IntN(10); {
		case op < 4: // a bit flip
			bit := r.IntN(8)
			b[at] ^= 1 << bit
			m.edits = append(m.edits, fmt.Sprintf("flip %d.%d", at, bit))
		case op < 7: // a byte set
			v := byte(r.IntN(256))
			if r.IntN(2) == 0 {
				v = interesting[r.IntN(len(interesting))]
			}
			b[at] = v
			m.edits = append(m.edits, fmt.Sprintf("set %d=%#02x", at, v))
		case op < 8: // a truncation
			b = b[:at]
			m.edits = append(m.edits, fmt.Sprintf("cut %d", at))
		default: // a duplicated range, inserted elsewhere
			n := 1 + r.IntN(min(64, len(b)-at))
			to := r.IntN(len(b) + 1)
			dup := append([]byte(nil), b[at:at+n]...)
			b = append(b[:to:to], append(dup, b[to:]...)...)
			m.edits = append(m.edits, fmt.Sprintf("dup %d+%d@%d", at, n, to))
		}
	}
	if m.moduleOnly {
		return m, nil, b, nil
	}
	return m, b, nil, nil
}

func (m mutant) describe(arts []namedArtifact) string {
	what := "artifact"
	if m.moduleOnly {
		what = "module"
	}
	return fmt.Sprintf("%s of %s: %s", what, arts[m.artifact].name, strings.Join(m.edits, ", "))
}

// runMutantChild compiles the mutants named by spec ("seed:from:to") and reports each to the
// file of envOut.
func runMutantChild(spec string) int {
	var seed uint64
	var from, to int
	if _, err := fmt.Sscanf(spec, "%d:%d:%d", &seed, &from, &to); err != nil {
		fmt.Fprintf(os.Stderr, "mutant child: bad spec %q\n", spec)
		return 1
	}
	arts, err := loadOracleArtifacts()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutant child:", err)
		return 1
	}
	out, err := os.OpenFile(os.Getenv(envOut), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutant child:", err)
		return 1
	}
	var mu sync.Mutex
	write := func(e mutantEvent) {
		b, _ := json.Marshal(e)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
	}
	c, err := pjrttest.Open(8)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutant child:", err)
		return 1
	}
	var current struct {
		sync.Mutex
		i     int
		since time.Time
	}
	current.i = -1
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			current.Lock()
			i, since := current.i, current.since
			current.Unlock()
			if i >= 0 && time.Since(since) > mutantTimeout {
				write(mutantEvent{Index: i, Kind: mutHang})
				fmt.Fprintf(os.Stderr, "mutant child: mutant %d still running after %v\n", i, mutantTimeout)
				os.Exit(3)
			}
		}
	}()
	for i := from; i < to; i++ {
		write(mutantEvent{Index: i, Start: true})
		current.Lock()
		current.i, current.since = i, time.Now()
		current.Unlock()
		kind, detail := compileMutant(c, arts, seed, i)
		current.Lock()
		current.i = -1
		current.Unlock()
		write(mutantEvent{Index: i, Kind: kind, Detail: detail})
	}
	c.Close()
	return 0
}

// compileMutant takes mutant i through jaxexport.Read and Client.Compile and classifies the
// outcome.
func compileMutant(c *pjrt.Client, arts []namedArtifact, seed uint64, i int) (kind, detail string) {
	m, artifact, module, err := mutate(arts, seed, i)
	if err != nil {
		return mutUntyped, "the unmutated artifact: " + err.Error()
	}
	src := artifact
	if m.moduleOnly {
		src = arts[m.artifact].raw // the devices of the artifact whose module is mutated
	}
	e, err := jaxexport.Read(src)
	if err != nil {
		return classifyMutant(err)
	}
	n := e.NrDevices()
	if !m.moduleOnly {
		module = e.Module()
	}
	executables := pjrt.LiveExecutables()
	opts := pjrt.CompileOptions{NumPartitions: n}
	if n >= 1 && n <= len(c.Devices()) {
		opts.DeviceAssignment = ids(c, n)
	}
	exe, err := c.Compile(string(module), opts)
	if err != nil {
		return classifyMutant(err)
	}
	if cerr := exe.Close(); cerr != nil {
		return mutUntyped, "Close: " + cerr.Error()
	}
	if pjrt.LiveExecutables() != executables {
		return mutUntyped, "an executable leaked"
	}
	return mutCompiled, ""
}

// classifyMutant sorts an error by who refused the mutant; an error no sentinel matches is
// untyped.
func classifyMutant(err error) (kind, detail string) {
	var me *mlir.Error
	var be *bytecode.Error
	var pe *pjrt.Error
	for _, s := range []error{jaxexport.ErrFormat, jaxexport.ErrVersion, jaxexport.ErrSymbolicShape, jaxexport.ErrDType,
		jaxexport.ErrEffects, jaxexport.ErrUnsupported} {
		if errors.Is(err, s) {
			return mutReader, err.Error()
		}
	}
	switch {
	case errors.As(err, &be) && errors.Is(err, pjrt.ErrCompile):
		return mutReader, err.Error()
	case errors.As(err, &me) && errors.Is(err, pjrt.ErrCompile):
		return mutChecker, err.Error()
	case errors.As(err, &pe) && errors.Is(err, pjrt.ErrCompile):
		return mutXLA, err.Error()
	case errors.Is(err, pjrt.ErrCompile), errors.Is(err, pjrt.ErrDevice):
		return mutOther, err.Error()
	}
	return mutUntyped, err.Error()
}

// TestArtifactMutants compiles -mutants mutants of the oracle's artifacts, in children, and
// fails on every crash, hang and untyped error. It logs the counts of each outcome.
func TestArtifactMutants(t *testing.T) {
	arts, err := loadOracleArtifacts()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	total := *mutantCount
	got := make(map[int]mutantEvent, total)
	start := time.Now()
	for next := 0; next < total; {
		to := min(total, next+mutantsPerProc)
		next = runMutantProcess(t, exe, *mutantSeed, next, to, got)
	}
	counts := map[string]int{}
	var bad []string
	for i := range total {
		e := got[i]
		counts[e.Kind]++
		switch e.Kind {
		case mutReader, mutChecker, mutXLA, mutOther, mutCompiled:
		default:
			m, _, _, _ := mutate(arts, *mutantSeed, i)
			bad = append(bad, fmt.Sprintf("mutant %d (%s): %s: %s", i, m.describe(arts), e.Kind, e.Detail))
		}
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var line []string
	for _, k := range keys {
		line = append(line, fmt.Sprintf("%s %d", k, counts[k]))
	}
	t.Logf("%d mutants of %d artifacts (seed %d) in %v: %s", total, len(arts), *mutantSeed,
		time.Since(start).Round(time.Second), strings.Join(line, ", "))
	for _, b := range bad {
		t.Error(b)
	}
}

// runMutantProcess runs one child for mutants from..to-1, records each outcome in got, and
// returns the first mutant it did not get through (a dead child's mutant counts as done).
func runMutantProcess(t *testing.T, exe string, seed uint64, from, to int, got map[int]mutantEvent) int {
	out := filepath.Join(t.TempDir(), "mutants.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout+time.Duration(to-from)*mutantTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envMutants+"="+strconv.FormatUint(seed, 10)+":"+strconv.Itoa(from)+":"+strconv.Itoa(to),
		envOut+"="+out, envDir+"="+t.TempDir())
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	runErr := cmd.Run()
	started, hung, last := -1, -1, from-1
	if f, err := os.Open(out); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e mutantEvent
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			switch {
			case e.Start:
				started = e.Index
			case e.Kind == mutHang:
				hung = e.Index
			default:
				got[e.Index] = e
				last = e.Index
			}
		}
		f.Close()
	}
	if last == to-1 && runErr == nil {
		return to
	}
	if started == last+1 {
		o := deathOutcome(ctx.Err() != nil, hung == started, runErr, stderr.String())
		kind := mutCrash
		if o.Kind == kindHang {
			kind = mutHang
		}
		got[started] = mutantEvent{Index: started, Kind: kind, Detail: o.Kind + ": " + o.Detail}
		return started + 1
	}
	if last < from {
		t.Fatalf("the mutant child for %d..%d started no mutant (%v):\n%s", from, to-1, runErr, stderr.String())
	}
	return last + 1
}
