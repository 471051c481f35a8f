package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func TestAuthenticationFailuresAre401(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	good := e.key(org, app.RoleAdmin)

	expiring, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "short", Role: "admin", ExpiresIn: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "gone", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("GET", "/v1/vendors", revoked.Key, nil), http.StatusOK)
	if err := e.app.RevokeAPIKey(e.ctx(org), revoked.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("GET", "/v1/vendors", expiring.Key, nil), http.StatusOK)
	e.clock.Advance(time.Hour)

	cases := []struct {
		name string
		key  string
	}{
		{"missing", ""},
		{"malformed", "not-a-key"},
		{"unknown", "cmp_" + app.RandomToken(32)},
		{"expired", expiring.Key},
		{"revoked", revoked.Key},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("GET", "/v1/vendors", tc.key, nil)
			wantError(t, rec, http.StatusUnauthorized, "unauthorized")
			if rlHeader(rec, "X-RateLimit-Limit") == "" {
				t.Error("a 401 carries the rate-limit headers too")
			}
		})
	}
	wantStatus(t, e.do("GET", "/v1/vendors", good, nil), http.StatusOK)
}

func TestRevocationOverTheAPITakesEffectImmediately(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	owner := e.key(org, app.RoleOwner)

	rec := e.do("POST", "/v1/api-keys", owner, map[string]any{"name": "ci", "role": "admin", "expiresIn": "90d"})
	wantStatus(t, rec, http.StatusCreated)
	created := obj(t, rec)
	plain, _ := created["key"].(string)
	id, _ := created["id"].(string)
	if len(plain) < 40 || plain[:4] != "cmp_" {
		t.Fatalf("plaintext key %q must start with cmp_ and carry 32 random bytes", plain)
	}
	if created["expiresAt"] == nil {
		t.Errorf("expiresIn must set expiresAt: %v", created)
	}

	// The plaintext is shown once: the list never carries it.
	rec = e.do("GET", "/v1/api-keys", owner, nil)
	wantStatus(t, rec, http.StatusOK)
	for _, k := range obj(t, rec)["data"].([]any) {
		if _, ok := k.(map[string]any)["key"]; ok {
			t.Fatalf("list must not show plaintext keys: %s", rec.Body.String())
		}
	}

	wantStatus(t, e.do("GET", "/v1/people", plain, nil), http.StatusOK)
	wantStatus(t, e.do("DELETE", "/v1/api-keys/"+id, owner, nil), http.StatusNoContent)
	wantError(t, e.do("GET", "/v1/people", plain, nil), http.StatusUnauthorized, "unauthorized")
	// Revoking twice is harmless; another organization's key is 404.
	wantStatus(t, e.do("DELETE", "/v1/api-keys/"+id, owner, nil), http.StatusNoContent)
	other := e.org("Other", app.PlanProfessional)
	wantError(t, e.do("DELETE", "/v1/api-keys/"+id, e.key(other, app.RoleOwner), nil), http.StatusNotFound, "not_found")
}

func TestAPIKeyManagementRoles(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	admin := e.key(org, app.RoleAdmin)
	for _, role := range []app.Role{app.RoleAuditor, app.RoleEmployee, app.RoleContractor} {
		k := e.key(org, role)
		wantError(t, e.do("GET", "/v1/api-keys", k, nil), http.StatusForbidden, "forbidden")
		wantError(t, e.do("POST", "/v1/api-keys", k, map[string]any{"name": "x", "role": "auditor"}), http.StatusForbidden, "forbidden")
	}
	// An admin may not mint an owner key.
	wantField(t, e.do("POST", "/v1/api-keys", admin, map[string]any{"name": "x", "role": "owner"}), "role")
	wantField(t, e.do("POST", "/v1/api-keys", admin, map[string]any{"name": "", "role": "auditor"}), "name")
	wantField(t, e.do("POST", "/v1/api-keys", admin, map[string]any{"name": "x", "role": "king"}), "role")
	wantField(t, e.do("POST", "/v1/api-keys", admin, map[string]any{"name": "x", "role": "auditor", "expiresAt": "2020-01-01T00:00:00Z"}), "expiresAt")
	wantStatus(t, e.do("POST", "/v1/api-keys", admin, map[string]any{"name": "x", "role": "auditor", "expiresAt": "2030-01-01T00:00:00Z"}), http.StatusCreated)
}

func TestAuditorKeysAreReadOnly(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	auditor := e.key(org, app.RoleAuditor)
	pid := e.person(org, "ann@example.com", app.RoleEmployee)
	v, err := e.app.CreateVendor(e.ctx(org), app.VendorInput{Name: app.Ptr("Cloudy")})
	if err != nil {
		t.Fatal(err)
	}
	writes := []struct{ method, path string }{
		{"PATCH", "/v1/organization"},
		{"PATCH", "/v1/organization/branding"},
		{"POST", "/v1/organization/transfer-ownership"},
		{"POST", "/v1/people"},
		{"POST", "/v1/people/bulk"},
		{"PATCH", "/v1/people/" + pid},
		{"POST", "/v1/people/" + pid + "/devices"},
		{"POST", "/v1/vendors"},
		{"PATCH", "/v1/vendors/" + v.ID},
		{"DELETE", "/v1/vendors/" + v.ID},
		{"POST", "/v1/vendors/" + v.ID + "/archive"},
		{"POST", "/v1/api-keys"},
	}
	for _, w := range writes {
		rec := e.do(w.method, w.path, auditor, map[string]any{"name": "x"})
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s %s as auditor: %d, want 403", w.method, w.path, rec.Code)
			continue
		}
		wantError(t, rec, http.StatusForbidden, "forbidden")
	}
	for _, path := range []string{"/v1/organization", "/v1/people", "/v1/people/" + pid, "/v1/vendors", "/v1/vendors/" + v.ID} {
		wantStatus(t, e.do("GET", path, auditor, nil), http.StatusOK)
	}
}

func TestOrganizationHeader(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	other := e.org("Other", app.PlanProfessional)
	key := e.key(org, app.RoleAdmin)
	wantStatus(t, e.do("GET", "/v1/organization", key, nil, "X-Organization-Id", org), http.StatusOK)
	// A key is scoped to one organization: naming another is 404, never its data.
	wantError(t, e.do("GET", "/v1/organization", key, nil, "X-Organization-Id", other), http.StatusNotFound, "not_found")
	rec := e.do("GET", "/v1/organization", key, nil)
	wantStatus(t, rec, http.StatusOK)
	if obj(t, rec)["id"] != org {
		t.Fatalf("organization comes from the key: %s", rec.Body.String())
	}
}

func TestKeyUsageIsRecordedWithoutAWritePerRequest(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", app.PlanProfessional)
	k, err := e.app.CreateAPIKey(e.ctx(org), app.APIKeyCreate{Name: "x", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantStatus(t, e.do("GET", "/v1/organization", k.Key, nil), http.StatusOK)
	}
	keys, err := e.app.ListAPIKeys(e.ctx(org))
	if err != nil {
		t.Fatal(err)
	}
	if keys[0].LastUsedAt != nil {
		t.Fatal("last-used must be buffered in memory, not written per request")
	}
	if err := e.app.FlushKeyUsage(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys, _ = e.app.ListAPIKeys(e.ctx(org))
	if keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(e.clock.Now()) {
		t.Fatalf("flush must record the last use: %+v", keys[0].LastUsedAt)
	}
}
