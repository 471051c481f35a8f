package app

import (
	"context"
	"io"
)

// Blob is a stored file, addressed by the SHA-256 of its content.
type Blob struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// FileStore keeps uploaded files (evidence, attachments) outside the
// database. Identical content is stored once.
type FileStore interface {
	// Put stores the content, fsyncs it and returns its hash and size.
	Put(ctx context.Context, r io.Reader) (Blob, error)
	// Open returns the content of a stored file or ErrNotFound.
	Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error)
}
