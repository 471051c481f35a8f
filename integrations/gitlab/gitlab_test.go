package gitlab

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

func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

func newProvider(srv interface{ Client() *http.Client }) *Provider {
	p := New(srv.Client())
	p.Sleep = noSleep
	return p
}

func runFake(t *testing.T, f *fakeGitLab, vars map[string]string, ids ...string) *sink {
	t.Helper()
	srv := f.server()
	defer srv.Close()
	s := &sink{}
	if err := newProvider(srv).Run(context.Background(), target(srv.URL+f.root, vars), ids, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDefinitionEvidencesExistInCatalog(t *testing.T) {
	cat, err := app.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	def := New(nil).Definition()
	if def.Slug != "gitlab" || len(def.Checks) != 4 {
		t.Fatalf("definition: slug %q, %d checks", def.Slug, len(def.Checks))
	}
	seen := map[string]bool{}
	for _, c := range def.Checks {
		if !strings.HasPrefix(c.ID, "gitlab.") || seen[c.ID] {
			t.Errorf("check id %q: not gitlab.<name> or repeated", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Description == "" || c.Remediation == "" || !slices.Contains(app.FindingSeverities, c.Severity) || len(c.Evidences) == 0 {
			t.Errorf("%s: incomplete definition", c.ID)
		}
		for _, ref := range c.Evidences {
			found := false
			for _, r := range cat.Requirements(ref.Framework) {
				found = found || r.Ref == ref.Ref
			}
			if !found {
				t.Errorf("%s: requirement %s %s is not in the built-in catalog", c.ID, ref.Framework, ref.Ref)
			}
		}
	}
}

func TestRunCompliantGroupPasses(t *testing.T) {
	for _, link := range []bool{true, false} {
		t.Run(fmt.Sprintf("link header %v", link), func(t *testing.T) {
			f := newFake(t)
			f.perPage, f.link = 1, link // every listing over several pages; without Link, X-Next-Page leads
			s := runFake(t, f, nil)
			for _, o := range s.outcomes {
				if o.Status != app.CheckPass {
					t.Errorf("%s %s: %s %s", o.CheckID, o.ResourceName, o.Status, o.Message)
				}
			}
			want := map[string]int{CheckGroup2FARequired: 1, CheckMembersWithout2FA: 2, CheckProtectedDefaultBranch: 4, CheckMergeRequestApprovals: 4}
			for id, n := range want {
				if got := len(s.of(id)); got != n {
					t.Errorf("%s: %d outcomes, want %d", id, got, n)
				}
			}
			if o := s.find(t, CheckProtectedDefaultBranch, "acme/platform/svc-1"); !strings.Contains(o.Message, "No one") {
				t.Errorf("wildcard rule: %q", o.Message)
			}
		})
	}
}

func TestRunWeaknessesFailTheirCheck(t *testing.T) {
	cases := []struct {
		name     string
		plant    func(f *fakeGitLab)
		check    string
		resource string
		message  string
		detail   string
	}{
		{"group does not require 2FA", func(f *fakeGitLab) { f.require2FA = false }, CheckGroup2FARequired, "acme/platform", "does not require", "requireTwoFactorAuthentication"},
		{"member without 2FA", func(f *fakeGitLab) { f.members[1].no2FA = true }, CheckMembersWithout2FA, "dev", "dev has not enabled", "twoFactorEnabled"},
		{"unprotected default branch", func(f *fakeGitLab) { f.projects[0].protections = []fakeProtection{{name: "release/*", push: 40}} }, CheckProtectedDefaultBranch, "acme/platform/svc-0", "is not protected", "protected"},
		{"force push allowed", func(f *fakeGitLab) { f.projects[2].protections[0].forcePush = true }, CheckProtectedDefaultBranch, "acme/platform/sub/svc-2", "allows force push", "problems"},
		{"developers may push", func(f *fakeGitLab) { f.projects[3].protections[0].push = 30 }, CheckProtectedDefaultBranch, "acme/platform/svc-3", "lets Developers + Maintainers push", "pushAccess"},
		{"no approvals required", func(f *fakeGitLab) { f.projects[0].approvals = 0 }, CheckMergeRequestApprovals, "acme/platform/svc-0", "need no approval", "requiredApprovals"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			tc.plant(f)
			s := runFake(t, f, nil)
			o := s.find(t, tc.check, tc.resource)
			if o.Status != app.CheckFail || !strings.Contains(o.Message, tc.message) {
				t.Errorf("%s: %s %q, want fail with %q", tc.check, o.Status, o.Message, tc.message)
			}
			if _, ok := o.Details[tc.detail]; !ok {
				t.Errorf("details lack %q: %v", tc.detail, o.Details)
			}
			for _, x := range s.outcomes {
				if x.Status != app.CheckPass && (x.CheckID != tc.check || x.ResourceName != tc.resource) {
					t.Errorf("other outcome not passing: %s %s %s %s", x.CheckID, x.ResourceName, x.Status, x.Message)
				}
			}
		})
	}
}

func TestSpecificUserPushAccessPasses(t *testing.T) {
	f := newFake(t)
	f.projects[0].protections[0].push = -1
	s := runFake(t, f, nil, CheckProtectedDefaultBranch)
	if o := s.find(t, CheckProtectedDefaultBranch, "acme/platform/svc-0"); o.Status != app.CheckPass || !strings.Contains(o.Message, "user 77") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
}

func TestMembers2FAFromAdministratorFilter(t *testing.T) {
	f := newFake(t)
	f.show2FA, f.admin = false, true
	f.members[1].no2FA = true
	s := runFake(t, f, nil, CheckMembersWithout2FA)
	o := s.find(t, CheckMembersWithout2FA, "dev")
	if o.Status != app.CheckFail || !strings.Contains(o.Details["source"].(string), "administrator") {
		t.Errorf("%s %q %v", o.Status, o.Message, o.Details)
	}
	if o := s.find(t, CheckMembersWithout2FA, "owner"); o.Status != app.CheckPass {
		t.Errorf("owner: %s", o.Status)
	}
}

func TestMembers2FANotVisible(t *testing.T) {
	f := newFake(t)
	f.show2FA = false
	s := runFake(t, f, nil)
	o := s.find(t, CheckMembersWithout2FA, "acme/platform")
	if o.Status != app.CheckError || !strings.Contains(o.Message, "Owner role") || !strings.Contains(o.Message, "administrator") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
	if len(s.of(CheckMembersWithout2FA)) != 1 || len(s.of(CheckProtectedDefaultBranch)) != 4 {
		t.Errorf("outcomes: %+v", s.outcomes)
	}
}

func TestApprovalsWithoutPremium(t *testing.T) {
	f := newFake(t)
	f.projects[0].premium = false
	s := runFake(t, f, nil, CheckMergeRequestApprovals)
	o := s.find(t, CheckMergeRequestApprovals, "acme/platform/svc-0")
	if o.Status != app.CheckError || !strings.Contains(o.Message, "Premium") || !strings.Contains(o.Message, "403 Forbidden") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
}

func TestSelfManagedBaseURL(t *testing.T) {
	f := newFake(t)
	f.root = "/gitlab"
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	res := p.Test(context.Background(), target(srv.URL+"/gitlab/", nil))
	if !res.Success || res.Account != "john_smith in acme/platform" {
		t.Fatalf("test: %+v", res)
	}
	s := &sink{}
	if err := p.Run(context.Background(), target(srv.URL+"/gitlab/api/v4", map[string]string{"projects": "svc-0\nacme/platform/sub/svc-2, gone"}), nil, s); err != nil {
		t.Fatal(err)
	}
	if n := len(s.of(CheckProtectedDefaultBranch)); n != 2 {
		t.Errorf("%d project outcomes, want the 2 named", n)
	}
	if !strings.Contains(strings.Join(s.logs, "\n"), "not found in the group: gone") {
		t.Errorf("logs: %v", s.logs)
	}
	if res := p.Test(context.Background(), target(srv.URL, nil)); res.Success || !strings.Contains(res.Message, "no GitLab API") {
		t.Errorf("wrong root: %+v", res)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "https://gitlab.com/api/v4"},
		{"https://git.example.com/", "https://git.example.com/api/v4"},
		{"https://git.example.com/gitlab/api/v4", "https://git.example.com/gitlab/api/v4"},
	} {
		u, err := APIURL(tc.in)
		if err != nil || u.String() != tc.want {
			t.Errorf("APIURL(%q) = %v, %v", tc.in, u, err)
		}
	}
	if _, err := APIURL("gitlab.example.com"); err == nil {
		t.Error("a URL without scheme was accepted")
	}
}

func TestBadCredentials(t *testing.T) {
	f := newFake(t)
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	tg := target(srv.URL, nil)
	tg.Credentials["token"] = "glpat-wrong"
	if res := p.Test(context.Background(), tg); res.Success || !strings.Contains(res.Message, "401 Unauthorized") {
		t.Errorf("test: %+v", res)
	}
	if err := p.Run(context.Background(), tg, nil, &sink{}); err == nil || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("run: %v", err)
	}
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		f.writeRaw(w, http.StatusUnauthorized, "error_invalid_token.json")
		return true
	}
	if res := p.Test(context.Background(), target(srv.URL, nil)); res.Success || !strings.Contains(res.Message, "invalid_token: Token is expired") {
		t.Errorf("expired token: %+v", res)
	}
	f.override = nil
	if res := p.Test(context.Background(), target(srv.URL, map[string]string{"group": "nope"})); res.Success || !strings.Contains(res.Message, `"nope" was not found`) {
		t.Errorf("unknown group: %+v", res)
	}
}

func TestRateLimit(t *testing.T) {
	for _, h := range []map[string]string{
		{"Retry-After": "3600"},
		{"RateLimit-Remaining": "0", "RateLimit-Reset": fmt.Sprint(time.Now().Add(time.Hour).Unix())},
	} {
		f := newFake(t)
		f.override = func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/protected_branches") {
				for k, v := range h {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte("Retry later\n"))
				return true
			}
			return false
		}
		s := runFake(t, f, nil, CheckProtectedDefaultBranch)
		got := s.of(CheckProtectedDefaultBranch)
		if len(got) != 1 || got[0].Status != app.CheckError || !strings.Contains(got[0].Message, "Retry later") || !strings.Contains(got[0].Message, "resets at") {
			t.Errorf("%v: %+v", h, got)
		}
	}
}

func TestPaginationLoopAndHugeResponse(t *testing.T) {
	f := newFake(t)
	f.link = false
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.HasSuffix(r.URL.Path, "/members/all"):
			w.Header().Set("X-Next-Page", "2") // page 2 names itself again
			writeJSON(w, http.StatusOK, []any{fromFixture(t, "member.json", map[string]any{"two_factor_enabled": true})})
			return true
		case strings.HasSuffix(r.URL.Path, "/approval_rules"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[" + strings.Repeat(`{"id":1,"name":"x","rule_type":"regular"},`, 100000)))
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	p := newProvider(srv)
	p.MaxBody = 256 << 10
	s := &sink{}
	if err := p.Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
		t.Fatal(err)
	}
	if o := s.find(t, CheckMembersWithout2FA, "acme/platform"); o.Status != app.CheckError || !strings.Contains(o.Message, "pagination loops") {
		t.Errorf("loop: %s %q", o.Status, o.Message)
	}
	if o := s.find(t, CheckMergeRequestApprovals, "acme/platform/svc-0"); o.Status != app.CheckError || !strings.Contains(o.Message, "larger than") {
		t.Errorf("huge: %s %q", o.Status, o.Message)
	}
	if f.requests.Load() > 40 {
		t.Errorf("%d requests", f.requests.Load())
	}
}

func TestTimeoutAndTokenRedaction(t *testing.T) {
	f := newFake(t)
	f.override = func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.HasSuffix(r.URL.Path, "/protected_branches"):
			<-r.Context().Done()
			return true
		case strings.HasSuffix(r.URL.Path, "/approval_rules"):
			writeJSON(w, http.StatusInternalServerError, map[string]any{"message": map[string]any{"token": []string{testToken + " is wrong"}}})
			return true
		}
		return false
	}
	srv := f.server()
	defer srv.Close()
	client := srv.Client()
	client.Timeout = 200 * time.Millisecond
	s := &sink{}
	if err := New(client).Run(context.Background(), target(srv.URL, nil), nil, s); err != nil {
		t.Fatal(err)
	}
	for _, o := range s.of(CheckProtectedDefaultBranch) {
		if o.Status != app.CheckError || !strings.Contains(o.Message, "timed out") {
			t.Errorf("%s %q", o.Status, o.Message)
		}
	}
	if strings.Contains(s.everything(), testToken) {
		t.Fatal("the token appears in an outcome or log line")
	}
	if o := s.find(t, CheckMergeRequestApprovals, "acme/platform/svc-0"); o.Status != app.CheckError || !strings.Contains(o.Message, "[redacted]") {
		t.Errorf("%s %q", o.Status, o.Message)
	}
}

func BenchmarkGitLabRun1000Projects(b *testing.B) {
	f := newFake(b)
	f.projects = f.projects[:0]
	for i := 0; i < 1000; i++ {
		f.projects = append(f.projects, fakeProject{id: int64(1000 + i), path: fmt.Sprintf("acme/platform/p-%04d", i), branch: "main",
			protections: []fakeProtection{{name: "main", push: []int{40, 30, 0}[i%3]}}, approvals: i % 2, premium: true})
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
		if n := len(s.of(CheckProtectedDefaultBranch)); n != 1000 {
			b.Fatalf("%d outcomes", n)
		}
	}
	b.ReportMetric(float64(f.requests.Load())/float64(b.N), "requests/op")
}
