package app

import (
	"context"
	"fmt"
	"time"
)

// Dashboard is the overview of an organization's compliance posture that
// the web application's home page shows.
type Dashboard struct {
	// Frameworks are the enabled frameworks with their scores.
	Frameworks []Framework
	// ExpiringEvidence is current evidence expiring within EvidenceWarning,
	// soonest first (at most DashboardItems), with its total.
	ExpiringEvidence []ExpiringItem
	ExpiringTotal    int
	// OpenFindings counts findings that are open or in review by severity.
	OpenFindings map[string]int
	// OverdueTasks are tasks past their due date and not done.
	OverdueTasks      []OverdueItem
	OverdueTasksTotal int
	// OverdueActions are corrective actions past due or marked overdue.
	OverdueActions      []OverdueItem
	OverdueActionsTotal int
	// IncidentDeadlines are the incident reports not yet sent with a due
	// time, soonest first (at most DashboardItems), with their total.
	IncidentDeadlines      []IncidentDeadline
	IncidentDeadlinesTotal int
	// Limited is true when the principal sees only what is assigned to it.
	Limited bool
}

// ExpiringItem is one piece of evidence about to expire.
type ExpiringItem struct {
	EvidenceID  string
	ControlID   string
	ControlName string
	Filename    string
	ExpiresAt   time.Time
}

// OverdueItem is an overdue task or corrective action.
type OverdueItem struct {
	ID       string
	ParentID string // the finding of a corrective action
	Title    string
	Status   string
	DueDate  string
	OwnerID  *string
}

// RiskHeatmap counts active risks per probability (row) and impact
// (column) cell, 0-based on the Probabilities and Impacts scales.
type RiskHeatmap struct {
	Inherent [5][5]int
	Residual [5][5]int
	// Unassessed counts risks without a residual assessment.
	Unassessed int
}

// DashboardItems bounds the lists a dashboard carries.
const DashboardItems = 10

// DashboardStore reads the aggregates of the dashboard.
type DashboardStore interface {
	ExpiringEvidence(ctx context.Context, orgID string, now, until time.Time, limit int) ([]ExpiringItem, int, error)
	OpenFindingsBySeverity(ctx context.Context, orgID string) (map[string]int, error)
	OverdueTasks(ctx context.Context, orgID, assigneeID, today string, limit int) ([]OverdueItem, int, error)
	OverdueCorrectiveActions(ctx context.Context, orgID, today string, limit int) ([]OverdueItem, int, error)
	RiskCells(ctx context.Context, orgID, ownerID string) (inherent, residual map[[2]string]int, unassessed int, err error)
}

// Dashboard gathers the home page's overview. Employees and contractors
// see only their own overdue tasks.
func (a *App) Dashboard(ctx context.Context) (*Dashboard, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	today := now.Format("2006-01-02")
	d := &Dashboard{OpenFindings: map[string]int{}, Frameworks: []Framework{}}
	if p.SeesOnlyAssigned() {
		d.Limited = true
		if p.UserID != "" {
			if d.OverdueTasks, d.OverdueTasksTotal, err = a.store.OverdueTasks(ctx, p.OrgID, p.UserID, today, DashboardItems); err != nil {
				return nil, fmt.Errorf("dashboard: %w", err)
			}
		}
		return d, nil
	}
	enabled := true
	fw, err := a.ListFrameworks(ctx, &enabled, Page{Page: 1, PerPage: MaxPerPage})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	d.Frameworks = fw.Items
	if d.ExpiringEvidence, d.ExpiringTotal, err = a.store.ExpiringEvidence(ctx, p.OrgID, now, now.Add(EvidenceWarning), DashboardItems); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if d.OpenFindings, err = a.store.OpenFindingsBySeverity(ctx, p.OrgID); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if d.OverdueTasks, d.OverdueTasksTotal, err = a.store.OverdueTasks(ctx, p.OrgID, "", today, DashboardItems); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if d.OverdueActions, d.OverdueActionsTotal, err = a.store.OverdueCorrectiveActions(ctx, p.OrgID, today, DashboardItems); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if d.IncidentDeadlines, d.IncidentDeadlinesTotal, err = a.store.UpcomingIncidentReports(ctx, p.OrgID, DashboardItems); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	for i := range d.IncidentDeadlines {
		dl := &d.IncidentDeadlines[i]
		dl.Title = ReportTitle(dl.Regime, dl.Kind)
		dl.Overdue = now.After(dl.DueAt)
	}
	return d, nil
}

// RiskHeatmap counts the organization's active risks per cell of the 5x5
// probability/impact matrix, inherent and residual. Employees and
// contractors count only the risks they own, as the risk list shows them.
func (a *App) RiskHeatmap(ctx context.Context) (*RiskHeatmap, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	owner := ""
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			return &RiskHeatmap{}, nil
		}
		owner = p.UserID
	}
	in, res, unassessed, err := a.store.RiskCells(ctx, p.OrgID, owner)
	if err != nil {
		return nil, fmt.Errorf("risk heatmap: %w", err)
	}
	h := &RiskHeatmap{Unassessed: unassessed}
	fill := func(dst *[5][5]int, cells map[[2]string]int) {
		for k, n := range cells {
			pi, ii := probabilityScore[k[0]]-1, impactScore[k[1]]-1
			if pi >= 0 && ii >= 0 {
				dst[pi][ii] += n
			}
		}
	}
	fill(&h.Inherent, in)
	fill(&h.Residual, res)
	return h, nil
}
