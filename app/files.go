package app

import (
	"context"
	"fmt"
	"io"
	"time"
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

// FileSweeper is a file store that can remove the files no record refers
// to (storage.Files is one).
type FileSweeper interface {
	Sweep(ctx context.Context, referenced func(sha256 string) bool, before time.Time) (SweepResult, error)
}

// SweepResult counts what a sweep of the file store did.
type SweepResult struct {
	Removed int   // files removed
	Bytes   int64 // their size
	Kept    int   // files still referenced, young or only marked
}

// FileRefStore lists the stored files records refer to.
type FileRefStore interface {
	// FileReferences returns the SHA-256 of every file a record (evidence,
	// attachment, questionnaire upload, trust document) refers to.
	FileReferences(ctx context.Context) (map[string]struct{}, error)
}

// FileGrace is how long a stored file stays after nothing refers to it any
// more (and how long an upload may take to commit its record).
const FileGrace = 24 * time.Hour

// CollectFiles removes stored files that no record has referred to for
// FileGrace (deleted evidence, attachments, questionnaires and trust
// documents whose content nothing else shares).
func (a *App) CollectFiles(ctx context.Context) (SweepResult, error) {
	sw, ok := a.files.(FileSweeper)
	if !ok {
		return SweepResult{}, nil
	}
	refs, err := a.store.FileReferences(ctx)
	if err != nil {
		return SweepResult{}, fmt.Errorf("collect files: %w", err)
	}
	res, err := sw.Sweep(ctx, func(h string) bool { _, ok := refs[h]; return ok }, a.Now().Add(-FileGrace))
	if err != nil {
		return res, fmt.Errorf("collect files: %w", err)
	}
	if res.Removed > 0 {
		a.log.InfoContext(ctx, "unreferenced files removed", "files", res.Removed, "bytes", res.Bytes)
	}
	return res, nil
}
