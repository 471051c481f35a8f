package objectstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store is a content-addressed file store in an S3 bucket: each file is
// the object <prefix>/<aa>/<sha256>, written once.
type Store struct {
	cfg    Config
	client *minio.Client
	// mu orders, within this process, Put's reuse of an object against
	// Sweep's removal of it (as the directory store's lock does).
	mu sync.Mutex
	// pageSize is the listing's page (max-keys); tests make it small.
	pageSize int
}

var (
	_ app.FileStore   = (*Store)(nil)
	_ app.FileSweeper = (*Store)(nil)
)

// markKey is the user metadata a sweep sets on an object it found
// unreferenced (x-amz-meta-compliance-unreferenced).
const markKey = "Compliance-Unreferenced"

// New returns a store for cfg. It makes no request: Check does.
func New(cfg Config) (*Store, error) {
	var creds *credentials.Credentials
	switch {
	case cfg.AccessKey != "" || cfg.SecretKey != "":
		if cfg.AccessKey == "" || cfg.SecretKey == "" {
			return nil, errors.New("files_url: set both COMPLIANCE_FILES_ACCESS_KEY and COMPLIANCE_FILES_SECRET_KEY")
		}
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	default:
		// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.
		creds = credentials.NewEnvAWS()
		v, _ := creds.Get()
		if v.AccessKeyID == "" || v.SecretAccessKey == "" {
			return nil, errors.New("files_url: no credentials: set COMPLIANCE_FILES_ACCESS_KEY and COMPLIANCE_FILES_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
		}
	}
	lookup := minio.BucketLookupAuto
	switch cfg.PathStyle {
	case "true":
		lookup = minio.BucketLookupPath
	case "false":
		lookup = minio.BucketLookupDNS
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        creds,
		Secure:       cfg.Secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    cfg.Transport,
		MaxRetries:   3,
	})
	if err != nil {
		return nil, fmt.Errorf("files_url: %v", err)
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	return &Store{cfg: cfg, client: client, pageSize: 1000}, nil
}

// String is where the files live, without credentials.
func (s *Store) String() string { return s.cfg.String() }

func (s *Store) key(hash string) string {
	return path.Join(s.cfg.Prefix, hash[:2], hash)
}

// listPrefix is the prefix under which every stored file's key is.
func (s *Store) listPrefix() string {
	if s.cfg.Prefix == "" {
		return ""
	}
	return s.cfg.Prefix + "/"
}

// Put writes r to a local temporary file while hashing it, then sends the
// file to the store under its hash (one PUT with Content-MD5, so the store
// rejects a body damaged in transit). Content already stored is not sent
// again: its object is refreshed (copied onto itself), which clears a
// sweep's mark and restarts its grace period.
func (s *Store) Put(ctx context.Context, r io.Reader) (app.Blob, error) {
	if err := os.MkdirAll(s.cfg.TempDir, 0o700); err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	tmp, err := os.CreateTemp(s.cfg.TempDir, ".upload-*")
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
	sum := hex.EncodeToString(h.Sum(nil))
	key := s.key(sum)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{}); err == nil {
		if err := s.refresh(ctx, key, nil); err == nil {
			return app.Blob{SHA256: sum, Size: n}, nil
		} else if !isNotFound(err) {
			return app.Blob{}, s.fail("store file", err)
		}
		// Removed in between (by another replica's sweep): send it.
	} else if !isNotFound(err) {
		return app.Blob{}, s.fail("store file", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return app.Blob{}, fmt.Errorf("store file: %w", err)
	}
	_, err = s.client.PutObject(ctx, s.cfg.Bucket, key, tmp, n, minio.PutObjectOptions{
		ContentType:          "application/octet-stream",
		SendContentMd5:       true,
		DisableContentSha256: true,
		DisableMultipart:     true,
	})
	if err != nil {
		return app.Blob{}, s.fail("store file", err)
	}
	return app.Blob{SHA256: sum, Size: n}, nil
}

// refresh copies an object onto itself with meta as its user metadata,
// which sets its LastModified to now.
func (s *Store) refresh(ctx context.Context, key string, meta map[string]string) error {
	if meta == nil {
		meta = map[string]string{}
	}
	_, err := s.client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: s.cfg.Bucket, Object: key, ReplaceMetadata: true, UserMetadata: meta, ContentType: "application/octet-stream"},
		minio.CopySrcOptions{Bucket: s.cfg.Bucket, Object: key})
	return err
}

// Open returns a stored file; the reader fetches ranges as it is read and
// seeks without downloading what it skips.
func (s *Store) Open(ctx context.Context, hash string) (io.ReadSeekCloser, error) {
	if len(hash) != 64 {
		return nil, app.ErrNotFound
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return nil, app.ErrNotFound
	}
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.key(hash), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.fail("open file "+hash, err)
	}
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		if isNotFound(err) {
			return nil, app.ErrNotFound
		}
		return nil, s.fail("open file "+hash, err)
	}
	return obj, nil
}

// Sweep removes objects no record refers to, in two steps a grace period
// apart like the directory store: the first sweep that finds an object
// unreferenced and last written or reused before the cut-off marks it
// (copies it onto itself with x-amz-meta-compliance-unreferenced, which
// also restarts its LastModified); a later sweep removes it if it is still
// marked, unreferenced and its LastModified older than the cut-off. Put
// reusing an object clears the mark. Keys under the prefix that are not
// stored files are left alone.
func (s *Store) Sweep(ctx context.Context, referenced func(sha256 string) bool, before time.Time) (app.SweepResult, error) {
	var res app.SweepResult
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prefix := s.listPrefix()
	for obj := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, MaxKeys: s.pageSize}) {
		if obj.Err != nil {
			return res, s.fail("sweep files", obj.Err)
		}
		rel := strings.TrimPrefix(obj.Key, prefix)
		dir, hash, ok := strings.Cut(rel, "/")
		if !ok || len(hash) != 64 || len(dir) != 2 || !strings.HasPrefix(hash, dir) {
			continue
		}
		if _, err := hex.DecodeString(hash); err != nil {
			continue
		}
		if referenced(hash) || !obj.LastModified.Before(before) {
			res.Kept++
			continue
		}
		removed, size, err := s.sweepOne(ctx, obj.Key, before)
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
	if err := ctx.Err(); err != nil {
		return res, err
	}
	s.removeStaleUploads(before)
	return res, nil
}

// removeStaleUploads removes local temporary upload files older than
// before (left by a crash between hashing and sending).
func (s *Store) removeStaleUploads(before time.Time) {
	old, _ := filepath.Glob(filepath.Join(s.cfg.TempDir, ".upload-*"))
	for _, p := range old {
		if info, err := os.Stat(p); err == nil && info.ModTime().Before(before) {
			_ = os.Remove(p)
		}
	}
}

// sweepOne marks or removes one unreferenced object, under the lock Put
// takes.
func (s *Store) sweepOne(ctx context.Context, key string, before time.Time) (removed bool, size int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
	if isNotFound(err) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, s.fail("sweep files", err)
	}
	if !info.LastModified.Before(before) {
		return false, 0, nil // reused or marked since the listing
	}
	if info.UserMetadata[markKey] == "" {
		mark := map[string]string{markKey: time.Now().UTC().Format(time.RFC3339)}
		if err := s.refresh(ctx, key, mark); err != nil && !isNotFound(err) {
			return false, 0, s.fail("sweep files", err)
		}
		return false, 0, nil
	}
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, key, minio.RemoveObjectOptions{}); err != nil && !isNotFound(err) {
		return false, 0, s.fail("sweep files", err)
	}
	return true, info.Size, nil
}

// Check writes, reads back and removes a small object under the prefix:
// the store is reachable, the bucket exists and the credentials may write.
func (s *Store) Check(ctx context.Context) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	key := s.listPrefix() + ".doctor-" + hex.EncodeToString(b)
	body := "compliance doctor " + time.Now().UTC().Format(time.RFC3339)
	if _, err := s.client.PutObject(ctx, s.cfg.Bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{
		SendContentMd5: true, DisableContentSha256: true, DisableMultipart: true,
	}); err != nil {
		return s.fail("write a test object", err)
	}
	readErr := s.readBack(ctx, key, body)
	if err := s.client.RemoveObject(context.WithoutCancel(ctx), s.cfg.Bucket, key, minio.RemoveObjectOptions{}); err != nil && readErr == nil {
		return s.fail("remove the test object", err)
	}
	return readErr
}

func (s *Store) readBack(ctx context.Context, key, body string) error {
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return s.fail("read the test object", err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil {
		return s.fail("read the test object", err)
	}
	if string(got) != body {
		return fmt.Errorf("files_url %s: the test object read back differs from what was written", s.cfg)
	}
	return nil
}

func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	r := minio.ToErrorResponse(err)
	return r.Code == "NoSuchKey" || (r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket")
}

// fail turns a store error into one naming the setting and what to check.
func (s *Store) fail(what string, err error) error {
	r := minio.ToErrorResponse(err)
	switch {
	case r.Code == "NoSuchBucket":
		return fmt.Errorf("%s: files_url %s: the bucket %q does not exist (create it first)", what, s.cfg, s.cfg.Bucket)
	case r.Code == "AccessDenied" || r.Code == "InvalidAccessKeyId" || r.Code == "SignatureDoesNotMatch" || r.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: files_url %s: access denied (%s: %s); check COMPLIANCE_FILES_ACCESS_KEY, COMPLIANCE_FILES_SECRET_KEY and the bucket's policy", what, s.cfg, r.Code, r.Message)
	case r.Code != "":
		return fmt.Errorf("%s: files_url %s: %s: %s", what, s.cfg, r.Code, r.Message)
	}
	return fmt.Errorf("%s: files_url %s: %w", what, s.cfg, err)
}
