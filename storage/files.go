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
	"strings"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// Files is a content-addressed file store under a directory: each file is
// written once at <dir>/<aa>/<sha256>, made durable before Put returns.
type Files struct {
	dir string
	// mu orders Put's placing or reuse of a stored file against Sweep's
	// removal of it.
	mu sync.Mutex
}

var _ app.FileStore = (*Files)(nil)

// NewFiles returns a store rooted at dir (created if needed).
func NewFiles(dir string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create file store %s: %w", dir, err)
	}
	return &Files{dir: dir}, nil
}

// A stored file's mode; a sweep that finds it unreferenced marks it by
// making it read-only, and Put reusing it makes it writable again.
const (
	storedMode os.FileMode = 0o600
	markedMode os.FileMode = 0o400
)

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
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := os.Stat(dst); err == nil {
		// Reused content: its time is refreshed so that a sweep spares it
		// until the record about to refer to it has committed.
		now := time.Now()
		if err := errors.Join(os.Chmod(dst, storedMode), os.Chtimes(dst, now, now)); err != nil {
			return app.Blob{}, fmt.Errorf("store file: %w", err)
		}
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

// Sweep removes stored files no record refers to. A file goes in two
// steps, a grace period apart: the first sweep that finds it unreferenced
// and last written or reused before the cut-off only marks it (read-only,
// its time set to now); a later sweep removes it if it is still marked,
// unreferenced and its mark older than the cut-off. So a file is removed
// only after nothing has referred to it for a whole grace period, which
// leaves time for an upload whose record has not committed yet and for a
// database backup taken alongside the files. Put reusing a file clears the
// mark. Temporary upload files older than the cut-off (left by a crash)
// are removed too.
func (f *Files) Sweep(ctx context.Context, referenced func(sha256 string) bool, before time.Time) (app.SweepResult, error) {
	var res app.SweepResult
	dirs, err := os.ReadDir(f.dir)
	if err != nil {
		return res, fmt.Errorf("sweep files: %w", err)
	}
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		name := d.Name()
		if !d.IsDir() {
			if strings.HasPrefix(name, ".upload-") {
				if info, err := d.Info(); err == nil && info.ModTime().Before(before) {
					if os.Remove(filepath.Join(f.dir, name)) == nil {
						res.Removed++
						res.Bytes += info.Size()
					}
				}
			}
			continue
		}
		if len(name) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(f.dir, name))
		if err != nil {
			return res, fmt.Errorf("sweep files: %w", err)
		}
		for _, e := range files {
			hash := e.Name()
			if e.IsDir() || len(hash) != 64 || !strings.HasPrefix(hash, name) {
				continue
			}
			if _, err := hex.DecodeString(hash); err != nil {
				continue
			}
			if referenced(hash) {
				res.Kept++
				continue
			}
			removed, size, err := f.sweepOne(hash, before)
			if err != nil {
				return res, err
			}
			if removed {
				res.Removed++
				res.Bytes += size
			} else {
				res.Kept++
			}
		}
	}
	return res, nil
}

// sweepOne marks or removes one unreferenced file, under the lock Put
// takes, so a Put reusing the file between the check and the removal is
// never lost.
func (f *Files) sweepOne(hash string, before time.Time) (removed bool, size int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.path(hash)
	info, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("sweep files: %w", err)
	}
	if !info.ModTime().Before(before) {
		return false, 0, nil // young, reused or marked by an earlier sweep
	}
	if !info.Mode().IsRegular() {
		return false, 0, nil
	}
	if info.Mode().Perm() != markedMode {
		// First sighting: mark it and start the grace period.
		now := time.Now()
		if err := errors.Join(os.Chmod(p, markedMode), os.Chtimes(p, now, now)); err != nil {
			return false, 0, fmt.Errorf("sweep files: %w", err)
		}
		return false, 0, nil
	}
	if err := os.Remove(p); err != nil {
		return false, 0, fmt.Errorf("sweep files: %w", err)
	}
	return true, info.Size(), nil
}
