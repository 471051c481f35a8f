package entra

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// groupFake is Graph's groups and group members, two a page.
type groupFake struct {
	calls atomic.Int32
}

var fakeGroups = []struct {
	id, name string
	members  []string
}{
	{"02bd9fd6-8f93-4758-87c3-1fb73740a315", "HR Taskforce", []string{"87d349ed-44d7-43e1-9a83-5f2406dee5bd"}},
	{"06f62f70-9827-4e6e-93ef-8e0f2d9b7b23", "Security Auditors", []string{"5bde3e51-d13b-4db1-9948-fe4b109d11a7", "87d349ed-44d7-43e1-9a83-5f2406dee5bd", "4782e723-f4f4-4af3-a76e-25e3bab0d896"}},
	{"0a53828f-36c9-44c3-be3d-99a7fce977ac", "Empty", nil},
}

func (f *fake) serveGroups(w http.ResponseWriter, r *http.Request, mode string) bool {
	const size = 2
	path := r.URL.Path
	if path != "/v1.0/groups" && !strings.HasPrefix(path, "/v1.0/groups/") {
		return false
	}
	f.ext.groups.calls.Add(1)
	if mode == "403groups" {
		w.WriteHeader(http.StatusForbidden)
		w.Write(fixture(f.t, "error_403_users.json"))
		return true
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("$skiptoken"))
	next := func(n int) string {
		if from+size >= n {
			return ""
		}
		return fmt.Sprintf("%s%s?$select=%s&$top=999&$skiptoken=%d", f.srv.URL, path, r.URL.Query().Get("$select"), from+size)
	}
	page := map[string]any{}
	items := []map[string]any{}
	if path == "/v1.0/groups" {
		for i := from; i < len(fakeGroups) && i < from+size; i++ {
			items = append(items, map[string]any{"id": fakeGroups[i].id, "displayName": fakeGroups[i].name})
		}
		if nx := next(len(fakeGroups)); nx != "" {
			page["@odata.nextLink"] = nx
		}
	} else {
		id, rest, _ := strings.Cut(strings.TrimPrefix(path, "/v1.0/groups/"), "/")
		if rest != "members/microsoft.graph.user" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":"BadRequest","message":"Unsupported segment"}}`)
			return true
		}
		var members []string
		for _, g := range fakeGroups {
			if g.id == id {
				members = g.members
			}
		}
		for i := from; i < len(members) && i < from+size; i++ {
			items = append(items, map[string]any{"@odata.type": "#microsoft.graph.user", "id": members[i]})
		}
		if nx := next(len(members)); nx != "" {
			page["@odata.nextLink"] = nx
		}
	}
	page["value"] = items
	json.NewEncoder(w).Encode(page)
	return true
}

// TestGroups reads every group and its members with paging, and a user's
// groups are the display names of the groups listing them.
func TestGroups(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	users, err := collect(t, f.provider(), target(map[string]string{"readGroups": "true", "checkMfa": "false"}))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	for _, u := range users {
		by[u.Login] = u.Groups
	}
	if g := by["AdeleV@contoso.example"]; !reflect.DeepEqual(g, []string{"HR Taskforce", "Security Auditors"}) {
		t.Errorf("adele's groups: %v", g)
	}
	if g := by["GradyA@contoso.example"]; len(g) != 0 {
		t.Errorf("grady's groups: %v", g)
	}
	// 2 pages of groups, 1 + 2 + 1 pages of members.
	if f.ext.groups.calls.Load() != 6 {
		t.Errorf("%d group calls, want 6", f.ext.groups.calls.Load())
	}
	f.mode.Store("403groups")
	_, err = collect(t, f.provider(), target(map[string]string{"readGroups": "true", "checkMfa": "false"}))
	if err == nil || !strings.Contains(err.Error(), PermissionGroups) {
		t.Errorf("403 on groups: %v", err)
	}
	// Off by default: no group call.
	f.mode.Store("")
	f.ext.groups.calls.Store(0)
	if _, err := collect(t, f.provider(), target(nil)); err != nil || f.ext.groups.calls.Load() != 0 {
		t.Errorf("groups read without readGroups: %d calls, %v", f.ext.groups.calls.Load(), err)
	}
}
