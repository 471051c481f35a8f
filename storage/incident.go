package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.IncidentStore = (*DB)(nil)

// incidentDetails is the JSON form of the details column.
type incidentDetails struct {
	AffectedServices     []string          `json:"affectedServices"`
	AffectedSystems      []string          `json:"affectedSystems"`
	DataCategories       []string          `json:"dataCategories"`
	Countries            []string          `json:"countries"`
	CrossBorder          bool              `json:"crossBorder"`
	DataSubjectsAffected *int64            `json:"dataSubjectsAffected"`
	RecordsAffected      *int64            `json:"recordsAffected"`
	ClientsAffected      *int64            `json:"clientsAffected"`
	Facts                app.IncidentFacts `json:"facts"`
}

const incidentColumns = `id, title, description, type, status, severity, occurred_at, detected_at, aware_at, contained_at, resolved_at,
	closed_at, details, dora_classification, confirmed_regimes, regimes_confirmed_at, regimes_confirmed_by, reported_by_type,
	reported_by_id, created_at, updated_at`

func scanIncident(row interface{ Scan(...any) error }) (*app.Incident, error) {
	var inc app.Incident
	var occurred, contained, resolved, closed, dora, confirmedAt, confirmedBy sql.NullString
	var detected, aware, details, regimes, created, updated string
	if err := row.Scan(&inc.ID, &inc.Title, &inc.Description, &inc.Type, &inc.Status, &inc.Severity, &occurred, &detected, &aware,
		&contained, &resolved, &closed, &details, &dora, &regimes, &confirmedAt, &confirmedBy, &inc.ReportedBy.Type, &inc.ReportedBy.ID,
		&created, &updated); err != nil {
		return nil, mapErr(err)
	}
	inc.OccurredAt, inc.ContainedAt, inc.ResolvedAt, inc.ClosedAt = parseTSPtr(occurred), parseTSPtr(contained), parseTSPtr(resolved), parseTSPtr(closed)
	inc.DetectedAt, inc.AwareAt, inc.CreatedAt, inc.UpdatedAt = parseTS(detected), parseTS(aware), parseTS(created), parseTS(updated)
	var d incidentDetails
	if err := json.Unmarshal([]byte(details), &d); err != nil {
		return nil, fmt.Errorf("incident %s details: %w", inc.ID, err)
	}
	inc.AffectedServices, inc.AffectedSystems, inc.DataCategories, inc.Countries = d.AffectedServices, d.AffectedSystems, d.DataCategories, d.Countries
	inc.CrossBorder, inc.DataSubjectsAffected, inc.RecordsAffected, inc.ClientsAffected = d.CrossBorder, d.DataSubjectsAffected, d.RecordsAffected, d.ClientsAffected
	inc.Facts = d.Facts
	if dora.Valid {
		inc.DORAClassification = &app.DORAClassification{}
		if err := json.Unmarshal([]byte(dora.String), inc.DORAClassification); err != nil {
			return nil, fmt.Errorf("incident %s classification: %w", inc.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(regimes), &inc.ConfirmedRegimes); err != nil {
		return nil, fmt.Errorf("incident %s regimes: %w", inc.ID, err)
	}
	inc.RegimesConfirmedAt = parseTSPtr(confirmedAt)
	if confirmedBy.Valid {
		inc.RegimesConfirmedBy = &app.ActorRef{}
		if err := json.Unmarshal([]byte(confirmedBy.String), inc.RegimesConfirmedBy); err != nil {
			return nil, fmt.Errorf("incident %s regimes: %w", inc.ID, err)
		}
	}
	inc.SetLinks(nil)
	inc.Reports = []app.IncidentReport{}
	return &inc, nil
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func incidentArgs(inc *app.Incident) ([]any, error) {
	details, err := jsonText(incidentDetails{AffectedServices: inc.AffectedServices, AffectedSystems: inc.AffectedSystems,
		DataCategories: inc.DataCategories, Countries: inc.Countries, CrossBorder: inc.CrossBorder, DataSubjectsAffected: inc.DataSubjectsAffected,
		RecordsAffected: inc.RecordsAffected, ClientsAffected: inc.ClientsAffected, Facts: inc.Facts})
	if err != nil {
		return nil, err
	}
	var dora any
	if inc.DORAClassification != nil {
		s, err := jsonText(inc.DORAClassification)
		if err != nil {
			return nil, err
		}
		dora = s
	}
	regimes := inc.ConfirmedRegimes
	if regimes == nil {
		regimes = []string{}
	}
	reg, err := jsonText(regimes)
	if err != nil {
		return nil, err
	}
	var by any
	if inc.RegimesConfirmedBy != nil {
		s, err := jsonText(inc.RegimesConfirmedBy)
		if err != nil {
			return nil, err
		}
		by = s
	}
	return []any{inc.Title, inc.Description, inc.Type, inc.Status, inc.Severity, tsPtr(inc.OccurredAt), ts(inc.DetectedAt), ts(inc.AwareAt),
		tsPtr(inc.ContainedAt), tsPtr(inc.ResolvedAt), tsPtr(inc.ClosedAt), details, dora, reg, tsPtr(inc.RegimesConfirmedAt), by,
		inc.ReportedBy.Type, inc.ReportedBy.ID, ts(inc.CreatedAt), ts(inc.UpdatedAt)}, nil
}

// CreateIncident inserts an incident and its links.
func (db *DB) CreateIncident(ctx context.Context, orgID string, inc *app.Incident) error {
	args, err := incidentArgs(inc)
	if err != nil {
		return fmt.Errorf("insert incident: %w", err)
	}
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO incidents (organization_id, `+incidentColumns+`) VALUES (?, ?, `+placeholders(len(args))+`)`,
		append([]any{orgID, inc.ID}, args...)...); err != nil {
		return fmt.Errorf("insert incident: %w", mapErr(err))
	}
	return db.setIncidentLinks(ctx, orgID, inc)
}

// UpdateIncident writes every mutable column and replaces the links.
func (db *DB) UpdateIncident(ctx context.Context, orgID string, inc *app.Incident) error {
	args, err := incidentArgs(inc)
	if err != nil {
		return fmt.Errorf("update incident: %w", err)
	}
	return db.InTx(ctx, func(ctx context.Context) error {
		res, err := db.wr(ctx).ExecContext(ctx, `UPDATE incidents SET title = ?, description = ?, type = ?, status = ?, severity = ?,
			occurred_at = ?, detected_at = ?, aware_at = ?, contained_at = ?, resolved_at = ?, closed_at = ?, details = ?,
			dora_classification = ?, confirmed_regimes = ?, regimes_confirmed_at = ?, regimes_confirmed_by = ?, reported_by_type = ?,
			reported_by_id = ?, created_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`, append(args, orgID, inc.ID)...)
		if err := affected(res, err); err != nil {
			return err
		}
		return db.setIncidentLinks(ctx, orgID, inc)
	})
}

func (db *DB) setIncidentLinks(ctx context.Context, orgID string, inc *app.Incident) error {
	if _, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM incident_links WHERE organization_id = ? AND incident_id = ?`, orgID, inc.ID); err != nil {
		return fmt.Errorf("clear incident links: %w", err)
	}
	var values []string
	var args []any
	for _, typ := range app.IncidentLinkTypes {
		for _, id := range inc.Links()[typ] {
			values = append(values, "(?, ?, ?, ?)")
			args = append(args, orgID, inc.ID, typ, id)
		}
	}
	if len(values) == 0 {
		return nil
	}
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO incident_links (organization_id, incident_id, entity_type, entity_id) VALUES `+
		strings.Join(values, ", "), args...); err != nil {
		return fmt.Errorf("link incident: %w", mapErr(err))
	}
	return nil
}

// incidentLinks loads the links of the given incidents.
func (db *DB) incidentLinks(ctx context.Context, orgID string, incs []*app.Incident) error {
	if len(incs) == 0 {
		return nil
	}
	args := []any{orgID}
	by := map[string]*app.Incident{}
	for _, inc := range incs {
		args = append(args, inc.ID)
		by[inc.ID] = inc
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT incident_id, entity_type, entity_id FROM incident_links
		WHERE organization_id = ? AND incident_id IN (`+placeholders(len(incs))+`) ORDER BY rowid`, args...)
	if err != nil {
		return fmt.Errorf("read incident links: %w", err)
	}
	defer rows.Close()
	links := map[string]map[string][]string{}
	for rows.Next() {
		var id, typ, eid string
		if err := rows.Scan(&id, &typ, &eid); err != nil {
			return err
		}
		if links[id] == nil {
			links[id] = map[string][]string{}
		}
		links[id][typ] = append(links[id][typ], eid)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for id, m := range links {
		by[id].SetLinks(m)
	}
	return nil
}

// GetIncident returns one incident with its links.
func (db *DB) GetIncident(ctx context.Context, orgID, id string) (*app.Incident, error) {
	inc, err := scanIncident(db.rd(ctx).QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE organization_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, err
	}
	if err := db.incidentLinks(ctx, orgID, []*app.Incident{inc}); err != nil {
		return nil, err
	}
	return inc, nil
}

// openReportStatuses are the statuses of reports still to be sent.
const openReportStatuses = `('pending', 'awaiting_facts')`

// ListIncidents returns a page of incidents matching every filter, newest first.
func (db *DB) ListIncidents(ctx context.Context, orgID string, f app.IncidentFilter) (app.List[app.Incident], error) {
	where := []string{"i.organization_id = ?"}
	args := []any{orgID}
	add := func(cond string, v ...any) {
		where = append(where, cond)
		args = append(args, v...)
	}
	if f.Status != "" {
		add("i.status = ?", f.Status)
	}
	if f.Type != "" {
		add("i.type = ?", f.Type)
	}
	if f.Regime != "" {
		add("EXISTS (SELECT 1 FROM json_each(i.confirmed_regimes) WHERE value = ?)", f.Regime)
	}
	if f.ReportedBy != "" {
		add("i.reported_by_id = ?", f.ReportedBy)
	}
	if f.Overdue != nil {
		q := `EXISTS (SELECT 1 FROM incident_reports r WHERE r.organization_id = i.organization_id AND r.incident_id = i.id
			AND r.status IN ` + openReportStatuses + ` AND r.due_at IS NOT NULL AND r.due_at < ?)`
		if !*f.Overdue {
			q = "NOT " + q
		}
		add(q, ts(f.Now))
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Incident]{Items: []app.Incident{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM incidents i WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count incidents: %w", err)
	}
	if f.Page.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT `+prefixed("i.", incidentColumns)+` FROM incidents i WHERE `+cond+` ORDER BY i.id DESC LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list incidents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		inc, err := scanIncident(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *inc)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	rows.Close()
	ptrs := make([]*app.Incident, len(out.Items))
	for i := range out.Items {
		ptrs[i] = &out.Items[i]
	}
	return out, db.incidentLinks(ctx, orgID, ptrs)
}

// OpenIncidentIDs lists the ids of the incidents that are not closed.
func (db *DB) OpenIncidentIDs(ctx context.Context, orgID string) ([]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id FROM incidents WHERE organization_id = ? AND status != 'closed' ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("open incidents: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// AddTimelineEntry appends a timeline entry.
func (db *DB) AddTimelineEntry(ctx context.Context, orgID string, e *app.TimelineEntry) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO incident_timeline (organization_id, id, incident_id, occurred_at, kind, content,
		author_type, author_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, e.ID, e.IncidentID, ts(e.OccurredAt), e.Kind, e.Content,
		e.Author.Type, e.Author.ID, ts(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("add timeline entry: %w", mapErr(err))
	}
	return nil
}

// ListTimeline returns a page of an incident's timeline, in the order
// things happened.
func (db *DB) ListTimeline(ctx context.Context, orgID, incidentID string, p app.Page) (app.List[app.TimelineEntry], error) {
	out := app.List[app.TimelineEntry]{Items: []app.TimelineEntry{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline WHERE organization_id = ? AND incident_id = ?`, orgID, incidentID).
		Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count timeline: %w", err)
	}
	if p.Offset() >= out.Total {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT id, incident_id, occurred_at, kind, content, author_type, author_id, created_at
		FROM incident_timeline WHERE organization_id = ? AND incident_id = ? ORDER BY occurred_at, id LIMIT ? OFFSET ?`,
		orgID, incidentID, p.PerPage, p.Offset())
	if err != nil {
		return out, fmt.Errorf("list timeline: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e app.TimelineEntry
		var occurred, created string
		if err := rows.Scan(&e.ID, &e.IncidentID, &occurred, &e.Kind, &e.Content, &e.Author.Type, &e.Author.ID, &created); err != nil {
			return out, err
		}
		e.OccurredAt, e.CreatedAt = parseTS(occurred), parseTS(created)
		out.Items = append(out.Items, e)
	}
	return out, rows.Err()
}

// GetIncidentProfile returns the organization's reporting profile.
func (db *DB) GetIncidentProfile(ctx context.Context, orgID string) (*app.IncidentProfile, error) {
	var raw string
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT profile FROM incident_profiles WHERE organization_id = ?`, orgID).Scan(&raw); err != nil {
		return nil, mapErr(err)
	}
	var p app.IncidentProfile
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, fmt.Errorf("incident profile: %w", err)
	}
	return &p, nil
}

// SaveIncidentProfile writes the organization's reporting profile.
func (db *DB) SaveIncidentProfile(ctx context.Context, orgID string, p *app.IncidentProfile) error {
	raw, err := jsonText(p)
	if err != nil {
		return err
	}
	by := app.ActorRef{}
	if p.UpdatedBy != nil {
		by = *p.UpdatedBy
	}
	at := time.Time{}
	if p.UpdatedAt != nil {
		at = *p.UpdatedAt
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO incident_profiles (organization_id, profile, updated_by_type, updated_by_id, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id) DO UPDATE SET profile = excluded.profile,
		updated_by_type = excluded.updated_by_type, updated_by_id = excluded.updated_by_id, updated_at = excluded.updated_at`,
		orgID, raw, by.Type, by.ID, ts(at))
	if err != nil {
		return fmt.Errorf("save incident profile: %w", mapErr(err))
	}
	return nil
}

const reportColumns = `id, incident_id, regime, kind, status, due_at, start_event, start_at, provisional, basis, reasoning,
	first_sent_at, last_sent_at, versions, created_at, updated_at`

func scanReport(row interface{ Scan(...any) error }) (*app.IncidentReport, error) {
	var r app.IncidentReport
	var due, start, first, last sql.NullString
	var prov int
	var created, updated string
	if err := row.Scan(&r.ID, &r.IncidentID, &r.Regime, &r.Kind, &r.Status, &due, &r.StartEvent, &start, &prov, &r.Basis, &r.Reasoning,
		&first, &last, &r.Versions, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	r.DueAt, r.StartAt, r.FirstSentAt, r.LastSentAt = parseTSPtr(due), parseTSPtr(start), parseTSPtr(first), parseTSPtr(last)
	r.Provisional = prov != 0
	r.CreatedAt, r.UpdatedAt = parseTS(created), parseTS(updated)
	r.Title = app.ReportTitle(r.Regime, r.Kind)
	return &r, nil
}

func reportArgs(r *app.IncidentReport) []any {
	return []any{r.IncidentID, r.Regime, r.Kind, r.Status, tsPtr(r.DueAt), r.StartEvent, tsPtr(r.StartAt), boolInt(r.Provisional), r.Basis,
		r.Reasoning, tsPtr(r.FirstSentAt), tsPtr(r.LastSentAt), r.Versions, ts(r.CreatedAt), ts(r.UpdatedAt)}
}

// ListIncidentReports returns the reports of the given incidents in the
// order they were planned.
func (db *DB) ListIncidentReports(ctx context.Context, orgID string, incidentIDs []string) ([]app.IncidentReport, error) {
	out := []app.IncidentReport{}
	if len(incidentIDs) == 0 {
		return out, nil
	}
	args := []any{orgID}
	for _, id := range incidentIDs {
		args = append(args, id)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+reportColumns+` FROM incident_reports
		WHERE organization_id = ? AND incident_id IN (`+placeholders(len(incidentIDs))+`) ORDER BY rowid`, args...)
	if err != nil {
		return nil, fmt.Errorf("list incident reports: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanReport(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// GetIncidentReport returns one report of an incident.
func (db *DB) GetIncidentReport(ctx context.Context, orgID, incidentID, id string) (*app.IncidentReport, error) {
	return scanReport(db.rd(ctx).QueryRowContext(ctx, `SELECT `+reportColumns+` FROM incident_reports
		WHERE organization_id = ? AND incident_id = ? AND id = ?`, orgID, incidentID, id))
}

// CreateIncidentReport inserts a report.
func (db *DB) CreateIncidentReport(ctx context.Context, orgID string, r *app.IncidentReport) error {
	args := reportArgs(r)
	if _, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO incident_reports (organization_id, `+reportColumns+`) VALUES (?, ?, `+placeholders(len(args))+`)`,
		append([]any{orgID, r.ID}, args...)...); err != nil {
		return fmt.Errorf("insert incident report: %w", mapErr(err))
	}
	return nil
}

// UpdateIncidentReport writes a report's clock and state.
func (db *DB) UpdateIncidentReport(ctx context.Context, orgID string, r *app.IncidentReport) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE incident_reports SET incident_id = ?, regime = ?, kind = ?, status = ?, due_at = ?,
		start_event = ?, start_at = ?, provisional = ?, basis = ?, reasoning = ?, first_sent_at = ?, last_sent_at = ?, versions = ?,
		created_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`, append(reportArgs(r), orgID, r.ID)...)
	return affected(res, err)
}

// AddReportVersion inserts a version; versions are never updated (the
// table's triggers refuse it).
func (db *DB) AddReportVersion(ctx context.Context, orgID string, v *app.ReportVersion) error {
	content, err := jsonText(v.Content)
	if err != nil {
		return err
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO incident_report_versions (organization_id, id, incident_id, report_id, version, state,
		content, content_sha256, note, authority, reference, sent_at, created_by_type, created_by_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, v.ID, v.IncidentID, v.ReportID, v.Version, v.State, content,
		v.ContentSHA256, v.Note, nullStr(v.Authority), nullStr(v.Reference), tsPtr(v.SentAt), v.CreatedBy.Type, v.CreatedBy.ID, ts(v.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert report version: %w", mapErr(err))
	}
	return nil
}

// ListReportVersions returns a report's versions, oldest first.
func (db *DB) ListReportVersions(ctx context.Context, orgID, reportID string) ([]app.ReportVersion, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, report_id, incident_id, version, state, content, content_sha256, note, authority,
		reference, sent_at, created_by_type, created_by_id, created_at FROM incident_report_versions
		WHERE organization_id = ? AND report_id = ? ORDER BY version`, orgID, reportID)
	if err != nil {
		return nil, fmt.Errorf("list report versions: %w", err)
	}
	defer rows.Close()
	out := []app.ReportVersion{}
	for rows.Next() {
		var v app.ReportVersion
		var content, created string
		var authority, reference, sent sql.NullString
		if err := rows.Scan(&v.ID, &v.ReportID, &v.IncidentID, &v.Version, &v.State, &content, &v.ContentSHA256, &v.Note, &authority,
			&reference, &sent, &v.CreatedBy.Type, &v.CreatedBy.ID, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(content), &v.Content); err != nil {
			return nil, fmt.Errorf("report version %s: %w", v.ID, err)
		}
		v.Authority, v.Reference, v.SentAt, v.CreatedAt = strPtr(authority), strPtr(reference), parseTSPtr(sent), parseTS(created)
		out = append(out, v)
	}
	return out, rows.Err()
}

// DueIncidentReports returns the reports not yet sent whose due time is at
// or before until.
func (db *DB) DueIncidentReports(ctx context.Context, orgID string, until time.Time) ([]app.IncidentReport, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+reportColumns+` FROM incident_reports
		WHERE organization_id = ? AND status IN `+openReportStatuses+` AND due_at IS NOT NULL AND due_at <= ? ORDER BY due_at`, orgID, ts(until))
	if err != nil {
		return nil, fmt.Errorf("due incident reports: %w", err)
	}
	defer rows.Close()
	var out []app.IncidentReport
	for rows.Next() {
		r, err := scanReport(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// RecordReminder stores a reminder once per report and threshold.
func (db *DB) RecordReminder(ctx context.Context, orgID string, rm app.ReportReminder) (bool, error) {
	res, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO incident_report_reminders (organization_id, report_id, threshold, due_at, sent_at, emitted)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (report_id, threshold) DO NOTHING`, orgID, rm.ReportID, rm.Threshold, ts(rm.DueAt), ts(rm.SentAt),
		boolInt(rm.Emitted))
	if err != nil {
		return false, fmt.Errorf("record reminder: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UpcomingIncidentReports lists the reports not yet sent that have a due
// time, soonest first, with their incidents' titles and the total.
func (db *DB) UpcomingIncidentReports(ctx context.Context, orgID string, limit int) ([]app.IncidentDeadline, int, error) {
	q := db.rd(ctx)
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM incident_reports WHERE organization_id = ? AND status IN `+openReportStatuses+`
		AND due_at IS NOT NULL`, orgID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count incident deadlines: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT r.incident_id, i.title, r.id, r.regime, r.kind, r.status, r.due_at FROM incident_reports r
		JOIN incidents i ON i.organization_id = r.organization_id AND i.id = r.incident_id
		WHERE r.organization_id = ? AND r.status IN `+openReportStatuses+` AND r.due_at IS NOT NULL ORDER BY r.due_at LIMIT ?`, orgID, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("incident deadlines: %w", err)
	}
	defer rows.Close()
	out := []app.IncidentDeadline{}
	for rows.Next() {
		var d app.IncidentDeadline
		var due string
		if err := rows.Scan(&d.IncidentID, &d.IncidentTitle, &d.ReportID, &d.Regime, &d.Kind, &d.Status, &due); err != nil {
			return nil, 0, err
		}
		d.DueAt = parseTS(due)
		out = append(out, d)
	}
	return out, total, rows.Err()
}
