package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// uiSyncRoleRoutes registers the group-to-role mapping form of a
// directory connection's sync page.
func (s *Server) uiSyncRoleRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	page("POST", "/integrations/{id}/sync/roles", uiManage, s.uiSyncRoles)
}

func init() {
	flashes["sync-roles"] = "Role mapping saved."
}

// syncRoleLines writes a mapping as the form's lines: "group = role".
func syncRoleLines(m *app.SyncRoleMapping) string {
	var b strings.Builder
	for _, g := range m.GroupRoles {
		b.WriteString(g.Group + " = " + string(g.Role) + "\n")
	}
	return b.String()
}

// uiSyncRoles saves the mapping; each line of groupRoles is
// "group = role" (the group may itself contain "=", as a DN does: the last
// one separates the role).
func (s *Server) uiSyncRoles(w http.ResponseWriter, r *http.Request, v *view) error {
	f := r.PostForm
	in := app.SyncRoleMappingInput{DefaultRole: app.Ptr(f.Get("defaultRole")), ApplyToExisting: app.Ptr(f.Get("applyToExisting") == "1")}
	for _, line := range strings.Split(f.Get("groupRoles"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		g := struct {
			Group string `json:"group"`
			Role  string `json:"role"`
		}{Group: line}
		if i := strings.LastIndex(line, "="); i >= 0 {
			g.Group, g.Role = strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		}
		in.GroupRoles = append(in.GroupRoles, g)
	}
	if _, err := s.app.SetSyncRoleMapping(r.Context(), id(r), in); err != nil {
		if !formErrors(err, v, r) {
			return err
		}
		return s.uiSyncConnection(w, r, v)
	}
	return redirect(w, r, "/integrations/"+url.PathEscape(id(r))+"/sync?done=sync-roles")
}
