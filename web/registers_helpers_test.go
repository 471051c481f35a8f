package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// raw opens the test database for assertions the API does not expose (the
// outbox) and for seeding tables that have no service yet (tasks).
func (e *testEnv) raw() *sql.DB {
	e.t.Helper()
	return storagetest.Raw(e.t, e.dir)
}

// task inserts a task, optionally assigned to a person, and returns its id.
func (e *testEnv) task(orgID, assignee string) string {
	e.t.Helper()
	id := app.NewID(app.PrefixTask)
	now := e.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	var a any
	if assignee != "" {
		a = assignee
	}
	if _, err := e.raw().Exec(`INSERT INTO tasks (id, organization_id, title, assignee_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id, orgID, "task", a, now, now); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// control creates a control through the store and returns its id.
func (e *testEnv) control(orgID string) string {
	e.t.Helper()
	now := e.clock.Now()
	c := &app.Control{ID: app.NewID(app.PrefixControl), Code: "C", Name: "control", Status: app.ControlNotStarted, CreatedAt: now, UpdatedAt: now}
	if err := e.db.CreateControl(context.Background(), orgID, c); err != nil {
		e.t.Fatal(err)
	}
	return c.ID
}

// events returns the data of the outbox events of a type in an organization.
func (e *testEnv) events(orgID, typ string) []map[string]any {
	e.t.Helper()
	rows, err := e.raw().Query(`SELECT payload FROM events WHERE organization_id = ? AND type = ? ORDER BY seq`, orgID, typ)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			e.t.Fatal(err)
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// sessions lets requests act as a signed-in person through the header
// X-Test-Session: "orgID role userID".
func (e *testEnv) sessions() {
	e.srv.AddAuthenticator(func(r *http.Request) (*app.Principal, error) {
		f := strings.Fields(r.Header.Get("X-Test-Session"))
		if len(f) != 3 {
			return nil, nil
		}
		return &app.Principal{OrgID: f[0], Role: app.Role(f[1]), AuthType: app.AuthSession, UserID: f[2], Plan: "professional"}, nil
	})
}

// session returns the header pair acting as person in org with role.
func session(orgID string, role app.Role, userID string) []string {
	return []string{"X-Test-Session", orgID + " " + string(role) + " " + userID}
}

// create posts body and returns the created object, failing unless 201.
func (e *testEnv) create(path, key string, body any, hdr ...string) map[string]any {
	e.t.Helper()
	rec := e.do("POST", path, key, body, hdr...)
	wantStatus(e.t, rec, http.StatusCreated)
	return obj(e.t, rec)
}

// listIDs returns the ids in a list response, failing unless 200.
func listIDs(t *testing.T, e *testEnv, path, key string) ([]string, map[string]any) {
	t.Helper()
	rec := e.do("GET", path, key, nil)
	wantStatus(t, rec, http.StatusOK)
	m := obj(t, rec)
	var ids []string
	for _, it := range m["data"].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	return ids, m["meta"].(map[string]any)
}

func sameIDs(a []string, b ...string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
