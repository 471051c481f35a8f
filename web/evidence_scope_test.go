package web

import (
	"errors"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// TestEmployeeListsEvidenceByControlOrTask: an employee or contractor may
// not list the organization's evidence as a whole, only a control's or
// task's that is theirs; managers may.
func TestEmployeeListsEvidenceByControlOrTask(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	employee := e.person(org, "emp@example.com", app.RoleEmployee)
	for _, c := range []struct {
		role app.Role
		want error
	}{{app.RoleEmployee, app.ErrForbidden}, {app.RoleContractor, app.ErrForbidden}, {app.RoleAdmin, nil}, {app.RoleAuditor, nil}} {
		ctx := app.WithPrincipal(e.ctx(org), &app.Principal{OrgID: org, Role: c.role, AuthType: app.AuthSystem, UserID: employee})
		_, err := e.app.ListEvidence(ctx, app.EvidenceFilter{Page: app.Page{Page: 1, PerPage: 10}})
		if (c.want == nil && err != nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.role, err, c.want)
		}
	}
}
