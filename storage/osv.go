package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/app/osv"
)

// The OSV tables are appliance-wide reference data (like the framework
// catalogue): no organization owns them, so these queries are the ones
// not scoped by organization.

var _ app.OSVStore = (*DB)(nil)

// SaveOSVVulns writes a batch of records in one transaction; a stored
// record with the same or a later modified time wins.
func (db *DB) SaveOSVVulns(ctx context.Context, vulns []*osv.Vuln, now time.Time) (app.OSVCounts, error) {
	var c app.OSVCounts
	err := db.InTx(ctx, func(ctx context.Context) error {
		c = app.OSVCounts{}
		w := db.wr(ctx)
		for _, v := range vulns {
			var mod string
			err := w.QueryRowContext(ctx, `SELECT modified FROM osv_vulns WHERE id = ?`, v.ID).Scan(&mod)
			switch {
			case err == sql.ErrNoRows:
				c.Inserted++
			case err != nil:
				return fmt.Errorf("read OSV record %s: %w", v.ID, err)
			case !parseTS(mod).Before(v.Modified):
				c.Unchanged++
				continue
			default:
				c.Updated++
				if _, err := w.ExecContext(ctx, `DELETE FROM osv_vulns WHERE id = ?`, v.ID); err != nil {
					return fmt.Errorf("replace OSV record %s: %w", v.ID, err)
				}
				if _, err := w.ExecContext(ctx, `DELETE FROM osv_affected WHERE vuln_id = ?`, v.ID); err != nil {
					return fmt.Errorf("replace OSV record %s: %w", v.ID, err)
				}
			}
			if _, err := w.ExecContext(ctx, `INSERT INTO osv_vulns (id, modified, published, withdrawn, aliases, summary, cvss_vector, cvss, refs,
				imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.ID, ts(v.Modified), tsPtr(v.Published), tsPtr(v.Withdrawn),
				mustJSON(v.Aliases), v.Summary, v.CVSSVector, v.CVSS, mustJSON(v.References), ts(now)); err != nil {
				return fmt.Errorf("insert OSV record %s: %w", v.ID, err)
			}
			for _, af := range v.Affected {
				if _, err := w.ExecContext(ctx, `INSERT INTO osv_affected (vuln_id, ecosystem, base_ecosystem, name, name_key, ranges, versions)
					VALUES (?, ?, ?, ?, ?, ?, ?)`, v.ID, af.Ecosystem, osv.BaseEcosystem(af.Ecosystem), af.Name, osv.NameKey(af.Ecosystem, af.Name),
					mustJSON(af.Ranges), mustJSON(af.Versions)); err != nil {
					return fmt.Errorf("insert OSV record %s: %w", v.ID, err)
				}
			}
		}
		return nil
	})
	return c, err
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// RecordOSVImport keeps one import's outcome.
func (db *DB) RecordOSVImport(ctx context.Context, imp app.OSVImport) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO osv_imports (source, started_at, finished_at, records_read, inserted, updated, unchanged,
			rejected) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, imp.Source, ts(imp.StartedAt), ts(imp.FinishedAt), imp.RecordsRead, imp.Inserted, imp.Updated,
			imp.Unchanged, imp.Rejected)
		if err != nil {
			return fmt.Errorf("record OSV import: %w", err)
		}
		return nil
	})
}

// OSVStatus counts the stored records per ecosystem and returns the last
// import.
func (db *DB) OSVStatus(ctx context.Context) (*app.OSVStatus, error) {
	st := &app.OSVStatus{Ecosystems: []app.OSVEcosystemCount{}}
	var last sql.NullString
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*), max(modified) FROM osv_vulns`).Scan(&st.Records, &last); err != nil {
		return nil, fmt.Errorf("OSV status: %w", err)
	}
	st.LastModified = parseTSPtr(last)
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM osv_affected`).Scan(&st.AffectedPackages); err != nil {
		return nil, fmt.Errorf("OSV status: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT base_ecosystem, count(DISTINCT vuln_id), count(DISTINCT name_key) FROM osv_affected
		GROUP BY base_ecosystem ORDER BY base_ecosystem`)
	if err != nil {
		return nil, fmt.Errorf("OSV status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e app.OSVEcosystemCount
		if err := rows.Scan(&e.Ecosystem, &e.Records, &e.Packages); err != nil {
			return nil, err
		}
		st.Ecosystems = append(st.Ecosystems, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var imp app.OSVImport
	var started, finished string
	err = db.rd(ctx).QueryRowContext(ctx, `SELECT source, started_at, finished_at, records_read, inserted, updated, unchanged, rejected
		FROM osv_imports ORDER BY id DESC LIMIT 1`).Scan(&imp.Source, &started, &finished, &imp.RecordsRead, &imp.Inserted, &imp.Updated,
		&imp.Unchanged, &imp.Rejected)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return nil, fmt.Errorf("OSV status: %w", err)
	default:
		imp.StartedAt, imp.FinishedAt = parseTS(started), parseTS(finished)
		st.LastImport = &imp
	}
	st.Imported = st.Records > 0
	return st, nil
}

// OSVVulnsFor returns the records naming one package, withdrawn ones
// left out.
func (db *DB) OSVVulnsFor(ctx context.Context, baseEcosystem, nameKey string) ([]osv.Vuln, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT v.id, v.modified, v.aliases, v.summary, v.cvss_vector, v.cvss, v.refs, a.ecosystem, a.name,
		a.ranges, a.versions FROM osv_affected a JOIN osv_vulns v ON v.id = a.vuln_id
		WHERE a.base_ecosystem = ? AND a.name_key = ? AND v.withdrawn IS NULL ORDER BY v.id`, baseEcosystem, nameKey)
	if err != nil {
		return nil, fmt.Errorf("OSV lookup: %w", err)
	}
	defer rows.Close()
	var out []osv.Vuln
	for rows.Next() {
		var v osv.Vuln
		var af osv.Affected
		var mod, aliases, refs, ranges, versions string
		if err := rows.Scan(&v.ID, &mod, &aliases, &v.Summary, &v.CVSSVector, &v.CVSS, &refs, &af.Ecosystem, &af.Name, &ranges, &versions); err != nil {
			return nil, err
		}
		v.Modified = parseTS(mod)
		for _, p := range []struct {
			s string
			v any
		}{{aliases, &v.Aliases}, {refs, &v.References}, {ranges, &af.Ranges}, {versions, &af.Versions}} {
			if err := json.Unmarshal([]byte(p.s), p.v); err != nil {
				return nil, fmt.Errorf("OSV record %s: %w", v.ID, err)
			}
		}
		if n := len(out); n > 0 && out[n-1].ID == v.ID {
			out[n-1].Affected = append(out[n-1].Affected, af)
			continue
		}
		v.Affected = []osv.Affected{af}
		out = append(out, v)
	}
	return out, rows.Err()
}
