package app

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// AutomationTemplateParam is one value a template asks for.
type AutomationTemplateParam struct {
	Name        string `json:"name"`
	Label       string `json:"label"`
	Description string `json:"description"`
	// Type is url, hostport, text or int.
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Default  string `json:"default"`
	// Host: the value's host is added to the automation's hosts.
	Host bool `json:"host"`
}

// AutomationTemplate is a script users start an automation from.
type AutomationTemplate struct {
	ID          string                    `json:"id"`
	Name        string                    `json:"name"`
	Description string                    `json:"description"`
	Parameters  []AutomationTemplateParam `json:"parameters"`
	Script      string                    `json:"script"`
	Criteria    string                    `json:"evaluationCriteria"`
}

// AutomationTemplates lists the built-in templates. Scripts name their
// parameters as {{name}}; each is replaced by a Starlark literal.
var AutomationTemplates = []AutomationTemplate{
	{
		ID:   "tls-and-headers",
		Name: "TLS and headers of a URL",
		Description: "Connects to the URL's host, records the TLS version and whether the certificate verifies, " +
			"fetches the URL and checks the security headers (HSTS, X-Content-Type-Options, X-Frame-Options or CSP frame-ancestors).",
		Parameters: []AutomationTemplateParam{{Name: "url", Label: "URL", Description: "an https:// URL", Type: "url", Required: true, Host: true}},
		Script: `URL = {{url}}

hostport = URL.split("://", 1)[1].split("/", 1)[0]
if ":" not in hostport:
    hostport = hostport + ":443"
t = tls.inspect(hostport)
r = http.get(URL)
wanted = ["strict-transport-security", "x-content-type-options"]
missing = [h for h in wanted if h not in r.headers]
csp = r.headers.get("content-security-policy", "")
if "x-frame-options" not in r.headers and "frame-ancestors" not in csp:
    missing.append("x-frame-options")
log("TLS", t.version, "cipher", t.cipher, "verified", t.verified)
result({
    "url": URL,
    "status": r.status,
    "tls_version": t.version_num,
    "certificate_valid": t.verified,
    "certificate_error": t.verify_error,
    "certificate_days_left": t.days_left,
    "missing_headers": missing,
})
evidence("Response headers of " + URL, "\n".join(["%s: %s" % (k, v) for k, v in r.headers.items()]))
`,
		Criteria: `result["tls_version"] >= 1.2 and result["certificate_valid"] and len(result["missing_headers"]) == 0`,
	},
	{
		ID:   "gitlab-protected-branches",
		Name: "GitLab protected branches",
		Description: "Reads a GitLab project's protected branches through the API and checks the branch is protected " +
			"with force pushes refused. The access token comes from a GitLab connection by reference.",
		Parameters: []AutomationTemplateParam{
			{Name: "baseUrl", Label: "GitLab URL", Description: "e.g. https://gitlab.example.com", Type: "url", Required: true, Host: true},
			{Name: "project", Label: "Project", Description: "the project's id or full path (group/project)", Type: "text", Required: true},
			{Name: "branch", Label: "Branch", Type: "text", Default: "main"},
			{Name: "connectionId", Label: "Connection", Description: "a GitLab connection whose token field is sent as PRIVATE-TOKEN", Type: "text", Required: true},
		},
		Script: `BASE = {{baseUrl}}
PROJECT = {{project}}
BRANCH = {{branch}}
CONNECTION = {{connectionId}}

headers = {"PRIVATE-TOKEN": secret(CONNECTION, "token")}
url = BASE.rstrip("/") + "/api/v4/projects/" + PROJECT.replace("/", "%2F") + "/protected_branches"
r = http.get(url, headers=headers)
if r.status != 200:
    fail("GitLab answered", r.status, "for", url)
branches = r.json()
names = [b["name"] for b in branches]
entry = None
for b in branches:
    if b["name"] == BRANCH:
        entry = b
force = entry != None and entry.get("allow_force_push", False)
log("protected branches:", ", ".join(names))
result({
    "project": PROJECT,
    "branch": BRANCH,
    "protected": entry != None,
    "force_push_allowed": force,
    "protected_branches": names,
})
evidence("Protected branches of " + PROJECT, json.encode(branches))
`,
		Criteria: `result["protected"] and not result["force_push_allowed"]`,
	},
	{
		ID:          "http-json-field",
		Name:        "HTTP JSON endpoint field equals value",
		Description: "Fetches a JSON document and compares one field (a dot path such as settings.mfa.required) with the expected value.",
		Parameters: []AutomationTemplateParam{
			{Name: "url", Label: "URL", Type: "url", Required: true, Host: true},
			{Name: "field", Label: "Field path", Description: "dot-separated, list indexes as numbers", Type: "text", Required: true},
			{Name: "expected", Label: "Expected value", Description: "compared with the field as text (true, 42, enabled)", Type: "text", Required: true},
		},
		Script: `URL = {{url}}
FIELD = {{field}}
EXPECTED = {{expected}}

r = http.get(URL, headers={"Accept": "application/json"})
if r.status != 200:
    fail("the endpoint answered", r.status)
v = r.json()
found = True
for part in FIELD.split("."):
    if type(v) == "dict" and part in v:
        v = v[part]
    elif type(v) == "list" and part.isdigit() and int(part) < len(v):
        v = v[int(part)]
    else:
        found = False
        v = None
        break
text = json.encode(v)
if type(v) == "string":
    text = v
result({"url": URL, "field": FIELD, "found": found, "value": v, "expected": EXPECTED, "equal": found and text == EXPECTED})
`,
		Criteria: `result["equal"]`,
	},
	{
		ID:          "certificate-expiry",
		Name:        "certificate expiry of a host",
		Description: "Connects to host:port, checks the certificate verifies and has at least the given number of days left.",
		Parameters: []AutomationTemplateParam{
			{Name: "host", Label: "Host and port", Description: "e.g. mail.example.com:443", Type: "hostport", Required: true, Host: true},
			{Name: "minDays", Label: "Minimum days left", Type: "int", Default: "30"},
		},
		Script: `HOST = {{host}}
MIN_DAYS = {{minDays}}

t = tls.inspect(HOST)
log("certificate of", HOST, "expires", t.not_after, "(", t.days_left, "days )")
result({
    "host": HOST,
    "subject": t.subject,
    "issuer": t.issuer,
    "not_after": t.not_after,
    "days_left": t.days_left,
    "verified": t.verified,
    "verify_error": t.verify_error,
    "min_days": MIN_DAYS,
})
`,
		Criteria: `result["verified"] and result["days_left"] >= result["min_days"]`,
	},
}

// InstantiateAutomationTemplate returns the script and hosts a template
// gives for the parameters; an unknown template or a bad parameter is a
// *ValidationError.
func InstantiateAutomationTemplate(id string, params map[string]string) (string, []string, error) {
	t, ok := automationTemplate(id)
	if !ok {
		return "", nil, Invalid("templateId", CodeUnknownReference, id, "templateId must name a template of GET /v1/task-automation-templates")
	}
	return t.instantiate(params)
}

func automationTemplate(id string) (AutomationTemplate, bool) {
	for _, t := range AutomationTemplates {
		if t.ID == id {
			return t, true
		}
	}
	return AutomationTemplate{}, false
}

var templateParam = regexp.MustCompile(`\{\{([A-Za-z]+)\}\}`)

// instantiate fills the template's parameters: each value validated by its
// type and written into the script as a Starlark literal. It returns the
// script and the hosts the values name.
func (t AutomationTemplate) instantiate(params map[string]string) (string, []string, error) {
	ve := NewValidationError()
	lits := map[string]string{}
	hosts := []string{}
	for _, p := range t.Parameters {
		field := "parameters." + p.Name
		v := strings.TrimSpace(params[p.Name])
		if v == "" {
			v = p.Default
		}
		if v == "" && p.Required {
			ve.Add(field, CodeRequired, nil, field+" is required: "+p.Label)
			continue
		}
		host := ""
		switch p.Type {
		case "url":
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				ve.Add(field, CodeInvalid, v, field+" must be an http:// or https:// URL")
				continue
			}
			host = u.Hostname()
		case "hostport":
			h, port, err := net.SplitHostPort(v)
			if err != nil || h == "" {
				h, port = v, "443"
				v = net.JoinHostPort(h, port)
			}
			if _, err := strconv.Atoi(port); err != nil || !ValidHostPattern(strings.ToLower(h)) || strings.HasPrefix(h, "*.") {
				ve.Add(field, CodeInvalid, params[p.Name], field+" must be host:port")
				continue
			}
			host = h
		case "int":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				ve.Add(field, CodeInvalid, v, field+" must be a whole number")
				continue
			}
			lits[p.Name] = strconv.Itoa(n)
			continue
		}
		if len(v) > 2000 {
			ve.Add(field, CodeTooLong, nil, field+" must be at most 2000 characters")
			continue
		}
		raw, _ := json.Marshal(v)
		lits[p.Name] = string(raw)
		if p.Host && host != "" && !containsString(hosts, strings.ToLower(host)) {
			hosts = append(hosts, strings.ToLower(host))
		}
	}
	if err := ve.Err(); err != nil {
		return "", nil, err
	}
	script := templateParam.ReplaceAllStringFunc(t.Script, func(m string) string {
		return lits[m[2:len(m)-2]]
	})
	return script, hosts, nil
}

// ListAutomationTemplates lists the templates (any signed-in role may
// read them: they hold no organization data).
func (a *App) ListAutomationTemplates(ctx context.Context) ([]AutomationTemplate, error) {
	if _, err := principal(ctx); err != nil {
		return nil, err
	}
	return append([]AutomationTemplate{}, AutomationTemplates...), nil
}
