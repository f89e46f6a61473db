package distributed

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
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
	assert.NoError(t, j.Err(), "no class ends the job")
}
