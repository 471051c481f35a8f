package app

import "context"

// TrustFramework is one framework as the trust portal shows it: its name,
// its compliance score and how many of its controls stand where.
type TrustFramework struct {
	ID                  string         `json:"id"`
	Slug                string         `json:"slug,omitempty"` // built-in frameworks
	Name                string         `json:"name"`
	Score               *int           `json:"score"` // 0-100, nil when not computed
	ControlsTotal       int            `json:"controlsTotal"`
	ControlsImplemented int            `json:"controlsImplemented"`
	ControlsInProgress  int            `json:"controlsInProgress"`
	Controls            []TrustControl `json:"controls,omitempty"`
}

// TrustControl is one control as the portal shows it.
type TrustControl struct {
	Name   string `json:"name"`
	Status string `json:"status"` // not_started, in_progress, implemented, not_applicable
}

// TrustComplianceSource supplies the frameworks, scores and control status
// the trust portal publishes. The appliance's framework module implements
// it; until one is wired in, the portal publishes no frameworks.
type TrustComplianceSource interface {
	// TrustFrameworks returns the organization's enabled frameworks. With
	// controls false, TrustFramework.Controls may be left empty.
	TrustFrameworks(ctx context.Context, orgID string, controls bool) ([]TrustFramework, error)
}

// SetTrustComplianceSource wires the source of framework scores and control
// status into the trust portal.
func (a *App) SetTrustComplianceSource(s TrustComplianceSource) {
	a.ext.mu.Lock()
	defer a.ext.mu.Unlock()
	a.ext.trust = s
}

func (a *App) trustSource() TrustComplianceSource {
	a.ext.mu.RLock()
	defer a.ext.mu.RUnlock()
	return a.ext.trust
}
