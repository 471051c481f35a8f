package app

import (
	"errors"
	"testing"
)

func TestValidRedirectURI(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]bool{
		"https://app.example/callback":      true,
		"http://127.0.0.1:8765/callback":    true,
		"http://localhost/cb":               true,
		"http://[::1]:9000/cb":              true,
		"http://dev.localhost/cb":           true,
		"com.example.agent:/oauth/callback": true,
		"cursor://anysphere.cursor/cb":      true,
		"http://evil.example/cb":            false,
		"https://app.example/cb#frag":       false,
		"/relative":                         false,
		"javascript:alert(1)":               false,
		"data:text/html,x":                  false,
		"":                                  false,
	} {
		if got := validRedirectURI(uri); got != want {
			t.Errorf("validRedirectURI(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestPrincipalFor(t *testing.T) {
	t.Parallel()
	u := &User{ID: "usr_1", Email: "ada@example.com"}
	a := Membership{OrganizationID: "org_a", Plan: PlanStarter, Role: RoleAdmin}
	b := Membership{OrganizationID: "org_b", Plan: PlanFree, Role: RoleAuditor}

	p, err := PrincipalFor(u, []Membership{a}, "", AuthSession)
	if err != nil || p.OrgID != "org_a" || p.Role != RoleAdmin || p.Plan != PlanStarter || p.UserID != "usr_1" || p.Email != u.Email {
		t.Fatalf("single organization: %+v %v", p, err)
	}
	if _, err := PrincipalFor(u, []Membership{a, b}, "", AuthSession); !errors.Is(err, ErrOrganizationRequired) {
		t.Fatalf("several organizations without a choice: %v", err)
	}
	p, err = PrincipalFor(u, []Membership{a, b}, "org_b", AuthOAuth)
	if err != nil || p.OrgID != "org_b" || p.Role != RoleAuditor || p.AuthType != AuthOAuth {
		t.Fatalf("chosen organization: %+v %v", p, err)
	}
	if _, err := PrincipalFor(u, []Membership{a, b}, "org_c", AuthSession); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign organization: %v", err)
	}
	if _, err := PrincipalFor(u, nil, "", AuthSession); !errors.Is(err, ErrForbidden) {
		t.Fatalf("no organization: %v", err)
	}
	if !p.Can(CapReview) || p.Can(CapManage) {
		t.Fatal("an auditor person may review but not manage")
	}
}
