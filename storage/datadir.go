package storage

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
)

// DataDir is the appliance's data directory layout.
type DataDir struct{ Root string }

// DBPath is the SQLite database file.
func (d DataDir) DBPath() string { return filepath.Join(d.Root, "compliance.db") }

// FilesPath holds uploaded files, content-addressed.
func (d DataDir) FilesPath() string { return filepath.Join(d.Root, "files") }

// SecretsPath holds generated secrets (0600 files).
func (d DataDir) SecretsPath() string { return filepath.Join(d.Root, "secrets") }

// Ensure creates the layout with owner-only permissions. The database
// file is created empty with 0600 when absent, so that SQLite (which gives
// its WAL and shared-memory files the database file's mode) never makes
// them readable by others.
func (d DataDir) Ensure() error {
	for _, p := range []string{d.Root, d.FilesPath(), d.SecretsPath()} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	f, err := os.OpenFile(d.DBPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !os.IsExist(err) {
		return fmt.Errorf("create %s: %w", d.DBPath(), err)
	}
	return nil
}

// Secret returns the named secret of n random bytes, creating it with 0600
// permissions on first use.
func (d DataDir) Secret(name string, n int) ([]byte, error) {
	path := filepath.Join(d.SecretsPath(), name)
	b, err := os.ReadFile(path)
	if err == nil && len(b) == n {
		return b, nil
	}
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	b = make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if os.IsExist(err) {
		// another process created it first
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create secret %s: %w", name, err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return nil, err
	}
	return b, f.Sync()
}
