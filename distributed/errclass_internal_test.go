package distributed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestOpErrorClasses: how opError names the store's refusals. None of them ends the job.
func TestOpErrorClasses(t *testing.T) {
	j := &Job{cfg: Config{JobID: "classes"}, ctx: context.Background(), lostCh: make(chan struct{})}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want error
		msg  string
	}{
		{context.Background(), rpctypes.ErrRequestTooLarge, ErrTooLarge, `distributed: job "classes": put "k": too large for the store: etcdserver: request is too large`},
		{context.Background(), status.Error(codes.ResourceExhausted, "grpc: trying to send message larger than max (10485760 vs. 9437184)"), ErrTooLarge, ""},
		{context.Background(), rpctypes.ErrNoSpace, ErrCoordinator, `distributed: job "classes": put "k": coordinator unavailable: the store is full: etcdserver: mvcc: database space exceeded`},
		{context.Background(), status.Error(codes.Unavailable, "connection refused"), ErrCoordinator, ""},
		{cancelled, status.Error(codes.Canceled, "context canceled"), context.Canceled, `distributed: job "classes": put "k": context canceled`},
	} {
		err := j.opError(tc.ctx, `put "k"`, tc.err)
		assert.ErrorIs(t, err, tc.want, "%v", tc.err)
		assert.False(t, errors.Is(err, ErrProcessLost), "%v", tc.err)
		if tc.msg != "" {
			assert.Equal(t, tc.msg, err.Error())
		}
	}
	corrupt := fmt.Errorf("distributed: job %q: key %q: %w: chunk 1 of 2 is missing", "classes", "k", ErrCorrupt)
	assert.Equal(t, corrupt, j.opError(context.Background(), `get "k"`, corrupt), "decode's errors stay as they are")
	assert.NoError(t, j.Err(), "no class ends the job")
}

// TestDecodeCorrupt: values in the store that Put did not write — no tag, a chunk index whose
// chunks are missing, altered or too long — are ErrCorrupt on Get and TryGet, and the job
// goes on.
func TestDecodeCorrupt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	j, err := Join(context.Background(), Config{JobID: "corrupt", NumProcesses: 1, Coordinator: addr, InitTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer j.Close()
	value := bytes.Repeat([]byte{7}, 2*ChunkBytes+1)
	require.NoError(t, j.Put("good", value))
	ctx := context.Background()
	resp, err := j.cli.Get(ctx, j.prefix+kvDir+"good")
	require.NoError(t, err)
	var idx chunkIndex
	require.NoError(t, json.Unmarshal(resp.Kvs[0].Value[1:], &idx))
	raw := func(key, v string) {
		_, err := j.cli.Put(ctx, key, v)
		require.NoError(t, err)
	}
	raw(j.prefix+kvDir+"untagged", "plain")
	raw(j.prefix+kvDir+"empty", "")
	missing := idx
	missing.ID = "nothere"
	head, _ := json.Marshal(missing)
	raw(j.prefix+kvDir+"missing", string(tagChunks)+string(head))
	raw(j.prefix+kvDir+"badindex", string(tagChunks)+"{")
	for key, want := range map[string]string{
		"untagged": `a value that starts with 'p' (not written by Put)`,
		"empty":    "an empty value (not written by Put)",
		"missing":  "chunk 0 of 3 is missing",
		"badindex": "chunk index: unexpected end of JSON input",
	} {
		_, err := j.TryGet(key)
		require.ErrorIs(t, err, ErrCorrupt, key)
		assert.Equal(t, fmt.Sprintf(`distributed: job "corrupt": key %q: value corrupt: %s`, key, want), err.Error())
		_, err = j.Get(key, time.Second)
		require.ErrorIs(t, err, ErrCorrupt, key)
	}
	raw(j.chunkKey(idx.ID, 1), "altered")
	_, err = j.TryGet("good")
	assert.ErrorContains(t, err, "value corrupt: its 3 chunks hold")
	raw(j.chunkKey(idx.ID, 1), string(bytes.Repeat([]byte{7}, 3*ChunkBytes)))
	_, err = j.TryGet("good")
	assert.ErrorContains(t, err, "value corrupt: chunk 1 of 3 goes past the index's")
	assert.NoError(t, j.Err())
	require.NoError(t, j.Put("after", []byte("ok")))
	v, err := j.TryGet("after")
	require.NoError(t, err)
	assert.Equal(t, "ok", string(v))
}
