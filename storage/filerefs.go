package storage

import (
	"context"
	"fmt"
	"strings"
)

// fileRefColumns are the columns that hold the SHA-256 of a stored file.
// A column added to the schema whose name ends in sha256 must be listed
// here or in notFileColumns (a test fails otherwise): a file referred to
// only from an unlisted column would be swept away.
var fileRefColumns = []struct{ table, column string }{
	{"evidence", "sha256"},
	{"attachments", "sha256"},
	{"questionnaires", "file_sha256"},
	{"trust_documents", "sha256"},
	{"training_modules", "file_sha256"},
	{"browser_run_screenshots", "sha256"},
}

// notFileColumns hold hashes of text kept in the database, not of files.
var notFileColumns = map[string]bool{
	"policy_versions.content_sha256":  true, // the published text's hash
	"trust_nda_signatures.nda_sha256": true, // the signed NDA text's hash
	"backup_runs.archive_sha256":      true, // a backup archive's hash (the archive lives outside the file store)
	// the hash of an incident report version's content
	"incident_report_versions.content_sha256": true,
}

// FileReferences returns the hash of every stored file a record refers to.
func (db *DB) FileReferences(ctx context.Context) (map[string]struct{}, error) {
	parts := make([]string, len(fileRefColumns))
	for i, c := range fileRefColumns {
		parts[i] = fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NOT NULL", c.column, c.table, c.column)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, strings.Join(parts, " UNION "))
	if err != nil {
		return nil, fmt.Errorf("file references: %w", err)
	}
	defer rows.Close()
	out := map[string]struct{}{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("file references: %w", err)
		}
		out[h] = struct{}{}
	}
	return out, rows.Err()
}
