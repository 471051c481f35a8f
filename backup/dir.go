package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Archive names in a backup directory: compliance-<UTC time>.tar.zst for
// scheduled and CLI backups, compliance-premigrate-v<schema>-<UTC
// time>.tar.zst for the one taken before migrations; ".age" is appended
// when encrypted.
const (
	namePrefix     = "compliance-"
	preMigratePart = "premigrate-"
	stampFormat    = "20060102T150405Z"
	extension      = ".tar.zst"
	ageExtension   = ".age"
)

// ArchiveName is the name of a scheduled backup taken at t.
func ArchiveName(t time.Time, encrypted bool) string {
	return namePrefix + t.UTC().Format(stampFormat) + ext(encrypted)
}

// PreMigrationName is the name of the backup taken at t before migrating
// a database at schema version from.
func PreMigrationName(t time.Time, from int, encrypted bool) string {
	return fmt.Sprintf("%s%sv%04d-%s%s", namePrefix, preMigratePart, from, t.UTC().Format(stampFormat), ext(encrypted))
}

func ext(encrypted bool) string {
	if encrypted {
		return extension + ageExtension
	}
	return extension
}

// Archive is a backup file in a backup directory.
type Archive struct {
	Path    string    `json:"path"`
	Size    int64     `json:"sizeBytes"`
	ModTime time.Time `json:"modifiedAt"`
	// PreMigration marks the backups taken before migrations, which
	// Prune leaves alone.
	PreMigration bool `json:"preMigration"`
}

// List returns the archives in dir, newest first (none if dir is absent).
func List(dir string) ([]Archive, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	var out []Archive
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, namePrefix) ||
			!(strings.HasSuffix(n, extension) || strings.HasSuffix(n, extension+ageExtension)) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Archive{Path: filepath.Join(dir, n), Size: info.Size(), ModTime: info.ModTime(),
			PreMigration: strings.HasPrefix(n, namePrefix+preMigratePart)})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ModTime.Equal(out[j].ModTime) {
			return out[i].ModTime.After(out[j].ModTime)
		}
		return out[i].Path > out[j].Path
	})
	return out, nil
}

// Latest is the newest archive in dir, or "" when there is none.
func Latest(dir string) (string, error) {
	as, err := List(dir)
	if err != nil || len(as) == 0 {
		return "", err
	}
	return as[0].Path, nil
}

// Prune removes all but the keep newest scheduled archives in dir (keep
// below 1 keeps one) and returns the paths removed. Backups taken before
// migrations are kept.
func Prune(dir string, keep int) ([]string, error) {
	keep = max(keep, 1)
	as, err := List(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	n := 0
	for _, a := range as {
		if a.PreMigration {
			continue
		}
		n++
		if n <= keep {
			continue
		}
		if err := os.Remove(a.Path); err != nil {
			return removed, fmt.Errorf("prune backups: %w", err)
		}
		removed = append(removed, a.Path)
	}
	return removed, nil
}
