package googleworkspace

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var fakeGroups = []struct {
	id, email string
	members   []map[string]string
}{
	{"01ksv4uv1gexk1h", "Security@acme.example", []map[string]string{
		{"id": "104315437895031217301", "email": "ada@acme.example", "role": "OWNER", "type": "USER", "status": "ACTIVE"},
		{"id": "03cqmetx3ng8xqt", "email": "sec-leads@acme.example", "role": "MEMBER", "type": "GROUP", "status": "ACTIVE"},
		{"id": "109876543210987654321", "email": "bob@acme.example", "role": "MEMBER", "type": "USER", "status": "ACTIVE"},
	}},
	{"02grqrue2bz2xg8", "auditors@acme.example", []map[string]string{
		{"id": "104315437895031217301", "email": "ada@acme.example", "role": "MEMBER", "type": "USER", "status": "ACTIVE"},
	}},
	{"03cqmetx3ng8xqt", "sec-leads@acme.example", nil},
}

// serveGroups serves the Directory API's groups and members, two a page.
func (f *fake) serveGroups(w http.ResponseWriter, r *http.Request, mode string) bool {
	path := r.URL.Path
	if path != "/admin/directory/v1/groups" && !strings.HasPrefix(path, "/admin/directory/v1/groups/") {
		return false
	}
	f.ext.groupCalls.Add(1)
	if r.Header.Get("Authorization") != "Bearer "+accessToken {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture(f.t, "error_401.json"))
		return true
	}
	if mode == "403groups" {
		w.WriteHeader(http.StatusForbidden)
		w.Write(fixture(f.t, "error_403.json"))
		return true
	}
	from := 0
	if tok := r.URL.Query().Get("pageToken"); tok != "" {
		from, _ = strconv.Atoi(strings.TrimPrefix(tok, "p"))
	}
	page := map[string]any{}
	var items []any
	n := 0
	if path == "/admin/directory/v1/groups" {
		if r.URL.Query().Get("customer") != "my_customer" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"code":400,"message":"Bad Request"}}`))
			return true
		}
		page["kind"] = "admin#directory#groups"
		n = len(fakeGroups)
		for i := from; i < n && i < from+2; i++ {
			items = append(items, map[string]any{"kind": "admin#directory#group", "id": fakeGroups[i].id, "email": fakeGroups[i].email, "name": fakeGroups[i].email})
		}
		if items != nil {
			page["groups"] = items
		}
	} else {
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/admin/directory/v1/groups/"), "/members")
		page["kind"] = "admin#directory#members"
		for _, g := range fakeGroups {
			if g.id == id {
				n = len(g.members)
				for i := from; i < n && i < from+2; i++ {
					items = append(items, g.members[i])
				}
			}
		}
		if items != nil {
			page["members"] = items
		}
	}
	if from+2 < n {
		page["nextPageToken"] = "p" + strconv.Itoa(from+2)
	}
	json.NewEncoder(w).Encode(page)
	return true
}

// TestGroups: with readGroups the token asks for the group scope too, and
// a user's groups are the organizational unit then the groups' addresses.
func TestGroups(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	users, err := collect(t, f.provider(), f.target(map[string]string{"readGroups": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	for _, u := range users {
		by[u.Email] = u.Groups
	}
	if g := by["ada@acme.example"]; len(g) != 3 || !reflect.DeepEqual(g[1:], []string{"security@acme.example", "auditors@acme.example"}) {
		t.Errorf("ada's groups: %v", g)
	}
	if g := by["bob@acme.example"]; len(g) < 1 || g[len(g)-1] != "security@acme.example" {
		t.Errorf("bob's groups: %v", g)
	}
	// groups: 2 pages; members: 2 + 1 + 1 pages.
	if n := f.ext.groupCalls.Load(); n != 6 {
		t.Errorf("%d group calls, want 6", n)
	}
	f.mode.Store("403groups")
	if _, err := collect(t, f.provider(), f.target(map[string]string{"readGroups": "true"})); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("403 on groups: %v", err)
	}
	f.mode.Store("")
	f.ext.groupCalls.Store(0)
	if _, err := collect(t, f.provider(), f.target(nil)); err != nil || f.ext.groupCalls.Load() != 0 {
		t.Errorf("groups read without readGroups: %d, %v", f.ext.groupCalls.Load(), err)
	}
}
