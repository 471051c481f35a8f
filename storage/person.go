package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const personColumns = `u.id, u.name, u.email, m.role, m.department, m.job_title, m.is_active, u.last_login_at, m.created_at, m.updated_at`

func scanPerson(row interface{ Scan(...any) error }) (*app.Person, error) {
	var p app.Person
	var dept, title, last sql.NullString
	var active int
	var created, updated string
	if err := row.Scan(&p.ID, &p.Name, &p.Email, &p.Role, &dept, &title, &active, &last, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	p.Department, p.JobTitle = strPtr(dept), strPtr(title)
	p.IsActive = active == 1
	p.LastLoginAt = parseTSPtr(last)
	p.CreatedAt, p.UpdatedAt = parseTS(created), parseTS(updated)
	p.Devices = []app.DeviceSummary{}
	return &p, nil
}

// FindUserByEmail returns the id of the user with this email.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (string, error) {
	var id string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT id FROM users WHERE email = ?`, email).Scan(&id)
	return id, mapErr(err)
}

// CreateUser inserts a login identity.
func (db *DB) CreateUser(ctx context.Context, id, email, name, passwordHash string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, id, email, name, passwordHash, ts(at), ts(at))
	return mapErr(err)
}

// UpdateUser changes a user's email and name.
func (db *DB) UpdateUser(ctx context.Context, id, email, name string, at time.Time) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE users SET email = ?, name = ?, updated_at = ? WHERE id = ?`, email, name, ts(at), id)
	return affected(res, err)
}

// SetPasswordHash stores a user's password hash.
func (db *DB) SetPasswordHash(ctx context.Context, userID, hash string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID)
	return affected(res, err)
}

// CreateMembership adds a user to an organization.
func (db *DB) CreateMembership(ctx context.Context, orgID, userID string, p *app.Person) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO memberships (organization_id, user_id, role, department, job_title,
		is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, userID, string(p.Role), nullStr(p.Department), nullStr(p.JobTitle), boolInt(p.IsActive), ts(p.CreatedAt), ts(p.UpdatedAt))
	return mapErr(err)
}

// UpdateMembership writes a person's organization-level fields.
func (db *DB) UpdateMembership(ctx context.Context, orgID string, p *app.Person) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE memberships SET role = ?, department = ?, job_title = ?, is_active = ?,
		updated_at = ? WHERE organization_id = ? AND user_id = ?`,
		string(p.Role), nullStr(p.Department), nullStr(p.JobTitle), boolInt(p.IsActive), ts(p.UpdatedAt), orgID, p.ID)
	return affected(res, err)
}

// getPersonSQL returns a member of the organization with their devices.
func (db *DB) getPersonSQL(ctx context.Context, orgID, id string) (*app.Person, error) {
	p, err := scanPerson(db.rd(ctx).QueryRowContext(ctx, `SELECT `+personColumns+`
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ? AND m.user_id = ?`, orgID, id))
	if err != nil {
		return nil, err
	}
	if err := db.attachDevices(ctx, orgID, []*app.Person{p}); err != nil {
		return nil, err
	}
	return p, nil
}

// listPeopleSQL returns a page of members.
func (db *DB) listPeopleSQL(ctx context.Context, orgID string, f app.PersonFilter) (app.List[app.Person], error) {
	where := []string{"m.organization_id = ?"}
	args := []any{orgID}
	if f.Role != "" {
		where = append(where, "m.role = ?")
		args = append(args, f.Role)
	}
	if !f.Inactive {
		where = append(where, "m.is_active = 1")
	}
	where = append(where, personSyncConditions(f)...)
	if f.IDs != nil {
		if len(f.IDs) == 0 {
			return app.List[app.Person]{Items: []app.Person{}}, nil
		}
		where = append(where, "m.user_id IN ("+placeholders(len(f.IDs))+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	cond := strings.Join(where, " AND ")
	out := app.List[app.Person]{Items: []app.Person{}}
	q := db.rd(ctx)
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM memberships m WHERE `+cond, args...).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+personColumns+` FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE `+cond+` ORDER BY m.user_id LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	ptrs := []*app.Person{}
	for rows.Next() {
		p, err := scanPerson(rows)
		if err != nil {
			return out, err
		}
		ptrs = append(ptrs, p)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	rows.Close()
	if err := db.attachDevices(ctx, orgID, ptrs); err != nil {
		return out, err
	}
	for _, p := range ptrs {
		out.Items = append(out.Items, *p)
	}
	return out, nil
}

func (db *DB) attachDevices(ctx context.Context, orgID string, people []*app.Person) error {
	if len(people) == 0 {
		return nil
	}
	byID := map[string]*app.Person{}
	args := []any{orgID}
	for _, p := range people {
		byID[p.ID] = p
		args = append(args, p.ID)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT person_id, id, name, hostname, platform FROM devices
		WHERE organization_id = ? AND person_id IN (`+placeholders(len(people))+`) ORDER BY id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var pid string
		var d app.DeviceSummary
		if err := rows.Scan(&pid, &d.ID, &d.Name, &d.Hostname, &d.Platform); err != nil {
			return err
		}
		if p := byID[pid]; p != nil {
			p.Devices = append(p.Devices, d)
		}
	}
	return rows.Err()
}

// CountMembers counts active members.
func (db *DB) CountMembers(ctx context.Context, orgID string) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM memberships WHERE organization_id = ? AND is_active = 1`, orgID).Scan(&n)
	return n, err
}

// CountOwners counts the organization's owners.
func (db *DB) CountOwners(ctx context.Context, orgID string) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM memberships WHERE organization_id = ? AND role = 'owner'`, orgID).Scan(&n)
	return n, err
}

// CountMemberships counts the organizations a user belongs to.
func (db *DB) CountMemberships(ctx context.Context, userID string) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM memberships WHERE user_id = ?`, userID).Scan(&n)
	return n, err
}
