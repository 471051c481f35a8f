package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.EvidenceLibraryStore = (*DB)(nil)

// libraryWhere builds the conditions of the evidence library's filters on
// evidence e. The expiry windows use evidence_org_expires (migration 0920).
func libraryWhere(orgID string, f app.EvidenceLibraryFilter, expiry bool) (string, []any) {
	where := []string{"e.organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, vs ...any) {
		where = append(where, cond)
		args = append(args, vs...)
	}
	if expiry {
		switch f.Expires {
		case app.EvidenceExpiring30, app.EvidenceExpiring60, app.EvidenceExpiring90:
			days, _ := strconv.Atoi(f.Expires)
			add("e.expires_at > ? AND e.expires_at <= ?", ts(f.Now), ts(f.Now.Add(time.Duration(days)*24*time.Hour)))
		case app.EvidenceExpired:
			add("e.expires_at <= ?", ts(f.Now))
		case app.EvidenceNoExpiry:
			add("e.expires_at IS NULL")
		}
		if f.From != nil && f.To != nil {
			add("e.expires_at > ? AND e.expires_at <= ?", ts(*f.From), ts(*f.To))
		}
	}
	if f.FrameworkID != "" {
		add("e.control_id IN (SELECT control_id FROM requirement_controls WHERE organization_id = ? AND framework_id = ?)", orgID, f.FrameworkID)
	}
	if f.OwnerID != "" {
		add("e.control_id IN (SELECT id FROM controls WHERE organization_id = ? AND owner_id = ?)", orgID, f.OwnerID)
	}
	if f.ViewerID != "" {
		add(`(e.control_id IN (SELECT id FROM controls WHERE organization_id = ? AND owner_id = ?)
			OR e.task_id IN (SELECT id FROM tasks WHERE organization_id = ? AND assignee_id = ?))`, orgID, f.ViewerID, orgID, f.ViewerID)
	}
	return strings.Join(where, " AND "), args
}

// librarySorts are the ORDER BY of each sort key, ascending; ties by id.
var librarySorts = map[string][]string{
	"filename":   {"lower(e.filename)"},
	"control":    {"c.code", "c.name"},
	"uploadedAt": {"e.uploaded_at"},
	"expiresAt":  {"e.expires_at IS NULL", "e.expires_at"},
}

// ListEvidenceLibrary returns a page of the organization's evidence with
// each item's control.
func (db *DB) ListEvidenceLibrary(ctx context.Context, orgID string, f app.EvidenceLibraryFilter) (app.List[app.EvidenceItem], error) {
	cond, args := libraryWhere(orgID, f, true)
	out := app.List[app.EvidenceItem]{Items: []app.EvidenceItem{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM evidence e WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count evidence: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	key := f.Sort
	if key == "" {
		key = "-uploadedAt"
	}
	desc := strings.HasPrefix(key, "-")
	cols := librarySorts[strings.TrimPrefix(key, "-")]
	if cols == nil {
		cols = librarySorts["uploadedAt"]
	}
	order := make([]string, 0, len(cols)+1)
	for i, c := range cols {
		// Evidence without an expiry stays last either way.
		if desc && !(key == "-expiresAt" && i == 0) {
			c += " DESC"
		}
		order = append(order, c)
	}
	if desc {
		order = append(order, "e.id DESC")
	} else {
		order = append(order, "e.id")
	}
	rows, err := q.QueryContext(ctx, `SELECT e.id, e.control_id, e.task_id, e.filename, e.content_type, e.size, e.sha256, e.description,
		e.expires_at, e.uploaded_by, e.uploaded_at, c.code, c.name, c.owner_id
		FROM evidence e JOIN controls c ON c.organization_id = e.organization_id AND c.id = e.control_id
		WHERE `+cond+` ORDER BY `+strings.Join(order, ", ")+` LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list evidence: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var it app.EvidenceItem
		var task, expires, owner sql.NullString
		var uploaded string
		if err := rows.Scan(&it.ID, &it.ControlID, &task, &it.Filename, &it.ContentType, &it.Size, &it.SHA256, &it.Description,
			&expires, &it.UploadedBy, &uploaded, &it.ControlCode, &it.ControlName, &owner); err != nil {
			return out, err
		}
		it.TaskID, it.ExpiresAt, it.UploadedAt, it.ControlOwnerID = strPtr(task), parseTSPtr(expires), parseTS(uploaded), strPtr(owner)
		out.Items = append(out.Items, it)
	}
	return out, rows.Err()
}

// EvidenceExpiryCounts counts the filtered evidence expiring in each month
// (YYYY-MM) after from and before to, and the expired and never-expiring
// evidence, in one pass.
func (db *DB) EvidenceExpiryCounts(ctx context.Context, orgID string, f app.EvidenceLibraryFilter, from, to time.Time) (map[string]int, int, int, error) {
	cond, args := libraryWhere(orgID, f, false)
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT CASE WHEN e.expires_at IS NULL THEN 'none'
			WHEN e.expires_at <= ? THEN 'expired'
			WHEN e.expires_at < ? THEN substr(e.expires_at, 1, 7)
			ELSE 'later' END AS bucket, count(*)
		FROM evidence e WHERE `+cond+` GROUP BY bucket`, append([]any{ts(from), ts(to)}, args...)...)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("count evidence by expiry: %w", err)
	}
	defer rows.Close()
	months := map[string]int{}
	var expired, none int
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, 0, 0, err
		}
		switch k {
		case "none":
			none = n
		case "expired":
			expired = n
		case "later":
		default:
			months[k] = n
		}
	}
	return months, expired, none, rows.Err()
}
