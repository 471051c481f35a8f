package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// SCIM 2.0 (RFC 7643, RFC 7644) under /scim/v2, authenticated by the
// organization's SCIM bearer token (not an API key), answering in SCIM's
// own JSON and error format. Users are the organization's people (id = the
// person id, userName = the e-mail); DELETE deactivates and keeps the
// person's history. Groups are the roles, read-only.

// scimRoutes registers the SCIM endpoints and the token routes.
func (s *Server) scimRoutes(handle routeFunc) {
	handle("GET", "/v1/organization/scim-token", httpx.CanAuditRd, s.getSCIMToken)
	handle("POST", "/v1/organization/scim-token", httpx.CanManage, s.createSCIMToken)
	handle("DELETE", "/v1/organization/scim-token", httpx.CanManage, s.revokeSCIMToken)
	rt := s.Router()
	h := func(method, path string, f scimHandler) { rt.Handle(path, s.scimWrap(f)).Methods(method) }
	h("GET", "/scim/v2/ServiceProviderConfig", s.scimServiceProviderConfig)
	h("GET", "/scim/v2/Schemas", s.scimSchemas)
	h("GET", "/scim/v2/ResourceTypes", s.scimResourceTypes)
	h("GET", "/scim/v2/Users", s.scimListUsers)
	h("POST", "/scim/v2/Users", s.scimCreateUser)
	h("GET", "/scim/v2/Users/{id}", s.scimGetUser)
	h("PUT", "/scim/v2/Users/{id}", s.scimReplaceUser)
	h("PATCH", "/scim/v2/Users/{id}", s.scimPatchUser)
	h("DELETE", "/scim/v2/Users/{id}", s.scimDeleteUser)
	h("GET", "/scim/v2/Groups", s.scimListGroups)
	h("GET", "/scim/v2/Groups/{id}", s.scimGetGroup)
	h("PUT", "/scim/v2/Groups/{id}", s.scimReplaceGroup)
	h("PATCH", "/scim/v2/Groups/{id}", s.scimPatchGroup)
}

func (s *Server) getSCIMToken(w http.ResponseWriter, r *http.Request) error {
	t, err := s.app.GetSCIMToken(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) createSCIMToken(w http.ResponseWriter, r *http.Request) error {
	t, err := s.app.CreateSCIMToken(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) revokeSCIMToken(w http.ResponseWriter, r *http.Request) error {
	if err := s.app.RevokeSCIMToken(r.Context()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

const (
	scimUserSchema  = "urn:ietf:params:scim:schemas:core:2.0:User"
	scimGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group"
	scimErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"
	scimListSchema  = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	scimPatchSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	scimMaxCount    = 200
)

// scimError is an error in SCIM's format (RFC 7644 section 3.12).
type scimError struct {
	Status   int
	ScimType string
	Detail   string
}

func (e *scimError) Error() string { return e.Detail }

type scimHandler func(w http.ResponseWriter, r *http.Request) error

// scimWrap authenticates the bearer token, rate-limits, and writes every
// error in SCIM's format.
func (s *Server) scimWrap(h scimHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.Limit(w, r, nil) {
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var err error
		var ctx context.Context
		if ok {
			ctx, err = s.app.AuthenticateSCIM(r.Context(), strings.TrimSpace(tok))
		}
		switch {
		case !ok || errors.Is(err, app.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="scim"`)
			err = &scimError{Status: http.StatusUnauthorized, Detail: "a valid SCIM bearer token is required"}
		case err == nil:
			err = h(w, r.WithContext(ctx))
		}
		if err != nil {
			s.scimWriteError(w, r, err)
		}
	})
}

func (s *Server) scimWriteError(w http.ResponseWriter, r *http.Request, err error) {
	se := &scimError{}
	var ve *app.ValidationError
	var pe *app.PublicError
	switch {
	case errors.As(err, &se):
	case errors.As(err, &ve):
		msgs := make([]string, 0, len(ve.Fields))
		for f := range ve.Fields {
			if m := ve.Msgs[f]; m != "" {
				msgs = append(msgs, m)
			} else {
				msgs = append(msgs, f+" is not valid")
			}
		}
		se = &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: strings.Join(msgs, "; ")}
	case errors.Is(err, app.ErrNotFound):
		se = &scimError{Status: http.StatusNotFound, Detail: "resource not found"}
	case errors.Is(err, app.ErrConflict):
		se = &scimError{Status: http.StatusConflict, ScimType: "uniqueness", Detail: "a user with this userName already exists"}
	case errors.As(err, &pe):
		status := http.StatusBadRequest
		if errors.Is(err, app.ErrForbidden) {
			status = http.StatusForbidden
		}
		se = &scimError{Status: status, ScimType: "mutability", Detail: pe.Msg}
	default:
		s.log.ErrorContext(r.Context(), "scim request failed", "path", r.URL.Path, "error", err)
		se = &scimError{Status: http.StatusInternalServerError, Detail: "internal error; request id " + httpx.RequestID(r)}
	}
	body := map[string]any{"schemas": []string{scimErrorSchema}, "status": strconv.Itoa(se.Status), "detail": se.Detail}
	if se.ScimType != "" {
		body["scimType"] = se.ScimType
	}
	scimJSON(w, se.Status, body)
}

func scimJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/scim+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// scimDecode reads a JSON object body (1 MiB at most).
func scimDecode(r *http.Request, v any) error {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil {
		return &scimError{Status: http.StatusBadRequest, ScimType: "invalidSyntax", Detail: "the body could not be read"}
	}
	if len(raw) > 1<<20 {
		return &scimError{Status: http.StatusRequestEntityTooLarge, Detail: "the body is larger than 1 MiB"}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &scimError{Status: http.StatusBadRequest, ScimType: "invalidSyntax", Detail: "the body is not valid JSON: " + err.Error()}
	}
	return nil
}

// --- discovery (RFC 7644 section 4) ---

func (s *Server) scimBase(r *http.Request) string { return s.BaseURL(r) + "/scim/v2" }

func (s *Server) scimServiceProviderConfig(w http.ResponseWriter, r *http.Request) error {
	scimJSON(w, http.StatusOK, map[string]any{
		"schemas":          []string{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"},
		"documentationUri": "https://github.com/compliance-appliance/compliance/blob/main/docs/sso.md",
		"patch":            map[string]any{"supported": true},
		"bulk":             map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":           map[string]any{"supported": true, "maxResults": scimMaxCount},
		"changePassword":   map[string]any{"supported": false},
		"sort":             map[string]any{"supported": true},
		"etag":             map[string]any{"supported": false},
		"authenticationSchemes": []map[string]any{{"type": "oauthbearertoken", "name": "SCIM bearer token",
			"description": "The organization's SCIM token, created on the Single sign-on settings page", "primary": true}},
		"meta": map[string]any{"resourceType": "ServiceProviderConfig", "location": s.scimBase(r) + "/ServiceProviderConfig"},
	})
	return nil
}

func scimAttr(name, typ string, required bool, mutability string, extra map[string]any) map[string]any {
	a := map[string]any{"name": name, "type": typ, "multiValued": false, "required": required, "caseExact": false,
		"mutability": mutability, "returned": "default", "uniqueness": "none"}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

func (s *Server) scimSchemaList(r *http.Request) []map[string]any {
	sub := func(names ...string) []map[string]any {
		out := []map[string]any{}
		for _, n := range names {
			out = append(out, scimAttr(n, "string", false, "readWrite", nil))
		}
		return out
	}
	user := map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Schema"}, "id": scimUserSchema,
		"name": "User", "description": "A person of the organization",
		"attributes": []map[string]any{
			scimAttr("userName", "string", true, "readWrite", map[string]any{"uniqueness": "server", "description": "The e-mail address"}),
			scimAttr("name", "complex", false, "readWrite", map[string]any{"subAttributes": sub("formatted", "givenName", "familyName")}),
			scimAttr("displayName", "string", false, "readWrite", nil),
			scimAttr("active", "boolean", false, "readWrite", nil),
			scimAttr("emails", "complex", false, "readWrite", map[string]any{"multiValued": true, "subAttributes": sub("value", "type", "primary")}),
			scimAttr("title", "string", false, "readWrite", nil),
		},
		"meta": map[string]any{"resourceType": "Schema", "location": s.scimBase(r) + "/Schemas/" + scimUserSchema}}
	group := map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Schema"}, "id": scimGroupSchema,
		"name": "Group", "description": "A role of the organization: fixed (never created or deleted); its members may be changed",
		"attributes": []map[string]any{
			scimAttr("displayName", "string", true, "readOnly", nil),
			scimAttr("members", "complex", false, "readWrite", map[string]any{"multiValued": true, "subAttributes": sub("value", "display")}),
		},
		"meta": map[string]any{"resourceType": "Schema", "location": s.scimBase(r) + "/Schemas/" + scimGroupSchema}}
	return []map[string]any{user, group}
}

func scimList[T any](items []T, total, start int) map[string]any {
	if items == nil {
		items = []T{}
	}
	return map[string]any{"schemas": []string{scimListSchema}, "totalResults": total, "startIndex": start,
		"itemsPerPage": len(items), "Resources": items}
}

func (s *Server) scimSchemas(w http.ResponseWriter, r *http.Request) error {
	l := s.scimSchemaList(r)
	scimJSON(w, http.StatusOK, scimList(l, len(l), 1))
	return nil
}

func (s *Server) scimResourceTypes(w http.ResponseWriter, r *http.Request) error {
	rt := func(name, endpoint, schema string) map[string]any {
		return map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"}, "id": name, "name": name,
			"endpoint": endpoint, "schema": schema, "meta": map[string]any{"resourceType": "ResourceType", "location": s.scimBase(r) + "/ResourceTypes/" + name}}
	}
	l := []map[string]any{rt("User", "/Users", scimUserSchema), rt("Group", "/Groups", scimGroupSchema)}
	scimJSON(w, http.StatusOK, scimList(l, len(l), 1))
	return nil
}

// --- users ---

type scimName struct {
	Formatted  string `json:"formatted,omitempty"`
	GivenName  string `json:"givenName,omitempty"`
	FamilyName string `json:"familyName,omitempty"`
}

type scimEmail struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"`
	Primary bool   `json:"primary,omitempty"`
}

// scimUser is the User resource as read and written.
type scimUser struct {
	Schemas     []string       `json:"schemas"`
	ID          string         `json:"id,omitempty"`
	ExternalID  string         `json:"externalId,omitempty"`
	UserName    string         `json:"userName"`
	Name        *scimName      `json:"name,omitempty"`
	DisplayName string         `json:"displayName,omitempty"`
	Title       string         `json:"title,omitempty"`
	Emails      []scimEmail    `json:"emails,omitempty"`
	Active      *bool          `json:"active,omitempty"`
	Groups      []scimMember   `json:"groups,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
}

type scimMember struct {
	Value   string `json:"value"`
	Display string `json:"display,omitempty"`
	Ref     string `json:"$ref,omitempty"`
}

func (s *Server) scimUserOf(r *http.Request, p *app.Person) scimUser {
	active := p.IsActive
	u := scimUser{Schemas: []string{scimUserSchema}, ID: p.ID, UserName: p.Email, DisplayName: p.Name,
		Name: &scimName{Formatted: p.Name}, Emails: []scimEmail{{Value: p.Email, Type: "work", Primary: true}}, Active: &active,
		Groups: []scimMember{{Value: string(p.Role), Display: string(p.Role), Ref: s.scimBase(r) + "/Groups/" + string(p.Role)}},
		Meta: map[string]any{"resourceType": "User", "created": p.CreatedAt.UTC().Format(time.RFC3339),
			"lastModified": p.UpdatedAt.UTC().Format(time.RFC3339), "location": s.scimBase(r) + "/Users/" + p.ID}}
	if p.JobTitle != nil {
		u.Title = *p.JobTitle
	}
	return u
}

// email is userName when it is an address, else the primary e-mail.
func (u *scimUser) email() string {
	if strings.Contains(u.UserName, "@") {
		return u.UserName
	}
	for _, e := range u.Emails {
		if e.Primary {
			return e.Value
		}
	}
	if len(u.Emails) > 0 {
		return u.Emails[0].Value
	}
	return u.UserName
}

func (u *scimUser) name() string {
	switch {
	case u.Name != nil && strings.TrimSpace(u.Name.Formatted) != "":
		return u.Name.Formatted
	case u.Name != nil && strings.TrimSpace(u.Name.GivenName+" "+u.Name.FamilyName) != "":
		return strings.TrimSpace(u.Name.GivenName + " " + u.Name.FamilyName)
	case u.DisplayName != "":
		return u.DisplayName
	}
	return u.email()
}

func (s *Server) scimListUsers(w http.ResponseWriter, r *http.Request) error {
	start, count, err := scimPaging(r)
	if err != nil {
		return err
	}
	people, err := s.app.ListAllPeople(r.Context())
	if err != nil {
		return err
	}
	all := make([]scimUser, 0, len(people))
	for i := range people {
		all = append(all, s.scimUserOf(r, &people[i]))
	}
	match, err := scimFilterSort(r, all)
	if err != nil {
		return err
	}
	page := []scimUser{}
	for i := start - 1; i < len(match) && len(page) < count; i++ {
		page = append(page, match[i])
	}
	scimJSON(w, http.StatusOK, scimList(page, len(match), start))
	return nil
}

func (s *Server) scimGetUser(w http.ResponseWriter, r *http.Request) error {
	p, err := s.app.GetPerson(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	scimJSON(w, http.StatusOK, s.scimUserOf(r, p))
	return nil
}

func (s *Server) scimCreateUser(w http.ResponseWriter, r *http.Request) error {
	var u scimUser
	if err := scimDecode(r, &u); err != nil {
		return err
	}
	if strings.TrimSpace(u.UserName) == "" {
		return &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "userName is required"}
	}
	in := app.PersonCreate{Name: u.name(), Email: u.email(), Role: string(app.RoleEmployee)}
	if u.Title != "" {
		in.JobTitle = &u.Title
	}
	p, err := s.app.CreatePerson(r.Context(), in)
	if err != nil {
		return err
	}
	if u.Active != nil && !*u.Active {
		if p, err = s.app.UpdatePerson(r.Context(), p.ID, app.PersonPatch{IsActive: u.Active}); err != nil {
			return err
		}
	}
	w.Header().Set("Location", s.scimBase(r)+"/Users/"+p.ID)
	scimJSON(w, http.StatusCreated, s.scimUserOf(r, p))
	return nil
}

func (s *Server) scimReplaceUser(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	before, err := s.app.GetPerson(r.Context(), id)
	if err != nil {
		return err
	}
	var u scimUser
	if err := scimDecode(r, &u); err != nil {
		return err
	}
	if strings.TrimSpace(u.UserName) == "" {
		return &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: "userName is required"}
	}
	in := app.PersonPatch{IsActive: u.Active}
	if name := u.name(); name != before.Name {
		in.Name = &name
	}
	if email := u.email(); app.NormalizeEmail(email) != before.Email {
		in.Email = &email
	}
	if u.Title != "" {
		in.JobTitle = app.Some(u.Title)
	}
	p, err := s.app.UpdatePerson(r.Context(), id, in)
	if err != nil {
		return err
	}
	scimJSON(w, http.StatusOK, s.scimUserOf(r, p))
	return nil
}

// scimPatch is a PatchOp request (RFC 7644 section 3.5.2).
type scimPatch struct {
	Schemas    []string `json:"schemas"`
	Operations []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	} `json:"Operations"`
}

// scimBool reads a boolean that some clients send as "True"/"False".
func scimBool(raw json.RawMessage) (bool, bool) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if v, err := strconv.ParseBool(strings.ToLower(s)); err == nil {
			return v, true
		}
	}
	return false, false
}

func (s *Server) scimPatchUser(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	before, err := s.app.GetPerson(r.Context(), id)
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
	// The current state, changed by each operation in turn.
	cur := scimUser{UserName: before.Email, Name: &scimName{Formatted: before.Name}}
	active := before.IsActive
	bad := func(i int, msg string) error {
		return &scimError{Status: http.StatusBadRequest, ScimType: "invalidValue", Detail: fmt.Sprintf("Operations[%d]: %s", i, msg)}
	}
	var apply func(i int, path string, raw json.RawMessage) error
	apply = func(i int, path string, raw json.RawMessage) error {
		str := func() (string, error) {
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return "", bad(i, path+" must be a string")
			}
			return v, nil
		}
		var err error
		switch strings.ToLower(path) {
		case "":
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				return bad(i, "a value without path must be an object")
			}
			for k, v := range obj {
				if err := apply(i, k, v); err != nil {
					return err
				}
			}
		case "active":
			b, ok := scimBool(raw)
			if !ok {
				return bad(i, "active must be a boolean")
			}
			active = b
		case "username":
			cur.UserName, err = str()
		case "displayname":
			cur.DisplayName, err = str()
			cur.Name = &scimName{Formatted: cur.DisplayName}
		case "name":
			var n scimName
			if json.Unmarshal(raw, &n) != nil {
				return bad(i, "name must be an object")
			}
			cur.Name = &n
		case "name.formatted":
			cur.Name.Formatted, err = str()
		case "name.givenname", "name.familyname":
			var v string
			if v, err = str(); err == nil {
				given, family, _ := strings.Cut(cur.Name.Formatted, " ")
				if strings.HasSuffix(strings.ToLower(path), "givenname") {
					given = v
				} else {
					family = v
				}
				cur.Name.Formatted = strings.TrimSpace(given + " " + family)
			}
		case "emails", `emails[type eq "work"].value`, "emails.value":
			var list []scimEmail
			if json.Unmarshal(raw, &list) != nil {
				var v string
				if json.Unmarshal(raw, &v) != nil {
					return bad(i, "emails must be a list of e-mails")
				}
				list = []scimEmail{{Value: v, Primary: true}}
			}
			cur.Emails = list
			if e := (&scimUser{Emails: list}).email(); e != "" {
				cur.UserName = e
			}
		case "externalid", "title", "schemas", "id", "meta", "groups":
			// Not stored (externalId, title through PUT) or read-only.
		default:
			return bad(i, "the path "+path+" is not supported")
		}
		return err
	}
	for i, op := range in.Operations {
		switch strings.ToLower(op.Op) {
		case "replace", "add":
			if err := apply(i, op.Path, op.Value); err != nil {
				return err
			}
		default:
			return bad(i, "op must be add or replace (remove is not supported)")
		}
	}
	// Only what changed is sent: an unchanged name or e-mail of a person
	// shared with another organization is no change of their identity.
	patch := app.PersonPatch{IsActive: &active}
	if name := cur.name(); name != before.Name {
		patch.Name = &name
	}
	if email := cur.email(); app.NormalizeEmail(email) != before.Email {
		patch.Email = &email
	}
	p, err := s.app.UpdatePerson(r.Context(), id, patch)
	if err != nil {
		return err
	}
	scimJSON(w, http.StatusOK, s.scimUserOf(r, p))
	return nil
}

// scimDeleteUser deactivates the person: their history stays.
func (s *Server) scimDeleteUser(w http.ResponseWriter, r *http.Request) error {
	off := false
	if _, err := s.app.UpdatePerson(r.Context(), mux.Vars(r)["id"], app.PersonPatch{IsActive: &off}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// --- groups: the roles (members written in scim_groups.go) ---

func (s *Server) scimGroupOf(r *http.Request, role app.Role, people []app.Person) map[string]any {
	members := []scimMember{}
	for _, p := range people {
		if p.Role == role && p.IsActive {
			members = append(members, scimMember{Value: p.ID, Display: p.Name, Ref: s.scimBase(r) + "/Users/" + p.ID})
		}
	}
	return map[string]any{"schemas": []string{scimGroupSchema}, "id": string(role), "displayName": string(role), "members": members,
		"meta": map[string]any{"resourceType": "Group", "location": s.scimBase(r) + "/Groups/" + string(role)}}
}

func (s *Server) scimListGroups(w http.ResponseWriter, r *http.Request) error {
	people, err := s.app.ListAllPeople(r.Context())
	if err != nil {
		return err
	}
	var groups []map[string]any
	for _, role := range app.Roles {
		groups = append(groups, s.scimGroupOf(r, role, people))
	}
	start, count, err := scimPaging(r)
	if err != nil {
		return err
	}
	match, err := scimFilterSort(r, groups)
	if err != nil {
		return err
	}
	page := []map[string]any{}
	for i := start - 1; i < len(match) && len(page) < count; i++ {
		page = append(page, match[i])
	}
	scimJSON(w, http.StatusOK, scimList(page, len(match), start))
	return nil
}

func (s *Server) scimGetGroup(w http.ResponseWriter, r *http.Request) error {
	role, ok := app.ParseRole(mux.Vars(r)["id"])
	if !ok {
		return app.ErrNotFound
	}
	people, err := s.app.ListAllPeople(r.Context())
	if err != nil {
		return err
	}
	scimJSON(w, http.StatusOK, s.scimGroupOf(r, role, people))
	return nil
}
