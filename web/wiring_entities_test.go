package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// entitySet creates one of each newly commentable resource in an
// organization and returns entity type -> id.
func (e *testEnv) entitySet(orgID string) map[string]string {
	e.t.Helper()
	ctx := e.ctx(orgID)
	out := map[string]string{}
	pol, err := e.app.CreatePolicy(ctx, app.PolicyInput{Name: app.Ptr("Access control"), Content: app.Ptr("# Access")})
	if err != nil {
		e.t.Fatal(err)
	}
	out[app.EntityPolicy] = pol.ID
	fw, ctls := e.scoreFramework(orgID, 1)
	out[app.EntityFramework] = fw
	c, err := e.app.GetControl(ctx, ctls[0])
	if err != nil || len(c.Requirements) != 1 {
		e.t.Fatalf("control %v err %v", c, err)
	}
	out[app.EntityRequirement] = c.Requirements[0].RequirementID
	ev, err := e.app.UploadEvidence(ctx, ctls[0], "", app.EvidenceUpload{File: strings.NewReader("log"), Filename: "log.txt", ContentType: "text/plain"})
	if err != nil {
		e.t.Fatal(err)
	}
	out[app.EntityEvidence] = ev.ID
	dev := app.NewID("dev")
	now := e.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	if _, err := e.raw().Exec(`INSERT INTO devices (id, organization_id, name, hostname, platform, created_at, updated_at) VALUES (?, ?, 'laptop', 'lt-1', 'linux', ?, ?)`,
		dev, orgID, now, now); err != nil {
		e.t.Fatal(err)
	}
	out[app.EntityDevice] = dev
	esg, err := e.app.CreateESGDataPoint(ctx, app.ESGDataPointInput{ESRSCode: app.Ptr("E1-6"), Value: app.Ptr(12.5), Period: app.Ptr("2025")})
	if err != nil {
		e.t.Fatal(err)
	}
	out[app.EntityESGDataPoint] = esg.ID
	return out
}

// TestCommentsAndAttachmentsOnEveryResource: policies, evidence,
// frameworks, requirements, devices and CSRD data points take comments and
// attachments; another organization's entity is 404, an unknown type 400.
func TestCommentsAndAttachmentsOnEveryResource(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	key := e.key(org, app.RoleAdmin)
	auditor := e.key(org, app.RoleAuditor)
	mine, theirs := e.entitySet(org), e.entitySet(other)
	for typ, id := range mine {
		t.Run(typ, func(t *testing.T) {
			c := e.create("/v1/comments", key, map[string]any{"entityType": typ, "entityId": id, "content": "Reviewed."})
			if c["entityType"] != typ || c["entityId"] != id {
				t.Fatalf("comment %v", c)
			}
			ids, _ := listIDs(t, e, "/v1/comments?entityType="+typ+"&entityId="+id, auditor)
			if !sameIDs(ids, c["id"].(string)) {
				t.Errorf("comments %v", ids)
			}
			at := uploadFile(t, e, key, typ, id, "note.txt", "attached")
			ids, _ = listIDs(t, e, "/v1/attachments?entityType="+typ+"&entityId="+id, auditor)
			if !sameIDs(ids, at) {
				t.Errorf("attachments %v", ids)
			}
			// Another organization's entity of the same type is not found.
			wantError(t, e.do("POST", "/v1/comments", key, map[string]any{"entityType": typ, "entityId": theirs[typ], "content": "x"}), http.StatusNotFound, "not_found")
			wantError(t, e.do("GET", "/v1/comments?entityType="+typ+"&entityId="+theirs[typ], key, nil), http.StatusNotFound, "not_found")
			wantError(t, uploadRec(t, e, key, map[string]string{"entityType": typ, "entityId": theirs[typ]}, "n.txt", "x"), http.StatusNotFound, "not_found")
			wantError(t, e.do("GET", "/v1/attachments?entityType="+typ+"&entityId="+theirs[typ], key, nil), http.StatusNotFound, "not_found")
			// An unknown id of the type is not found either.
			wantError(t, e.do("POST", "/v1/comments", key, map[string]any{"entityType": typ, "entityId": "zzz_nope", "content": "x"}), http.StatusNotFound, "not_found")
		})
	}
	wantField(t, e.do("POST", "/v1/comments", key, map[string]any{"entityType": "webhook", "entityId": "whk_x", "content": "x"}), "entityType")
}

// TestEntityVisibilityForEmployees: an employee reads the comments on the
// evidence of a control they own, on their device and on a requirement their
// control serves, not those on frameworks or on others' evidence.
func TestEntityVisibilityForEmployees(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	emp := e.person(org, "emp@example.com", app.RoleEmployee)
	set := e.entitySet(org)
	e.sessions()
	as := session(org, app.RoleEmployee, emp)
	post := func(typ string) *httptest.ResponseRecorder {
		return e.do("GET", "/v1/comments?entityType="+typ+"&entityId="+set[typ], "", nil, as...)
	}
	for _, typ := range []string{app.EntityEvidence, app.EntityDevice, app.EntityFramework, app.EntityRequirement, app.EntityESGDataPoint, app.EntityPolicy} {
		wantError(t, post(typ), http.StatusNotFound, "not_found")
	}
	ev, err := e.app.GetEvidence(e.ctx(org), set[app.EntityEvidence])
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("PATCH", "/v1/controls/"+ev.ControlID, key, map[string]any{"ownerId": emp}), http.StatusOK)
	if _, err := e.raw().Exec(`UPDATE devices SET person_id = ? WHERE id = ?`, emp, set[app.EntityDevice]); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{app.EntityEvidence, app.EntityDevice, app.EntityRequirement} {
		wantStatus(t, post(typ), http.StatusOK)
	}
	wantError(t, post(app.EntityFramework), http.StatusNotFound, "not_found")
}
