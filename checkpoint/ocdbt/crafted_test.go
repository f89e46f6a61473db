package ocdbt

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var testConf = config{maxInlineValueBytes: 100, maxDecodedNodeBytes: 1 << 20, arityLog2: 4}

// craft writes a database by hand: the data file d/x with the given bytes and a manifest
// whose one version has the given root.
func craft(t *testing.T, data []byte, root ref, height uint8) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "x"), data, 0o644))
	m := &manifest{config: testConf, versions: []version{{generation: 1, rootHeight: height, root: root, stats: stats{numKeys: 1}}}}
	raw, err := encodeManifest(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644))
	return dir
}

var fileX = dataFile{rel: "d/x"}

// selfEncoding encodes an interior node whose children all point at the node itself.
func selfEncoding(t *testing.T, keys []string) []byte {
	var raw []byte
	for length := uint64(0); ; {
		n := &btreeNode{height: 1, keys: keys}
		for range keys {
			n.children = append(n.children, child{loc: ref{file: fileX, length: length}})
		}
		var err error
		raw, err = encodeBtreeNode(n, &testConf)
		require.NoError(t, err)
		if uint64(len(raw)) == length {
			return raw
		}
		length = uint64(len(raw))
	}
}

func listErr(t *testing.T, dir string) error {
	t.Helper()
	db, err := Open(dir)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.List("")
	if err == nil {
		_, err = db.Get("k")
	}
	return err
}

func TestCrafted(t *testing.T) {
	leaf, err := encodeBtreeNode(&btreeNode{keys: []string{"k"}, values: []leafValue{{inline: []byte("v")}}}, &testConf)
	require.NoError(t, err)

	t.Run("node refers to itself", func(t *testing.T) {
		raw := selfEncoding(t, []string{"k"})
		err := listErr(t, craft(t, raw, ref{file: fileX, length: uint64(len(raw))}, 1))
		require.ErrorIs(t, err, ErrDepth)
		require.ErrorContains(t, err, "d/x[0:")
	})
	t.Run("node reached twice", func(t *testing.T) {
		// Two entries of the root point at the same leaf, which is the only child
		// whose height fits.
		data := append([]byte{}, leaf...)
		root, err := encodeBtreeNode(&btreeNode{height: 1, keys: []string{"k", "l"}, children: []child{
			{loc: ref{file: fileX, length: uint64(len(leaf))}},
			{loc: ref{file: fileX, length: uint64(len(leaf))}},
		}}, &testConf)
		require.NoError(t, err)
		data = append(data, root...)
		err = listErr(t, craft(t, data, ref{file: fileX, offset: uint64(len(leaf)), length: uint64(len(root))}, 1))
		require.ErrorIs(t, err, ErrDepth)
		require.ErrorContains(t, err, "reached twice")
	})
	t.Run("reference past end", func(t *testing.T) {
		err := listErr(t, craft(t, leaf, ref{file: fileX, offset: 1 << 40, length: 10}, 0))
		require.ErrorIs(t, err, ErrRange)
		require.ErrorContains(t, err, "d/x")
	})
	t.Run("reference overflows", func(t *testing.T) {
		err := listErr(t, craft(t, leaf, ref{file: fileX, offset: math.MaxInt64, length: 10}, 0))
		require.ErrorIs(t, err, ErrFormat)
	})
	t.Run("path leaves the database", func(t *testing.T) {
		for _, p := range []string{"../x", "/etc/passwd", "d/../../x", "d//x"} {
			err := listErr(t, craft(t, leaf, ref{file: dataFile{rel: p}, length: uint64(len(leaf))}, 0))
			require.ErrorIs(t, err, ErrFormat, p)
		}
	})
	t.Run("wrong root height", func(t *testing.T) {
		err := listErr(t, craft(t, leaf, ref{file: fileX, length: uint64(len(leaf))}, 3))
		require.ErrorIs(t, err, ErrDepth)
	})
}

// TestHugeLengths feeds bodies whose counts and lengths claim far more than the data
// holds: each must fail before allocating.
func TestHugeLengths(t *testing.T) {
	seal := func(body []byte) []byte {
		raw, err := sealEnvelope(btreeNodeMagic, body, false, 0)
		require.NoError(t, err)
		return raw
	}
	var cfg encoder
	testConf.encode(&cfg)
	for name, tc := range map[string]struct {
		magic uint32
		body  []byte
		want  error
	}{
		"num_files":       {btreeNodeMagic, []byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, ErrFormat},
		"num_entries":     {btreeNodeMagic, []byte{0, 0, 0xff, 0xff, 0xff, 0x0f}, ErrFormat},
		"entries vs data": {btreeNodeMagic, []byte{0, 0, 0xff, 0xff, 0x01}, ErrTruncated},
		"suffix length":   {btreeNodeMagic, []byte{0, 0, 1, 0xff, 0xff, 0x07, 0, 0}, ErrFormat},
		"suffix vs data":  {btreeNodeMagic, []byte{0, 0, 1, 0xff, 0x7f, 0, 0, 0}, ErrTruncated},
		"value length":    {btreeNodeMagic, []byte{0, 0, 1, 1, 'k', 0xff, 0xff, 0x3f, 0}, ErrTruncated},
		"inline too long": {btreeNodeMagic, []byte{0, 0, 1, 1, 'k', 0xff, 0xff, 0xff, 0xff, 0x0f, 0}, ErrFormat},
		"varint overflow": {btreeNodeMagic, []byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, ErrFormat},
		"versions":        {manifestMagic, append(append([]byte{}, cfg.b...), 0, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrFormat},
	} {
		t.Run(name, func(t *testing.T) {
			raw := seal(tc.body)
			var err error
			if tc.magic == manifestMagic {
				raw, err = sealEnvelope(manifestMagic, tc.body, false, 0)
				require.NoError(t, err)
				_, err = decodeManifest(raw, "m")
			} else {
				_, err = decodeBtreeNode(raw, "n", "")
			}
			require.Error(t, err)
			require.True(t, errors.Is(err, tc.want), "%v", err)
		})
	}
}
