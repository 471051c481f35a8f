package app

import (
	"context"
	"fmt"
)

// complianceTrust is the trust portal's source of frameworks: the
// organization's enabled frameworks with the score and control counts the
// frameworks API computes, and each framework's controls.
type complianceTrust struct{ a *App }

// FrameworkTrustSource returns the trust portal's compliance source over
// the frameworks and controls services; wire it with
// SetTrustComplianceSource.
func (a *App) FrameworkTrustSource() TrustComplianceSource { return complianceTrust{a: a} }

// TrustFrameworks returns every enabled framework of the organization.
func (s complianceTrust) TrustFrameworks(ctx context.Context, orgID string, controls bool) ([]TrustFramework, error) {
	sctx := SystemContext(ctx, orgID)
	enabled := true
	l, err := s.a.ListFrameworks(sctx, &enabled, Page{Page: 1, PerPage: 1000})
	if err != nil {
		return nil, fmt.Errorf("list frameworks for the trust portal: %w", err)
	}
	out := make([]TrustFramework, 0, len(l.Items))
	for _, f := range l.Items {
		score, counts, err := s.a.FrameworkScore(sctx, f.ID)
		if err != nil {
			return nil, fmt.Errorf("score framework %s for the trust portal: %w", f.ID, err)
		}
		tf := TrustFramework{ID: f.ID, Slug: f.Slug, Name: f.Name, Score: Ptr(score)}
		if counts != nil {
			tf.ControlsTotal = counts.ControlTotal
			tf.ControlsImplemented = counts.Controls[ControlImplemented]
			tf.ControlsInProgress = counts.Controls[ControlInProgress]
		}
		if controls {
			if tf.Controls, err = s.controls(ctx, orgID, f.ID); err != nil {
				return nil, err
			}
		}
		out = append(out, tf)
	}
	return out, nil
}

// controls lists a framework's controls by name and status.
func (s complianceTrust) controls(ctx context.Context, orgID, frameworkID string) ([]TrustControl, error) {
	out := []TrustControl{}
	const perPage = 500
	for page := 1; ; page++ {
		l, err := s.a.store.ListControls(ctx, orgID, ControlFilter{FrameworkID: frameworkID, Page: Page{Page: page, PerPage: perPage}})
		if err != nil {
			return nil, fmt.Errorf("list controls of %s for the trust portal: %w", frameworkID, err)
		}
		for _, c := range l.Items {
			name := c.Name
			if c.Code != "" {
				name = c.Code + " " + c.Name
			}
			out = append(out, TrustControl{Name: name, Status: c.Status})
		}
		if page*perPage >= l.Total || len(l.Items) == 0 {
			return out, nil
		}
	}
}
