package storage

import (
	"context"
	"database/sql"

	"github.com/compliance-appliance/compliance/app"
)

const orgColumns = `id, name, slug, plan, website, brand_display_name, brand_primary_color, brand_logo_url, created_at, updated_at`

func scanOrganization(row interface{ Scan(...any) error }) (*app.Organization, error) {
	var o app.Organization
	var website, dn, color, logo sql.NullString
	var created, updated string
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &website, &dn, &color, &logo, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	o.Website = strPtr(website)
	o.Branding = app.Branding{DisplayName: strPtr(dn), PrimaryColor: strPtr(color), LogoURL: strPtr(logo)}
	o.CreatedAt, o.UpdatedAt = parseTS(created), parseTS(updated)
	return &o, nil
}

// CreateOrganization inserts an organization.
func (db *DB) CreateOrganization(ctx context.Context, o *app.Organization) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Name, o.Slug, o.Plan, nullStr(o.Website), nullStr(o.Branding.DisplayName), nullStr(o.Branding.PrimaryColor),
		nullStr(o.Branding.LogoURL), ts(o.CreatedAt), ts(o.UpdatedAt))
	return mapErr(err)
}

// GetOrganization returns one organization.
func (db *DB) GetOrganization(ctx context.Context, id string) (*app.Organization, error) {
	return scanOrganization(db.rd(ctx).QueryRowContext(ctx, `SELECT `+orgColumns+` FROM organizations WHERE id = ?`, id))
}

// UpdateOrganization writes every mutable column.
func (db *DB) UpdateOrganization(ctx context.Context, o *app.Organization) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE organizations SET name = ?, slug = ?, plan = ?, website = ?,
		brand_display_name = ?, brand_primary_color = ?, brand_logo_url = ?, updated_at = ? WHERE id = ?`,
		o.Name, o.Slug, o.Plan, nullStr(o.Website), nullStr(o.Branding.DisplayName), nullStr(o.Branding.PrimaryColor),
		nullStr(o.Branding.LogoURL), ts(o.UpdatedAt), o.ID)
	return affected(res, err)
}

// ListOrganizations returns every organization by creation.
func (db *DB) ListOrganizations(ctx context.Context) ([]app.Organization, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+orgColumns+` FROM organizations ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.Organization{}
	for rows.Next() {
		o, err := scanOrganization(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *o)
	}
	return out, rows.Err()
}

// affected maps an update that touched no row to ErrNotFound.
func affected(res sql.Result, err error) error {
	if err != nil {
		return mapErr(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return app.ErrNotFound
	}
	return nil
}
