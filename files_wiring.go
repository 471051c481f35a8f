package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/objectstore"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/spf13/viper"
)

// setFilesDefaults declares where uploaded files live: files_url empty
// keeps them in data_dir/files; s3://bucket/prefix?endpoint=... puts them
// in an S3-compatible object store (docs/files.md). The keys come from
// COMPLIANCE_FILES_ACCESS_KEY and COMPLIANCE_FILES_SECRET_KEY, or the
// standard AWS_* variables.
func setFilesDefaults(v *viper.Viper) {
	v.SetDefault("files_url", "")
	v.SetDefault("files_access_key", "")
	v.SetDefault("files_secret_key", "")
}

// objectStore is the object store files_url names, or nil when files live
// in the data directory.
func objectStore(v *viper.Viper, dir storage.DataDir) (*objectstore.Store, error) {
	raw := v.GetString("files_url")
	if raw == "" {
		return nil, nil
	}
	cfg, err := objectstore.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	cfg.AccessKey = v.GetString("files_access_key")
	cfg.SecretKey = v.GetString("files_secret_key")
	// Uploads are hashed in a local file before they are sent.
	cfg.TempDir = filepath.Join(dir.Root, "tmp")
	return objectstore.New(cfg)
}

// openFileStore is where this installation keeps uploaded files.
func openFileStore(v *viper.Viper, dir storage.DataDir) (app.FileStore, error) {
	st, err := objectStore(v, dir)
	if err != nil {
		return nil, err
	}
	if st != nil {
		return st, nil
	}
	return storage.NewFiles(dir.FilesPath())
}

// filesLocation describes an object store's location without credentials,
// "" when files live in the data directory.
func filesLocation(v *viper.Viper) string {
	raw := v.GetString("files_url")
	if raw == "" {
		return ""
	}
	cfg, err := objectstore.ParseURL(raw)
	if err != nil {
		return "files_url (invalid)"
	}
	return cfg.String()
}

// checkFilesAtStart makes sure, before serve accepts uploads, that the
// object store files_url names is reachable and writable.
func checkFilesAtStart(ctx context.Context, v *viper.Viper, dir storage.DataDir, log *slog.Logger) error {
	st, err := objectStore(v, dir)
	if err != nil || st == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := st.Check(ctx); err != nil {
		return fmt.Errorf("uploaded files: %w", err)
	}
	log.Info("uploaded files in an object store", slog.String("files_url", st.String()))
	return nil
}

// checkFilesStore is doctor's check of files_url: the bucket is reachable
// and a test object can be written, read back and removed.
func checkFilesStore(ctx context.Context, v *viper.Viper, dir storage.DataDir, add addCheck) {
	if v.GetString("files_url") == "" {
		add("files_store", checkSkip, "uploaded files in %s (checked with data_directory)", dir.FilesPath())
		return
	}
	st, err := objectStore(v, dir)
	if err != nil {
		add("files_store", checkFail, "%v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := st.Check(ctx); err != nil {
		add("files_store", checkFail, "%v", err)
		return
	}
	add("files_store", checkOK, "%s: reachable, a test object written, read back and removed", st)
}
