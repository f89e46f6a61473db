package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xlamesh/xlamesh/distributed"
)

// launch runs `xlamesh launch -n N [flags] -- program [args]`: N local processes of one job,
// like torchrun. Each gets the job's environment (distributed.FromEnv reads it): the coordinator
// address (a free loopback port unless -coordinator is given), its process id, the number of
// processes and the job id, and with -gpus-per-process K its own CUDA_VISIBLE_DEVICES. Their
// output is streamed line by line with a "[i] " prefix. When one process fails, the others get
// -grace to notice (the job reports the lost process to them) and are then stopped: SIGTERM, and
// SIGKILL 5 s later. SIGINT and SIGTERM to launch are passed on. launch fails (xlamesh exits
// 1) when any process did not exit 0, naming each and the first to fail.
//
// Mutual TLS is on unless -tls=false: launch makes a CA for the job and a certificate for each
// process (distributed.NewCredentials: ECDSA P-256, valid for -tls-validity, naming the
// coordinator's host) in a new private temporary directory, passes each process its files
// through the XLAMESH_MTLS_* variables, and removes the directory when the job is over. Only
// the job's processes can then reach its coordinator.
func launch(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	fs.SetOutput(w)
	n := fs.Int("n", 2, "number of processes")
	coordinator := fs.String("coordinator", "", "coordinator address host:port (default: a free port on 127.0.0.1)")
	job := fs.String("job", "", "job id (default: launch-<pid>)")
	gpus := fs.Int("gpus-per-process", 0, "give process i GPUs i*K..i*K+K-1 through CUDA_VISIBLE_DEVICES (0: leave it)")
	heartbeat := fs.Duration("heartbeat-timeout", 0, "the job's heartbeat timeout (default: distributed's)")
	initTimeout := fs.Duration("init-timeout", 0, "the job's initialisation timeout (default: distributed's)")
	grace := fs.Duration("grace", 20*time.Second, "after a process fails, how long the others may take to exit on their own")
	timeout := fs.Duration("timeout", 0, "stop every process after this long (0: no limit)")
	useTLS := fs.Bool("tls", true, "mutual TLS between the processes and the coordinator, with a CA and certificates made for this job")
	validity := fs.Duration("tls-validity", 24*time.Hour, "how long the job's certificates are valid")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: xlamesh launch [-n N] [flags] -- program [args...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmdline := fs.Args()
	if len(cmdline) > 0 && cmdline[0] == "--" {
		cmdline = cmdline[1:]
	}
	switch {
	case len(cmdline) == 0:
		return usageError(fs, "no program to launch (xlamesh launch -n 4 -- go run ./examples/multiprocess)")
	case *n < 1:
		return usageError(fs, "-n %d: need at least one process", *n)
	case *useTLS && *validity <= 0:
		return usageError(fs, "-tls-validity %s: need a positive duration", *validity)
	}
	if *coordinator != "" {
		if _, port, err := net.SplitHostPort(*coordinator); err != nil || port == "0" {
			return usageError(fs, "-coordinator %q: need host:port with a port the processes can share (not 0)", *coordinator)
		}
	}
	if *coordinator == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("launch: no free loopback port for the coordinator: %w", err)
		}
		*coordinator = l.Addr().String()
		l.Close()
	}
	if *job == "" {
		*job = "launch-" + strconv.Itoa(os.Getpid())
	}
	env := []string{distributed.EnvCoordinator + "=" + *coordinator, distributed.EnvNumProcesses + "=" + strconv.Itoa(*n),
		distributed.EnvJobID + "=" + *job}
	if *heartbeat > 0 {
		env = append(env, distributed.EnvHeartbeatTimeout+"="+heartbeat.String())
	}
	if *initTimeout > 0 {
		env = append(env, distributed.EnvInitTimeout+"="+initTimeout.String())
	}
	var creds []distributed.Credentials
	if *useTLS {
		dir, lock, err := credentialsDir()
		if err != nil {
			return fmt.Errorf("launch: a private directory for the job's certificates: %w", err)
		}
		defer func() {
			_ = os.RemoveAll(dir)
			lock.Close()
		}()
		host, _, err := net.SplitHostPort(*coordinator)
		if err != nil {
			return usageError(fs, "-coordinator %q: %v", *coordinator, err)
		}
		if creds, err = distributed.NewCredentials(dir, *n, uniq(host, "127.0.0.1", "localhost"), *validity); err != nil {
			return fmt.Errorf("launch: %w", err)
		}
	}
	ctx := context.Background()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	l := &launcher{out: w, grace: *grace, failed: make(chan struct{})}
	security := "mutual TLS off (-tls=false): anyone who reaches the coordinator can join"
	if *useTLS {
		security = "mutual TLS with a CA made for this job"
	}
	fmt.Fprintf(w, "[launch] job %q: %d processes, coordinator %s, %s: %s\n", *job, *n, *coordinator, security, strings.Join(cmdline, " "))
	for i := range *n {
		penv := append(cloneEnv(env), distributed.EnvProcessID+"="+strconv.Itoa(i))
		if creds != nil {
			penv = append(penv, distributed.EnvCertFile+"="+creds[i].CertFile, distributed.EnvKeyFile+"="+creds[i].KeyFile,
				distributed.EnvCAFile+"="+creds[i].CAFile)
		}
		if *gpus > 0 {
			ids := make([]string, *gpus)
			for k := range ids {
				ids[k] = strconv.Itoa(i**gpus + k)
			}
			penv = append(penv, "CUDA_VISIBLE_DEVICES="+strings.Join(ids, ","))
		}
		if err := l.start(i, cmdline, penv); err != nil {
			l.stopAll(syscall.SIGKILL)
			l.wg.Wait()
			return err
		}
	}
	return l.wait(ctx)
}

func cloneEnv(s []string) []string { return append([]string(nil), s...) }

// Each launch keeps its job's certificates in a temporary directory named credentialsPrefix +
// random, holding an exclusive flock on credentialsLock inside it while the job runs.
const (
	credentialsPrefix = "xlamesh-launch-tls-"
	credentialsLock   = ".lock"
)

// credentialsDir makes a new private (0700) temporary directory for the job's certificates,
// locked while this launch runs, after removing those a launch killed before it could clean up
// left behind (their lock is free). The lock is held until lock is closed (or the process
// ends); the caller removes the directory.
func credentialsDir() (dir string, lock *os.File, err error) {
	tmp := os.TempDir()
	stale, _ := filepath.Glob(filepath.Join(tmp, credentialsPrefix+"*"))
	for _, d := range stale {
		if f, err := os.Open(filepath.Join(d, credentialsLock)); err == nil {
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				_ = os.RemoveAll(d)
			}
			f.Close()
		}
	}
	if dir, err = os.MkdirTemp(tmp, credentialsPrefix); err != nil {
		return "", nil, err
	}
	// Locked under a private name first, then renamed: a sweep never finds the lock file free.
	f, err := os.CreateTemp(dir, ".lock-")
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			err = os.Rename(f.Name(), filepath.Join(dir, credentialsLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// uniq returns the non-empty strings of s, each once, in order.
func uniq(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// launcher runs the processes of one job.
type launcher struct {
	out   io.Writer
	outMu sync.Mutex // one line at a time
	grace time.Duration
	wg    sync.WaitGroup

	mu       sync.Mutex
	procs    []*child
	first    *child    // the first process that failed
	failedAt time.Time // when it did
	failed   chan struct{}
}

// child is one launched process.
type child struct {
	id   int
	cmd  *exec.Cmd
	done chan struct{}
	code int    // exit code; -1 for a signal
	how  string // e.g. "exit status 3", "signal: killed"
}

// start starts process i in its own process group (so that stopping it stops what it started,
// e.g. the binary under `go run`), streaming its output.
func (l *launcher) start(i int, cmdline, env []string) error {
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("launch: process %d: %w", i, err)
	}
	c := &child{id: i, cmd: cmd, done: make(chan struct{})}
	l.mu.Lock()
	l.procs = append(l.procs, c)
	l.mu.Unlock()
	l.line(fmt.Sprintf("[launch] process %d: pid %d", i, cmd.Process.Pid))
	var streams sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		streams.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				l.line(fmt.Sprintf("[%d] %s", i, sc.Text()))
			}
			_, _ = io.Copy(io.Discard, r)
		})
	}
	l.wg.Go(func() {
		streams.Wait()
		err := cmd.Wait()
		c.code, c.how = 0, "exit status 0"
		if err != nil {
			c.how = err.Error()
			c.code = cmd.ProcessState.ExitCode()
			if c.code == 0 {
				c.code = 1
			}
		}
		// Whatever the process started goes with it, so that the job sees it gone.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		close(c.done)
		if err != nil {
			l.fail(c)
		}
		l.mu.Lock()
		after := ""
		if l.first != nil && l.first != c {
			after = fmt.Sprintf(", %.1fs after process %d failed", time.Since(l.failedAt).Seconds(), l.first.id)
		}
		l.mu.Unlock()
		l.line(fmt.Sprintf("[launch] process %d: %s%s", i, c.how, after))
	})
	return nil
}

// line writes one line of output.
func (l *launcher) line(s string) {
	l.outMu.Lock()
	defer l.outMu.Unlock()
	fmt.Fprintln(l.out, s)
}

// fail records the first failed process.
func (l *launcher) fail(c *child) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		l.first, l.failedAt = c, time.Now()
		close(l.failed)
	}
}

// stopAll signals the process group of every process still running.
func (l *launcher) stopAll(sig syscall.Signal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.procs {
		select {
		case <-c.done:
		default:
			_ = syscall.Kill(-c.cmd.Process.Pid, sig)
		}
	}
}

// wait waits for every process: after the first failure, a signal or the timeout, the others
// get the grace period, then SIGTERM, then SIGKILL.
func (l *launcher) wait(ctx context.Context) error {
	all := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(all)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	stop := func(why string, grace time.Duration) {
		if why != "" {
			l.line("[launch] " + why)
		}
		if grace > 0 {
			select {
			case <-all:
				return
			case <-time.After(grace):
			}
		}
		l.line("[launch] stopping the processes still running (SIGTERM)")
		l.stopAll(syscall.SIGTERM)
		select {
		case <-all:
		case <-time.After(5 * time.Second):
			l.line("[launch] killing the processes still running (SIGKILL)")
			l.stopAll(syscall.SIGKILL)
			<-all
		}
	}
	select {
	case <-all:
	case <-l.failed:
		stop(fmt.Sprintf("process %d failed (%s); the others have %s to exit", l.first.id, l.first.how, l.grace), l.grace)
	case s := <-sigs:
		l.line(fmt.Sprintf("[launch] %s: passing it on", s))
		l.stopAll(s.(syscall.Signal))
		stop("", l.grace)
	case <-ctx.Done():
		stop("time is up (-timeout)", 0)
	}
	<-all
	var failed []string
	for _, c := range l.procs {
		if c.code != 0 {
			failed = append(failed, fmt.Sprintf("process %d: %s", c.id, c.how))
		}
	}
	if len(failed) == 0 {
		l.line(fmt.Sprintf("[launch] all %d processes exited 0", len(l.procs)))
		return nil
	}
	first := ""
	if l.first != nil {
		first = fmt.Sprintf("; the first to fail was process %d", l.first.id)
	}
	return fmt.Errorf("launch: %d of %d processes failed (%s)%s", len(failed), len(l.procs), strings.Join(failed, "; "), first)
}
