package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.OnboardingStore = (*DB)(nil)

// OnboardingFacts counts what the getting-started steps are ticked from,
// in one statement; every count stops at its first row.
func (db *DB) OnboardingFacts(ctx context.Context, orgID string) (app.OnboardingFacts, error) {
	var f app.OnboardingFacts
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM (SELECT 1 FROM organization_frameworks WHERE organization_id = ?1 LIMIT 1)),
		(SELECT count(*) FROM (SELECT 1 FROM memberships WHERE organization_id = ?1 LIMIT 2)),
		(SELECT count(*) FROM (SELECT 1 FROM policies WHERE organization_id = ?1 AND current_version > 0 LIMIT 1)),
		(SELECT count(*) FROM (SELECT 1 FROM evidence WHERE organization_id = ?1 LIMIT 1)),
		(SELECT count(*) FROM (SELECT 1 FROM integration_connections WHERE organization_id = ?1 LIMIT 1)),
		EXISTS (SELECT 1 FROM trust_settings WHERE organization_id = ?1 AND enabled = 1)`, orgID).
		Scan(&f.Frameworks, &f.Members, &f.PublishedPolicies, &f.Evidence, &f.Connections, &f.TrustPortal)
	if err != nil {
		return f, fmt.Errorf("onboarding facts: %w", err)
	}
	return f, nil
}

// OnboardingDismissed returns when the organization dismissed the
// checklist, or nil.
func (db *DB) OnboardingDismissed(ctx context.Context, orgID string) (*time.Time, error) {
	var at string
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT dismissed_at FROM onboarding_dismissals WHERE organization_id = ?`, orgID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := parseTS(at)
	return &t, nil
}

// DismissOnboarding records the dismissal (once per organization).
func (db *DB) DismissOnboarding(ctx context.Context, orgID, by string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO onboarding_dismissals (organization_id, dismissed_by, dismissed_at)
		VALUES (?, ?, ?) ON CONFLICT (organization_id) DO NOTHING`, orgID, by, ts(at))
	return mapErr(err)
}
