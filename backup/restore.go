package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"filippo.io/age"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/klauspost/compress/zstd"
)

// Errors a restore reports before it touches anything.
var (
	ErrPassphraseRequired = errors.New("the archive is encrypted: give its passphrase")
	ErrWrongPassphrase    = errors.New("wrong passphrase: the archive could not be decrypted")
	ErrNotArchive         = errors.New("not a compliance backup archive")
	ErrTargetNotEmpty     = errors.New("the data directory is not empty")
)

// MemberError is a damaged, tampered, missing or unexpected member of an
// archive; Member names it.
type MemberError struct {
	Member string
	Err    error
}

func (e *MemberError) Error() string { return fmt.Sprintf("archive member %s: %v", e.Member, e.Err) }
func (e *MemberError) Unwrap() error { return e.Err }

// SchemaError is an archive whose schema is newer than this binary knows.
type SchemaError struct{ Archive, Known int }

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the archive's schema is at version %d but this binary knows only up to %d: restore it with a newer compliance binary", e.Archive, e.Known)
}

// RestoreOptions are the settings of Restore, Verify and Drill.
type RestoreOptions struct {
	// Passphrase decrypts an encrypted archive.
	Passphrase string
	// Force moves a non-empty target aside (renamed with a timestamp
	// suffix, never deleted) instead of refusing it.
	Force bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o RestoreOptions) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	Manifest *Manifest `json:"-"`
	DataDir  string    `json:"dataDir"`
	// MovedAside is where the target's previous content went ("" if the
	// target was empty or new).
	MovedAside string `json:"movedAside,omitempty"`
	// Migrations are the migrations applied to bring an older archive's
	// schema up to this binary's.
	Migrations []string `json:"migrations"`
}

// Restore unpacks the archive into the data directory target, which must
// be empty or absent unless opts.Force. Every member is unpacked into a
// staging directory beside target and checked against the manifest's
// SHA-256 first; an archive that is truncated, tampered with, encrypted
// under another passphrase or of a newer schema is refused before target
// is touched. An older schema is migrated forward in the staging
// directory. Then target (moved aside if it held anything) is replaced by
// the staging directory with one rename.
func Restore(ctx context.Context, archive, target string, opts RestoreOptions) (*RestoreResult, error) {
	res, err := restore(ctx, archive, target, opts)
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", archive, err)
	}
	return res, nil
}

func restore(ctx context.Context, archive, target string, opts RestoreOptions) (*RestoreResult, error) {
	target, err := filepath.Abs(target)
	if err != nil {
		return nil, err
	}
	exists, empty, err := dirState(target)
	if err != nil {
		return nil, err
	}
	if exists && !empty && !opts.Force {
		return nil, fmt.Errorf("%w: %s holds data; stop the server and give --force to move it aside", ErrTargetNotEmpty, target)
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".restore-*")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(stage)
		}
	}()
	m, err := unpack(ctx, archive, stage, opts)
	if err != nil {
		return nil, err
	}
	insp, err := storage.Inspect(ctx, filepath.Join(stage, DatabaseName), storage.InspectOptions{Integrity: true})
	if err != nil {
		return nil, &MemberError{Member: DatabaseName, Err: err}
	}
	if len(insp.Integrity) != 1 || insp.Integrity[0] != "ok" {
		return nil, &MemberError{Member: DatabaseName, Err: fmt.Errorf("quick_check: %v", insp.Integrity)}
	}
	if insp.SchemaVersion != m.SchemaVersion {
		return nil, &MemberError{Member: DatabaseName, Err: fmt.Errorf("schema version %d, the manifest says %d", insp.SchemaVersion, m.SchemaVersion)}
	}
	sd := storage.DataDir{Root: stage}
	if err := sd.Ensure(); err != nil {
		return nil, err
	}
	db, err := storage.Open(ctx, sd.DBPath())
	if err != nil {
		return nil, err
	}
	applied, err := db.Migrate(ctx)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := storage.SyncDir(stage); err != nil {
		return nil, err
	}

	// Everything is checked: now the target.
	res := &RestoreResult{Manifest: m, DataDir: target, Migrations: append([]string{}, applied...)}
	if exists {
		if empty {
			if err := os.RemoveAll(target); err != nil {
				return nil, err
			}
		} else {
			aside, err := asideName(target, opts.now())
			if err != nil {
				return nil, err
			}
			if err := os.Rename(target, aside); err != nil {
				return nil, fmt.Errorf("move %s aside: %w", target, err)
			}
			res.MovedAside = aside
		}
	}
	if err := os.Rename(stage, target); err != nil {
		return nil, err
	}
	done = true
	if err := storage.SyncDir(parent); err != nil {
		return nil, err
	}
	return res, nil
}

// asideName is target with a timestamp suffix that is not taken.
func asideName(target string, now time.Time) (string, error) {
	base := target + ".before-restore-" + now.Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name, nil
		} else if err != nil {
			return "", err
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// dirState reports whether dir exists and whether it holds no files
// (empty directories, as a first start leaves them, count as empty).
func dirState(dir string) (exists, empty bool, err error) {
	info, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, true, nil
	}
	if err != nil {
		return false, false, err
	}
	if !info.IsDir() {
		return true, false, fmt.Errorf("%s is not a directory", dir)
	}
	empty = true
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			empty = false
			return fs.SkipAll
		}
		return nil
	})
	return true, empty, err
}

// Verify reads the whole archive and checks every member against the
// manifest without writing anything.
func Verify(ctx context.Context, archive string, opts RestoreOptions) (*Manifest, error) {
	m, err := unpack(ctx, archive, "", opts)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", archive, err)
	}
	return m, nil
}

// ReadManifest returns an archive's manifest, reading only its start.
func ReadManifest(archive string, opts RestoreOptions) (*Manifest, error) {
	var m *Manifest
	err := openArchive(archive, opts, false, func(tr *tar.Reader) error {
		var err error
		m, err = readManifest(tr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", archive, err)
	}
	return m, nil
}

var (
	ageMagic  = []byte("age-encryption.org/")
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Encrypted reports whether the archive is encrypted.
func Encrypted(archive string) (bool, error) {
	f, err := os.Open(archive)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(ageMagic))
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], ageMagic), nil
}

// openArchive peels the layers (age, zstd) and hands fn the tar stream;
// with drain it then reads the rest of the stream, so that the last
// checksums (zstd's frame checksum, age's last chunk's tag) are checked.
func openArchive(archive string, opts RestoreOptions, drain bool, fn func(tr *tar.Reader) error) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(len(ageMagic))
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(head, ageMagic):
		if opts.Passphrase == "" {
			return ErrPassphraseRequired
		}
		id, err := age.NewScryptIdentity(opts.Passphrase)
		if err != nil {
			return err
		}
		r, err = age.Decrypt(br, id)
		var nomatch *age.NoIdentityMatchError
		if errors.Is(err, age.ErrIncorrectIdentity) || errors.As(err, &nomatch) {
			return ErrWrongPassphrase
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrNotArchive, err)
		}
	case bytes.HasPrefix(head, zstdMagic):
	default:
		return ErrNotArchive
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	defer zr.Close()
	if err := fn(tar.NewReader(zr)); err != nil {
		return err
	}
	if drain {
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return fmt.Errorf("the archive's end is damaged: %w", truncated(err))
		}
	}
	return nil
}

func readManifest(tr *tar.Reader) (*Manifest, error) {
	hdr, err := tr.Next()
	if err != nil {
		return nil, &MemberError{Member: ManifestName, Err: truncated(err)}
	}
	if hdr.Name != ManifestName || hdr.Typeflag != tar.TypeReg {
		return nil, fmt.Errorf("%w: the first member is %q", ErrNotArchive, hdr.Name)
	}
	if hdr.Size > 256<<20 {
		return nil, &MemberError{Member: ManifestName, Err: errors.New("too large")}
	}
	raw, err := io.ReadAll(tr)
	if err != nil {
		return nil, &MemberError{Member: ManifestName, Err: truncated(err)}
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &MemberError{Member: ManifestName, Err: err}
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%w: format %q", ErrNotArchive, m.Format)
	}
	if m.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("the archive's format version %d is newer than this binary reads (%d)", m.FormatVersion, FormatVersion)
	}
	seen := map[string]bool{}
	for _, mem := range m.Members {
		if !validMemberName(mem.Name) || seen[mem.Name] || len(mem.SHA256) != 64 || mem.Size < 0 {
			return nil, &MemberError{Member: ManifestName, Err: fmt.Errorf("lists an invalid member %q", mem.Name)}
		}
		seen[mem.Name] = true
	}
	if !seen[DatabaseName] {
		return nil, &MemberError{Member: ManifestName, Err: errors.New("lists no database")}
	}
	return &m, nil
}

// unpack reads the archive, checks every member against the manifest and,
// when stage is set, writes them below it. The archive's members must be
// exactly the manifest's, in its order.
func unpack(ctx context.Context, archive, stage string, opts RestoreOptions) (*Manifest, error) {
	known, err := storage.KnownSchemaVersion()
	if err != nil {
		return nil, err
	}
	var m *Manifest
	err = openArchive(archive, opts, true, func(tr *tar.Reader) error {
		var err error
		if m, err = readManifest(tr); err != nil {
			return err
		}
		if m.SchemaVersion > known {
			return &SchemaError{Archive: m.SchemaVersion, Known: known}
		}
		dirs := map[string]bool{}
		for _, want := range m.Members {
			if err := ctx.Err(); err != nil {
				return err
			}
			hdr, err := tr.Next()
			if err != nil {
				return &MemberError{Member: want.Name, Err: truncated(err)}
			}
			if hdr.Name != want.Name {
				return &MemberError{Member: hdr.Name, Err: fmt.Errorf("found where the manifest lists %s", want.Name)}
			}
			if hdr.Typeflag != tar.TypeReg {
				return &MemberError{Member: hdr.Name, Err: errors.New("not a regular file")}
			}
			if hdr.Size != want.Size {
				return &MemberError{Member: hdr.Name, Err: fmt.Errorf("size %d, the manifest says %d: the archive was altered", hdr.Size, want.Size)}
			}
			if err := unpackMember(tr, want, stage); err != nil {
				return &MemberError{Member: want.Name, Err: err}
			}
			if stage != "" {
				dirs[filepath.Dir(filepath.Join(stage, filepath.FromSlash(want.Name)))] = true
			}
		}
		for d := range dirs {
			if err := storage.SyncDir(d); err != nil {
				return err
			}
		}
		hdr, err := tr.Next()
		if err == nil {
			return &MemberError{Member: hdr.Name, Err: errors.New("not listed in the manifest")}
		}
		if err != io.EOF {
			return fmt.Errorf("the archive's end is damaged: %w", truncated(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func unpackMember(tr *tar.Reader, want Member, stage string) error {
	var w io.Writer = io.Discard
	var f *os.File
	if stage != "" {
		path := filepath.Join(stage, filepath.FromSlash(want.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), tr)
	if err != nil {
		return truncated(err)
	}
	if n != want.Size {
		return fmt.Errorf("%d bytes, the manifest says %d: the archive is truncated", n, want.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 {
		return fmt.Errorf("SHA-256 %s, the manifest says %s: the archive is corrupt or was tampered with", got, want.SHA256)
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			return err
		}
		return f.Close()
	}
	return nil
}

// truncated explains an early end of the stream.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the archive ends early (truncated): %w", err)
	}
	return err
}
