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

var _ app.IntegrationStore = (*DB)(nil)

const connectionColumns = `id, provider_slug, name, status, sync_frequency, variables, services, sealed_credentials, credential_keys,
	push_token_hash, push_token_hint, webhook_secret_sealed, metadata, last_run_at, last_run_status, next_run_at, error_message, created_by, created_at, updated_at`

func scanConnection(row interface{ Scan(...any) error }, withOrg bool) (*app.Connection, error) {
	var c app.Connection
	var vars, services, keys, meta, created, updated string
	var hash, hint, lastAt, lastStatus, next, errMsg sql.NullString
	dest := []any{&c.ID, &c.ProviderSlug, &c.Name, &c.Status, &c.SyncFrequency, &vars, &services, &c.SealedCredentials, &keys,
		&hash, &hint, &c.SealedWebhookSecret, &meta, &lastAt, &lastStatus, &next, &errMsg, &c.CreatedBy, &created, &updated}
	if withOrg {
		dest = append(dest, &c.OrgID)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, mapErr(err)
	}
	for _, p := range []struct {
		raw string
		to  any
	}{{vars, &c.Variables}, {services, &c.Services}, {keys, &c.CredentialKeys}, {meta, &c.Metadata}} {
		if err := json.Unmarshal([]byte(p.raw), p.to); err != nil {
			return nil, fmt.Errorf("connection %s: %w", c.ID, err)
		}
	}
	c.PushTokenHash, c.PushTokenHint = strPtr(hash), strPtr(hint)
	c.LastRunAt, c.LastRunStatus, c.NextRunAt, c.ErrorMessage = parseTSPtr(lastAt), strPtr(lastStatus), parseTSPtr(next), strPtr(errMsg)
	c.CreatedAt, c.UpdatedAt = parseTS(created), parseTS(updated)
	return &c, nil
}

func integJSON(v any, empty string) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if string(raw) == "null" {
		return empty, nil
	}
	return string(raw), nil
}

func connectionArgs(c *app.Connection) ([]any, error) {
	vars, err := integJSON(c.Variables, "{}")
	if err != nil {
		return nil, err
	}
	services, err := integJSON(c.Services, "[]")
	if err != nil {
		return nil, err
	}
	keys, err := integJSON(c.CredentialKeys, "[]")
	if err != nil {
		return nil, err
	}
	meta, err := integJSON(c.Metadata, "{}")
	if err != nil {
		return nil, err
	}
	var sealed any
	if len(c.SealedCredentials) > 0 {
		sealed = c.SealedCredentials
	}
	var whs any
	if len(c.SealedWebhookSecret) > 0 {
		whs = c.SealedWebhookSecret
	}
	return []any{c.ProviderSlug, c.Name, c.Status, c.SyncFrequency, vars, services, sealed, keys, nullStr(c.PushTokenHash),
		nullStr(c.PushTokenHint), whs, meta, tsPtr(c.LastRunAt), nullStr(c.LastRunStatus), tsPtr(c.NextRunAt), nullStr(c.ErrorMessage),
		c.CreatedBy, ts(c.CreatedAt), ts(c.UpdatedAt)}, nil
}

// CreateConnection inserts a connection.
func (db *DB) CreateConnection(ctx context.Context, orgID string, c *app.Connection) error {
	args, err := connectionArgs(c)
	if err != nil {
		return fmt.Errorf("insert connection: %w", err)
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_connections (organization_id, `+connectionColumns+`)
		VALUES (?, ?, `+placeholders(len(args))+`)`, append([]any{orgID, c.ID}, args...)...)
	if err != nil {
		return fmt.Errorf("insert connection: %w", mapErr(err))
	}
	return nil
}

// UpdateConnection writes every mutable column.
func (db *DB) UpdateConnection(ctx context.Context, orgID string, c *app.Connection) error {
	args, err := connectionArgs(c)
	if err != nil {
		return fmt.Errorf("update connection: %w", err)
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE integration_connections SET provider_slug = ?, name = ?, status = ?,
		sync_frequency = ?, variables = ?, services = ?, sealed_credentials = ?, credential_keys = ?, push_token_hash = ?,
		push_token_hint = ?, webhook_secret_sealed = ?, metadata = ?, last_run_at = ?, last_run_status = ?, next_run_at = ?, error_message = ?,
		created_by = ?, created_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`, append(args, orgID, c.ID)...)
	return affected(res, err)
}

// GetConnection returns one connection of the organization.
func (db *DB) GetConnection(ctx context.Context, orgID, id string) (*app.Connection, error) {
	c, err := scanConnection(db.rd(ctx).QueryRowContext(ctx, `SELECT `+connectionColumns+`, organization_id
		FROM integration_connections WHERE organization_id = ? AND id = ?`, orgID, id), true)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ListConnections returns the organization's connections, oldest first.
func (db *DB) ListConnections(ctx context.Context, orgID string) ([]app.Connection, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+connectionColumns+`, organization_id FROM integration_connections
		WHERE organization_id = ? ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	defer rows.Close()
	out := []app.Connection{}
	for rows.Next() {
		c, err := scanConnection(rows, true)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}

// CountConnections counts the organization's connections (every status).
func (db *DB) CountConnections(ctx context.Context, orgID string) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM integration_connections WHERE organization_id = ?`, orgID).Scan(&n)
	return n, err
}

// DeleteConnection removes a connection; its runs, results, links and
// exceptions go with it.
func (db *DB) DeleteConnection(ctx context.Context, orgID, id string) error {
	return db.InTx(ctx, func(ctx context.Context) error {
		for _, q := range []string{
			`DELETE FROM integration_check_results WHERE organization_id = ? AND connection_id = ?`,
			`DELETE FROM integration_check_runs WHERE organization_id = ? AND connection_id = ?`,
			`DELETE FROM integration_check_findings WHERE organization_id = ? AND connection_id = ?`,
			`DELETE FROM integration_check_evidence WHERE organization_id = ? AND connection_id = ?`,
			`DELETE FROM integration_check_exceptions WHERE organization_id = ? AND connection_id = ?`,
		} {
			if _, err := db.wr(ctx).ExecContext(ctx, q, orgID, id); err != nil {
				return fmt.Errorf("delete connection %s: %w", id, err)
			}
		}
		res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM integration_connections WHERE organization_id = ? AND id = ?`, orgID, id)
		return affected(res, err)
	})
}

// ConnectionByPushToken finds a connection by its push token's hash.
func (db *DB) ConnectionByPushToken(ctx context.Context, hash string) (*app.Connection, error) {
	return scanConnection(db.rd(ctx).QueryRowContext(ctx, `SELECT `+connectionColumns+`, organization_id FROM integration_connections
		WHERE push_token_hash = ?`, hash), true)
}

// ConnectionByID finds a connection by id over every organization (an
// inbound provider webhook names only the connection).
func (db *DB) ConnectionByID(ctx context.Context, id string) (*app.Connection, error) {
	return scanConnection(db.rd(ctx).QueryRowContext(ctx, `SELECT `+connectionColumns+`, organization_id FROM integration_connections
		WHERE id = ?`, id), true)
}

// DueConnections lists active (or erroring) connections whose next run is
// due, over every organization.
func (db *DB) DueConnections(ctx context.Context, now time.Time) ([]app.Connection, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+connectionColumns+`, organization_id FROM integration_connections
		WHERE status IN ('active', 'error') AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT 500`, ts(now))
	if err != nil {
		return nil, fmt.Errorf("due connections: %w", err)
	}
	defer rows.Close()
	var out []app.Connection
	for rows.Next() {
		c, err := scanConnection(rows, true)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}

const runColumns = `r.id, r.organization_id, r.connection_id, c.provider_slug, r.check_id, r.trigger, r.status, r.error, r.passed, r.failed,
	r.excepted, r.errored, r.findings_opened, r.findings_resolved, r.evidence_attached, r.logs, r.requested_by, r.queued_at,
	r.started_at, r.finished_at`

const runFrom = ` FROM integration_check_runs r JOIN integration_connections c ON c.id = r.connection_id`

func scanRun(row interface{ Scan(...any) error }, withLogs bool) (*app.CheckRun, error) {
	var r app.CheckRun
	var check, errMsg, started, finished sql.NullString
	var logs, queued string
	if err := row.Scan(&r.ID, &r.OrganizationID, &r.ConnectionID, &r.ProviderSlug, &check, &r.Trigger, &r.Status, &errMsg, &r.Passed,
		&r.Failed, &r.Excepted, &r.Errored, &r.FindingsOpened, &r.FindingsResolved, &r.EvidenceAttached, &logs, &r.RequestedBy,
		&queued, &started, &finished); err != nil {
		return nil, mapErr(err)
	}
	r.CheckRunID = r.ID
	r.CheckID, r.Error = strPtr(check), strPtr(errMsg)
	r.QueuedAt, r.StartedAt, r.FinishedAt = parseTS(queued), parseTSPtr(started), parseTSPtr(finished)
	r.Logs = []app.RunLog{}
	if withLogs {
		if err := json.Unmarshal([]byte(logs), &r.Logs); err != nil {
			return nil, fmt.Errorf("check run %s logs: %w", r.ID, err)
		}
	}
	return &r, nil
}

// CreateCheckRun inserts a queued run; a second active run of the same
// connection violates the partial unique index (ErrConflict).
func (db *DB) CreateCheckRun(ctx context.Context, orgID string, r *app.CheckRun) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_check_runs (id, organization_id, connection_id, check_id, trigger,
		status, requested_by, queued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, orgID, r.ConnectionID, nullStr(r.CheckID), r.Trigger, r.Status, r.RequestedBy, ts(r.QueuedAt))
	if err != nil {
		return fmt.Errorf("insert check run: %w", mapErr(err))
	}
	return nil
}

// ClaimCheckRun moves the oldest queued run to running.
func (db *DB) ClaimCheckRun(ctx context.Context, now time.Time) (*app.CheckRun, error) {
	var out *app.CheckRun
	err := db.InTx(ctx, func(ctx context.Context) error {
		var id string
		err := db.wr(ctx).QueryRowContext(ctx, `SELECT id FROM integration_check_runs WHERE status = 'queued'
			ORDER BY queued_at, id LIMIT 1`).Scan(&id)
		if err != nil {
			return mapErr(err)
		}
		if _, err := db.wr(ctx).ExecContext(ctx, `UPDATE integration_check_runs SET status = 'running', started_at = ? WHERE id = ?`,
			ts(now), id); err != nil {
			return err
		}
		out, err = scanRun(db.wr(ctx).QueryRowContext(ctx, `SELECT `+runColumns+runFrom+` WHERE r.id = ?`, id), true)
		return err
	})
	return out, err
}

// FinishCheckRun writes a run's status, counts, logs and times.
func (db *DB) FinishCheckRun(ctx context.Context, orgID string, r *app.CheckRun) error {
	logs, err := integJSON(r.Logs, "[]")
	if err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE integration_check_runs SET status = ?, error = ?, passed = ?, failed = ?,
		excepted = ?, errored = ?, findings_opened = ?, findings_resolved = ?, evidence_attached = ?, logs = ?, started_at = ?,
		finished_at = ? WHERE organization_id = ? AND id = ?`, r.Status, nullStr(r.Error), r.Passed, r.Failed, r.Excepted, r.Errored,
		r.FindingsOpened, r.FindingsResolved, r.EvidenceAttached, logs, tsPtr(r.StartedAt), tsPtr(r.FinishedAt), orgID, r.ID)
	return affected(res, err)
}

// InterruptRunningCheckRuns marks every running run interrupted.
func (db *DB) InterruptRunningCheckRuns(ctx context.Context, now time.Time, reason string) (int, error) {
	logs, _ := json.Marshal([]app.RunLog{{At: now, Level: "error", Message: reason}})
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE integration_check_runs SET status = 'interrupted', error = ?, finished_at = ?,
		logs = CASE WHEN logs = '[]' THEN ? ELSE logs END WHERE status = 'running'`, reason, ts(now), string(logs))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// GetCheckRun returns one run with its logs.
func (db *DB) GetCheckRun(ctx context.Context, orgID, id string) (*app.CheckRun, error) {
	return scanRun(db.rd(ctx).QueryRowContext(ctx, `SELECT `+runColumns+runFrom+` WHERE r.organization_id = ? AND r.id = ?`, orgID, id), true)
}

// ListCheckRuns lists a connection's runs, newest first, without logs.
func (db *DB) ListCheckRuns(ctx context.Context, orgID string, f app.CheckRunFilter) (app.List[app.CheckRun], error) {
	where := `r.organization_id = ? AND r.connection_id = ?`
	args := []any{orgID, f.ConnectionID}
	if f.CheckID != "" {
		where += ` AND (r.check_id = ? OR r.check_id IS NULL)`
		args = append(args, f.CheckID)
	}
	out := app.List[app.CheckRun]{Items: []app.CheckRun{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM integration_check_runs r WHERE `+where, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+runColumns+runFrom+` WHERE `+where+` ORDER BY r.queued_at DESC, r.id DESC LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list check runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRun(rows, false)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *r)
	}
	return out, rows.Err()
}

// InsertCheckResults appends a run's results.
func (db *DB) InsertCheckResults(ctx context.Context, orgID string, rs []app.CheckResult) error {
	if len(rs) == 0 {
		return nil
	}
	return db.InTx(ctx, func(ctx context.Context) error {
		const cols = 13
		const batch = 60
		for start := 0; start < len(rs); start += batch {
			end := min(start+batch, len(rs))
			var sb strings.Builder
			sb.WriteString(`INSERT INTO integration_check_results (organization_id, run_id, connection_id, check_id, resource_type,
				resource_id, resource_name, status, message, details, finding_id, exception_id) VALUES `)
			args := make([]any, 0, (end-start)*cols)
			for i, r := range rs[start:end] {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
				var details any
				if len(r.Details) > 0 {
					raw, err := json.Marshal(r.Details)
					if err != nil {
						return fmt.Errorf("check result details: %w", err)
					}
					details = string(raw)
				}
				args = append(args, orgID, r.RunID, r.ConnectionID, r.CheckID, r.ResourceType, r.ResourceID, r.ResourceName, r.Status,
					r.Message, details, nullStr(r.FindingID), nullStr(r.ExceptionID))
			}
			if _, err := db.wr(ctx).ExecContext(ctx, sb.String(), args...); err != nil {
				return fmt.Errorf("insert check results: %w", err)
			}
		}
		return nil
	})
}

// ListCheckResults lists results in the order they were recorded.
func (db *DB) ListCheckResults(ctx context.Context, orgID string, f app.CheckResultFilter) (app.List[app.CheckResult], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	if f.RunID != "" {
		where, args = append(where, "run_id = ?"), append(args, f.RunID)
	}
	if f.ConnectionID != "" {
		where, args = append(where, "connection_id = ?"), append(args, f.ConnectionID)
	}
	if f.CheckID != "" {
		where, args = append(where, "check_id = ?"), append(args, f.CheckID)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.CheckResult]{Items: []app.CheckResult{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM integration_check_results WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	order := "id"
	if f.RunID == "" {
		order = "id DESC"
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT run_id, connection_id, check_id, resource_type, resource_id, resource_name, status,
		message, details, finding_id, exception_id FROM integration_check_results WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list check results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r app.CheckResult
		var details, finding, exception sql.NullString
		if err := rows.Scan(&r.RunID, &r.ConnectionID, &r.CheckID, &r.ResourceType, &r.ResourceID, &r.ResourceName, &r.Status,
			&r.Message, &details, &finding, &exception); err != nil {
			return out, err
		}
		r.Details = map[string]any{}
		if details.Valid {
			if err := json.Unmarshal([]byte(details.String), &r.Details); err != nil {
				return out, fmt.Errorf("check result details: %w", err)
			}
		}
		r.FindingID, r.ExceptionID = strPtr(finding), strPtr(exception)
		out.Items = append(out.Items, r)
	}
	return out, rows.Err()
}

// LatestCheckResults summarizes each check's results in the latest run
// that evaluated it.
func (db *DB) LatestCheckResults(ctx context.Context, orgID, connectionID string) (map[string]app.CheckSummary, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `WITH latest AS (
			SELECT check_id, max(run_id) AS run_id FROM integration_check_results
			WHERE organization_id = ? AND connection_id = ? GROUP BY check_id)
		SELECT r.check_id, r.run_id, coalesce(run.finished_at, run.queued_at), r.status, count(*)
		FROM integration_check_results r
		JOIN latest l ON l.check_id = r.check_id AND l.run_id = r.run_id
		JOIN integration_check_runs run ON run.id = r.run_id
		WHERE r.organization_id = ? AND r.connection_id = ?
		GROUP BY r.check_id, r.run_id, r.status, run.finished_at, run.queued_at`, orgID, connectionID, orgID, connectionID)
	if err != nil {
		return nil, fmt.Errorf("latest check results: %w", err)
	}
	defer rows.Close()
	out := map[string]app.CheckSummary{}
	for rows.Next() {
		var check, run, at, status string
		var n int
		if err := rows.Scan(&check, &run, &at, &status, &n); err != nil {
			return nil, err
		}
		s := out[check]
		s.RunID, s.At = run, parseTS(at)
		switch status {
		case app.CheckPass:
			s.Passed += n
		case app.CheckFail:
			s.Failed += n
		case app.CheckExcepted:
			s.Excepted += n
		case app.CheckError:
			s.Errored += n
		}
		switch {
		case s.Failed > 0:
			s.Status = app.CheckFail
		case s.Errored > 0:
			s.Status = app.CheckError
		default:
			s.Status = app.CheckPass
		}
		out[check] = s
	}
	return out, rows.Err()
}

// CheckFindings returns the finding linked to each failing resource of a
// connection.
func (db *DB) CheckFindings(ctx context.Context, orgID, connectionID string) (map[app.CheckResourceKey]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT check_id, resource_id, finding_id FROM integration_check_findings
		WHERE organization_id = ? AND connection_id = ?`, orgID, connectionID)
	if err != nil {
		return nil, fmt.Errorf("check findings: %w", err)
	}
	defer rows.Close()
	out := map[app.CheckResourceKey]string{}
	for rows.Next() {
		var k app.CheckResourceKey
		var f string
		if err := rows.Scan(&k.CheckID, &k.ResourceID, &f); err != nil {
			return nil, err
		}
		out[k] = f
	}
	return out, rows.Err()
}

// SetCheckFinding links a resource of a check to its finding.
func (db *DB) SetCheckFinding(ctx context.Context, orgID, connectionID string, k app.CheckResourceKey, findingID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_check_findings (organization_id, connection_id, check_id, resource_id,
		finding_id) VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id, connection_id, check_id, resource_id)
		DO UPDATE SET finding_id = excluded.finding_id`, orgID, connectionID, k.CheckID, k.ResourceID, findingID)
	return err
}

// CheckEvidence returns, per control, the evidence a check last attached.
func (db *DB) CheckEvidence(ctx context.Context, orgID, connectionID, checkID string) (map[string]string, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT control_id, evidence_id FROM integration_check_evidence
		WHERE organization_id = ? AND connection_id = ? AND check_id = ?`, orgID, connectionID, checkID)
	if err != nil {
		return nil, fmt.Errorf("check evidence: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var c, e string
		if err := rows.Scan(&c, &e); err != nil {
			return nil, err
		}
		out[c] = e
	}
	return out, rows.Err()
}

// SetCheckEvidence records the evidence a check keeps on a control.
func (db *DB) SetCheckEvidence(ctx context.Context, orgID, connectionID, checkID, controlID, evidenceID string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_check_evidence (organization_id, connection_id, check_id, control_id,
		evidence_id) VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id, connection_id, check_id, control_id)
		DO UPDATE SET evidence_id = excluded.evidence_id`, orgID, connectionID, checkID, controlID, evidenceID)
	return err
}

const exceptionColumns = `id, connection_id, check_id, resource_id, reason, reviewer_id, expires_at, created_by, created_at`

func scanException(row interface{ Scan(...any) error }) (*app.CheckException, error) {
	var e app.CheckException
	var exp, created string
	if err := row.Scan(&e.ID, &e.ConnectionID, &e.CheckID, &e.ResourceID, &e.Reason, &e.ReviewerID, &exp, &e.CreatedBy, &created); err != nil {
		return nil, mapErr(err)
	}
	e.ExpiresAt, e.CreatedAt = parseTS(exp), parseTS(created)
	return &e, nil
}

// CreateCheckException inserts an exception.
func (db *DB) CreateCheckException(ctx context.Context, orgID string, e *app.CheckException) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO integration_check_exceptions (organization_id, `+exceptionColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, e.ID, e.ConnectionID, e.CheckID, e.ResourceID, e.Reason, e.ReviewerID,
		ts(e.ExpiresAt), e.CreatedBy, ts(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert check exception: %w", mapErr(err))
	}
	return nil
}

// GetCheckException returns one exception.
func (db *DB) GetCheckException(ctx context.Context, orgID, id string) (*app.CheckException, error) {
	return scanException(db.rd(ctx).QueryRowContext(ctx, `SELECT `+exceptionColumns+` FROM integration_check_exceptions
		WHERE organization_id = ? AND id = ?`, orgID, id))
}

// DeleteCheckException removes an exception.
func (db *DB) DeleteCheckException(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM integration_check_exceptions WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// ListCheckExceptions lists a connection's exceptions, newest first.
func (db *DB) ListCheckExceptions(ctx context.Context, orgID, connectionID string) ([]app.CheckException, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+exceptionColumns+` FROM integration_check_exceptions
		WHERE organization_id = ? AND connection_id = ? ORDER BY id DESC`, orgID, connectionID)
	if err != nil {
		return nil, fmt.Errorf("list check exceptions: %w", err)
	}
	defer rows.Close()
	out := []app.CheckException{}
	for rows.Next() {
		e, err := scanException(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}
