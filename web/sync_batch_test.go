package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/ldap"
	"github.com/compliance-appliance/compliance/integrations/ldap/ldaptest"
)

// watchedDirectory is the LDAP provider with a look at the register before
// each user it hands to sync.
type watchedDirectory struct {
	app.DirectoryProvider
	before func()
}

func (w watchedDirectory) Users(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryUser) error) error {
	return w.DirectoryProvider.Users(ctx, c, func(u app.DirectoryUser) error {
		w.before()
		return yield(u)
	})
}

// TestDirectorySyncJoinerBatches: a first sync commits joiners in batches;
// at any moment of the run (where a restart could stop it) the register
// holds whole batches only, each joiner with their directory state, tasks,
// audit record and events, and nobody of the batch under way.
func TestDirectorySyncJoinerBatches(t *testing.T) {
	dir := ldaptest.Start(t, 260, 100)
	e := newTestServer(t)
	s := &syncEnv{testEnv: e, dir: dir}
	looks, mid := 0, 0
	base := map[string]int{} // before the first joiner
	e.app.RegisterIntegrationProviders(watchedDirectory{DirectoryProvider: ldap.New(nil), before: func() {
		looks++
		if looks%5 != 1 {
			return
		}
		joined := s.count(t, `SELECT count(*) FROM memberships WHERE organization_id = ? AND role = 'employee'`, s.org)
		if joined%100 != 0 {
			t.Fatalf("after %d users the register holds %d joiners: not whole batches", looks, joined)
		}
		if joined > 0 {
			mid++
		}
		for name, q := range map[string]string{
			"directory state": `SELECT count(*) FROM person_directory WHERE organization_id = ? AND source = 'directory'`,
			"audit records":   `SELECT count(*) FROM audit_log WHERE organization_id = ? AND resource_type = 'person' AND action = 'created'`,
			"person.joined":   `SELECT count(*) FROM events WHERE organization_id = ? AND type = 'person.joined'`,
			"assigned tasks":  `SELECT count(DISTINCT t.assignee_id) FROM tasks t JOIN memberships m ON m.user_id = t.assignee_id AND m.organization_id = t.organization_id WHERE t.organization_id = ? AND m.role = 'employee'`,
		} {
			n := s.count(t, q, s.org)
			if looks == 1 {
				base[name] = n
			}
			if n -= base[name]; n != joined {
				t.Fatalf("after %d users: %d joiners but %d %s", looks, joined, n, name)
			}
		}
	}})
	s.org = e.org("Acme", app.PlanEnterprise)
	s.ownerID = e.person(s.org, "owner@acme.test", app.RoleOwner)
	s.owner = e.key(s.org, app.RoleOwner)
	s.conn = s.connect(t, dir.Credentials())

	run := s.sync(t, "")
	created := int(run["created"].(float64))
	if created <= 200 || run["errors"].(float64) != 0 {
		t.Fatalf("run: %v", run)
	}
	if mid == 0 {
		t.Fatal("no batch committed while the directory was still listing")
	}
	if n := s.count(t, `SELECT count(*) FROM memberships WHERE organization_id = ? AND role = 'employee'`, s.org); n != created {
		t.Fatalf("after the run: %d joiners, want %d", n, created)
	}
	// Every joiner has a result naming them.
	withPerson := 0
	for _, page := range []string{"1", "2"} {
		rec := s.do("GET", "/v1/integrations/sync/runs/"+run["syncRunId"].(string)+"?perPage=200&page="+page, s.owner, nil)
		wantStatus(t, rec, http.StatusOK)
		for _, r := range obj(t, rec)["results"].([]any) {
			if m := r.(map[string]any); m["action"] == "create" && m["personId"] != nil {
				withPerson++
			}
		}
	}
	if withPerson != created {
		t.Fatalf("%d create results with a person, want %d", withPerson, created)
	}
}
