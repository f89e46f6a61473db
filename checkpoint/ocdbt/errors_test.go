package ocdbt_test

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint/ocdbt"
)

// dataFileOf returns the one data file of a database written by Write.
func dataFileOf(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "d", "*"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	rel, err := filepath.Rel(dir, m[0])
	require.NoError(t, err)
	return filepath.ToSlash(rel)
}

// reseal recomputes the CRC-32C at the end of an encoded manifest or node.
func reseal(b []byte) {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
}

// readAll opens dir and reads every key, returning the first error.
func readAll(dir string) error {
	db, err := ocdbt.Open(dir)
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := db.List("")
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := db.Get(k); err != nil {
			return err
		}
	}
	return nil
}

func TestErrors(t *testing.T) {
	entries := map[string][]byte{"a": value(1, 10), "big": value(2, 500), "c": value(3, 50)}
	for _, tc := range []struct {
		name  string
		edit  func(t *testing.T, dir, data string)
		want  error
		names string // what the message must name
	}{
		{"no manifest", func(t *testing.T, dir, data string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "manifest.ocdbt")))
		}, ocdbt.ErrMissingFile, "manifest.ocdbt"},
		{"manifest byte changed", func(t *testing.T, dir, data string) {
			flip(t, filepath.Join(dir, "manifest.ocdbt"), 30)
		}, ocdbt.ErrChecksum, "manifest.ocdbt"},
		{"manifest magic", func(t *testing.T, dir, data string) {
			flip(t, filepath.Join(dir, "manifest.ocdbt"), 0)
		}, ocdbt.ErrMagic, "manifest.ocdbt"},
		{"manifest truncated", func(t *testing.T, dir, data string) {
			truncate(t, filepath.Join(dir, "manifest.ocdbt"), 10)
		}, ocdbt.ErrTruncated, "manifest.ocdbt"},
		{"manifest cut short", func(t *testing.T, dir, data string) {
			truncate(t, filepath.Join(dir, "manifest.ocdbt"), 40)
		}, ocdbt.ErrTruncated, "manifest.ocdbt"},
		{"manifest format version", func(t *testing.T, dir, data string) {
			edit(t, filepath.Join(dir, "manifest.ocdbt"), func(b []byte) { b[12] = 1; reseal(b) })
		}, ocdbt.ErrUnsupported, "format version 1"},
		{"manifest compression", func(t *testing.T, dir, data string) {
			edit(t, filepath.Join(dir, "manifest.ocdbt"), func(b []byte) { b[13] = 2; reseal(b) })
		}, ocdbt.ErrUnsupported, "compression format 2"},
		{"node byte changed", func(t *testing.T, dir, data string) {
			// The root node is last in the data file, after the 500-byte value.
			flip(t, filepath.Join(dir, data), 520)
		}, ocdbt.ErrChecksum, "d/"},
		{"node magic", func(t *testing.T, dir, data string) {
			flip(t, filepath.Join(dir, data), 500)
		}, ocdbt.ErrMagic, "d/"},
		{"data file truncated", func(t *testing.T, dir, data string) {
			truncate(t, filepath.Join(dir, data), 510)
		}, ocdbt.ErrRange, "d/"},
		{"data file missing", func(t *testing.T, dir, data string) {
			require.NoError(t, os.Remove(filepath.Join(dir, data)))
		}, ocdbt.ErrMissingFile, "d/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, ocdbt.Write(dir, entries, ocdbt.WithoutCompression()))
			data := dataFileOf(t, dir)
			tc.edit(t, dir, data)
			err := readAll(dir)
			require.ErrorIs(t, err, tc.want)
			names := tc.names
			if names == "d/" {
				names = data
			}
			require.ErrorContains(t, err, names)
		})
	}
}

// TestFixtureErrors corrupts the tensorstore-written fixtures: a changed byte in any data
// file or manifest is caught by a checksum (or, in a value, not at all: OCDBT does not
// checksum out-of-line values, which is why Orbax's zarr chunks carry their own).
func TestFixtureErrors(t *testing.T) {
	// Old versions' data files the latest version and the version tree do not reach may go
	// missing unnoticed; every other is named.
	files, _ := loadFixture(t, "versions")
	missed := 0
	for rel := range files {
		if rel == "manifest.ocdbt" {
			continue
		}
		dir := writeFiles(t, files)
		require.NoError(t, os.Remove(filepath.Join(dir, rel)))
		db, err := ocdbt.Open(dir)
		require.NoError(t, err)
		_, err = db.Versions()
		if err == nil {
			err = readAll(dir)
		}
		db.Close()
		if err != nil {
			missed++
			require.ErrorIs(t, err, ocdbt.ErrMissingFile, rel)
			require.ErrorContains(t, err, rel)
		}
	}
	require.GreaterOrEqual(t, missed, 4)
	// The multilevel fixture's data file holds only nodes: every byte is checksummed.
	files, _ = loadFixture(t, "multilevel")
	for _, off := range []int{5, 100, 5000, 14000} {
		dir := writeFiles(t, files)
		for rel := range files {
			if rel != "manifest.ocdbt" {
				flip(t, filepath.Join(dir, rel), off)
				err := readAll(dir)
				require.Error(t, err, "offset %d", off)
				require.ErrorContains(t, err, rel)
			}
		}
	}
}

func edit(t *testing.T, path string, f func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	f(b)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func flip(t *testing.T, path string, off int) {
	edit(t, path, func(b []byte) { b[off] ^= 0x40 })
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	require.NoError(t, os.Truncate(path, n))
}
