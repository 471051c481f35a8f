package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// The assistant's read tools: plain functions over the same services the
// REST API and the MCP tools call, so every tool sees exactly what the
// person asking may read (employees and contractors their assigned records,
// everyone their own organization only). The offline intents call them
// directly; a configured model calls them by name with JSON arguments.
// None of them writes.

// assistantTool is one read tool.
type assistantTool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters map[string]any
	Run        func(a *App, ctx context.Context, args json.RawMessage) (*toolResult, error)
}

// toolResult is what a tool found: Lines summarize it for a person, Data
// is its JSON form for a model, Sources the records it came from.
type toolResult struct {
	Lines   []string
	Data    any
	Total   int
	Sources []AssistantSource
}

// assistantToolCall is a tool call as audited.
type assistantToolCall struct {
	Name    string
	Args    map[string]any
	Outcome string
}

// toolItems is the most records one tool call returns.
const toolItems = 25

// toolScan is the most records a tool reads to filter (controls without
// evidence, overdue corrective actions).
const toolScan = 2000

func obj(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func str(desc string, enum ...string) map[string]any {
	m := map[string]any{"type": "string", "description": desc}
	if len(enum) > 0 {
		m["enum"] = enum
	}
	return m
}

// assistantTools lists the tools in the order a model is told about them.
var assistantTools = []assistantTool{
	{Name: "compliance_status", Description: "Score (0-100) and control counts of every enabled framework.",
		Parameters: obj(map[string]any{}), Run: toolComplianceStatus},
	{Name: "list_controls", Description: "The organization's controls, filtered by framework (slug or id), status, or having no evidence.",
		Parameters: obj(map[string]any{"framework": str("framework slug or id, e.g. iso27001"),
			"status":          str("control status", ControlStatuses...),
			"withoutEvidence": map[string]any{"type": "boolean", "description": "only controls with no evidence"}}),
		Run: toolListControls},
	{Name: "list_expiring_evidence", Description: "Evidence that expires within the given days (default 30), soonest first.",
		Parameters: obj(map[string]any{"days": map[string]any{"type": "integer", "minimum": 1, "maximum": 365}}), Run: toolExpiringEvidence},
	{Name: "list_findings", Description: "Findings, filtered by status and severity (open and in-review ones when no status is given).",
		Parameters: obj(map[string]any{"status": str("finding status", FindingStatuses...), "severity": str("severity", "critical", "high", "medium", "low", "informational")}),
		Run:        toolListFindings},
	{Name: "list_overdue_tasks", Description: "Tasks past their due date that are not done.", Parameters: obj(map[string]any{}), Run: toolOverdueTasks},
	{Name: "list_overdue_corrective_actions", Description: "Corrective actions of findings that are overdue or past their due date and not resolved.",
		Parameters: obj(map[string]any{}), Run: toolOverdueActions},
	{Name: "list_vendors", Description: "Vendors, filtered by country (ISO code), outside the EU/EEA, processing personal data, criticality or text.",
		Parameters: obj(map[string]any{"country": str("ISO 3166-1 alpha-2 code"),
			"outsideEEA":            map[string]any{"type": "boolean", "description": "only vendors whose country is outside the EU/EEA"},
			"processesPersonalData": map[string]any{"type": "boolean"},
			"criticality":           str("criticality", Criticalities...), "q": str("text in the name")}),
		Run: toolListVendors},
	{Name: "list_risks", Description: "Open risks, filtered by band (by score: low 1-4, medium 5-9, high 10-14, critical 15-25), highest first.",
		Parameters: obj(map[string]any{"band": str("risk band", RiskBands...)}), Run: toolListRisks},
	{Name: "policy_acknowledgements", Description: "Acknowledgement status of published policies: required, acknowledged and pending counts; one policy by id or name, or all.",
		Parameters: obj(map[string]any{"policy": str("policy id (pol_...) or text in its name")}), Run: toolPolicyAcks},
	{Name: "search_records", Description: "Full-text search over knowledge-base answers, policy text, controls, requirements, vendors, risks and findings; returns the best passages.",
		Parameters: obj(map[string]any{"query": str("words to search for")}), Run: toolSearchRecords},
}

// assistantToolByName finds a tool.
func assistantToolByName(name string) *assistantTool {
	for i := range assistantTools {
		if assistantTools[i].Name == name {
			return &assistantTools[i]
		}
	}
	return nil
}

// decodeArgs reads a tool's arguments strictly: unknown fields and wrong
// types are errors the model is told about.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Invalid("arguments", CodeInvalid, nil, "the tool's arguments are not valid: "+err.Error())
	}
	return nil
}

// sourceLink is where a record opens in the web application.
func sourceLink(typ, id, parent, title string) string {
	e := url.PathEscape(id)
	switch typ {
	case SearchVendor:
		return "/vendors/" + e
	case SearchControl:
		return "/controls/" + e
	case SearchRequirement:
		return "/frameworks/" + url.PathEscape(parent) + "/requirements/" + e
	case SearchPolicy:
		return "/policies/" + e
	case SearchRisk:
		return "/risks/" + e
	case SearchFinding:
		return "/findings/" + e
	case SearchPerson:
		return "/people/" + e
	case SearchKB:
		return "/knowledge-base?q=" + url.QueryEscape(title)
	case SearchQuestionnaire:
		return "/questionnaires/" + e
	case "framework":
		return "/frameworks/" + e
	case "evidence":
		return "/controls/" + url.PathEscape(parent)
	case "task":
		return "/tasks"
	case "corrective_action":
		return "/findings/" + url.PathEscape(parent)
	}
	return ""
}

func src(typ, id, parent, title string) AssistantSource {
	return AssistantSource{Type: typ, ID: id, Title: title, Link: sourceLink(typ, id, parent, title)}
}

func toolComplianceStatus(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct{}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	on := true
	l, err := a.ListFrameworks(ctx, &on, Page{Page: 1, PerPage: MaxPerPage})
	if err != nil {
		return nil, err
	}
	type fw struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Score    int    `json:"score"`
		Controls int    `json:"controls"`
		Met      int    `json:"requirementsMet"`
		Total    int    `json:"requirementsTotal"`
	}
	res := &toolResult{Total: l.Total}
	var data []fw
	for _, f := range l.Items {
		score, c, err := a.FrameworkScore(ctx, f.ID)
		if err != nil {
			return nil, err
		}
		d := fw{ID: f.ID, Name: f.Name, Score: score}
		if c != nil {
			d.Controls, d.Met, d.Total = c.ControlTotal, c.Requirements.Met, c.Requirements.Total
		}
		data = append(data, d)
		res.Lines = append(res.Lines, fmt.Sprintf("%s: score %d/100 (%d of %d requirements met, %d controls)", f.Name, score, d.Met, d.Total, d.Controls))
		res.Sources = append(res.Sources, src("framework", f.ID, "", f.Name))
	}
	res.Data = data
	return res, nil
}

type controlsArgs struct {
	Framework       string `json:"framework"`
	Status          string `json:"status"`
	WithoutEvidence bool   `json:"withoutEvidence"`
}

func toolListControls(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in controlsArgs
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	type ctl struct {
		ID, Code, Name, Status string
		Evidence               int `json:"evidenceCount"`
	}
	res := &toolResult{}
	var data []ctl
	for page := 1; (page-1)*MaxPerPage < toolScan; page++ {
		l, err := a.ListControls(ctx, ControlFilter{FrameworkID: in.Framework, Status: in.Status, Page: Page{Page: page, PerPage: MaxPerPage}})
		if err != nil {
			return nil, err
		}
		for _, c := range l.Items {
			if in.WithoutEvidence && (c.EvidenceCount > 0 || c.Status == ControlNotApplicable) {
				continue
			}
			res.Total++
			if len(data) < toolItems {
				data = append(data, ctl{ID: c.ID, Code: c.Code, Name: c.Name, Status: c.Status, Evidence: c.EvidenceCount})
				res.Lines = append(res.Lines, fmt.Sprintf("%s %s (%s, %d evidence)", c.Code, c.Name, strings.ReplaceAll(c.Status, "_", " "), c.EvidenceCount))
				res.Sources = append(res.Sources, src(SearchControl, c.ID, "", strings.TrimSpace(c.Code+" "+c.Name)))
			}
		}
		if page*MaxPerPage >= l.Total {
			break
		}
	}
	res.Data = data
	return res, nil
}

func toolExpiringEvidence(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct {
		Days int `json:"days"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	if in.Days == 0 {
		in.Days = 30
	}
	if in.Days < 1 || in.Days > 365 {
		return nil, Invalid("days", CodeInvalid, in.Days, "days must be between 1 and 365")
	}
	l, err := a.ExpiringEvidence(ctx, time.Duration(in.Days)*24*time.Hour, Page{Page: 1, PerPage: toolItems})
	if err != nil {
		return nil, err
	}
	res := &toolResult{Total: l.Total, Data: l.Items}
	for _, e := range l.Items {
		exp := ""
		if e.ExpiresAt != nil {
			exp = e.ExpiresAt.Format("2006-01-02")
		}
		res.Lines = append(res.Lines, fmt.Sprintf("%s (control %s) expires %s", e.Filename, e.ControlID, exp))
		res.Sources = append(res.Sources, src("evidence", e.ID, e.ControlID, e.Filename))
	}
	return res, nil
}

func findingTitle(f Finding) string {
	if f.Title != nil && *f.Title != "" {
		return *f.Title
	}
	return truncate(f.Content, 80)
}

func toolListFindings(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct {
		Status   string `json:"status"`
		Severity string `json:"severity"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	statuses := []string{in.Status}
	if in.Status == "" {
		statuses = []string{FindingOpen, FindingInReview}
	}
	res := &toolResult{}
	var data []Finding
	for _, st := range statuses {
		l, err := a.ListFindings(ctx, FindingFilter{Status: st, Severity: in.Severity, Page: Page{Page: 1, PerPage: toolItems}})
		if err != nil {
			return nil, err
		}
		res.Total += l.Total
		for _, f := range l.Items {
			if len(data) >= toolItems {
				break
			}
			data = append(data, f)
			res.Lines = append(res.Lines, fmt.Sprintf("%s (%s, %s)", findingTitle(f), f.Severity, strings.ReplaceAll(f.Status, "_", " ")))
			res.Sources = append(res.Sources, src(SearchFinding, f.ID, "", findingTitle(f)))
		}
	}
	res.Data = data
	return res, nil
}

func toolOverdueTasks(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct{}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	yesterday := a.Now().AddDate(0, 0, -1).Format("2006-01-02")
	res := &toolResult{}
	var data []Task
	for _, st := range []string{TaskTodo, TaskInProgress, TaskInReview, TaskFailed} {
		l, err := a.ListTasks(ctx, TaskFilter{Status: st, DueTo: yesterday, Page: Page{Page: 1, PerPage: toolItems}})
		if err != nil {
			return nil, err
		}
		res.Total += l.Total
		for _, t := range l.Items {
			if len(data) >= toolItems {
				break
			}
			data = append(data, t)
			due := ""
			if t.DueDate != nil {
				due = *t.DueDate
			}
			res.Lines = append(res.Lines, fmt.Sprintf("%s (due %s, %s)", t.Title, due, strings.ReplaceAll(t.Status, "_", " ")))
			res.Sources = append(res.Sources, src("task", t.ID, "", t.Title))
		}
	}
	res.Data = data
	return res, nil
}

func toolOverdueActions(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct{}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	today := a.Now().Format("2006-01-02")
	res := &toolResult{}
	var data []CorrectiveAction
	scanned := 0
	for _, st := range []string{FindingOpen, FindingInReview, FindingResolved} {
		for page := 1; scanned < toolScan; page++ {
			l, err := a.ListFindings(ctx, FindingFilter{Status: st, Page: Page{Page: page, PerPage: MaxPerPage}})
			if err != nil {
				return nil, err
			}
			for _, f := range l.Items {
				scanned++
				acts, err := a.ListCorrectiveActions(ctx, f.ID, Page{Page: 1, PerPage: MaxPerPage})
				if err != nil {
					return nil, err
				}
				for _, c := range acts.Items {
					if c.Status == ActionResolved || (c.Status != ActionOverdue && (c.DueDate == nil || *c.DueDate >= today)) {
						continue
					}
					res.Total++
					if len(data) < toolItems {
						data = append(data, c)
						due := ""
						if c.DueDate != nil {
							due = *c.DueDate
						}
						res.Lines = append(res.Lines, fmt.Sprintf("%s (due %s, %s priority, finding %s)", c.Title, due, c.Priority, findingTitle(f)))
						res.Sources = append(res.Sources, src("corrective_action", c.ID, f.ID, c.Title))
					}
				}
			}
			if page*MaxPerPage >= l.Total {
				break
			}
		}
	}
	res.Data = data
	return res, nil
}

type vendorArgs struct {
	Country               string `json:"country"`
	OutsideEEA            bool   `json:"outsideEEA"`
	ProcessesPersonalData *bool  `json:"processesPersonalData"`
	Criticality           string `json:"criticality"`
	Search                string `json:"q"`
}

func toolListVendors(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in vendorArgs
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	type vnd struct {
		ID                    string  `json:"id"`
		Name                  string  `json:"name"`
		Country               *string `json:"country"`
		Criticality           string  `json:"criticality"`
		ProcessesPersonalData bool    `json:"processesPersonalData"`
	}
	res := &toolResult{}
	var data []vnd
	for page := 1; (page-1)*MaxPerPage < toolScan; page++ {
		l, err := a.ListVendors(ctx, VendorFilter{Country: strings.ToUpper(in.Country), ProcessesPersonalData: in.ProcessesPersonalData,
			Criticality: in.Criticality, Search: in.Search, Sort: "name", Page: Page{Page: page, PerPage: MaxPerPage}})
		if err != nil {
			return nil, err
		}
		for _, v := range l.Items {
			if in.OutsideEEA && (v.Country == nil || *v.Country == "" || InEEA(*v.Country)) {
				continue
			}
			res.Total++
			if len(data) < toolItems {
				data = append(data, vnd{ID: v.ID, Name: v.Name, Country: v.Country, Criticality: v.Criticality, ProcessesPersonalData: v.ProcessesPersonalData})
				country := "country not recorded"
				if v.Country != nil && *v.Country != "" {
					country = *v.Country
				}
				pd := "no personal data"
				if v.ProcessesPersonalData {
					pd = "processes personal data"
				}
				res.Lines = append(res.Lines, fmt.Sprintf("%s (%s, %s, %s)", v.Name, country, v.Criticality, pd))
				res.Sources = append(res.Sources, src(SearchVendor, v.ID, "", v.Name))
			}
		}
		if page*MaxPerPage >= l.Total {
			break
		}
	}
	res.Data = data
	return res, nil
}

func toolListRisks(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct {
		Band string `json:"band"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	l, err := a.ListRisks(ctx, RiskFilter{Band: in.Band, Page: Page{Page: 1, PerPage: MaxPerPage}})
	if err != nil {
		return nil, err
	}
	items := l.Items
	sort.SliceStable(items, func(i, j int) bool { return items[i].Score > items[j].Score })
	if len(items) > toolItems {
		items = items[:toolItems]
	}
	res := &toolResult{Total: l.Total}
	type rsk struct {
		ID    string `json:"id"`
		Title string `json:"title"`
		Score int    `json:"score"`
		Band  string `json:"band"`
	}
	var data []rsk
	for _, r := range items {
		data = append(data, rsk{ID: r.ID, Title: r.Title, Score: r.Score, Band: r.Band})
		res.Lines = append(res.Lines, fmt.Sprintf("%s (score %d, %s)", r.Title, r.Score, r.Band))
		res.Sources = append(res.Sources, src(SearchRisk, r.ID, "", r.Title))
	}
	res.Data = data
	return res, nil
}

func toolPolicyAcks(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct {
		Policy string `json:"policy"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	f := PolicyFilter{Status: PolicyPublished, ExcludeContent: true, Page: Page{Page: 1, PerPage: MaxPerPage}}
	if in.Policy != "" && !strings.HasPrefix(in.Policy, PrefixPolicy+"_") {
		f.Search = in.Policy
	}
	l, err := a.ListPolicies(ctx, f)
	if err != nil {
		return nil, err
	}
	res := &toolResult{}
	var data []PolicyAckSummary
	for _, pol := range l.Items {
		if strings.HasPrefix(in.Policy, PrefixPolicy+"_") && pol.ID != in.Policy {
			continue
		}
		rep, err := a.PolicyAcknowledgements(ctx, pol.ID, PolicyAckFilter{Page: Page{Page: 1, PerPage: 1}})
		if err != nil {
			return nil, err
		}
		res.Total++
		if len(data) < toolItems {
			data = append(data, rep.Summary)
			res.Lines = append(res.Lines, fmt.Sprintf("%s (version %d): %d of %d acknowledged, %d pending", pol.Name, rep.Summary.Version,
				rep.Summary.Acknowledged, rep.Summary.Required, rep.Summary.Pending))
			res.Sources = append(res.Sources, src(SearchPolicy, pol.ID, "", pol.Name))
		}
	}
	res.Data = data
	return res, nil
}

func toolSearchRecords(a *App, ctx context.Context, raw json.RawMessage) (*toolResult, error) {
	var in struct {
		Query string `json:"query"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, Invalid("query", CodeRequired, nil, "query is required")
	}
	passages, err := a.retrieve(ctx, in.Query, 5)
	if err != nil {
		return nil, err
	}
	res := &toolResult{Total: len(passages)}
	type passage struct {
		Type, ID, Title, Text string
	}
	var data []passage
	for _, p := range passages {
		data = append(data, passage{Type: p.Type, ID: p.ID, Title: p.Title, Text: p.Snippet})
		res.Lines = append(res.Lines, p.Title+": "+p.Snippet)
		res.Sources = append(res.Sources, p)
	}
	res.Data = data
	return res, nil
}
