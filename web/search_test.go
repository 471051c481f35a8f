package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

// searchOrg is an organization seeded with records of every searchable
// type, named as a real register would name them, plus filler.
type searchOrg struct {
	org, admin string
	ids        map[string]string // label -> record id
	employeeID string
	employee   string // the employee's API key (acts as the employee)
}

func (e *testEnv) seedSearch(name string) searchOrg {
	e.t.Helper()
	s := searchOrg{org: e.org(name, app.PlanEnterprise), ids: map[string]string{}}
	s.admin = e.key(s.org, app.RoleAdmin)
	ctx := e.ctx(s.org)
	must := func(id string, err error) string {
		e.t.Helper()
		if err != nil {
			e.t.Fatal(err)
		}
		return id
	}
	s.employeeID = e.person(s.org, "erin@"+strings.ToLower(name)+".test", app.RoleEmployee)
	k, err := e.app.CreateAPIKey(app.WithPrincipal(ctx, &app.Principal{OrgID: s.org, Role: app.RoleOwner, AuthType: app.AuthSystem,
		UserID: s.employeeID}), app.APIKeyCreate{Name: "erin", Role: "employee"})
	if err != nil {
		e.t.Fatal(err)
	}
	s.employee = k.Key
	vendors := []struct{ label, name, desc string }{
		{"aws", "Amazon Web Services", "Cloud hosting, storage and compute in eu-central-1"},
		{"azure", "Microsoft Azure", "Cloud platform for the data warehouse"},
		{"slack", "Slack Technologies", "Team chat and notifications"},
		{"atlassian", "Atlassian", "Jira and Confluence for issue tracking and documentation"},
		{"salesforce", "Salesforce", "CRM for the sales team"},
		{"hetzner", "Hetzner Online GmbH", "Dedicated servers in Germany"},
		{"datadog", "Datadog", "Monitoring and log management"},
		{"okta", "Okta", "Identity provider with single sign-on and MFA"},
		{"stripe", "Stripe Payments Europe", "Payment processing for subscriptions"},
		{"zendesk", "Zendesk", "Customer support tickets"},
		{"github", "GitHub", "Source code hosting and CI"},
		{"cloudflare", "Cloudflare", "CDN, DNS and DDoS protection"},
		{"personio", "Personio GmbH", "HR software: contracts and payroll"},
		{"docusign", "DocuSign", "Electronic signatures of contracts"},
		{"mailchimp", "Mailchimp", "Email marketing newsletters"},
	}
	for _, v := range vendors {
		s.ids[v.label] = must(func() (string, error) {
			x, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(v.name), Description: app.Ptr(v.desc)})
			if err != nil {
				return "", err
			}
			return x.ID, nil
		}())
	}
	for i := range 150 {
		if _, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr(fmt.Sprintf("Supplier %03d Services", i)),
			Description: app.Ptr("Office supplies, cloud storage and consulting")}); err != nil {
			e.t.Fatal(err)
		}
	}
	if _, err := e.app.EnableFramework(ctx, "iso27001-2022"); err != nil {
		e.t.Fatal(err)
	}
	policies := []struct{ label, name, content string }{
		{"infosec", "Information Security Policy", "Management sets the direction for protecting information."},
		{"aup", "Acceptable Use Policy", "Rules for laptops, phones and accounts."},
		{"bcp", "Business Continuity Plan", "How we keep operating during a disruption."},
		{"retention", "Data Retention Policy", "How long records are kept and when they are deleted."},
		{"irp", "Incident Response Plan", "Steps when something goes wrong: detect, contain, recover."},
	}
	for _, p := range policies {
		s.ids[p.label] = must(func() (string, error) {
			x, err := e.app.CreatePolicy(ctx, app.PolicyInput{Name: app.Ptr(p.name), Content: app.Ptr(p.content)})
			if err != nil {
				return "", err
			}
			return x.ID, nil
		}())
	}
	risks := []struct{ label, title, desc string }{
		{"ransomware", "Ransomware attack on file servers", "Encryption of shared drives by malware"},
		{"personnel", "Loss of key personnel", "Knowledge held by one engineer"},
		{"power", "Data centre power outage", "Both feeds fail"},
		{"phishing", "Phishing of employee credentials", "Passwords captured by fake login pages"},
	}
	for _, r := range risks {
		s.ids[r.label] = must(func() (string, error) {
			x, err := e.app.CreateRisk(ctx, app.RiskInput{Title: app.Ptr(r.title), Description: app.Ptr(r.desc), Category: app.Ptr("operations"),
				InherentProbability: app.Ptr("possible"), InherentImpact: app.Ptr("major")})
			if err != nil {
				return "", err
			}
			return x.ID, nil
		}())
	}
	findings := []struct{ label, title string }{
		{"reviews", "Access reviews missing for production"},
		{"backups", "Backups not tested in the last year"},
		{"mfa", "MFA not enforced for administrators"},
	}
	for _, f := range findings {
		s.ids[f.label] = must(func() (string, error) {
			x, err := e.app.CreateFinding(ctx, app.FindingCreate{Title: app.Ptr(f.title), Severity: app.Ptr("high")})
			if err != nil {
				return "", err
			}
			return x.ID, nil
		}())
	}
	kb := []struct{ label, q, a string }{
		{"kb-encrypt", "Do you encrypt data at rest?", "Yes, with AES-256 on every volume."},
		{"kb-soc2", "Do you have a SOC 2 Type II report?", "Yes, renewed every year."},
		{"kb-hosting", "Where is customer data hosted?", "In Frankfurt, Germany."},
	}
	for _, k := range kb {
		s.ids[k.label] = must(func() (string, error) {
			x, err := e.app.CreateKBEntry(ctx, app.KBEntryInput{Question: app.Ptr(k.q), Answer: app.Ptr(k.a)})
			if err != nil {
				return "", err
			}
			return x.ID, nil
		}())
	}
	people := []struct{ label, name, email, title string }{
		{"alice", "Alice Johnson", "alice@" + strings.ToLower(name) + ".test", "Information Security Officer"},
		{"bob", "Bob Müller", "bob@" + strings.ToLower(name) + ".test", "Data Protection Officer"},
	}
	for _, p := range people {
		s.ids[p.label] = must(func() (string, error) {
			x, err := e.app.CreatePerson(ctx, app.PersonCreate{Name: p.name, Email: p.email, Role: "admin", JobTitle: app.Ptr(p.title)})
			if err != nil {
				return "", err
			}
			return x.ID, nil
		}())
	}
	s.ids["questionnaire"] = must(func() (string, error) {
		x, err := e.app.CreateQuestionnaire(ctx, app.QuestionnaireCreate{Name: "Northwind Bank security review",
			Questions: []app.QuestionInput{{Question: "Do you run penetration tests?"}}})
		if err != nil {
			return "", err
		}
		return x.ID, nil
	}())
	fw := e.create("/v1/frameworks", s.admin, map[string]any{"name": "Board oversight"})
	s.ids["board-fw"] = fw["id"].(string)
	req := e.create("/v1/frameworks/"+s.ids["board-fw"]+"/requirements", s.admin,
		map[string]any{"ref": "BO-1", "title": "Quarterly board review of security metrics"})
	s.ids["board"] = req["id"].(string)
	return s
}

// searchHits runs GET /v1/search and returns the hits.
func searchHits(t *testing.T, e *testEnv, key, query string, extra ...string) ([]map[string]any, map[string]any) {
	t.Helper()
	path := "/v1/search?q=" + url.QueryEscape(query)
	for _, x := range extra {
		path += "&" + x
	}
	rec := e.do("GET", path, key, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("search %q: status %d: %s", query, rec.Code, rec.Body.String())
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	var hits []map[string]any
	for _, h := range body["data"].([]any) {
		hits = append(hits, h.(map[string]any))
	}
	return hits, body
}

func hitIDs(hits []map[string]any) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h["id"].(string)
	}
	return out
}

// TestSearchRanking: for each query a person would type, the record they
// mean is among the first three hits.
func TestSearchRanking(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	s := e.seedSearch("Acme")
	controls := map[string]string{}
	for _, name := range []string{"Threat intelligence", "Use of cryptography", "Secure coding", "Data masking"} {
		l, err := e.app.ListControls(e.ctx(s.org), app.ControlFilter{Search: name, Page: app.Page{Page: 1, PerPage: 5}})
		if err != nil || len(l.Items) == 0 {
			t.Fatalf("control %q: %v", name, err)
		}
		controls[name] = l.Items[0].ID
	}
	reqs, err := e.app.ListRequirements(e.ctx(s.org), "iso27001-2022", app.Page{Page: 1, PerPage: 200})
	if err != nil {
		t.Fatal(err)
	}
	requirement := func(ref string) string {
		for _, r := range reqs.Items {
			if r.Ref == ref {
				return r.ID
			}
		}
		t.Fatalf("no requirement %s", ref)
		return ""
	}
	cases := []struct{ query, want string }{
		{"amazon", s.ids["aws"]},
		{"amaz", s.ids["aws"]},
		{"web services", s.ids["aws"]},
		{"azure", s.ids["azure"]},
		{"slack", s.ids["slack"]},
		{"jira", s.ids["atlassian"]},
		{"confluence documentation", s.ids["atlassian"]},
		{"hetzner", s.ids["hetzner"]},
		{"hetz", s.ids["hetzner"]},
		{"dedicated servers", s.ids["hetzner"]},
		{"log management", s.ids["datadog"]},
		{"single sign", s.ids["okta"]},
		{"stripe payments", s.ids["stripe"]},
		{"payment", s.ids["stripe"]},
		{"cdn", s.ids["cloudflare"]},
		{"ddos", s.ids["cloudflare"]},
		{"personio", s.ids["personio"]},
		{"payroll", s.ids["personio"]},
		{"docusign", s.ids["docusign"]},
		{"newsletter", s.ids["mailchimp"]},
		{"information security policy", s.ids["infosec"]},
		{"acceptable use", s.ids["aup"]},
		{"business continuity plan", s.ids["bcp"]},
		{"retention", s.ids["retention"]},
		{"incident response plan", s.ids["irp"]},
		{"ransomware", s.ids["ransomware"]},
		{"key personnel", s.ids["personnel"]},
		{"phishing", s.ids["phishing"]},
		{"power outage", s.ids["power"]},
		{"access reviews", s.ids["reviews"]},
		{"backups tested", s.ids["backups"]},
		{"mfa administrators", s.ids["mfa"]},
		{"encrypt rest", s.ids["kb-encrypt"]},
		{"soc 2 report", s.ids["kb-soc2"]},
		{"customer data hosted", s.ids["kb-hosting"]},
		{"alice", s.ids["alice"]},
		{"muller", s.ids["bob"]},
		{"Müller", s.ids["bob"]},
		{"data protection officer", s.ids["bob"]},
		{"northwind", s.ids["questionnaire"]},
		{"board review", s.ids["board"]},
		{"threat intelligence", controls["Threat intelligence"]},
		{"cryptography", controls["Use of cryptography"]},
		{"secure coding", controls["Secure coding"]},
		{"data masking", controls["Data masking"]},
		{"A.5.7 threat", requirement("A.5.7")},
		{"A.5.7", requirement("A.5.7")},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d ranking cases", len(cases))
	}
	for _, c := range cases {
		hits, _ := searchHits(t, e, s.admin, c.query)
		ids := hitIDs(hits)
		top := ids[:min(3, len(ids))]
		found := false
		for _, id := range top {
			found = found || id == c.want
		}
		if !found {
			var titles []string
			for _, h := range hits[:min(5, len(hits))] {
				titles = append(titles, h["type"].(string)+": "+h["title"].(string))
			}
			t.Errorf("%q: %s not in the top three; got %v", c.query, c.want, titles)
		}
	}
}

// TestSearchAPI: parameters, errors, credentials, paging, the types
// filter and the shape of a hit.
func TestSearchAPI(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	s := e.seedSearch("Acme")
	wantError(t, e.do("GET", "/v1/search?q=amazon", "", nil), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("GET", "/v1/search?q=amazon", "cmp_not_a_key", nil), http.StatusUnauthorized, "unauthorized")
	for _, q := range []string{"", "q=", "q=%20%20", "q=" + strings.Repeat("a", 201)} {
		wantField(t, e.do("GET", "/v1/search?"+q, s.admin, nil), "q")
	}
	wantField(t, e.do("GET", "/v1/search?q=amazon&types=vendor,nope", s.admin, nil), "types")
	wantField(t, e.do("GET", "/v1/search?q=amazon&perPage=0", s.admin, nil), "perPage")
	wantField(t, e.do("GET", "/v1/search?q=amazon&page=x", s.admin, nil), "page")
	wantStatus(t, e.do("GET", "/v1/search?q="+strings.Repeat("a", 200), s.admin, nil), http.StatusOK)

	// An auditor key reads.
	auditor := e.key(s.org, app.RoleAuditor)
	hits, body := searchHits(t, e, auditor, "amazon")
	if len(hits) != 1 || hits[0]["id"] != s.ids["aws"] {
		t.Fatalf("auditor search: %v", body)
	}
	h := hits[0]
	if h["type"] != "vendor" || h["title"] != "Amazon Web Services" || h["apiPath"] != "/v1/vendors/"+s.ids["aws"] ||
		h["webPath"] != "/vendors/"+s.ids["aws"] || h["parentId"] != nil {
		t.Fatalf("hit %v", h)
	}
	if hl := h["highlights"].(map[string]any)["title"].([]any); len(hl) != 1 || fmt.Sprint(hl[0]) != "[0 6]" {
		t.Fatalf("title highlights %v", hl)
	}
	if body["query"] != "amazon" || fmt.Sprint(body["terms"]) != "[amazon]" {
		t.Fatalf("query %v terms %v", body["query"], body["terms"])
	}
	counts := body["counts"].(map[string]any)
	if len(counts) != len(app.SearchTypes) || counts["vendor"] != float64(1) {
		t.Fatalf("counts %v", counts)
	}
	// Every hit of a broad query opens through its apiPath.
	hits, _ = searchHits(t, e, auditor, "security", "perPage=200")
	types := map[string]bool{}
	for _, h := range hits {
		types[h["type"].(string)] = true
		wantStatus(t, e.do("GET", h["apiPath"].(string), auditor, nil), http.StatusOK)
	}
	for _, want := range []string{"control", "requirement", "policy", "person", "questionnaire"} {
		if !types[want] {
			t.Errorf("no %s among the hits of \"security\": %v", want, types)
		}
	}
	// The types filter, comma separated or repeated.
	for _, q := range []string{"types=policy,kb", "types=policy&types=kb"} {
		hits, body = searchHits(t, e, s.admin, "security", q)
		for _, h := range hits {
			if h["type"] != "policy" && h["type"] != "kb" {
				t.Fatalf("%s: a %s hit", q, h["type"])
			}
		}
		if c := body["counts"].(map[string]any); len(c) != 2 {
			t.Fatalf("%s: counts %v", q, c)
		}
	}
	// Paging: 150 suppliers in three pages, none twice.
	seen := map[string]bool{}
	for page := 1; page <= 3; page++ {
		hits, body = searchHits(t, e, s.admin, "supplier", "types=vendor", "perPage=50", fmt.Sprintf("page=%d", page))
		meta := body["meta"].(map[string]any)
		if len(hits) != 50 || meta["total"] != float64(150) || meta["totalPages"] != float64(3) {
			t.Fatalf("page %d: %d hits, meta %v", page, len(hits), meta)
		}
		for _, id := range hitIDs(hits) {
			if seen[id] {
				t.Fatalf("%s on two pages", id)
			}
			seen[id] = true
		}
	}
	hits, body = searchHits(t, e, s.admin, "supplier", "types=vendor", "perPage=50", "page=4")
	if len(hits) != 0 || body["meta"].(map[string]any)["total"] != float64(150) {
		t.Fatalf("past the end: %d hits", len(hits))
	}
}

// TestSearchSpecialInput: FTS5 syntax, quotes, control characters and odd
// Unicode are plain text: never a server error, and the words still match.
func TestSearchSpecialInput(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	s := e.seedSearch("Acme")
	inputs := []string{`AND`, `OR`, `NOT`, `amazon AND`, `NOT amazon`, `"`, `""`, `"amazon`, `amazon"`, `*`, `amazon*`, `*amazon`,
		`-`, `amazon -web`, `-amazon`, `NEAR(amazon web)`, `NEAR/2`, `title:amazon`, `body : amazon`, `{title}:amazon`, `^amazon`,
		`(`, `)`, `(amazon`, `amazon)`, `a OR b`, `+amazon`, `amazon:`, `:`, `'; DROP TABLE vendors; --`, `%`, `_`, `\`, `\x00`,
		"ama\x00zon", "\xff\xfe", "\uE000amazon\uE001", `日本語`, `e` + "\u0301", `😀 amazon`, `amazon ` + strings.Repeat("x", 190),
		strings.Repeat(`"`, 200), strings.Repeat("a ", 100), `AND OR NOT NEAR`, `col1 : "x" *`, `[amazon]`, `amazon.`, `amazon..web`,
		`0x41`, `1e9`, `-1`, `NULL`}
	for _, in := range inputs {
		rec := e.do("GET", "/v1/search?q="+url.QueryEscape(in), s.admin, nil)
		if rec.Code >= 500 {
			t.Errorf("%q: status %d: %s", in, rec.Code, rec.Body.String())
		}
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
			t.Errorf("%q: status %d", in, rec.Code)
		}
	}
	for _, in := range []string{`"amazon`, `amazon*`, `(amazon`, `^amazon`, `-amazon`, `{amazon}`, `amazon"`, `"amazon" *`} {
		hits, _ := searchHits(t, e, s.admin, in, "types=vendor")
		if ids := hitIDs(hits); len(ids) != 1 || ids[0] != s.ids["aws"] {
			t.Errorf("%q: %v, want the Amazon vendor alone", in, ids)
		}
	}
	// Syntax words are words: every term must match, and no record says
	// "title" or "NOT".
	for _, in := range []string{`title:amazon`, `NOT amazon`, `amazon OR azure`} {
		if hits, _ := searchHits(t, e, s.admin, in, "types=vendor"); len(hits) != 0 {
			t.Errorf("%q: %v, want nothing", in, hitIDs(hits))
		}
	}
	// Nothing searchable: an empty result, not an error.
	hits, body := searchHits(t, e, s.admin, `"*-:()`)
	if len(hits) != 0 || fmt.Sprint(body["terms"]) != "[]" {
		t.Fatalf("punctuation alone: %v", body)
	}
}

// TestSearchPermissions: an employee finds only what they can open; no
// organization ever sees another's records; the built-in requirements of
// frameworks an organization has not enabled are not searched.
func TestSearchPermissions(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	s := e.seedSearch("Acme")
	g := e.seedSearch("Globex")
	ctx := e.ctx(s.org)
	emp := s.employeeID
	if _, err := e.app.UpdateVendor(ctx, s.ids["slack"], app.VendorInput{AssigneeID: app.Some(emp)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UpdateRisk(ctx, s.ids["phishing"], app.RiskInput{OwnerID: app.Some(emp)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UpdateKBEntry(ctx, s.ids["kb-soc2"], app.KBEntryInput{OwnerID: app.Some(emp)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.PublishPolicy(ctx, s.ids["aup"], app.PublishInput{Changelog: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UpdatePolicy(ctx, s.ids["retention"], app.PolicyInput{AssigneeID: app.Some(emp)}); err != nil {
		t.Fatal(err)
	}
	crypto, err := e.app.ListControls(ctx, app.ControlFilter{Search: "Use of cryptography", Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil || len(crypto.Items) != 1 {
		t.Fatalf("control: %v", err)
	}
	if _, err := e.app.UpdateControl(ctx, crypto.Items[0].ID, app.ControlInput{OwnerID: app.Some(emp)}); err != nil {
		t.Fatal(err)
	}
	task, err := e.app.CreateTask(ctx, app.TaskInput{Title: app.Ptr("Rotate keys"), ControlID: app.Some(crypto.Items[0].ID),
		AssigneeID: app.Some(emp)})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := e.app.CreateFinding(ctx, app.FindingCreate{Content: app.Ptr("Key rotation overdue on the backup server"),
		TaskID: app.Ptr(task.ID), Severity: app.Ptr("medium")})
	if err != nil {
		t.Fatal(err)
	}

	visible := map[string]bool{s.ids["slack"]: true, s.ids["phishing"]: true, s.ids["kb-soc2"]: true, s.ids["aup"]: true,
		s.ids["retention"]: true, crypto.Items[0].ID: true, mine.ID: true, emp: true}
	queries := []string{"slack", "amazon", "phishing", "ransomware", "soc", "encrypt", "acceptable", "information security",
		"retention", "cryptography", "threat intelligence", "rotation", "access reviews", "alice", "erin", "northwind", "board",
		"data", "e", "s"}
	for _, q := range queries {
		hits, body := searchHits(t, e, s.employee, q, "perPage=200")
		if _, ok := body["counts"].(map[string]any)["questionnaire"]; ok {
			t.Fatalf("%q: the employee is offered questionnaires", q)
		}
		for _, h := range hits {
			id := h["id"].(string)
			if h["type"] != "requirement" && !visible[id] {
				t.Errorf("%q: the employee finds %s %s (%s)", q, h["type"], id, h["title"])
			}
			// The record opens for the employee through the API.
			if rec := e.do("GET", h["apiPath"].(string), s.employee, nil); rec.Code != http.StatusOK {
				t.Errorf("%q: hit %s answers %d for the employee", q, h["apiPath"], rec.Code)
			}
		}
	}
	for q, want := range map[string]string{"slack": s.ids["slack"], "phishing": s.ids["phishing"], "soc 2": s.ids["kb-soc2"],
		"acceptable": s.ids["aup"], "retention": s.ids["retention"], "cryptography": crypto.Items[0].ID, "rotation": mine.ID, "erin": emp} {
		hits, _ := searchHits(t, e, s.employee, q)
		found := false
		for _, id := range hitIDs(hits) {
			found = found || id == want
		}
		if !found {
			t.Errorf("%q: the employee does not find %s", q, want)
		}
	}
	if hits, _ := searchHits(t, e, s.employee, "threat intelligence", "types=requirement"); len(hits) == 0 {
		t.Error("the employee does not find the requirements of an enabled framework")
	}
	wantError(t, e.do("GET", "/v1/search?q=northwind&types=questionnaire", s.employee, nil), http.StatusForbidden, "forbidden")
	// A key acting for nobody, of the employee role: nothing assigned.
	if hits, _ := searchHits(t, e, e.key(s.org, app.RoleEmployee), "slack"); len(hits) != 0 {
		t.Fatalf("an employee key of nobody finds %v", hitIDs(hits))
	}

	// Organizations: the same names, never the other's ids.
	mineIDs := map[string]bool{}
	for _, id := range s.ids {
		mineIDs[id] = true
	}
	for _, q := range []string{"amazon", "security", "supplier", "alice", "board review", "northwind", "encrypt"} {
		for _, tc := range []struct {
			key   string
			other map[string]string
		}{{s.admin, g.ids}, {g.admin, s.ids}} {
			hits, _ := searchHits(t, e, tc.key, q, "perPage=200")
			if len(hits) == 0 {
				t.Errorf("%q: no hits", q)
			}
			for _, h := range hits {
				for _, id := range tc.other {
					if h["id"] == id {
						t.Errorf("%q: another organization's %s %s", q, h["type"], id)
					}
				}
			}
		}
	}
	// An organization that has not enabled ISO 27001 does not search it.
	lone := e.org("Initech", app.PlanEnterprise)
	if hits, _ := searchHits(t, e, e.key(lone, app.RoleAdmin), "threat intelligence"); len(hits) != 0 {
		t.Fatalf("the catalog of a framework not enabled is searched: %v", hitIDs(hits))
	}
}

// TestSearchIndexCurrent: the index follows every change: create, update,
// archive and restore, delete, publish, rename.
func TestSearchIndexCurrent(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	s := e.seedSearch("Acme")
	ctx := e.ctx(s.org)
	find := func(q, typ string) []string {
		t.Helper()
		hits, _ := searchHits(t, e, s.admin, q, "types="+typ)
		return hitIDs(hits)
	}
	want := func(q, typ string, ids ...string) {
		t.Helper()
		if got := find(q, typ); fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("%q in %s: %v, want %v", q, typ, got, ids)
		}
	}
	// Vendors: create, rename, change the description, archive, restore.
	v, err := e.app.CreateVendor(ctx, app.VendorInput{Name: app.Ptr("Quokka Analytics"), Description: app.Ptr("Product analytics"),
		SubProcessors: app.Some([]app.SubProcessor{{Name: "Numbat Hosting", Country: "AU", Purpose: "Hosting"}})})
	if err != nil {
		t.Fatal(err)
	}
	want("quokka", "vendor", v.ID)
	want("numbat", "vendor", v.ID)
	if _, err := e.app.UpdateVendor(ctx, v.ID, app.VendorInput{Name: app.Ptr("Wombat Analytics"), Description: app.Ptr("Funnel reports")}); err != nil {
		t.Fatal(err)
	}
	want("quokka", "vendor")
	want("wombat", "vendor", v.ID)
	want("funnel", "vendor", v.ID)
	want("product analytics", "vendor")
	if _, err := e.app.SetVendorArchived(ctx, v.ID, true); err != nil {
		t.Fatal(err)
	}
	want("wombat", "vendor")
	if _, err := e.app.SetVendorArchived(ctx, v.ID, false); err != nil {
		t.Fatal(err)
	}
	want("wombat", "vendor", v.ID)
	wantStatus(t, e.do("DELETE", "/v1/vendors/"+v.ID, s.admin, nil), http.StatusNoContent)
	want("wombat", "vendor")

	// Controls: rename.
	c, err := e.app.ListControls(ctx, app.ControlFilter{Search: "Threat intelligence", Page: app.Page{Page: 1, PerPage: 1}})
	if err != nil || len(c.Items) != 1 {
		t.Fatal(err)
	}
	if _, err := e.app.UpdateControl(ctx, c.Items[0].ID, app.ControlInput{Name: app.Ptr("Threat feeds"), Description: app.Ptr("Vendor bulletins")}); err != nil {
		t.Fatal(err)
	}
	want("threat feeds", "control", c.Items[0].ID)
	want("bulletins", "control", c.Items[0].ID)
	want("threat intelligence", "control")

	// Risks: rename, archive, restore.
	if _, err := e.app.UpdateRisk(ctx, s.ids["ransomware"], app.RiskInput{Title: app.Ptr("Extortion malware")}); err != nil {
		t.Fatal(err)
	}
	want("extortion", "risk", s.ids["ransomware"])
	want("ransomware attack", "risk")
	if _, err := e.app.SetRiskArchived(ctx, s.ids["ransomware"], true); err != nil {
		t.Fatal(err)
	}
	want("extortion", "risk")
	if _, err := e.app.SetRiskArchived(ctx, s.ids["ransomware"], false); err != nil {
		t.Fatal(err)
	}
	want("extortion", "risk", s.ids["ransomware"])

	// Policies: a published policy is found by its published text, not a
	// later draft; archive; delete a draft.
	if _, err := e.app.PublishPolicy(ctx, s.ids["aup"], app.PublishInput{Changelog: "v1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.UpdatePolicy(ctx, s.ids["aup"], app.PolicyInput{Content: app.Ptr("Draft: tablets too.")}); err != nil {
		t.Fatal(err)
	}
	want("laptops", "policy", s.ids["aup"])
	want("tablets", "policy")
	if _, err := e.app.PublishPolicy(ctx, s.ids["aup"], app.PublishInput{Changelog: "v2"}); err != nil {
		t.Fatal(err)
	}
	want("tablets", "policy", s.ids["aup"])
	want("laptops", "policy")
	if _, err := e.app.UpdatePolicy(ctx, s.ids["aup"], app.PolicyInput{IsArchived: app.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	want("tablets", "policy")
	if err := e.app.DeletePolicy(ctx, s.ids["retention"]); err != nil {
		t.Fatal(err)
	}
	want("retention", "policy")

	// Knowledge base: edit and delete.
	if _, err := e.app.UpdateKBEntry(ctx, s.ids["kb-hosting"], app.KBEntryInput{Answer: app.Ptr("In Amsterdam."), Tags: app.Some([]string{"residency"})}); err != nil {
		t.Fatal(err)
	}
	want("amsterdam", "kb", s.ids["kb-hosting"])
	want("residency", "kb", s.ids["kb-hosting"])
	want("frankfurt", "kb")
	if err := e.app.DeleteKBEntry(ctx, s.ids["kb-hosting"]); err != nil {
		t.Fatal(err)
	}
	want("amsterdam", "kb")

	// People: rename and a new job title.
	if _, err := e.app.UpdatePerson(ctx, s.ids["alice"], app.PersonPatch{Name: app.Ptr("Alicia Jansen"), JobTitle: app.Some("CISO")}); err != nil {
		t.Fatal(err)
	}
	want("alicia", "person", s.ids["alice"])
	want("ciso", "person", s.ids["alice"])
	want("johnson", "person")

	// Questionnaires and findings: delete, and new ones.
	if err := e.app.DeleteQuestionnaire(ctx, s.ids["questionnaire"]); err != nil {
		t.Fatal(err)
	}
	want("northwind", "questionnaire")
	f, err := e.app.CreateFinding(ctx, app.FindingCreate{Title: app.Ptr("Firewall rules undocumented"), Severity: app.Ptr("low")})
	if err != nil {
		t.Fatal(err)
	}
	want("firewall", "finding", f.ID)
	req := e.create("/v1/frameworks/"+s.ids["board-fw"]+"/requirements", s.admin, map[string]any{"ref": "BO-2", "title": "Annual penetration test"})
	want("penetration", "requirement", req["id"].(string))
}
