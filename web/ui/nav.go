package ui

// The sidebar: the sections of the web application grouped by what people
// do. Adding a section is one navItem line in its group below; show says
// who sees the link (the page itself still checks the role). A group whose
// links a role cannot use is not shown at all.

// navItem is one link of the sidebar.
type navItem struct {
	Section string // the view's Section that marks the link current
	Href    string
	Label   string
	show    func(v *view) bool
}

// navGroup is a labelled group of links.
type navGroup struct {
	Label string
	Items []navItem
}

// Who sees a link, in the terms the pages use.
var (
	everyone = func(v *view) bool { return true }
	// staff: not employees and contractors, who see only what is assigned
	// to them and are refused these sections.
	staff      = func(v *view) bool { return !v.P.SeesOnlyAssigned() }
	canManage  = func(v *view) bool { return v.Can("manage") }
	canKeys    = func(v *view) bool { return v.Can("keys") }
	canAudit   = func(v *view) bool { return v.Can("audit") }
	operator   = func(v *view) bool { return v.Operator }
	navDefault = []navGroup{
		{"Overview", []navItem{
			{"dashboard", "/", "Dashboard", everyone},
			{"my-work", "/my-work", "My work", everyone},
			{"assistant", "/assistant", "Assistant", everyone},
		}},
		{"Compliance", []navItem{
			{"frameworks", "/frameworks", "Frameworks", everyone},
			{"controls", "/controls", "Controls", everyone},
			{"evidence", "/evidence", "Evidence library", everyone},
			{"soa", "/soa", "Statement of Applicability", staff},
			{"policies", "/policies", "Policies", everyone},
			{"tasks", "/tasks", "Tasks", everyone},
		}},
		{"Risk", []navItem{
			{"risks", "/risks", "Risks", everyone},
			{"vendors", "/vendors", "Vendors", everyone},
			{"findings", "/findings", "Findings", everyone},
			{"incidents", "/incidents", "Incidents", everyone},
		}},
		{"Trust", []navItem{
			{"trust", "/trust-settings", "Trust portal", staff},
			{"questionnaires", "/questionnaires", "Questionnaires", staff},
			{"kb", "/knowledge-base", "Knowledge base", staff},
			{"csrd", "/csrd", "CSRD", staff},
		}},
		{"Automation", []navItem{
			{"integrations", "/integrations", "Integrations", staff},
			{"cloud-security", "/cloud-security", "Cloud security", staff},
			{"pentests", "/pentests", "Penetration tests", staff},
			{"browser-automations", "/browser-automations", "Browser automations", staff},
		}},
		{"People", []navItem{
			{"people", "/people", "People", everyone},
			{"training", "/training", "Training", everyone},
			{"devices", "/devices", "Devices", everyone},
		}},
		{"Settings", []navItem{
			{"settings", "/settings", "Organization settings", everyone},
			{"context", "/context", "Organization context", staff},
			{"variables", "/variables", "Variables", staff},
			{"api-keys", "/api-keys", "API keys", canKeys},
			{"webhooks", "/webhooks", "Webhooks", canManage},
			{"oauth-apps", "/oauth-apps", "OAuth apps", canKeys},
			{"connected-apps", "/connected-apps", "Connected apps", everyone},
			{"notifications", "/notifications", "Notifications", everyone},
			{"sso", "/settings/sso", "Single sign-on", canAudit},
			{"audit", "/audit-log", "Audit log", canAudit},
		}},
		{"Appliance", []navItem{
			{"operator-mail", "/operator/mail", "Mail settings", operator},
			{"operator-integrations", "/operator/integrations", "Integration providers", operator},
		}},
	}
)

// Nav returns the sidebar as the signed-in person may use it: only the
// links their role may open, and no empty group.
func (v *view) Nav() []navGroup {
	if v.P == nil {
		return nil
	}
	out := make([]navGroup, 0, len(navDefault))
	for _, g := range navDefault {
		items := make([]navItem, 0, len(g.Items))
		for _, it := range g.Items {
			if it.show(v) {
				items = append(items, it)
			}
		}
		if len(items) > 0 {
			out = append(out, navGroup{Label: g.Label, Items: items})
		}
	}
	return out
}
