// Package backup writes and restores the appliance's backup archive: one
// file holding a consistent snapshot of the database, the stored files it
// refers to, the secrets directory and a manifest with the SHA-256 of
// every member. The archive is a tar stream compressed with zstd and,
// with a passphrase, encrypted with age (scrypt). It also runs restore
// drills and keeps a directory of scheduled backups.
//
// It is tooling of the binary's wiring level, like main: it opens the
// database and the data directory through storage directly.
package backup

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/klauspost/compress/zstd"
)

// Format names the archive format in its manifest.
const (
	Format        = "compliance-backup"
	FormatVersion = 1
)

// Member names inside the archive.
const (
	ManifestName = "manifest.json"
	DatabaseName = "compliance.db"
)

// Manifest describes an archive. It is the archive's first member, so it
// can be read without unpacking the rest.
type Manifest struct {
	Format        string           `json:"format"`
	FormatVersion int              `json:"formatVersion"`
	SchemaVersion int              `json:"schemaVersion"`
	BinaryVersion string           `json:"binaryVersion"`
	CreatedAt     time.Time        `json:"createdAt"`
	Members       []Member         `json:"members"`
	Tables        map[string]int64 `json:"tables"`
	FileCount     int              `json:"fileCount"`
	// MissingFiles are stored files the database refers to that were
	// already absent from the data directory when the backup was taken.
	MissingFiles []string `json:"missingFiles,omitempty"`
	// FilesElsewhere, when set, says where the uploaded files live
	// instead (an object store, files_url, without credentials): the
	// archive holds none of them and FileCount is 0.
	FilesElsewhere string `json:"filesElsewhere,omitempty"`
}

// Member is one file of the archive (all but the manifest), in the order
// the archive holds them.
type Member struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// RowCount is the number of rows of every table together.
func (m *Manifest) RowCount() int64 {
	var n int64
	for _, c := range m.Tables {
		n += c
	}
	return n
}

// Options are the settings of Create.
type Options struct {
	// Version is the binary's version, recorded in the manifest.
	Version string
	// Passphrase encrypts the archive with age (scrypt) when set.
	Passphrase string
	// ScryptWorkFactor is scrypt's log2(N) for the passphrase (0: age's
	// default, 18). Tests lower it.
	ScryptWorkFactor int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// FilesElsewhere, when set, is where the uploaded files live instead
	// of the data directory (an object store): they are left out of the
	// archive and the manifest says where they are.
	FilesElsewhere string

	// wrap, in tests, wraps the archive file's writer (to fail writes as
	// a full disk does).
	wrap func(io.Writer) io.Writer
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// Result is what Create wrote.
type Result struct {
	Path      string    `json:"path"`
	Size      int64     `json:"sizeBytes"`
	SHA256    string    `json:"sha256"`
	Encrypted bool      `json:"encrypted"`
	Manifest  *Manifest `json:"-"`
}

// Create writes an archive of the data directory dir, whose database db
// is open, to dst, which must not exist. The database is copied with
// VACUUM INTO (a consistent snapshot while writes go on), then the stored
// files that snapshot refers to and the secrets are added. The archive is
// written under a temporary name in dst's directory, synced and renamed
// into place; on any error (a full disk among them) nothing is left behind.
func Create(ctx context.Context, db *storage.DB, dir storage.DataDir, dst string, opts Options) (*Result, error) {
	res, err := create(ctx, db, dir, dst, opts)
	if err != nil {
		return nil, fmt.Errorf("backup to %s: %w", dst, err)
	}
	return res, nil
}

func create(ctx context.Context, db *storage.DB, dir storage.DataDir, dst string, opts Options) (*Result, error) {
	if _, err := os.Lstat(dst); err == nil {
		return nil, errors.New("the file already exists")
	}
	dstDir := filepath.Dir(dst)
	work, err := os.MkdirTemp(dstDir, ".compliance-backup-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	snap := filepath.Join(work, DatabaseName)
	if err := db.Snapshot(ctx, snap); err != nil {
		return nil, err
	}
	insp, err := storage.Inspect(ctx, snap, storage.InspectOptions{Counts: true, Files: true})
	if err != nil {
		return nil, err
	}
	m := &Manifest{Format: Format, FormatVersion: FormatVersion, SchemaVersion: insp.SchemaVersion,
		BinaryVersion: opts.Version, CreatedAt: opts.now().Truncate(time.Second), Tables: insp.Tables}

	// First pass: the manifest comes first, so every member is hashed
	// before the archive is written; the second pass hashes again and
	// fails if anything changed in between.
	var paths []string
	add := func(name, path string) error {
		sum, size, err := hashFile(path)
		if err != nil {
			return err
		}
		m.Members = append(m.Members, Member{Name: name, Size: size, SHA256: sum})
		paths = append(paths, path)
		return nil
	}
	if err := add(DatabaseName, snap); err != nil {
		return nil, err
	}
	m.FilesElsewhere = opts.FilesElsewhere
	for _, h := range insp.Files {
		if opts.FilesElsewhere != "" {
			break
		}
		if !validHash(h) {
			continue
		}
		p := filepath.Join(dir.FilesPath(), h[:2], h)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			m.MissingFiles = append(m.MissingFiles, h)
			continue
		}
		if err := add("files/"+h[:2]+"/"+h, p); err != nil {
			return nil, err
		}
		m.FileCount++
	}
	secrets, err := os.ReadDir(dir.SecretsPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range secrets {
		if !e.Type().IsRegular() || !validSecretName(e.Name()) {
			continue
		}
		if err := add("secrets/"+e.Name(), filepath.Join(dir.SecretsPath(), e.Name())); err != nil {
			return nil, err
		}
	}

	tmp := filepath.Join(work, "archive")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum := sha256.New()
	var w io.Writer = f
	if opts.wrap != nil {
		w = opts.wrap(f)
	}
	w = io.MultiWriter(w, sum)
	if err := writeArchive(ctx, w, m, paths, opts); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	info, err := os.Stat(tmp)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil, errors.New("the file already exists")
	}
	if err := os.Rename(tmp, dst); err != nil {
		return nil, err
	}
	if err := storage.SyncDir(dstDir); err != nil {
		return nil, err
	}
	return &Result{Path: dst, Size: info.Size(), SHA256: hex.EncodeToString(sum.Sum(nil)),
		Encrypted: opts.Passphrase != "", Manifest: m}, nil
}

// writeArchive writes the layers: tar, in zstd, in age when encrypted.
func writeArchive(ctx context.Context, w io.Writer, m *Manifest, paths []string, opts Options) error {
	var enc io.WriteCloser
	if opts.Passphrase != "" {
		r, err := age.NewScryptRecipient(opts.Passphrase)
		if err != nil {
			return err
		}
		if opts.ScryptWorkFactor > 0 {
			r.SetWorkFactor(opts.ScryptWorkFactor)
		}
		if enc, err = age.Encrypt(w, r); err != nil {
			return err
		}
		w = enc
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return err
	}
	defer zw.Close()
	tw := tar.NewWriter(zw)
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(header(ManifestName, int64(len(raw)), m.CreatedAt)); err != nil {
		return err
	}
	if _, err := tw.Write(raw); err != nil {
		return err
	}
	for i, mem := range m.Members {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyMember(tw, mem, paths[i], m.CreatedAt); err != nil {
			return fmt.Errorf("member %s: %w", mem.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if enc != nil {
		return enc.Close()
	}
	return nil
}

func header(name string, size int64, at time.Time) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: at, Format: tar.FormatPAX}
}

func copyMember(tw *tar.Writer, mem Member, path string, at time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(header(mem.Name, mem.Size, at)); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(f, mem.Size))
	if err != nil {
		return err
	}
	if n != mem.Size || hex.EncodeToString(h.Sum(nil)) != mem.SHA256 {
		return errors.New("the file changed while the backup was written")
	}
	return nil
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func validSecretName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, `/\`) && !strings.HasPrefix(n, ".")
}

// validMemberName reports whether an archive may hold a member of that
// name: the database, a stored file under its hash, or a secret. Nothing
// else is ever written, so nothing else is ever extracted.
func validMemberName(n string) bool {
	switch {
	case n == DatabaseName:
		return true
	case strings.HasPrefix(n, "files/"):
		parts := strings.Split(n, "/")
		return len(parts) == 3 && validHash(parts[2]) && parts[1] == parts[2][:2]
	case strings.HasPrefix(n, "secrets/"):
		return validSecretName(strings.TrimPrefix(n, "secrets/"))
	}
	return false
}

// ReadPassphraseFile reads a passphrase: the file's first line.
func ReadPassphraseFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read passphrase file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return "", fmt.Errorf("passphrase file %s: the first line is empty", path)
	}
	return line, nil
}

// sortedTables lists a count map's tables in order.
func sortedTables(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
