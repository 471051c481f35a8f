package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
)

// SCIM group writes (RFC 7644 sections 3.5.1 and 3.5.2): the groups are
// the organization's fixed roles, so there is no route to create or
// delete one (the method is not allowed); PUT and PATCH of members change people's roles by the rules of
// app.SCIMChangeGroup (docs/sso.md).

// scimPaging reads startIndex and count.
func scimPaging(r *http.Request) (start, count int, err error) {
	q := r.URL.Query()
	start, count = 1, scimMaxCount
	if v := q.Get("startIndex"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "startIndex must be an integer"}
		}
		start = max(n, 1)
	}
	if v := q.Get("count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "count must be an integer"}
		}
		count = min(max(n, 0), scimMaxCount)
	}
	return start, count, nil
}

func scimGroupRole(r *http.Request) (app.Role, error) {
	role, ok := app.ParseRole(mux.Vars(r)["id"])
	if !ok {
		return "", app.ErrNotFound
	}
	return role, nil
}

// scimMemberIDs reads a members value: [{"value": id}, ...].
func scimMemberIDs(raw json.RawMessage) ([]string, error) {
	var ms []scimMember
	if err := json.Unmarshal(raw, &ms); err != nil {
		var one scimMember
		if err := json.Unmarshal(raw, &one); err != nil || one.Value == "" {
			return nil, fmt.Errorf("members must be a list of {\"value\": user id}")
		}
		ms = []scimMember{one}
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		if strings.TrimSpace(m.Value) == "" {
			return nil, fmt.Errorf("each member needs a value (a user id)")
		}
		ids = append(ids, m.Value)
	}
	return ids, nil
}

// scimGroupAnswer writes the group after a change.
func (s *Server) scimGroupAnswer(w http.ResponseWriter, r *http.Request, role app.Role) error {
	people, err := s.app.ListAllPeople(r.Context())
	if err != nil {
		return err
	}
	scimJSON(w, http.StatusOK, s.scimGroupOf(r, role, people))
	return nil
}

func (s *Server) scimReplaceGroup(w http.ResponseWriter, r *http.Request) error {
	role, err := scimGroupRole(r)
	if err != nil {
		return err
	}
	var in struct {
		DisplayName *string         `json:"displayName"`
		Members     json.RawMessage `json:"members"`
	}
	if err := scimDecode(r, &in); err != nil {
		return err
	}
	if in.DisplayName != nil && !strings.EqualFold(*in.DisplayName, string(role)) {
		return &scimError{Status: http.StatusBadRequest, ScimType: "mutability", Detail: "displayName of a role group cannot change"}
	}
	ids := []string{}
	if len(in.Members) > 0 && string(in.Members) != "null" {
		if ids, err = scimMemberIDs(in.Members); err != nil {
			return &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: err.Error()}
		}
	}
	if _, err := s.app.SCIMChangeGroup(r.Context(), role, app.SCIMGroupChange{Replace: &ids}); err != nil {
		return err
	}
	return s.scimGroupAnswer(w, r, role)
}

// scimMemberPath matches members[value eq "id"] (a remove's path).
func scimMemberPath(path string) (string, bool) {
	f, err := parseSCIMFilter(strings.TrimSpace(path))
	if err != nil {
		return "", false
	}
	vp, ok := f.(scimValuePath)
	if !ok || !strings.EqualFold(vp.attr, "members") || vp.sub != "" {
		return "", false
	}
	c, ok := vp.filter.(scimCompare)
	if !ok || c.op != "eq" || len(c.path) != 1 || !strings.EqualFold(c.path[0], "value") {
		return "", false
	}
	id, ok := c.val.(string)
	return id, ok
}

func (s *Server) scimPatchGroup(w http.ResponseWriter, r *http.Request) error {
	role, err := scimGroupRole(r)
	if err != nil {
		return err
	}
	var in scimPatch
	if err := scimDecode(r, &in); err != nil {
		return err
	}
	if len(in.Operations) == 0 || len(in.Operations) > 100 {
		return &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "Operations must hold 1 to 100 operations"}
	}
	var ch app.SCIMGroupChange
	for i, op := range in.Operations {
		bad := func(typ, msg string) error {
			return &scimError{Status: http.StatusBadRequest, ScimType: typ, Detail: fmt.Sprintf("Operations[%d]: %s", i, msg)}
		}
		path, value := strings.TrimSpace(op.Path), op.Value
		if path == "" {
			// No path: the value is an object of attributes.
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(value, &obj); err != nil {
				return bad("invalidValue", "a value without path must be an object")
			}
			for k, v := range obj {
				switch strings.ToLower(k) {
				case "members":
					path, value = "members", v
				case "displayname":
					var dn string
					if json.Unmarshal(v, &dn) != nil || !strings.EqualFold(dn, string(role)) {
						return bad("mutability", "displayName of a role group cannot change")
					}
				default:
					return bad("invalidPath", "a role group has no writable attribute "+k)
				}
			}
			if path == "" {
				continue
			}
		}
		id, byFilter := scimMemberPath(path)
		if !byFilter && !strings.EqualFold(path, "members") {
			if strings.EqualFold(path, "displayName") {
				return bad("mutability", "displayName of a role group cannot change")
			}
			return bad("invalidPath", "only members of a role group can change (path members or members[value eq \"id\"])")
		}
		var ids []string
		if byFilter {
			ids = []string{id}
		} else if len(value) > 0 && string(value) != "null" {
			if ids, err = scimMemberIDs(value); err != nil {
				return bad("invalidValue", err.Error())
			}
		}
		switch strings.ToLower(op.Op) {
		case "add":
			if byFilter || len(ids) == 0 {
				return bad("invalidValue", "add takes members as its value")
			}
			ch.Add = append(ch.Add, ids...)
		case "remove":
			if !byFilter && len(ids) == 0 {
				// remove of every member
				ids = []string{}
				ch.Replace = &ids
				continue
			}
			ch.Remove = append(ch.Remove, ids...)
		case "replace":
			if byFilter {
				return bad("invalidPath", "replace takes the path members")
			}
			if ids == nil {
				ids = []string{}
			}
			ch.Replace = &ids
		default:
			return bad("invalidValue", "op must be add, remove or replace")
		}
	}
	if _, err := s.app.SCIMChangeGroup(r.Context(), role, ch); err != nil {
		return err
	}
	return s.scimGroupAnswer(w, r, role)
}
