package hostile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// cliCase is a run of the xlamesh command. In args, {fake:KIND} is the path of a fake plugin
// and {dir}/NAME a file of cliFiles. A typed error is the exit status exit (2: a usage error,
// 1: any other) with stderr holding stderr; a correct result is exit status 0 with stdout
// holding every one of stdout.
type cliCase struct {
	args   []string
	exit   int
	stderr string
	stdout []string
}

func (c *cliCase) expectation() string {
	if c.exit == 0 {
		return fmt.Sprintf("exit 0, output %q", c.stdout)
	}
	return fmt.Sprintf("exit %d, %q", c.exit, c.stderr)
}

// cliFiles are the StableHLO files the command's cases read from {dir}.
var cliFiles = map[string]string{
	"recursive.mlir": plainModule("  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n",
		"%x: tensor<2xf32>", "    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n"),
	"infeed.mlir": plainModule("", "%t: !stablehlo.token",
		"    %0:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)\n    return %0#0 : tensor<2xf32>\n"),
	"deep.mlir":   plainModule("", "%x: tensor<2xf32>, %t: "+strings.Repeat("tuple<", 10000)+"tensor<f32>"+strings.Repeat(">", 10000), plainBody),
	"huge.mlir":   plainModule("", "%x: tensor<2xf32>, %t: tensor<4611686018427387904xf32>", plainBody),
	"binary.mlir": "\x7fELF\x02\x01\x01\x00 not MLIR at all \xff\xfe\x00",
	"spin.mlir":   pjrttest.SpinModule(1), // a while loop that never ends
}

// cliFIFO is a FIFO in {dir} that nobody writes: reading it blocks forever.
const cliFIFO = "fifo.mlir"

func cli(name string, cl class, exit int, stderr string, args ...string) *hcase {
	return &hcase{name: "xlamesh " + name, class: cl, entry: "cmd/xlamesh", cli: &cliCase{args: args, exit: exit, stderr: stderr}}
}

func cliOK(name string, cl class, stdout []string, args ...string) *hcase {
	return &hcase{name: "xlamesh " + name, class: cl, entry: "cmd/xlamesh", cli: &cliCase{args: args, stdout: stdout}}
}

func cliCases() []*hcase {
	return []*hcase{
		cli("with no command", classPanics, 2, "usage: xlamesh"),
		cli("with an unknown command", classPanics, 1, `unknown command "frobnicate"`, "frobnicate"),
		cli("visualize -mesh x=-1", classPanics, 1, "invalid mesh", "visualize", "-sim", "-mesh", "x=-1", "-spec", "x"),
		cli("visualize -mesh x=3037000500,y=3037000500 (the product overflows int64)", classPanics, 1, "mesh too large",
			"visualize", "-sim", "-mesh", "x=3037000500,y=3037000500", "-spec", "x"),
		cli("visualize -mesh x=2^62,y=4 (the product wraps to 0)", classPanics, 1, "mesh too large",
			"visualize", "-sim", "-mesh", "x=4611686018427387904,y=4", "-spec", "x"),
		cli("visualize -mesh x=99999999999999999999", classSilent, 1, "-mesh", "visualize", "-sim", "-mesh", "x=99999999999999999999"),
		cli(`visualize -mesh 'a\b=8'`, classNames, 1, "contains a backslash", "visualize", "-sim", "-mesh", `a\b=8`, "-spec", "_"),
		cli("visualize -mesh with a newline in an axis name", classNames, 1, "control byte", "visualize", "-sim", "-mesh", "a\nb=8", "-spec", "_"),
		cli("visualize -spec x,x", classSilent, 1, "duplicate entries", "visualize", "-sim", "-spec", "x,x"),
		cli("visualize -shape 8,z", classSilent, 1, "-shape", "visualize", "-sim", "-shape", "8,z"),
		cli("visualize -shape -8,8", classPanics, 1, "negative", "visualize", "-sim", "-shape", "-8,8"),
		cli("visualize -shape 8,8,8", classPanics, 1, "unsupported", "visualize", "-sim", "-shape", "8,8,8", "-spec", "x"),
		cli("visualize -devices -5", classPanics, 1, "needs 8 devices", "visualize", "-sim", "-devices", "-5"),
		cli("visualize -unknown-flag", classPanics, 1, "flag provided but not defined", "visualize", "-unknown-flag"),
		cliOK("visualize with axis names that need quoting", classNames, []string{"CPU 0", "CPU 7"},
			"visualize", "-sim", "-mesh", `a b=4,"q{=2`, "-spec", `a b,"q{`, "-shape", "8,8"),
		cli("devices -devices -1", classSilent, 1, "invalid device", "devices", "-devices", "-1"),
		cli("devices -plugin a missing file", classPlugins, 1, "PJRT plugin not found", "devices", "-plugin", "{dir}/missing.so"),
		cli("devices -plugin a fake plugin with a tiny table", classPlugins, 1, "not a PJRT plugin", "devices", "-plugin", "{fake:TINY}"),
		cli("devices -plugin a fake plugin of null functions", classPlugins, 1, "not implemented by the plugin", "devices", "-plugin", "{fake:NULL_FUNCTIONS}"),
		cli("devices -plugin a StableHLO file", classPlugins, 1, "not a PJRT plugin", "devices", "-plugin", "{dir}/binary.mlir"),
		cli("devices -plugin a FIFO nobody writes", classHangs, 1, "not a regular file (a named pipe)", "devices", "-plugin", "{dir}/"+cliFIFO),
		cli("devices -plugin /dev/zero", classHangs, 1, "not a regular file (a character device)", "devices", "-plugin", "/dev/zero"),
		cliOK("devices -devices 3", classSilent, []string{"CpuDevice(id=2)"}, "devices", "-devices", "3"),
		cli("install-plugin -plugin nope", classPlugins, 2, "unknown plugin", "install-plugin", "-plugin", "nope", "-path"),
		cli("bench -kernel a recursive module", classPrograms, 1, "recursive call", "bench", "-what", "sweep", "-kernel", "{dir}/recursive.mlir", "-iters", "1", "-q"),
		cli("bench -kernel a module with stablehlo.infeed", classHangs, 1, "unsupported op", "bench", "-what", "sweep", "-kernel", "{dir}/infeed.mlir", "-iters", "1", "-q"),
		cli("bench -kernel a type 10,000 deep", classPrograms, 1, "nesting too deep", "bench", "-what", "sweep", "-kernel", "{dir}/deep.mlir", "-iters", "1", "-q"),
		cli("bench -kernel a missing file", classPrograms, 2, "no such file", "bench", "-what", "sweep", "-kernel", "{dir}/missing.mlir", "-iters", "1", "-q"),
		cli("bench -kernel a while loop that never ends, -timeout 2s", classHangs, 1, "a call timed out: it did not end within -timeout 2s",
			"bench", "-what", "sweep", "-kernel", "{dir}/spin.mlir", "-iters", "1", "-q", "-timeout", "2s"),
		cli("inspect -kernel a tensor whose bytes overflow int64", classPrograms, 1, "tensor too large", "inspect", "-kernel", "{dir}/huge.mlir", "-q"),
		cli("inspect -kernel a binary file", classPrograms, 1, "malformed MLIR", "inspect", "-kernel", "{dir}/binary.mlir", "-q"),
		cli("bench -kernel a FIFO nobody writes", classHangs, 2, "not a regular file (a named pipe)", "bench", "-what", "sweep", "-kernel", "{dir}/"+cliFIFO, "-iters", "1", "-q"),
		cli("bench -kernel /dev/zero", classHangs, 2, "not a regular file (a character device)", "bench", "-what", "sweep", "-kernel", "/dev/zero", "-iters", "1", "-q"),
		cli("inspect -kernel a FIFO nobody writes", classHangs, 1, "not a regular file (a named pipe)", "inspect", "-kernel", "{dir}/"+cliFIFO, "-q"),
		cli("inspect -kernel /dev/zero", classHangs, 1, "not a regular file (a character device)", "inspect", "-kernel", "/dev/zero", "-q"),
		cli("bench -mib 2^40", classPanics, 2, "-mib must be between 1 and 16384, got 1099511627776", "bench", "-what", "transfer", "-mib", "1099511627776", "-q"),
		cli("bench -mib MaxInt64", classPanics, 2, "-mib must be between 1 and 16384", "bench", "-what", "transfer", "-mib", "9223372036854775807", "-q"),
		cli("bench -mib 16385", classSilent, 2, "-mib must be between 1 and 16384, got 16385", "bench", "-what", "transfer", "-mib", "16385", "-q"),
	}
}

// envCLI names an xlamesh binary to run instead of building one (for a build system whose
// tests cannot run the go command).
const envCLI = "XLAMESH_HOSTILE_XLAMESH"

// runCLI builds the xlamesh command and runs the cases idx, each in a process of its own.
func runCLI(t *testing.T, cases []*hcase, idx []int, fakes string) {
	dir := t.TempDir()
	bin := os.Getenv(envCLI)
	if bin == "" {
		bin = filepath.Join(dir, "xlamesh")
		build := exec.Command("go", "build", "-o", bin, "github.com/xlamesh/xlamesh/cmd/xlamesh")
		if msg, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/xlamesh (or set %s to a built xlamesh): %v\n%s", envCLI, err, msg)
		}
	}
	for name, text := range cliFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, cliFIFO), 0o644); err != nil {
		t.Fatal(err)
	}
	cache, err := pjrttest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), plugins.EnvCacheDir+"="+cache)
	for _, i := range idx {
		c := cases[i]
		o := runCommand(bin, env, dir, fakes, c.cli)
		record(c, o)
		t.Run(c.name, func(t *testing.T) {
			if !o.ok() {
				t.Errorf("%s [%s, %s]: %s: %s\nwant: %s", c.name, c.class, c.entry, o.Kind, o.Detail, c.expectation())
			}
		})
	}
}

func runCommand(bin string, env []string, dir, fakes string, cc *cliCase) outcome {
	args := make([]string, len(cc.args))
	for i, a := range cc.args {
		a = strings.ReplaceAll(a, "{dir}", dir)
		if k, ok := strings.CutPrefix(a, "{fake:"); ok {
			a = filepath.Join(fakes, "fake_"+strings.TrimSuffix(k, "}")+".so")
		}
		args[i] = a
	}
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out, errText := stdout.String(), stderr.String()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ctx.Err() == nil {
			return outcome{kindSignal, fmt.Sprintf("killed by %v: %s", ws.Signal(), errText)}
		}
		code = exit.ExitCode()
	} else if err != nil && ctx.Err() == nil {
		return outcome{kindWrong, "could not run the command: " + err.Error()}
	}
	switch {
	case ctx.Err() != nil:
		return outcome{kindHang, fmt.Sprintf("still running after %v: %s", childTimeout, errText)}
	case code == 2 && strings.Contains(errText, "goroutine ") && (strings.Contains(errText, "panic: ") || strings.Contains(errText, "fatal error: ")):
		return deathOutcome(false, false, err, errText)
	case signalText.MatchString(errText):
		return outcome{kindSignal, errText}
	case cc.exit == 0 && code == 0:
		for _, want := range cc.stdout {
			if !strings.Contains(out, want) {
				return outcome{kindWrong, fmt.Sprintf("the output lacks %q:\n%s", want, out)}
			}
		}
		return outcome{kindCorrect, "as expected"}
	case code == cc.exit && cc.exit != 0 && strings.Contains(errText, cc.stderr):
		return outcome{kindTyped, strings.TrimSpace(lastLines(errText, 3))}
	}
	return outcome{kindWrong, fmt.Sprintf("exit %d:\n%s%s", code, lastLines(out, 5), lastLines(errText, 10))}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
