package distributed

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Limits of the key-value store of Put and Get.
const (
	// ChunkBytes is the largest value stored as one etcd value; larger ones are split into
	// chunks of this size. It stays below etcd's default request limit (1.5 MiB), so the
	// chunks fit an external cluster too.
	ChunkBytes = 1 << 20
	// MaxValueBytes is the largest value Put takes: etcd keeps a store of 2 GiB by default, and
	// keeps old values until it compacts.
	MaxValueBytes = 256 << 20
	// MaxKeyBytes is the longest key Put and Get take.
	MaxKeyBytes = 16 << 10
)

// A stored value starts with a tag: tagValue and the value itself, or tagChunks and a
// chunkIndex in JSON. The chunks live under chunkDir/<id>/<i> of the run, written before the
// index, so a reader that sees the index finds every chunk; each large Put has its own id, so a
// second Put of the key never changes the chunks a reader of the first is reading.
const (
	tagValue  byte = 'v'
	tagChunks byte = 'c'
	chunkDir       = "chunks/"
)

// chunkIndex says where a large value's chunks are and what they add up to.
type chunkIndex struct {
	ID     string `json:"id"`
	Size   int    `json:"size"`
	Chunks int    `json:"chunks"`
	SHA256 string `json:"sha256"`
}

// checkSize refuses, before anything is sent, a key or a value the store cannot take.
func (j *Job) checkSize(key string, n int) error {
	if len(key) > MaxKeyBytes {
		return fmt.Errorf("distributed: job %q: key %.40q...: %w: the key has %d bytes (at most %d)", j.cfg.JobID, key, ErrTooLarge, len(key), MaxKeyBytes)
	}
	if n > MaxValueBytes {
		return fmt.Errorf("distributed: job %q: put %q: %w: the value has %d bytes (at most %d)", j.cfg.JobID, key, ErrTooLarge, n, MaxValueBytes)
	}
	return nil
}

// putValue stores value under key: in one etcd value when it is small, else its chunks first
// and then their index.
func (j *Job) putValue(ctx context.Context, key string, value []byte) error {
	put := func(k string, v []byte) error {
		return j.retry(ctx, func(ctx context.Context) error {
			_, err := j.cli.Put(ctx, k, string(v))
			return err
		})
	}
	if len(value) <= ChunkBytes {
		return put(j.prefix+kvDir+key, append([]byte{tagValue}, value...))
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	sum := sha256.Sum256(value)
	idx := chunkIndex{ID: hex.EncodeToString(b[:]), Size: len(value), Chunks: (len(value) + ChunkBytes - 1) / ChunkBytes,
		SHA256: hex.EncodeToString(sum[:])}
	for i := range idx.Chunks {
		if err := put(j.chunkKey(idx.ID, i), value[i*ChunkBytes:min(len(value), (i+1)*ChunkBytes)]); err != nil {
			return err
		}
	}
	head, _ := json.Marshal(idx)
	return put(j.prefix+kvDir+key, append([]byte{tagChunks}, head...))
}

func (j *Job) chunkKey(id string, i int) string {
	return j.prefix + chunkDir + id + "/" + strconv.Itoa(i)
}

// decode returns the value stored under key: the value itself, or its chunks read back and
// checked against the index. A value that is neither, or chunks that are missing or do not add
// up, give an error wrapping ErrCorrupt.
func (j *Job) decode(ctx context.Context, key string, stored []byte) ([]byte, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("distributed: job %q: key %q: %w: %s", j.cfg.JobID, key, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(stored) == 0 {
		return nil, corrupt("an empty value (not written by Put)")
	}
	switch stored[0] {
	case tagValue:
		return stored[1:], nil
	case tagChunks:
	default:
		return nil, corrupt("a value that starts with %q (not written by Put)", stored[0])
	}
	var idx chunkIndex
	if err := json.Unmarshal(stored[1:], &idx); err != nil {
		return nil, corrupt("chunk index: %v", err)
	}
	if idx.Size <= ChunkBytes || idx.Size > MaxValueBytes || idx.Chunks != (idx.Size+ChunkBytes-1)/ChunkBytes {
		return nil, corrupt("chunk index of %d bytes in %d chunks", idx.Size, idx.Chunks)
	}
	value := make([]byte, 0, idx.Size)
	for i := range idx.Chunks {
		var resp *clientv3.GetResponse
		err := j.retry(ctx, func(ctx context.Context) (err error) {
			resp, err = j.cli.Get(ctx, j.chunkKey(idx.ID, i))
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(resp.Kvs) == 0 {
			return nil, corrupt("chunk %d of %d is missing", i, idx.Chunks)
		}
		if len(value)+len(resp.Kvs[0].Value) > idx.Size {
			return nil, corrupt("chunk %d of %d goes past the index's %d bytes", i, idx.Chunks, idx.Size)
		}
		value = append(value, resp.Kvs[0].Value...)
	}
	sum := sha256.Sum256(value)
	if want, _ := hex.DecodeString(idx.SHA256); len(value) != idx.Size || !bytes.Equal(sum[:], want) {
		return nil, corrupt("its %d chunks hold %d bytes that do not match the index's %d bytes and checksum", idx.Chunks, len(value), idx.Size)
	}
	return value, nil
}
