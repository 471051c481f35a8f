package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// registersFixture creates one resource of every kind in an organization.
func registersFixture(t *testing.T, e *testEnv, key string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	ids["rsk"] = e.create("/v1/risks", key, map[string]any{"title": "R"})["id"].(string)
	ids["fnd"] = e.create("/v1/findings", key, map[string]any{"title": "F"})["id"].(string)
	ids["cra"] = e.create("/v1/findings/"+ids["fnd"]+"/corrective-actions", key, map[string]any{"title": "A"})["id"].(string)
	ids["ftp"] = e.create("/v1/finding-template", key, map[string]any{"title": "T"})["id"].(string)
	ids["cmt"] = e.create("/v1/comments", key, map[string]any{"entityType": "risk", "entityId": ids["rsk"], "content": "c"})["id"].(string)
	ids["att"] = uploadFile(t, e, key, "risk", ids["rsk"], "a.txt", "a")
	ids["esg"] = e.create("/v1/csrd/data-points", key, map[string]any{"esrsCode": "E1-1", "value": 1, "period": "2025"})["id"].(string)
	return ids
}

func fill(path string, ids map[string]string) string {
	for k, v := range ids {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return path
}

// TestRegistersCrossOrganization proves every route answers 404 for
// another organization's resources and changes nothing.
func TestRegistersCrossOrganization(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	key := e.key(org, app.RoleOwner)
	otherKey := e.key(other, app.RoleOwner)
	ids := registersFixture(t, e, key)

	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/risks/{rsk}", nil},
		{"PATCH", "/v1/risks/{rsk}", map[string]any{"title": "stolen"}},
		{"POST", "/v1/risks/{rsk}/archive", nil},
		{"POST", "/v1/risks/{rsk}/restore", nil},
		{"GET", "/v1/findings/{fnd}", nil},
		{"PATCH", "/v1/findings/{fnd}", map[string]any{"severity": "low"}},
		{"POST", "/v1/findings/{fnd}/close", nil},
		{"GET", "/v1/findings/{fnd}/corrective-actions", nil},
		{"POST", "/v1/findings/{fnd}/corrective-actions", map[string]any{"title": "x"}},
		{"GET", "/v1/findings/{fnd}/corrective-actions/{cra}", nil},
		{"PATCH", "/v1/findings/{fnd}/corrective-actions/{cra}", map[string]any{"status": "in_progress"}},
		{"GET", "/v1/finding-template/{ftp}", nil},
		{"PATCH", "/v1/finding-template/{ftp}", map[string]any{"title": "x"}},
		{"DELETE", "/v1/finding-template/{ftp}", nil},
		{"GET", "/v1/comments?entityType=risk&entityId={rsk}", nil},
		{"POST", "/v1/comments", map[string]any{"entityType": "risk", "entityId": ids["rsk"], "content": "x"}},
		{"GET", "/v1/comments/{cmt}", nil},
		{"PATCH", "/v1/comments/{cmt}", map[string]any{"content": "x"}},
		{"PUT", "/v1/comments/{cmt}", map[string]any{"content": "x"}},
		{"DELETE", "/v1/comments/{cmt}", nil},
		{"GET", "/v1/attachments?entityType=risk&entityId={rsk}", nil},
		{"GET", "/v1/attachments/{att}", nil},
		{"GET", "/v1/attachments/{att}/download", nil},
		{"GET", "/v1/csrd/data-points/{esg}", nil},
		{"PATCH", "/v1/csrd/data-points/{esg}", map[string]any{"value": 2}},
	}
	before := map[string]string{}
	for _, r := range routes {
		if r.method == "GET" && !strings.Contains(r.path, "?") {
			before[r.path] = e.do("GET", fill(r.path, ids), key, nil).Body.String()
		}
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			wantError(t, e.do(r.method, fill(r.path, ids), otherKey, r.body), http.StatusNotFound, "not_found")
		})
	}
	wantError(t, uploadRec(t, e, otherKey, map[string]string{"entityType": "risk", "entityId": ids["rsk"]}, "a.txt", "a"), http.StatusNotFound, "not_found")
	for path, body := range before {
		if got := e.do("GET", fill(path, ids), key, nil).Body.String(); got != body {
			t.Errorf("%s changed after another organization's requests:\n%s\n%s", path, body, got)
		}
	}
	// Lists never show another organization's rows, whatever the filter.
	for _, q := range []string{"/v1/risks", "/v1/findings", "/v1/findings?controlId=" + ids["fnd"], "/v1/finding-template", "/v1/csrd/data-points"} {
		if _, meta := listIDs(t, e, q, otherKey); meta["total"] != float64(0) {
			t.Errorf("%s shows %v rows of another organization", q, meta["total"])
		}
	}
}

// TestRegistersAuditorKeyReadOnly proves an auditor key gets 403 on every
// write and 200 on reads.
func TestRegistersAuditorKeyReadOnly(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleOwner)
	auditor := e.key(org, app.RoleAuditor)
	ids := registersFixture(t, e, key)
	writes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/risks", map[string]any{"title": "x"}},
		{"PATCH", "/v1/risks/{rsk}", map[string]any{"title": "x"}},
		{"POST", "/v1/risks/{rsk}/archive", nil},
		{"POST", "/v1/risks/{rsk}/restore", nil},
		{"POST", "/v1/findings", map[string]any{"title": "x"}},
		{"PATCH", "/v1/findings/{fnd}", map[string]any{"severity": "low"}},
		{"POST", "/v1/findings/{fnd}/close", nil},
		{"POST", "/v1/findings/{fnd}/corrective-actions", map[string]any{"title": "x"}},
		{"PATCH", "/v1/findings/{fnd}/corrective-actions/{cra}", map[string]any{"status": "in_progress"}},
		{"POST", "/v1/finding-template", map[string]any{"title": "x"}},
		{"PATCH", "/v1/finding-template/{ftp}", map[string]any{"title": "x"}},
		{"DELETE", "/v1/finding-template/{ftp}", nil},
		{"POST", "/v1/comments", map[string]any{"entityType": "risk", "entityId": ids["rsk"], "content": "x"}},
		{"PATCH", "/v1/comments/{cmt}", map[string]any{"content": "x"}},
		{"PUT", "/v1/comments/{cmt}", map[string]any{"content": "x"}},
		{"DELETE", "/v1/comments/{cmt}", nil},
		{"POST", "/v1/csrd/data-points", map[string]any{"esrsCode": "E1-2", "value": 1, "period": "2025"}},
		{"PATCH", "/v1/csrd/data-points/{esg}", map[string]any{"value": 2}},
	}
	for _, w := range writes {
		t.Run(w.method+" "+w.path, func(t *testing.T) {
			wantError(t, e.do(w.method, fill(w.path, ids), auditor, w.body), http.StatusForbidden, "forbidden")
		})
	}
	wantError(t, uploadRec(t, e, auditor, map[string]string{"entityType": "risk", "entityId": ids["rsk"]}, "a.txt", "a"), http.StatusForbidden, "forbidden")
	for _, path := range []string{"/v1/risks", "/v1/risks/{rsk}", "/v1/findings", "/v1/findings/{fnd}", "/v1/findings/{fnd}/corrective-actions",
		"/v1/findings/{fnd}/corrective-actions/{cra}", "/v1/finding-template", "/v1/finding-template/{ftp}",
		"/v1/comments?entityType=risk&entityId={rsk}", "/v1/comments/{cmt}", "/v1/attachments?entityType=risk&entityId={rsk}",
		"/v1/attachments/{att}", "/v1/attachments/{att}/download", "/v1/csrd/data-points", "/v1/csrd/data-points/{esg}"} {
		wantStatus(t, e.do("GET", fill(path, ids), auditor, nil), http.StatusOK)
		wantError(t, e.do("GET", fill(path, ids), "", nil), http.StatusUnauthorized, "unauthorized")
	}
}
