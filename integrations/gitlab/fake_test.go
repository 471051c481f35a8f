package gitlab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

const testToken = "glpat-TESTTOKENnotreal0123456789"

var fixtures sync.Map // name -> []byte, read once

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	if b, ok := fixtures.Load(name); ok {
		return b.([]byte)
	}
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	fixtures.Store(name, b)
	return b
}

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
	username string
	level    int
	no2FA    bool
	state    string
}

type fakeProtection struct {
	name      string
	push      int // access level; -1: a specific user
	forcePush bool
}

type fakeProject struct {
	id          int64
	path        string
	branch      string
	archived    bool
	protections []fakeProtection
	approvals   int  // approvals required by the "All Members" rule; 0: no rule
	premium     bool // approval rules readable
}

// fakeGitLab answers the REST endpoints the provider calls with the shapes
// of testdata/, paginating with X-Next-Page (and Link when link is set) as
// GitLab does.
type fakeGitLab struct {
	t          testing.TB
	root       string // the instance's relative URL root ("" or "/gitlab")
	group      string
	groupID    int64
	require2FA bool
	members    []fakeMember
	show2FA    bool // the group members API includes two_factor_enabled (the token is an Owner)
	admin      bool // the token's user is an administrator
	projects   []fakeProject
	perPage    int
	link       bool
	override   func(w http.ResponseWriter, r *http.Request) bool
	requests   atomic.Int64
}

func newFake(t testing.TB) *fakeGitLab {
	f := &fakeGitLab{t: t, group: "acme/platform", groupID: 4, require2FA: true, show2FA: true, perPage: 100, link: true}
	f.members = []fakeMember{
		{id: 1, username: "owner", level: 50},
		{id: 2, username: "dev", level: 30},
		{id: 3, username: "blocked", level: 30, state: "blocked", no2FA: true},
		{id: 4, username: "group_4_bot_abc123", level: 40, no2FA: true},
	}
	for i := 0; i < 4; i++ {
		f.projects = append(f.projects, fakeProject{id: int64(10 + i), path: fmt.Sprintf("acme/platform/svc-%d", i), branch: "main",
			protections: []fakeProtection{{name: "main", push: 40}}, approvals: 1, premium: true})
	}
	f.projects[1].protections = []fakeProtection{{name: "*", push: 0}}
	f.projects[2].path = "acme/platform/sub/svc-2"
	return f
}

func (f *fakeGitLab) server() *httptest.Server { return httptest.NewServer(f) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeGitLab) writeRaw(w http.ResponseWriter, status int, name string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(fixture(f.t, name))
}

func (f *fakeGitLab) paginate(w http.ResponseWriter, r *http.Request, items []any) {
	per := f.perPage
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 && v < per {
		per = v
	}
	page := 1
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	pages := max(1, (len(items)+per-1)/per)
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(len(items)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
	}
	if f.link {
		link := func(p int) string {
			q := r.URL.Query()
			q.Set("page", strconv.Itoa(p))
			return fmt.Sprintf("<http://%s%s?%s>", r.Host, r.URL.EscapedPath(), q.Encode())
		}
		links := []string{link(1) + `; rel="first"`, link(pages) + `; rel="last"`}
		if page < pages {
			links = append([]string{link(page+1) + `; rel="next"`}, links...)
		}
		h.Set("Link", strings.Join(links, ", "))
	}
	writeJSON(w, http.StatusOK, items[start:end])
}

func (f *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Header.Get("PRIVATE-TOKEN") != testToken {
		f.writeRaw(w, http.StatusUnauthorized, "error_401.json")
		return
	}
	if f.override != nil && f.override(w, r) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), f.root+"/api/v4/")
	if !ok {
		f.writeRaw(w, http.StatusNotFound, "error_404.json")
		return
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		parts[i], _ = url.PathUnescape(p)
	}
	switch {
	case rest == "user":
		writeJSON(w, http.StatusOK, fromFixture(f.t, "user.json", map[string]any{"is_admin": f.admin}))
	case rest == "users":
		if !f.admin || r.URL.Query().Get("two_factor") != "disabled" {
			f.t.Errorf("users listing without admin or filter: %s", r.URL)
		}
		var items []any
		for _, m := range f.members {
			if m.no2FA {
				items = append(items, fromFixture(f.t, "user.json", map[string]any{"id": m.id, "username": m.username, "two_factor_enabled": false}))
			}
		}
		f.paginate(w, r, append(items, []any{}...))
	case parts[0] == "groups" && len(parts) >= 2:
		if parts[1] != f.group && parts[1] != strconv.FormatInt(f.groupID, 10) {
			f.writeRaw(w, http.StatusNotFound, "error_404_group.json")
			return
		}
		f.groupEndpoint(w, r, parts[2:])
	case parts[0] == "projects" && len(parts) >= 3:
		f.projectEndpoint(w, r, parts[1], parts[2:])
	default:
		f.writeRaw(w, http.StatusNotFound, "error_404.json")
	}
}

func (f *fakeGitLab) groupEndpoint(w http.ResponseWriter, r *http.Request, rest []string) {
	switch strings.Join(rest, "/") {
	case "":
		writeJSON(w, http.StatusOK, fromFixture(f.t, "group.json", map[string]any{"id": f.groupID, "full_path": f.group, "require_two_factor_authentication": f.require2FA}))
	case "members/all":
		items := []any{}
		for _, m := range f.members {
			state := m.state
			if state == "" {
				state = "active"
			}
			o := fromFixture(f.t, "member.json", map[string]any{"id": m.id, "username": m.username, "access_level": m.level, "state": state})
			if f.show2FA {
				o["two_factor_enabled"] = !m.no2FA
			}
			items = append(items, o)
		}
		f.paginate(w, r, items)
	case "projects":
		items := []any{}
		archived := r.URL.Query().Get("archived")
		for _, p := range f.projects {
			if archived == "false" && p.archived {
				continue
			}
			name := p.path[strings.LastIndexByte(p.path, '/')+1:]
			items = append(items, fromFixture(f.t, "project.json", map[string]any{"id": p.id, "path_with_namespace": p.path,
				"name": name, "path": name, "default_branch": p.branch, "archived": p.archived}))
		}
		f.paginate(w, r, items)
	default:
		f.writeRaw(w, http.StatusNotFound, "error_404.json")
	}
}

func (f *fakeGitLab) projectEndpoint(w http.ResponseWriter, r *http.Request, id string, rest []string) {
	var p *fakeProject
	for i := range f.projects {
		if strconv.FormatInt(f.projects[i].id, 10) == id {
			p = &f.projects[i]
		}
	}
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Project Not Found"})
		return
	}
	switch strings.Join(rest, "/") {
	case "protected_branches":
		items := []any{}
		for i, pr := range p.protections {
			o := fromFixture(f.t, "protected_branch.json", map[string]any{"id": i + 1, "name": pr.name, "allow_force_push": pr.forcePush})
			lvl := map[string]any{"id": i + 1, "access_level": pr.push, "access_level_description": levelName(pr.push), "user_id": nil, "group_id": nil, "deploy_key_id": nil}
			if pr.push < 0 {
				lvl["access_level"], lvl["user_id"], lvl["access_level_description"] = 40, 77, "Jane Doe"
			}
			o["push_access_levels"] = []any{lvl}
			items = append(items, o)
		}
		f.paginate(w, r, items)
	case "approval_rules":
		if !p.premium {
			f.writeRaw(w, http.StatusForbidden, "error_403.json")
			return
		}
		items := []any{}
		if p.approvals > 0 {
			items = append(items, fromFixture(f.t, "approval_rule.json", map[string]any{"approvals_required": p.approvals}))
		}
		f.paginate(w, r, items)
	case "approvals":
		if !p.premium {
			f.writeRaw(w, http.StatusForbidden, "error_403.json")
			return
		}
		f.writeRaw(w, http.StatusOK, "approvals.json")
	default:
		f.writeRaw(w, http.StatusNotFound, "error_404.json")
	}
}

func levelName(l int) string {
	switch l {
	case 0:
		return "No one"
	case 30:
		return "Developers + Maintainers"
	case 40:
		return "Maintainers"
	}
	return "Access level " + strconv.Itoa(l)
}

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

func (s *sink) of(check string) []app.CheckOutcome {
	var out []app.CheckOutcome
	for _, o := range s.outcomes {
		if o.CheckID == check {
			out = append(out, o)
		}
	}
	return out
}

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

func (s *sink) everything() string {
	b, _ := json.Marshal(s.outcomes)
	return string(b) + strings.Join(s.logs, "\n")
}

func target(baseURL string, vars map[string]string) app.ConnectionTarget {
	v := map[string]string{"group": "acme/platform"}
	for k, x := range vars {
		v[k] = x
	}
	return app.ConnectionTarget{ConnectionID: "con_1", OrganizationID: "org_1",
		Credentials: map[string]string{"token": testToken, "baseUrl": baseURL}, Variables: v}
}
