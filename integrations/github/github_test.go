package github

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// noSleep stands in for the rate-limit wait.
func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

func newProvider(srv interface{ Client() *http.Client }) *Provider {
	p := New(srv.Client())
	p.Sleep = noSleep
	return p
}

func TestDefinitionEvidencesExistInCatalog(t *testing.T) {
	cat, err := app.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	def := New(nil).Definition()
	if def.Slug != "github" || len(def.Checks) != 8 {
		t.Fatalf("definition: slug %q, %d checks", def.Slug, len(def.Checks))
	}
	seen := map[string]bool{}
	for _, c := range def.Checks {
		if !strings.HasPrefix(c.ID, "github.") || seen[c.ID] {
			t.Errorf("check id %q: not github.<name> or repeated", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Description == "" || c.Remediation == "" || !slices.Contains(app.FindingSeverities, c.Severity) {
			t.Errorf("%s: title, description, remediation or severity %q missing", c.ID, c.Severity)
		}
		if len(c.Evidences) == 0 {
			t.Errorf("%s: no evidences", c.ID)
		}
		for _, ref := range c.Evidences {
			found := false
			for _, r := range cat.Requirements(ref.Framework) {
				if r.Ref == ref.Ref {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: requirement %s %s is not in the built-in catalog", c.ID, ref.Framework, ref.Ref)
			}
		}
	}
}

func TestRunCompliantOrganizationPasses(t *testing.T) {
	f := newFake(t)
	f.perPage = 2 // five repositories over three pages, members over two
	srv := f.server()
	defer srv.Close()
	s := &sink{}
	if err := newProvider(srv).Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
		t.Fatal(err)
	}
	for _, o := range s.outcomes {
		if o.Status != app.CheckPass {
			t.Errorf("%s %s: %s %s", o.CheckID, o.ResourceName, o.Status, o.Message)
		}
	}
	want := map[string]int{CheckOrg2FARequired: 1, CheckMembersWithout2FA: 3, CheckAdminCount: 1,
		CheckBranchProtection: 5, CheckRequiredReviews: 5, CheckSecretScanning: 5, CheckDependabotAlerts: 5, CheckOutsideCollaborators: 1}
	for id, n := range want {
		if got := len(s.of(id)); got != n {
			t.Errorf("%s: %d outcomes, want %d", id, got, n)
		}
	}
	o := s.find(t, CheckBranchProtection, "acme-corp/service-1")
	if !strings.Contains(o.Message, "ruleset") {
		t.Errorf("ruleset-protected repository: %q", o.Message)
	}
	o = s.find(t, CheckOutsideCollaborators, "contractor")
	if got := o.Details["repositories"].([]string); len(got) != 5 {
		t.Errorf("contractor's repositories: %v", got)
	}
}

func TestRunWeaknessesFailTheirCheck(t *testing.T) {
	no := false
	cases := []struct {
		name     string
		plant    func(f *fakeGitHub)
		check    string
		resource string
		message  string
		detail   string
		also     string // a check that fails for the same resource as a consequence
	}{
		{"org does not require 2FA", func(f *fakeGitHub) { f.org2FA = &no }, CheckOrg2FARequired, "acme-corp", "does not require", "twoFactorRequirementEnabled", ""},
		{"member without 2FA", func(f *fakeGitHub) { f.members[2].no2FA = true }, CheckMembersWithout2FA, "monalisa", "monalisa has not enabled", "twoFactorEnabled", ""},
		{"too many owners", func(f *fakeGitHub) {
			for i := 10; i < 15; i++ {
				f.members = append(f.members, fakeMember{id: int64(i), login: fmt.Sprintf("owner%d", i), admin: true})
			}
		}, CheckAdminCount, "acme-corp", "7 owners, more than the 5", "owners", ""},
		{"unprotected default branch", func(f *fakeGitHub) { f.repos[3].protection = "none" }, CheckBranchProtection, "acme-corp/service-3", "no branch protection rule", "branchProtection", CheckRequiredReviews},
		{"no required reviews", func(f *fakeGitHub) { f.repos[0].reviews = 0 }, CheckRequiredReviews, "acme-corp/service-0", "needs no approving review", "requiredApprovingReviews", ""},
		{"ruleset without reviews", func(f *fakeGitHub) { f.repos[1].reviews = 0 }, CheckRequiredReviews, "acme-corp/service-1", "needs no approving review", "rulesetReviews", ""},
		{"secret scanning off", func(f *fakeGitHub) { f.repos[2].secretScanning = "disabled" }, CheckSecretScanning, "acme-corp/service-2", "secret scanning is disabled", "secretScanning", ""},
		{"dependabot off", func(f *fakeGitHub) { f.repos[4].dependabot = false }, CheckDependabotAlerts, "acme-corp/service-4", "not enabled", "vulnerabilityAlerts", ""},
		{"outside collaborator with admin", func(f *fakeGitHub) { f.repos[2].collaborators[0].role = "admin" }, CheckOutsideCollaborators, "contractor", "admin permission on acme-corp/service-2", "adminOn", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			tc.plant(f)
			srv := f.server()
			defer srv.Close()
			s := &sink{}
			if err := newProvider(srv).Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
				t.Fatal(err)
			}
			o := s.find(t, tc.check, tc.resource)
			if o.Status != app.CheckFail || !strings.Contains(o.Message, tc.message) {
				t.Errorf("%s: %s %q, want fail with %q", tc.check, o.Status, o.Message, tc.message)
			}
			if _, ok := o.Details[tc.detail]; !ok {
				t.Errorf("details lack %q: %v", tc.detail, o.Details)
			}
			for _, x := range s.outcomes {
				if x.Status != app.CheckPass && ((x.CheckID != tc.check && x.CheckID != tc.also) || x.ResourceName != tc.resource) {
					t.Errorf("other outcome not passing: %s %s %s %s", x.CheckID, x.ResourceName, x.Status, x.Message)
				}
			}
		})
	}
}

func TestRunSelectedChecksAndRepositoryFilter(t *testing.T) {
	f := newFake(t)
	srv := f.server()
	defer srv.Close()
	s := &sink{}
	err := newProvider(srv).Run(context.Background(), target(srv.URL, map[string]string{"repositories": "service-0, acme-corp/service-2\nmissing"}),
		[]string{CheckDependabotAlerts, "github.nope"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.outcomes) != 2 || s.outcomes[0].CheckID != CheckDependabotAlerts {
		t.Fatalf("outcomes: %+v", s.outcomes)
	}
	logs := strings.Join(s.logs, "\n")
	for _, want := range []string{"unknown check ids ignored: github.nope", "not found in the organization: missing"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

func TestEnterpriseServerBaseURL(t *testing.T) {
	f := newFake(t)
	f.prefix = "/api/v3"
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	res := p.Test(context.Background(), target(srv.URL+"/api/v3/", nil))
	if !res.Success || res.Account != "octocat in acme-corp" {
		t.Fatalf("test: %+v", res)
	}
	s := &sink{}
	if err := p.Run(context.Background(), target(srv.URL+"/api/v3", nil), nil, s); err != nil {
		t.Fatal(err)
	}
	if n := len(s.of(CheckBranchProtection)); n != 5 {
		t.Errorf("%d branch outcomes", n)
	}
	if res := p.Test(context.Background(), target(srv.URL, nil)); res.Success || !strings.Contains(res.Message, "https://HOST/api/v3") {
		t.Errorf("enterprise server without /api/v3: %+v", res)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "https://api.github.com"},
		{"https://ghe.example.com", "https://ghe.example.com"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3"},
	} {
		u, err := ParseBaseURL(tc.in)
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseBaseURL(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://x", "https://user:pw@ghe.example.com", "not a url", "https://x/api?q=1"} {
		if _, err := ParseBaseURL(bad); err == nil {
			t.Errorf("ParseBaseURL(%q) accepted", bad)
		}
	}
}

func TestBadCredentials(t *testing.T) {
	f := newFake(t)
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	tg := target(srv.URL, nil)
	tg.Credentials["token"] = "ghp_wrongtoken"
	res := p.Test(context.Background(), tg)
	if res.Success || !strings.Contains(res.Message, "Bad credentials") || strings.Contains(res.Message, "ghp_wrongtoken") {
		t.Fatalf("test: %+v", res)
	}
	s := &sink{}
	err := p.Run(context.Background(), tg, nil, s)
	if err == nil || !strings.Contains(err.Error(), "Bad credentials") || strings.Contains(err.Error(), "ghp_wrongtoken") {
		t.Fatalf("run: %v", err)
	}
	if len(s.outcomes) != 0 {
		t.Errorf("outcomes after refused credentials: %+v", s.outcomes)
	}
}

func TestTestReportsUnknownOrganizationAndScopes(t *testing.T) {
	f := newFake(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("X-OAuth-Scopes", "repo")
		return false
	}
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	res := p.Test(context.Background(), target(srv.URL, map[string]string{"organization": "other"}))
	if res.Success || !strings.Contains(res.Message, `"other" was not found`) {
		t.Errorf("unknown org: %+v", res)
	}
	res = p.Test(context.Background(), target(srv.URL, nil))
	if !res.Success || !strings.Contains(res.Message, "missing for some checks: read:org") {
		t.Errorf("scopes: %+v", res)
	}
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/user" { // an installation token may not read /user
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user", "status": "403"})
			return true
		}
		return false
	}
	res = p.Test(context.Background(), target(srv.URL, nil))
	if !res.Success || res.Account != "acme-corp" {
		t.Errorf("installation token: %+v", res)
	}
	res = p.Test(context.Background(), app.ConnectionTarget{Credentials: map[string]string{"token": testToken}})
	if res.Success || !strings.Contains(res.Message, "no organization") {
		t.Errorf("no org: %+v", res)
	}
}

func TestTwoFactorFilterForbidden(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusUnprocessableEntity} {
		t.Run(http.StatusText(status), func(t *testing.T) { testTwoFactorFilterRefused(t, status) })
	}
}

func testTwoFactorFilterRefused(t *testing.T, status int) {
	f := newFake(t)
	f.org2FA = nil // not an owner: GitHub leaves the field out
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("filter") == "2fa_disabled" {
			f.writeRaw(w, status, "error_2fa_filter_forbidden.json")
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	s := &sink{}
	if err := newProvider(srv).Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
		t.Fatal(err)
	}
	o := s.find(t, CheckMembersWithout2FA, "acme-corp")
	if o.Status != app.CheckError || !strings.Contains(o.Message, "only organization owners") || !strings.Contains(o.Message, "Only owners can use this filter") {
		t.Errorf("2fa filter: %s %q", o.Status, o.Message)
	}
	if o := s.find(t, CheckOrg2FARequired, "acme-corp"); o.Status != app.CheckError {
		t.Errorf("org 2fa without owner: %s %q", o.Status, o.Message)
	}
	if n := len(s.of(CheckBranchProtection)); n != 5 {
		t.Errorf("other checks went on: %d branch outcomes", n)
	}
}

func TestRateLimits(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		times   int // how many answers are rate limited
		ends    bool
	}{
		{"429 short Retry-After is waited out", http.StatusTooManyRequests, map[string]string{"Retry-After": "2"}, "", 1, false},
		{"secondary limit with Retry-After is waited out", http.StatusForbidden, map[string]string{"Retry-After": "30"}, "error_secondary_rate_limit.json", 1, false},
		{"429 with a long Retry-After ends the check", http.StatusTooManyRequests, map[string]string{"Retry-After": "3600"}, "", 1000, true},
		{"primary limit until reset ends the check", http.StatusForbidden, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": fmt.Sprint(time.Now().Add(2 * time.Hour).Unix())}, "error_rate_limit.json", 1000, true},
		{"secondary limit without headers, repeated, ends the check", http.StatusForbidden, nil, "error_secondary_rate_limit.json", 1000, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			left := tc.times
			f.override = func(w http.ResponseWriter, r *http.Request) bool {
				if !strings.HasSuffix(r.URL.Path, "/vulnerability-alerts") || left == 0 {
					return false
				}
				left--
				for k, v := range tc.headers {
					w.Header().Set(k, v)
				}
				if tc.body != "" {
					f.writeRaw(w, tc.status, tc.body)
				} else {
					w.Header().Set("Content-Type", "text/plain")
					w.WriteHeader(tc.status)
					_, _ = w.Write([]byte("Too Many Requests"))
				}
				return true
			}
			srv := f.server()
			defer srv.Close()
			p := newProvider(srv)
			p.Concurrency = 1
			var waited []time.Duration
			p.Sleep = func(ctx context.Context, d time.Duration) error { waited = append(waited, d); return nil }
			s := &sink{}
			if err := p.Run(context.Background(), target(srv.URL, nil), []string{CheckDependabotAlerts}, s); err != nil {
				t.Fatal(err)
			}
			got := s.of(CheckDependabotAlerts)
			if !tc.ends {
				if len(got) != 5 || len(waited) != 1 {
					t.Fatalf("outcomes %+v, waits %v", got, waited)
				}
				for _, o := range got {
					if o.Status != app.CheckPass {
						t.Errorf("%s %s", o.Status, o.Message)
					}
				}
				return
			}
			if len(got) != 1 || got[0].Status != app.CheckError || !strings.Contains(got[0].Message, "resets at") || got[0].Details["rateLimitResetAt"] == nil {
				t.Fatalf("outcomes: %+v", got)
			}
			if f.requests.Load() > 8 {
				t.Errorf("%d requests: calls went on after the limit", f.requests.Load())
			}
		})
	}
}

func TestRateLimitBoundedByDeadline(t *testing.T) {
	f := newFake(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/members") {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		t.Errorf("waited %v past the deadline", d)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := &sink{}
	if err := p.Run(ctx, target(srv.URL, nil), []string{CheckAdminCount}, s); err != nil {
		t.Fatal(err)
	}
	if o := s.find(t, CheckAdminCount, "acme-corp"); o.Status != app.CheckError || !strings.Contains(o.Message, "resets at") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
}

func TestPaginationBounds(t *testing.T) {
	t.Run("next link to itself", func(t *testing.T) {
		f := newFake(t)
		f.override = func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/repos") {
				w.Header().Set("Link", fmt.Sprintf(`<http://%s%s?%s>; rel="next"`, r.Host, r.URL.Path, r.URL.RawQuery))
				writeJSON(w, http.StatusOK, []any{fromFixture(t, "repo.json", nil)})
				return true
			}
			return false
		}
		srv := f.server()
		defer srv.Close()
		s := &sink{}
		if err := newProvider(srv).Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
			t.Fatal(err)
		}
		o := s.find(t, CheckBranchProtection, "acme-corp")
		if o.Status != app.CheckError || !strings.Contains(o.Message, "pagination loops") {
			t.Errorf("%s %q", o.Status, o.Message)
		}
		if f.requests.Load() > 20 {
			t.Errorf("%d requests", f.requests.Load())
		}
	})
	t.Run("page cap", func(t *testing.T) {
		f := newFake(t)
		f.perPage = 1
		srv := f.server()
		defer srv.Close()
		p := newProvider(srv)
		p.MaxPages = 3
		s := &sink{}
		if err := p.Run(context.Background(), target(srv.URL, nil), []string{CheckSecretScanning}, s); err != nil {
			t.Fatal(err)
		}
		if n := len(s.of(CheckSecretScanning)); n != 3 {
			t.Errorf("%d outcomes, want the 3 repositories of the first 3 pages", n)
		}
		if !strings.Contains(strings.Join(s.logs, "\n"), "cap of 3 pages") {
			t.Errorf("logs: %v", s.logs)
		}
	})
	t.Run("next link to another host", func(t *testing.T) {
		f := newFake(t)
		f.override = func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/outside_collaborators") {
				w.Header().Set("Link", `<http://elsewhere.invalid/steal?page=2>; rel="next"`)
				writeJSON(w, http.StatusOK, []any{})
				return true
			}
			return false
		}
		srv := f.server()
		defer srv.Close()
		s := &sink{}
		if err := newProvider(srv).Run(context.Background(), target(srv.URL, nil), []string{CheckOutsideCollaborators}, s); err != nil {
			t.Fatal(err)
		}
		if o := s.find(t, CheckOutsideCollaborators, "acme-corp"); o.Status != app.CheckError || !strings.Contains(o.Message, "not the configured API host") {
			t.Errorf("%s %q", o.Status, o.Message)
		}
	})
}

func TestHugeResponseIsBounded(t *testing.T) {
	f := newFake(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("role") == "admin" {
			w.Header().Set("Content-Type", "application/json")
			chunk := []byte(strings.Repeat(`{"login":"x","id":1},`, 1000))
			_, _ = w.Write([]byte("["))
			for i := 0; i < 2000; i++ { // about 40 MB unless the reader stops
				if _, err := w.Write(chunk); err != nil {
					return true
				}
			}
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	p.MaxBody = 1 << 20
	s := &sink{}
	if err := p.Run(context.Background(), target(srv.URL, nil), []string{CheckAdminCount, CheckOrg2FARequired}, s); err != nil {
		t.Fatal(err)
	}
	if o := s.find(t, CheckAdminCount, "acme-corp"); o.Status != app.CheckError || !strings.Contains(o.Message, "larger than 1048576 bytes") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
	if o := s.find(t, CheckOrg2FARequired, "acme-corp"); o.Status != app.CheckPass {
		t.Errorf("other check: %s", o.Status)
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	f := newFake(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/vulnerability-alerts") {
			<-r.Context().Done()
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	client := srv.Client()
	client.Timeout = 200 * time.Millisecond
	p := New(client)
	s := &sink{}
	if err := p.Run(context.Background(), target(srv.URL, nil), []string{CheckDependabotAlerts, CheckSecretScanning}, s); err != nil {
		t.Fatal(err)
	}
	for _, o := range s.of(CheckDependabotAlerts) {
		if o.Status != app.CheckError || !strings.Contains(o.Message, "timed out") {
			t.Errorf("%s %q", o.Status, o.Message)
		}
	}
	if n := len(s.of(CheckSecretScanning)); n != 5 {
		t.Errorf("secret scanning outcomes: %d", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := New(srv.Client()).Run(ctx, target(srv.URL, nil), nil, &sink{}); err == nil {
		t.Error("cancelled run returned no error")
	}

	// Cancelled halfway: the run stops, the unfinished checks say so.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	f2 := newFake(t)
	f2.override = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/vulnerability-alerts") {
			cancel()
		}
		return false
	}
	srv2 := f2.server()
	defer srv2.Close()
	s = &sink{}
	if err := New(srv2.Client()).Run(ctx, target(srv2.URL, nil), []string{CheckDependabotAlerts}, s); err != nil {
		t.Fatal(err)
	}
	if o := s.find(t, CheckDependabotAlerts, "acme-corp"); o.Status != app.CheckError || !strings.Contains(o.Message, "run stopped") {
		t.Errorf("%s %q", o.Status, o.Message)
	}

	srv.Close()
	if res := New(client).Test(context.Background(), target(srv.URL, nil)); res.Success || !strings.Contains(res.Message, "could not be asked") {
		t.Errorf("unreachable: %+v", res)
	}
}

func TestTokenNeverLeaks(t *testing.T) {
	f := newFake(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/vulnerability-alerts") {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "token " + testToken + " lacks permission"})
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	s := &sink{}
	if err := newProvider(srv).Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
		t.Fatal(err)
	}
	all := s.everything()
	if strings.Contains(all, testToken) {
		t.Fatal("the token appears in an outcome or log line")
	}
	if o := s.find(t, CheckDependabotAlerts, "acme-corp/service-0"); o.Status != app.CheckError || !strings.Contains(o.Message, "[redacted]") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
}

func BenchmarkGitHubRun1000Repos(b *testing.B) {
	f := newFake(b)
	f.repos = f.repos[:0]
	for i := 0; i < 1000; i++ {
		f.repos = append(f.repos, fakeRepo{id: int64(1000 + i), name: fmt.Sprintf("repo-%04d", i), branch: "main",
			protection: []string{"classic", "ruleset", "none"}[i%3], reviews: i % 2, secretScanning: "enabled", dependabot: i%5 != 0,
			collaborators: []fakeCollab{{id: 5001, login: "contractor", role: "write"}}})
	}
	srv := f.server()
	defer srv.Close()
	p := New(srv.Client())
	tg := target(srv.URL, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := &sink{}
		if err := p.Run(context.Background(), tg, nil, s); err != nil {
			b.Fatal(err)
		}
		if n := len(s.of(CheckBranchProtection)); n != 1000 {
			b.Fatalf("%d outcomes", n)
		}
	}
	b.ReportMetric(float64(f.requests.Load())/float64(b.N), "requests/op")
}
