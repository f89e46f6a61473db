package main

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/xlamesh/xlamesh/internal/regfile"
)

// Bounds on what bench and inspect read and allocate for their flags.

// maxKernelBytes caps a -kernel StableHLO file: the text is read whole, then checked and
// compiled; 256 MiB holds large embedded constants and refuses /dev/zero-like inputs early.
const maxKernelBytes = 256 << 20

// checkKernelFile checks, without reading it, that path is a regular file of at most
// maxKernelBytes: a FIFO or a device such as /dev/zero is refused at once instead of read
// forever (the check `devices -plugin` makes on a plugin file, through the same helper).
func checkKernelFile(path string) error {
	f, _, err := regfile.Open(path, maxKernelBytes)
	if err != nil {
		return err
	}
	return f.Close()
}

// readKernelFile reads the -kernel file at path, checked as checkKernelFile checks it.
func readKernelFile(path string) ([]byte, error) { return regfile.ReadFile(path, maxKernelBytes) }

// maxMiB is the largest -mib: 16 GiB, so that mib<<20 and the row count fit any int and the
// array stays within what one host's transfers are meant to measure.
const maxMiB = 16 << 10

// transferCopies is how many arrays of -mib MiB the transfer figure holds at once: the host
// slice, the device array (host memory on CPU), the ToHost result, a ToHostBytes result, and
// the source and destination of the Go copy it compares with.
const transferCopies = 6

// transferMiBCheck refuses a -mib whose transfer figure would not fit in available memory
// (MemAvailable of /proc/meminfo over transferCopies); where that is unknown, maxMiB is the
// only bound.
func transferMiBCheck(mib int) error {
	avail, ok := memAvailable()
	if !ok {
		return nil
	}
	if fits := avail >> 20 / transferCopies; int64(mib) > fits {
		return fmt.Errorf("-mib %d: the transfer figure holds %d arrays of that size at once and MemAvailable "+
			"(/proc/meminfo) is %d MiB: at most -mib %d fits", mib, transferCopies, avail>>20, fits)
	}
	return nil
}

// memAvailable returns MemAvailable of /proc/meminfo in bytes; false where there is none (not
// Linux, or an old kernel). A variable, for tests.
var memAvailable = func() (int64, bool) {
	data, err := regfile.ReadFile("/proc/meminfo", 1<<20)
	if err != nil {
		return 0, false
	}
	return parseMemAvailable(data)
}

// parseMemAvailable reads the "MemAvailable:   123456 kB" line of /proc/meminfo.
func parseMemAvailable(meminfo []byte) (int64, bool) {
	for line := range bytes.Lines(meminfo) {
		rest, ok := bytes.CutPrefix(line, []byte("MemAvailable:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
