package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/compliance-appliance/compliance/app"
)

// Files is a content-addressed file store under a directory: each file is
// written once at <dir>/<aa>/<sha256>, made durable before Put returns.
type Files struct{ dir string }

var _ app.FileStore = (*Files)(nil)

// NewFiles returns a store rooted at dir (created if needed).
func NewFiles(dir string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create file store %s: %w", dir, err)
	}
	return &Files{dir: dir}, nil
}

func (f *Files) path(hash string) string { return filepath.Join(f.dir, hash[:2], hash) }

// Put streams r to a temporary file while hashing it, fsyncs, and renames it
// into place (a no-op when the content is already stored).
func (f *Files) Put(ctx context.Context, r io.Reader) (app.Blob, error) {
	tmp, err := os.CreateTemp(f.dir, ".upload-*")
	if err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dst := f.path(sum)
	if _, err := os.Stat(dst); err == nil {
		return app.Blob{SHA256: sum, Size: n}, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return app.Blob{SHA256: sum, Size: n}, nil
}

// Open returns a stored file.
func (f *Files) Open(ctx context.Context, hash string) (io.ReadSeekCloser, error) {
	if len(hash) != 64 {
		return nil, app.ErrNotFound
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return nil, app.ErrNotFound
	}
	file, err := os.Open(f.path(hash))
	if errors.Is(err, os.ErrNotExist) {
		return nil, app.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("open file %s: %w", hash, err)
	}
	return file, nil
}
