package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The child process: TestMain runs the cases named by envChild (indices into allCases(),
// comma-separated) instead of the tests, and appends one JSON line per event to the file named
// by envOut.
const (
	envChild = "XLAMESH_HOSTILE_CHILD"
	envOut   = "XLAMESH_HOSTILE_OUT"
	envFakes = "XLAMESH_HOSTILE_FAKES" // the directory of the fake plugins the parent built
	envDir   = "XLAMESH_HOSTILE_DIR"   // the child's scratch directory, the parent's t.TempDir()
)

// Time limits. A case that runs longer than caseTimeout is a hang: the child's watchdog ends
// the child. The parent kills a child that outlives childTimeout plus caseTimeout per case,
// for a hang the watchdog cannot see.
const (
	caseTimeout  = 45 * time.Second
	childTimeout = 60 * time.Second
)

// The classes of issue 10.
type class string

const (
	classNames     class = "names that need escaping"
	classPrograms  class = "programs XLA cannot survive"
	classPlugins   class = "plugin files"
	classHangs     class = "hangs"
	classPanics    class = "panics"
	classSilent    class = "silently wrong"
	classOwnership class = "ownership"
)

var classes = []class{classNames, classPrograms, classPlugins, classHangs, classPanics, classSilent, classOwnership}

// The public entry points every one of which the suite must reach.
var entries = []string{
	"mesh.New", "mesh.NewAbstract", "mesh shardings and specs", "mesh.Visualize",
	"shardy parse", "shardy validate",
	"lower builder", "wrap.Module",
	"pjrt.Open", "pjrt.LoadPlugin", "pjrt.WithCreateOption", "pjrt Compile", "pjrt.LoadExecutable",
	"pjrt Execute", "pjrt transfers", "pjrt/install",
	"jit.Put", "jit.FromCallback", "jit.FromShards", "jit Call", "jit ToHost",
	"cmd/xlamesh",
}

// A hostile input and the outcome it must have.
type hcase struct {
	name  string // unique in the suite
	class class
	entry string // one of entries
	// group names the child process the case runs in with others ("" for "pure": no PJRT
	// client). Cases that share a child are independent; a crash in one costs the others
	// nothing but a new child.
	group string
	// want lists the sentinels the error must match with errors.Is, every one of them, and as
	// a typed error it must match with errors.As; both empty: the case expects a correct
	// result, which run checks, returning a non-nil error when it is not exactly right.
	want []sentinel
	as   *typed
	// run gives the input to the entry point and returns what it returned.
	run func(h *H) error
	// cli, for cmd/xlamesh cases (run has nothing then): the command's arguments and what it
	// must print and exit with.
	cli *cliCase
	// leavesRunning marks a case that leaves a program running until its child ends (PJRT
	// cannot stop one): what that program holds is never freed, so the leak check is skipped.
	leavesRunning bool
}

// sentinel is an error value and the name the report gives it.
type sentinel struct {
	name string
	err  error
}

// typed is a type for errors.As, with its name for the report.
type typed struct {
	name  string
	match func(error) bool
}

// is builds the want list of a case: pairs of name and sentinel.
func is(pairs ...any) []sentinel {
	var out []sentinel
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, sentinel{pairs[i].(string), pairs[i+1].(error)})
	}
	return out
}

// as returns a typed error target for errors.As.
func as[T error](name string) *typed {
	return &typed{name, func(err error) bool { var t T; return errors.As(err, &t) }}
}

// expectation says in words what the case wants, for the report and failure messages.
func (c *hcase) expectation() string {
	if c.cli != nil {
		return c.cli.expectation()
	}
	if len(c.want) == 0 && c.as == nil {
		return "correct result"
	}
	var parts []string
	for _, s := range c.want {
		parts = append(parts, s.name)
	}
	if c.as != nil {
		parts = append(parts, "As "+c.as.name)
	}
	return strings.Join(parts, " + ")
}

// Outcome kinds: the first two pass, the rest fail the test.
const (
	kindTyped   = "typed error"
	kindCorrect = "correct result"
	kindWrong   = "wrong" // an error not the expected one, no error where one was due, a wrong value
	kindPanic   = "panic"
	kindSignal  = "signal"
	kindHang    = "hang"
	kindMissing = "not run" // the child never reached the case (a broken child): fails too
)

// outcome is what one case did.
type outcome struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

func (o outcome) ok() bool { return o.Kind == kindTyped || o.Kind == kindCorrect }

// event is one line of a child's report file.
type event struct {
	Index int     `json:"i"`
	Start bool    `json:"start,omitempty"`
	End   outcome `json:"end"`
	Hang  bool    `json:"hang,omitempty"`
}

var (
	casesOnce sync.Once
	caseList  []*hcase
)

// allCases returns every case, in a fixed order (parent and child must agree on indices).
func allCases() []*hcase {
	casesOnce.Do(func() {
		for _, part := range [][]*hcase{meshCases(), shardyCases(), lowerCases(), wrapCases(), compileCases(),
			executeCases(), transferCases(), openCases(), compileCacheCases(), pluginCases(), installCases(), jitCases(),
			ownershipCases(), runawayCases(), runawayExecuteCases(), multiControllerCases(), cliCases()} {
			caseList = append(caseList, part...)
		}
	})
	return caseList
}

func TestMain(m *testing.M) {
	if list := os.Getenv(envChild); list != "" {
		os.Exit(runChild(list))
	}
	if spec := os.Getenv(envMutants); spec != "" {
		os.Exit(runMutantChild(spec))
	}
	flag.Parse()
	os.Exit(m.Run())
}

// ---- the child ----

// H is what a case gets in the child: shared clients, a temporary directory, the fake plugins,
// and a way to report a follow-up check that failed.
type H struct {
	dir      string
	fakes    string
	clients  map[int]*pjrt.Client
	extra    []*pjrt.Client // opened by Fresh; closed at the end of the child
	cleanups []func()
	failures []string
}

// setupError is the panic value of Must: a case's own preparation failed, not the input.
type setupError struct{ err error }

// Must ends the case as wrong when err is not nil: a step of the case's preparation failed.
func (h *H) Must(err error) {
	if err != nil {
		panic(setupError{err})
	}
}

// Failf records a follow-up check that failed (the library is left unusable, a value is
// wrong): the case is wrong whatever its entry point returned.
func (h *H) Failf(format string, args ...any) {
	h.failures = append(h.failures, fmt.Sprintf(format, args...))
}

// Cleanup runs f when the case ends, before the leak check.
func (h *H) Cleanup(f func()) { h.cleanups = append(h.cleanups, f) }

// Client returns the child's shared client with 8 devices.
func (h *H) Client() *pjrt.Client { return h.ClientN(8) }

// ClientN returns the child's shared client with n devices, opening it on first use.
func (h *H) ClientN(n int) *pjrt.Client {
	if c := h.clients[n]; c != nil {
		return c
	}
	c, err := pjrttest.Open(n)
	h.Must(err)
	h.clients[n] = c
	return c
}

// Fresh opens a client of its own for a case that closes it or must not share it.
func (h *H) Fresh(n int) *pjrt.Client {
	c, err := pjrttest.Open(n)
	h.Must(err)
	h.extra = append(h.extra, c)
	return c
}

// Fake returns the path of the fake plugin of the given kind (testdata/fake.c).
func (h *H) Fake(kind string) string { return filepath.Join(h.fakes, "fake_"+kind+".so") }

// Dir returns a fresh temporary directory, removed when the case ends (the plugin cases write
// a 250 MB copy of the plugin into each).
func (h *H) Dir() string {
	d, err := os.MkdirTemp(h.dir, "case-")
	h.Must(err)
	h.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func runChild(list string) int {
	var idx []int
	for _, f := range strings.Split(list, ",") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= len(allCases()) {
			fmt.Fprintf(os.Stderr, "hostile child: bad case list %q\n", list)
			return 1
		}
		idx = append(idx, i)
	}
	out, err := os.OpenFile(os.Getenv(envOut), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile child:", err)
		return 1
	}
	var mu sync.Mutex
	write := func(e event) {
		b, _ := json.Marshal(e)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
	}
	// The parent owns the scratch directory, so a child that dies leaves nothing behind.
	h := &H{dir: os.Getenv(envDir), fakes: os.Getenv(envFakes), clients: map[int]*pjrt.Client{}}

	// The watchdog: a case still running after caseTimeout is a hang.
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
			if i >= 0 && time.Since(since) > caseTimeout {
				write(event{Index: i, Hang: true})
				fmt.Fprintf(os.Stderr, "hostile child: case %d still running after %v\n", i, caseTimeout)
				buf := make([]byte, 1<<20)
				os.Stderr.Write(buf[:runtime.Stack(buf, true)])
				os.Exit(3)
			}
		}
	}()

	for _, i := range idx {
		c := allCases()[i]
		write(event{Index: i, Start: true})
		current.Lock()
		current.i, current.since = i, time.Now()
		current.Unlock()
		o := runCase(h, c)
		current.Lock()
		current.i = -1
		current.Unlock()
		write(event{Index: i, End: o})
	}
	for _, c := range h.extra {
		c.Close()
	}
	for _, c := range h.clients {
		c.Close()
	}
	return 0
}

// runCase runs one case and classifies what it returned. A panic is not recovered (the parent
// sees it), except Must's.
func runCase(h *H, c *hcase) (o outcome) {
	h.failures, h.cleanups = nil, nil
	buffers, executables := pjrt.LiveBuffers(), pjrt.LiveExecutables()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		se, ok := r.(setupError)
		if !ok {
			panic(r)
		}
		h.runCleanups()
		o = outcome{kindWrong, "the case's own preparation failed: " + se.err.Error()}
	}()
	err := c.run(h)
	h.runCleanups()
	o = classify(c, err)
	if o.ok() && len(h.failures) > 0 {
		o = outcome{kindWrong, fmt.Sprintf("%s, but then: %s", o.Detail, strings.Join(h.failures, "; "))}
	}
	// What a case made and closed must be gone, in the background too (a cancelled transfer
	// frees its buffers when it ends).
	if c.leavesRunning {
		return o
	}
	deadline := time.Now().Add(30 * time.Second)
	for (pjrt.LiveBuffers() > buffers || pjrt.LiveExecutables() > executables) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if b, e := pjrt.LiveBuffers()-buffers, pjrt.LiveExecutables()-executables; o.ok() && (b > 0 || e > 0) {
		o = outcome{kindWrong, fmt.Sprintf("%s, but %d device buffers and %d executables leaked", o.Detail, b, e)}
	}
	return o
}

func (h *H) runCleanups() {
	for i := len(h.cleanups) - 1; i >= 0; i-- {
		h.cleanups[i]()
	}
	h.cleanups = nil
}

// classify turns what a case's run returned into an outcome.
func classify(c *hcase, err error) outcome {
	if len(c.want) == 0 && c.as == nil {
		if err != nil {
			return outcome{kindWrong, err.Error()}
		}
		return outcome{kindCorrect, "as expected"}
	}
	if err == nil {
		return outcome{kindWrong, "no error; want " + c.expectation()}
	}
	var missing []string
	for _, s := range c.want {
		if !errors.Is(err, s.err) {
			missing = append(missing, s.name)
		}
	}
	if c.as != nil && !c.as.match(err) {
		missing = append(missing, "As "+c.as.name)
	}
	if len(missing) > 0 {
		return outcome{kindWrong, fmt.Sprintf("%v: does not match %s", err, strings.Join(missing, ", "))}
	}
	return outcome{kindTyped, err.Error()}
}

// wrongf is the error a correct-result case returns for a wrong value.
func wrongf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// ---- the parent ----

var updateReport = flag.Bool("update-report", false, "rewrite the suite's tables in docs/reliability.md (run the whole suite)")

// outcomes holds what every case did, for the report.
var (
	outcomesMu sync.Mutex
	outcomes   = map[*hcase]outcome{}
)

func record(c *hcase, o outcome) {
	outcomesMu.Lock()
	defer outcomesMu.Unlock()
	outcomes[c] = o
}

// TestHostile runs every case in child processes, two groups at a time (go test's -parallel),
// and fails on every outcome other than the expected typed error or correct result.
func TestHostile(t *testing.T) {
	cases := allCases()
	checkCoverage(t, cases)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fakes := buildFakes(t)
	groups := map[string][]int{}
	var order []string
	for i, c := range cases {
		g := c.group
		if c.cli != nil {
			g = "cli"
		} else if g == "" {
			g = "pure"
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	t.Run("groups", func(t *testing.T) {
		for _, g := range order {
			t.Run(g, func(t *testing.T) {
				t.Parallel()
				if g == "cli" {
					runCLI(t, cases, groups[g], fakes)
					return
				}
				runGroup(t, exe, fakes, cases, groups[g])
			})
		}
	})
	if *updateReport {
		if len(outcomes) < len(cases) {
			t.Fatalf("-update-report needs the whole suite to run (%d of %d cases ran)", len(outcomes), len(cases))
		}
		writeReport(t, cases)
	}
}

// checkCoverage fails the test unless the cases reach 120 inputs, every class and every entry
// point, and have unique names.
func checkCoverage(t *testing.T, cases []*hcase) {
	if len(cases) < 120 {
		t.Errorf("%d cases; the suite promises at least 120", len(cases))
	}
	names := map[string]bool{}
	byClass, byEntry := map[class]int{}, map[string]int{}
	for _, c := range cases {
		if names[c.name] {
			t.Errorf("case name %q used twice", c.name)
		}
		names[c.name] = true
		byClass[c.class]++
		byEntry[c.entry]++
		if !slices.Contains(entries, c.entry) {
			t.Errorf("case %q: entry point %q is not in the list of entry points", c.name, c.entry)
		}
		if !slices.Contains(classes, c.class) {
			t.Errorf("case %q: unknown class %q", c.name, c.class)
		}
		if (c.run == nil) == (c.cli == nil) {
			t.Errorf("case %q needs exactly one of run and cli", c.name)
		}
	}
	for _, cl := range classes {
		if byClass[cl] == 0 {
			t.Errorf("no case of class %q", cl)
		}
	}
	for _, e := range entries {
		if byEntry[e] == 0 {
			t.Errorf("no case reaches entry point %q", e)
		}
	}
}

// runGroup runs the cases idx in child processes: one child for all of them, and after a child
// dies, a new one for the cases it did not reach.
func runGroup(t *testing.T, exe, fakes string, cases []*hcase, idx []int) {
	got := map[int]outcome{}
	for todo := idx; len(todo) > 0; {
		ran := runChildProcess(t, exe, fakes, cases, todo, got)
		if ran == 0 { // the child reached no case at all: do not loop forever
			for _, i := range todo {
				if _, ok := got[i]; !ok {
					got[i] = outcome{kindMissing, "the child process started no case"}
				}
			}
			break
		}
		todo = todo[ran:]
	}
	for _, i := range idx {
		c, o := cases[i], got[i]
		record(c, o)
		t.Run(c.name, func(t *testing.T) {
			if !o.ok() {
				t.Errorf("%s [%s, %s]: %s: %s\nwant: %s", c.name, c.class, c.entry, o.Kind, o.Detail, c.expectation())
			}
		})
	}
}

// runChildProcess runs one child for the cases todo, records the outcome of each case it
// finished in got, and returns how many cases of todo it got through (finished, or died in).
func runChildProcess(t *testing.T, exe, fakes string, cases []*hcase, todo []int, got map[int]outcome) int {
	out := filepath.Join(t.TempDir(), "events.jsonl")
	list := make([]string, len(todo))
	for k, i := range todo {
		list[k] = strconv.Itoa(i)
	}
	limit := childTimeout + time.Duration(len(todo))*caseTimeout
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+strings.Join(list, ","), envOut+"="+out, envFakes+"="+fakes,
		envDir+"="+t.TempDir())
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)

	started, hung := -1, -1
	ended := map[int]bool{}
	if f, err := os.Open(out); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			switch {
			case e.Hang:
				hung = e.Index
			case e.Start:
				started = e.Index
			default:
				got[e.Index] = e.End
				ended[e.Index] = true
			}
		}
		f.Close()
	}
	text := stderr.String()
	if strings.Contains(text, "WARNING: DATA RACE") {
		t.Errorf("a data race in the child running %v:\n%s", todo, text)
	}
	ran := 0
	for k, i := range todo {
		if ended[i] {
			ran = k + 1
		}
	}
	if runErr == nil && ran == len(todo) {
		t.Logf("child for %d cases: %v", len(todo), elapsed.Round(time.Millisecond))
		return ran
	}
	// The child died (or ended early) in the case after the last one it finished.
	if ran < len(todo) && started == todo[ran] {
		i := todo[ran]
		got[i] = deathOutcome(ctx.Err() != nil, hung == i, runErr, text)
		t.Logf("child died in case %q after %v: %s", cases[i].name, elapsed.Round(time.Millisecond), got[i].Kind)
		return ran + 1
	}
	t.Logf("child for %v ended with %v before starting a case:\n%s", todo, runErr, text)
	return ran
}

var signalText = regexp.MustCompile(`(?m)^(SIG[A-Z]+: |fatal error: unexpected signal|\[signal SIG[A-Z]+)|Check failed|terminate called`)

var crashStart = regexp.MustCompile(`(?m)^(panic: |fatal error: |SIG[A-Z]+: |hostile child: case)|Check failed|terminate called`)

// deathOutcome classifies how a child died in a case.
func deathOutcome(timedOut, hung bool, err error, text string) outcome {
	// The report: from the first line that says what happened (the crashing goroutine
	// follows it), else the end of the output.
	tail := text
	if loc := crashStart.FindStringIndex(text); loc != nil {
		tail = text[loc[0]:]
		if len(tail) > 4000 {
			tail = tail[:4000] + "..."
		}
	} else if len(tail) > 3000 {
		tail = "..." + tail[len(tail)-3000:]
	}
	var exit *exec.ExitError
	switch {
	case hung || timedOut:
		return outcome{kindHang, fmt.Sprintf("still running after %v: %s", caseTimeout, tail)}
	case strings.Contains(text, "all goroutines are asleep - deadlock"):
		return outcome{kindHang, "deadlock: " + tail}
	case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled():
		return outcome{kindSignal, fmt.Sprintf("killed by %v: %s", exit.Sys().(syscall.WaitStatus).Signal(), tail)}
	case regexp.MustCompile(`(?m)^panic: `).MatchString(text) && !strings.Contains(text, "fatal error: unexpected signal"):
		return outcome{kindPanic, tail}
	case signalText.MatchString(text):
		return outcome{kindSignal, tail}
	case strings.Contains(text, "fatal error: "):
		return outcome{kindPanic, tail}
	}
	return outcome{kindSignal, fmt.Sprintf("the process ended (%v): %s", err, tail)}
}

// tailBuffer keeps the last 64 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 64<<10 {
		t.b = t.b[len(t.b)-64<<10:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.Clone(t.b))
}
