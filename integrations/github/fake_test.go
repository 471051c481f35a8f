package github

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

const testToken = "ghp_TESTTOKENnotreal0123456789abcdefABCD"

// fixture reads testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fromFixture decodes a fixture object and overrides some of its fields.
func fromFixture(t testing.TB, name string, set map[string]any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(fixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	return m
}

type fakeMember struct {
	id       int64
	login    string
	no2FA    bool
	admin    bool
	outsider bool // an outside collaborator, not a member
}

type fakeCollab struct {
	id    int64
	login string
	role  string // "read", "write", "maintain", "admin"
}

type fakeRepo struct {
	id             int64
	name           string
	branch         string
	archived       bool
	protection     string // "classic", "ruleset", "none"
	reviews        int
	secretScanning string // "enabled", "disabled", "" (hidden)
	dependabot     bool
	collaborators  []fakeCollab
}

// fakeGitHub answers the REST endpoints the provider calls with the
// shapes of testdata/, paginating with Link headers as GitHub does.
type fakeGitHub struct {
	t        testing.TB
	prefix   string // "" for github.com, "/api/v3" for GitHub Enterprise Server
	org      string
	org2FA   *bool
	members  []fakeMember
	repos    []fakeRepo
	perPage  int // the most items a page holds (GitHub: 100)
	override func(w http.ResponseWriter, r *http.Request) bool
	requests atomic.Int64

	once      sync.Once
	member    map[string]any
	repoTmpl  map[string]any
	protTmpl  map[string]any
	rulesTmpl []any
	collTmpl  map[string]any
}

func newFake(t testing.TB) *fakeGitHub {
	f := &fakeGitHub{t: t, org: "acme-corp", perPage: 100}
	yes := true
	f.org2FA = &yes
	f.members = []fakeMember{
		{id: 1, login: "octocat", admin: true},
		{id: 2, login: "hubot", admin: true},
		{id: 3, login: "monalisa"},
		{id: 5001, login: "contractor", outsider: true},
	}
	for i := 0; i < 5; i++ {
		f.repos = append(f.repos, fakeRepo{id: int64(100 + i), name: fmt.Sprintf("service-%d", i), branch: "main",
			protection: "classic", reviews: 1, secretScanning: "enabled", dependabot: true,
			collaborators: []fakeCollab{{id: 5001, login: "contractor", role: "write"}}})
	}
	f.repos[1].protection = "ruleset"
	return f
}

func (f *fakeGitHub) load() {
	f.once.Do(func() {
		f.member = fromFixture(f.t, "member.json", nil)
		f.repoTmpl = fromFixture(f.t, "repo.json", nil)
		f.protTmpl = fromFixture(f.t, "protection.json", nil)
		f.collTmpl = fromFixture(f.t, "collaborator.json", nil)
		if err := json.Unmarshal(fixture(f.t, "rules_branch.json"), &f.rulesTmpl); err != nil {
			f.t.Fatal(err)
		}
	})
}

func (f *fakeGitHub) server() *httptest.Server {
	f.load()
	return httptest.NewServer(f)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeGitHub) writeRaw(w http.ResponseWriter, status int, name string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(fixture(f.t, name))
}

// paginate writes one page of items with GitHub's Link header.
func (f *fakeGitHub) paginate(w http.ResponseWriter, r *http.Request, items []any) {
	per := f.perPage
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 && v < per {
		per = v
	}
	page := 1
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	last := (len(items) + per - 1) / per
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	link := func(p int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		return fmt.Sprintf("<http://%s%s?%s>", r.Host, r.URL.Path, q.Encode())
	}
	var links []string
	if page < last {
		links = append(links, link(page+1)+`; rel="next"`, link(last)+`; rel="last"`)
	}
	if page > 1 {
		links = append(links, link(1)+`; rel="first"`, link(page-1)+`; rel="prev"`)
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	writeJSON(w, http.StatusOK, items[start:end])
}

func (f *fakeGitHub) userJSON(id int64, login string) map[string]any {
	m := make(map[string]any, len(f.member))
	for k, v := range f.member {
		m[k] = v
	}
	m["id"], m["login"] = id, login
	m["url"] = "https://api.github.com/users/" + login
	return m
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		f.writeRaw(w, http.StatusUnauthorized, "error_bad_credentials.json")
		return
	}
	if f.override != nil && f.override(w, r) {
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, f.prefix)
	if !ok || r.Method != http.MethodGet {
		f.writeRaw(w, http.StatusNotFound, "error_not_found.json")
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "/user":
		f.writeRaw(w, http.StatusOK, "user.json")
	case len(parts) == 2 && parts[0] == "orgs" && parts[1] == f.org:
		org := fromFixture(f.t, "org.json", map[string]any{"login": f.org})
		if f.org2FA == nil {
			delete(org, "two_factor_requirement_enabled")
		} else {
			org["two_factor_requirement_enabled"] = *f.org2FA
		}
		writeJSON(w, http.StatusOK, org)
	case len(parts) == 3 && parts[0] == "orgs" && parts[1] == f.org:
		f.orgList(w, r, parts[2])
	case len(parts) >= 4 && parts[0] == "repos" && parts[1] == f.org:
		f.repoEndpoint(w, r, parts[2], parts[3:])
	default:
		f.writeRaw(w, http.StatusNotFound, "error_not_found.json")
	}
}

func (f *fakeGitHub) orgList(w http.ResponseWriter, r *http.Request, what string) {
	var items []any
	switch what {
	case "members":
		q := r.URL.Query()
		for _, m := range f.members {
			if m.outsider || (q.Get("filter") == "2fa_disabled" && !m.no2FA) || (q.Get("role") == "admin" && !m.admin) {
				continue
			}
			items = append(items, f.userJSON(m.id, m.login))
		}
	case "outside_collaborators":
		for _, m := range f.members {
			if m.outsider {
				items = append(items, f.userJSON(m.id, m.login))
			}
		}
	case "repos":
		for _, rp := range f.repos {
			m := make(map[string]any, len(f.repoTmpl))
			for k, v := range f.repoTmpl {
				m[k] = v
			}
			m["id"], m["name"], m["full_name"] = rp.id, rp.name, f.org+"/"+rp.name
			m["default_branch"], m["archived"] = rp.branch, rp.archived
			if rp.secretScanning == "" {
				delete(m, "security_and_analysis")
			} else {
				m["security_and_analysis"] = map[string]any{
					"advanced_security":               map[string]any{"status": "enabled"},
					"secret_scanning":                 map[string]any{"status": rp.secretScanning},
					"secret_scanning_push_protection": map[string]any{"status": rp.secretScanning},
				}
			}
			items = append(items, m)
		}
	default:
		f.writeRaw(w, http.StatusNotFound, "error_not_found.json")
		return
	}
	if items == nil {
		items = []any{}
	}
	f.paginate(w, r, items)
}

func (f *fakeGitHub) repo(name string) *fakeRepo {
	for i := range f.repos {
		if f.repos[i].name == name {
			return &f.repos[i]
		}
	}
	return nil
}

func (f *fakeGitHub) repoEndpoint(w http.ResponseWriter, r *http.Request, name string, rest []string) {
	rp := f.repo(name)
	if rp == nil {
		f.writeRaw(w, http.StatusNotFound, "error_not_found.json")
		return
	}
	switch {
	case len(rest) == 3 && rest[0] == "branches" && rest[2] == "protection":
		if rest[1] != rp.branch {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Branch not found", "documentation_url": "https://docs.github.com/rest/branches/branch-protection#get-branch-protection", "status": "404"})
			return
		}
		if rp.protection != "classic" {
			f.writeRaw(w, http.StatusNotFound, "error_branch_not_protected.json")
			return
		}
		p := make(map[string]any, len(f.protTmpl))
		for k, v := range f.protTmpl {
			p[k] = v
		}
		if rp.reviews == 0 {
			delete(p, "required_pull_request_reviews")
		} else {
			p["required_pull_request_reviews"] = map[string]any{"dismiss_stale_reviews": true, "require_code_owner_reviews": false, "required_approving_review_count": rp.reviews}
		}
		writeJSON(w, http.StatusOK, p)
	case len(rest) == 3 && rest[0] == "rules" && rest[1] == "branches":
		if rp.protection != "ruleset" {
			f.paginate(w, r, []any{})
			return
		}
		rules := make([]any, 0, len(f.rulesTmpl))
		for _, rl := range f.rulesTmpl {
			m := rl.(map[string]any)
			if m["type"] == "pull_request" {
				if rp.reviews == 0 {
					continue
				}
				c := map[string]any{}
				for k, v := range m {
					c[k] = v
				}
				c["parameters"] = map[string]any{"required_approving_review_count": rp.reviews, "dismiss_stale_reviews_on_push": true}
				m = c
			}
			rules = append(rules, m)
		}
		f.paginate(w, r, rules)
	case len(rest) == 1 && rest[0] == "vulnerability-alerts":
		if rp.dependabot {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		f.writeRaw(w, http.StatusNotFound, "error_not_found.json")
	case len(rest) == 1 && rest[0] == "collaborators":
		items := []any{}
		for _, c := range rp.collaborators {
			m := make(map[string]any, len(f.collTmpl))
			for k, v := range f.collTmpl {
				m[k] = v
			}
			m["id"], m["login"], m["role_name"] = c.id, c.login, c.role
			m["permissions"] = map[string]any{"pull": true, "triage": c.role != "read", "push": c.role != "read",
				"maintain": c.role == "maintain" || c.role == "admin", "admin": c.role == "admin"}
			items = append(items, m)
		}
		f.paginate(w, r, items)
	default:
		f.writeRaw(w, http.StatusNotFound, "error_not_found.json")
	}
}

// sink records a run's outcomes and log lines.
type sink struct {
	mu       sync.Mutex
	outcomes []app.CheckOutcome
	logs     []string
}

func (s *sink) Outcome(o app.CheckOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, o)
}

func (s *sink) Log(level, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs = append(s.logs, level+": "+msg)
}

// of returns the outcomes of check.
func (s *sink) of(check string) []app.CheckOutcome {
	var out []app.CheckOutcome
	for _, o := range s.outcomes {
		if o.CheckID == check {
			out = append(out, o)
		}
	}
	return out
}

// find returns the outcome of check for the resource named name.
func (s *sink) find(t *testing.T, check, name string) app.CheckOutcome {
	t.Helper()
	for _, o := range s.outcomes {
		if o.CheckID == check && o.ResourceName == name {
			return o
		}
	}
	t.Fatalf("no outcome of %s for %s; outcomes: %+v", check, name, s.of(check))
	return app.CheckOutcome{}
}

// everything is all text a run produced, to look for leaks.
func (s *sink) everything() string {
	b, _ := json.Marshal(s.outcomes)
	return string(b) + strings.Join(s.logs, "\n")
}

func target(baseURL string, vars map[string]string) app.ConnectionTarget {
	v := map[string]string{"organization": "acme-corp"}
	for k, x := range vars {
		v[k] = x
	}
	return app.ConnectionTarget{ConnectionID: "con_1", OrganizationID: "org_1",
		Credentials: map[string]string{"token": testToken, "baseUrl": baseURL}, Variables: v}
}
