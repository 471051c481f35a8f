package web

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/entra"
	"github.com/compliance-appliance/compliance/integrations/googleworkspace"
	"github.com/compliance-appliance/compliance/integrations/okta"
)

// cloudUser is one person of cloudDirectory.
type cloudUser struct {
	id, email, name, dept string
	active                bool
	mfa                   *bool
	groups                []string
}

// cloudDirectory serves the same people in the shapes of Google's
// Directory API, Microsoft Graph and Okta's API (one page each; paging is
// covered by the providers' own tests), with their token endpoints.
type cloudDirectory struct {
	srv   *httptest.Server
	users []cloudUser
}

const cloudTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

func newCloudDirectory(t *testing.T, users []cloudUser) *cloudDirectory {
	d := &cloudDirectory{users: users}
	d.srv = httptest.NewTLSServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *cloudDirectory) groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range d.users {
		for _, g := range u.groups {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

func (d *cloudDirectory) members(group string) []cloudUser {
	var out []cloudUser
	for _, u := range d.users {
		for _, g := range u.groups {
			if g == group {
				out = append(out, u)
			}
		}
	}
	return out
}

func (d *cloudDirectory) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	enc := json.NewEncoder(w)
	switch {
	// Google.
	case p == "/token":
		fmt.Fprint(w, `{"access_token":"ya29.test","expires_in":3599,"token_type":"Bearer"}`)
	case p == "/admin/directory/v1/users":
		var us []map[string]any
		for _, u := range d.users {
			first, last, _ := strings.Cut(u.name, " ")
			m := map[string]any{"id": u.id, "primaryEmail": u.email, "name": map[string]any{"givenName": first, "familyName": last, "fullName": u.name},
				"suspended": !u.active, "archived": false, "orgUnitPath": "/", "organizations": []map[string]any{{"department": u.dept, "primary": true}}}
			if u.mfa != nil {
				m["isEnrolledIn2Sv"] = *u.mfa
			}
			us = append(us, m)
		}
		enc.Encode(map[string]any{"kind": "admin#directory#users", "users": us})
	case p == "/admin/directory/v1/groups":
		var gs []map[string]any
		for _, g := range d.groups() {
			gs = append(gs, map[string]any{"id": "g-" + g, "email": g + "@acme.test", "name": g})
		}
		enc.Encode(map[string]any{"kind": "admin#directory#groups", "groups": gs})
	case strings.HasPrefix(p, "/admin/directory/v1/groups/g-"):
		g := strings.TrimSuffix(strings.TrimPrefix(p, "/admin/directory/v1/groups/g-"), "/members")
		var ms []map[string]any
		for _, u := range d.members(g) {
			ms = append(ms, map[string]any{"id": u.id, "email": u.email, "type": "USER", "role": "MEMBER", "status": "ACTIVE"})
		}
		enc.Encode(map[string]any{"kind": "admin#directory#members", "members": ms})
	// Microsoft.
	case p == "/"+cloudTenant+"/oauth2/v2.0/token":
		fmt.Fprint(w, `{"token_type":"Bearer","expires_in":3599,"access_token":"graph-test"}`)
	case p == "/v1.0/users":
		var us []map[string]any
		for _, u := range d.users {
			us = append(us, map[string]any{"id": u.id, "userPrincipalName": u.email, "mail": u.email, "displayName": u.name,
				"department": u.dept, "accountEnabled": u.active, "userType": "Member"})
		}
		enc.Encode(map[string]any{"value": us})
	case p == "/v1.0/reports/authenticationMethods/userRegistrationDetails":
		var rs []map[string]any
		for _, u := range d.users {
			if u.mfa != nil {
				rs = append(rs, map[string]any{"id": u.id, "isMfaRegistered": *u.mfa})
			}
		}
		enc.Encode(map[string]any{"value": rs})
	case p == "/v1.0/groups":
		var gs []map[string]any
		for _, g := range d.groups() {
			gs = append(gs, map[string]any{"id": "g-" + g, "displayName": g})
		}
		enc.Encode(map[string]any{"value": gs})
	case strings.HasPrefix(p, "/v1.0/groups/g-"):
		g := strings.TrimSuffix(strings.TrimPrefix(p, "/v1.0/groups/g-"), "/members/microsoft.graph.user")
		var ms []map[string]any
		for _, u := range d.members(g) {
			ms = append(ms, map[string]any{"@odata.type": "#microsoft.graph.user", "id": u.id})
		}
		enc.Encode(map[string]any{"value": ms})
	// Okta.
	case p == "/api/v1/users":
		var us []map[string]any
		for _, u := range d.users {
			status := "ACTIVE"
			if !u.active {
				status = "SUSPENDED"
			}
			us = append(us, map[string]any{"id": u.id, "status": status,
				"profile": map[string]any{"login": u.email, "email": u.email, "displayName": u.name, "department": u.dept}})
		}
		enc.Encode(us)
	case strings.HasPrefix(p, "/api/v1/users/") && strings.HasSuffix(p, "/factors"):
		id := strings.TrimSuffix(strings.TrimPrefix(p, "/api/v1/users/"), "/factors")
		fs := []map[string]any{}
		for _, u := range d.users {
			if u.id == id && u.mfa != nil {
				status := "PENDING_ACTIVATION"
				if *u.mfa {
					status = "ACTIVE"
				}
				fs = append(fs, map[string]any{"id": "uf" + id, "factorType": "push", "provider": "OKTA", "status": status})
			}
		}
		enc.Encode(fs)
	case p == "/api/v1/groups":
		var gs []map[string]any
		for _, g := range d.groups() {
			gs = append(gs, map[string]any{"id": "g-" + g, "type": "OKTA_GROUP", "profile": map[string]any{"name": g}})
		}
		enc.Encode(gs)
	case strings.HasPrefix(p, "/api/v1/groups/g-"):
		g := strings.TrimSuffix(strings.TrimPrefix(p, "/api/v1/groups/g-"), "/users")
		ms := []map[string]any{}
		for _, u := range d.members(g) {
			ms = append(ms, map[string]any{"id": u.id, "status": "ACTIVE", "profile": map[string]any{"email": u.email}})
		}
		enc.Encode(ms)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{}`)
	}
}

func serviceAccountJSON(t *testing.T, tokenURI string) string {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "acme", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "sync@acme.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI})
	return string(b)
}

// TestDirectorySyncCloudMapping syncs the same people from Google
// Workspace, Microsoft Entra ID and Okta through the API and checks each
// provider's field mapping onto people (name, department, active or not,
// two-factor status, source) and that a mapped group gives its role, with
// the owner never changed and admin only as an owner mapped it.
func TestDirectorySyncCloudMapping(t *testing.T) {
	yes, no := true, false
	users := []cloudUser{
		{"u1", "ada@acme.test", "Ada Lovelace", "Security", true, &yes, []string{"everyone", "auditors"}},
		{"u2", "bob@acme.test", "Bob Byte", "Sales", true, &no, []string{"everyone"}},
		{"u3", "carol@acme.test", "Carol Cipher", "Finance", false, &yes, []string{"everyone"}},
		{"u4", "owner@acme.test", "Olga Owner", "Board", true, &yes, []string{"auditors"}},
		{"u5", "erin@acme.test", "Erin Admin", "IT", true, nil, []string{"it-admins"}},
	}
	for _, pc := range []struct {
		slug   string
		groups map[string]string // our group name -> the provider's
		creds  func(d *cloudDirectory) (map[string]string, map[string]string)
		reg    func(e *testEnv, d *cloudDirectory)
		// unknown2FA: the provider has no status for a user without MFA data.
		unknown2FA bool
	}{
		{"google_workspace", map[string]string{"auditors": "auditors@acme.test", "it-admins": "it-admins@acme.test"},
			func(d *cloudDirectory) (map[string]string, map[string]string) {
				return map[string]string{"serviceAccountJson": serviceAccountJSON(t, d.srv.URL+"/token")},
					map[string]string{"adminEmail": "admin@acme.test", "readGroups": "true"}
			},
			func(e *testEnv, d *cloudDirectory) {
				e.app.RegisterIntegrationProviders(googleworkspace.New(d.srv.Client(), googleworkspace.WithBaseURL(d.srv.URL)))
			}, true},
		{"entra_id", map[string]string{"auditors": "auditors", "it-admins": "it-admins"},
			func(d *cloudDirectory) (map[string]string, map[string]string) {
				return map[string]string{"tenantId": cloudTenant, "clientId": "3f1a2b4c-0000-4000-8000-00000000c0de", "clientSecret": "s3cret"},
					map[string]string{"readGroups": "true"}
			},
			func(e *testEnv, d *cloudDirectory) {
				e.app.RegisterIntegrationProviders(entra.New(d.srv.Client(), entra.WithLoginURL(d.srv.URL), entra.WithGraphURL(d.srv.URL)))
			}, true},
		{"okta", map[string]string{"auditors": "auditors", "it-admins": "it-admins"},
			func(d *cloudDirectory) (map[string]string, map[string]string) {
				return map[string]string{"orgUrl": d.srv.URL, "apiToken": "00abc"}, map[string]string{"readGroups": "true"}
			},
			func(e *testEnv, d *cloudDirectory) { e.app.RegisterIntegrationProviders(okta.New(d.srv.Client())) }, false},
	} {
		t.Run(pc.slug, func(t *testing.T) {
			d := newCloudDirectory(t, users)
			e := newTestServer(t)
			pc.reg(e, d)
			org := e.org("Acme", app.PlanEnterprise)
			e.person(org, "owner@acme.test", app.RoleOwner)
			e.person(org, "carol@acme.test", app.RoleEmployee)
			owner, aud := e.key(org, app.RoleOwner), e.key(org, app.RoleAuditor)
			creds, vars := pc.creds(d)
			rec := e.do("POST", "/v1/integrations/connections", owner, map[string]any{"providerSlug": pc.slug, "credentials": creds, "variables": vars})
			wantStatus(t, rec, http.StatusCreated)
			conn := obj(t, rec)["id"].(string)
			wantStatus(t, e.do("PUT", "/v1/integrations/sync/connections/"+conn+"/role-mapping", owner, map[string]any{
				"groupRoles":      []map[string]string{{"group": pc.groups["auditors"], "role": "auditor"}, {"group": pc.groups["it-admins"], "role": "admin"}},
				"applyToExisting": true}), http.StatusOK)
			rec = e.do("POST", "/v1/integrations/sync/dynamic/"+pc.slug+"/employees?connectionId="+conn, owner, nil)
			wantStatus(t, rec, http.StatusCreated)
			run := obj(t, rec)
			if run["status"] != "succeeded" {
				t.Fatalf("run: %v", run)
			}
			wantCounts(t, run, map[string]int{"found": 5, "created": 3, "deactivated": 1, "errors": 0})
			rec = e.do("GET", "/v1/people?perPage=100", aud, nil)
			wantStatus(t, rec, http.StatusOK)
			people := map[string]map[string]any{}
			for _, p := range obj(t, rec)["data"].([]any) {
				m := p.(map[string]any)
				people[m["email"].(string)] = m
			}
			for _, c := range []struct {
				email, role, name, dept string
				active                  bool
				twoFactor               any
			}{
				{"ada@acme.test", "auditor", "Ada Lovelace", "Security", true, true},
				{"bob@acme.test", "employee", "Bob Byte", "Sales", true, false},
				{"owner@acme.test", "owner", "", "", true, true},
				{"erin@acme.test", "admin", "Erin Admin", "IT", true, nil},
			} {
				p := people[c.email]
				if p == nil {
					t.Errorf("%s is not in the register", c.email)
					continue
				}
				role, active := memberRole(t, e, org, c.email)
				if role != c.role || active != c.active {
					t.Errorf("%s: %s %v, want %s %v", c.email, role, active, c.role, c.active)
				}
				if c.name != "" && (p["name"] != c.name || p["department"] != c.dept) {
					t.Errorf("%s: name %v department %v", c.email, p["name"], p["department"])
				}
				tf := p["twoFactor"].(map[string]any)["enrolled"]
				want := c.twoFactor
				if want == nil && !pc.unknown2FA {
					want = false // Okta: no factor at all is not enrolled
				}
				if tf != want {
					t.Errorf("%s: twoFactor %v, want %v", c.email, tf, want)
				}
				if src := p["source"].(map[string]any); src["type"] != "directory" || src["connectionId"] != conn {
					t.Errorf("%s: source %v", c.email, src)
				}
			}
			if _, active := memberRole(t, e, org, "carol@acme.test"); active {
				t.Error("carol, disabled in the directory, is still active")
			}
		})
	}
}
