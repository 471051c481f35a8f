package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// How the assistant answers. Offline (no model, or the model failed): the
// question is matched against a fixed list of intents, in order, by
// keywords (assistantIntents); the first that matches runs one read tool
// and the answer lists what it found. A question no intent matches is
// answered by retrieval: the best passages of the search index for its
// words. Either way the answer names its sources; when nothing is found it
// says so. With a model: the model gets the retrieved passages and the
// read tools, and writes the answer (assistant_model.go).

// assistantAnswer is an answer before it is stored.
type assistantAnswer struct {
	Text    string
	Mode    string
	Intent  string
	Notice  string
	Sources []AssistantSource
	// Actions are writes the model proposed (pending confirmation).
	Actions []AssistantAction
}

// assistantIntent is one kind of question answered by one tool.
type assistantIntent struct {
	Name string
	Tool string
	// Match returns the tool's arguments when the question (lower case)
	// is of this kind.
	Match func(a *App, ctx context.Context, q string) (map[string]any, bool)
	// Lead is the answer's first sentence for n records found.
	Lead func(args map[string]any, n int) string
}

func has(q string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(q, w) {
			return true
		}
	}
	return false
}

// asksAboutText tells questions about what documents say, answered by
// retrieval, from questions about records.
func asksAboutText(q string) bool {
	return has(q, "say about", "says about", "what does", "according to", "describe", "how do we", "how does our", "what is our")
}

var daysRe = regexp.MustCompile(`(\d{1,3})\s*days?`)

// severities and bands as words in a question.
var severityWords = []string{"critical", "high", "medium", "low", "informational"}

// wordRes caches the whole-word patterns of firstWord and hasWord.
var wordRes sync.Map

// hasWord reports whether q holds w as a whole word.
func hasWord(q, w string) bool {
	re, ok := wordRes.Load(w)
	if !ok {
		re, _ = wordRes.LoadOrStore(w, regexp.MustCompile(`\b`+regexp.QuoteMeta(w)+`\b`))
	}
	return re.(*regexp.Regexp).MatchString(q)
}

func firstWord(q string, words []string) string {
	for _, w := range words {
		if hasWord(q, w) {
			return w
		}
	}
	return ""
}

// countryNames maps country names people type to ISO codes.
var countryNames = map[string]string{
	"united states": "US", "usa": "US", "america": "US", "united kingdom": "GB", "uk": "GB", "britain": "GB",
	"germany": "DE", "france": "FR", "ireland": "IE", "netherlands": "NL", "india": "IN", "switzerland": "CH",
	"canada": "CA", "china": "CN", "japan": "JP", "australia": "AU", "israel": "IL", "singapore": "SG",
	"sweden": "SE", "spain": "ES", "italy": "IT", "poland": "PL", "belgium": "BE", "austria": "AT", "denmark": "DK",
	"finland": "FI", "norway": "NO", "portugal": "PT", "brazil": "BR", "ukraine": "UA", "russia": "RU",
}

func statusLabel(s string) string { return strings.ReplaceAll(s, "_", " ") }

func fwLabel(args map[string]any) string {
	if n, ok := args["frameworkName"].(string); ok && n != "" {
		return " in " + n
	}
	return ""
}

// assistantIntents are tried in order; the first match answers.
var assistantIntents = []assistantIntent{
	{Name: "controls_without_evidence", Tool: "list_controls",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if !has(q, "control", "requirement") || !has(q, "no evidence", "without evidence", "missing evidence", "lack evidence", "lacking evidence", "lacks evidence", "evidence missing", "no proof") {
				return nil, false
			}
			args := map[string]any{"withoutEvidence": true}
			a.matchFramework(ctx, q, args)
			return args, true
		},
		Lead: func(args map[string]any, n int) string {
			if n == 0 {
				return "Every applicable control" + fwLabel(args) + " has evidence."
			}
			return fmt.Sprintf("%d controls%s have no evidence:", n, fwLabel(args))
		}},
	{Name: "expiring_evidence", Tool: "list_expiring_evidence",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if !has(q, "evidence", "proof", "document") || !has(q, "expir", "outdated", "stale", "renew", "due soon") {
				return nil, false
			}
			args := map[string]any{}
			if m := daysRe.FindStringSubmatch(q); m != nil {
				if d, err := strconv.Atoi(m[1]); err == nil && d >= 1 && d <= 365 {
					args["days"] = d
				}
			} else if has(q, "this week", "next week") {
				args["days"] = 7
			} else if has(q, "quarter", "90 days", "three months") {
				args["days"] = 90
			}
			return args, true
		},
		Lead: func(args map[string]any, n int) string {
			d := 30
			if v, ok := args["days"].(int); ok {
				d = v
			}
			if n == 0 {
				return fmt.Sprintf("No evidence expires within the next %d days.", d)
			}
			return fmt.Sprintf("%d pieces of evidence expire within the next %d days:", n, d)
		}},
	{Name: "framework_scores", Tool: "compliance_status",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if has(q, "score", "compliance status", "how compliant", "readiness", "how far", "how ready", "progress", "percentage", "framework status") && !asksAboutText(q) {
				return map[string]any{}, true
			}
			return nil, false
		},
		Lead: func(_ map[string]any, n int) string {
			if n == 0 {
				return "No framework is enabled yet, so there is no score."
			}
			return "Scores of the enabled frameworks:"
		}},
	{Name: "overdue_corrective_actions", Tool: "list_overdue_corrective_actions",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if has(q, "corrective", "remediation", "actions") && has(q, "overdue", "late", "past due", "missed", "behind") {
				return map[string]any{}, true
			}
			return nil, false
		},
		Lead: func(_ map[string]any, n int) string {
			if n == 0 {
				return "No corrective action is overdue."
			}
			return fmt.Sprintf("%d corrective actions are overdue:", n)
		}},
	{Name: "overdue_tasks", Tool: "list_overdue_tasks",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if has(q, "task", "todo", "to-do", "work") && has(q, "overdue", "late", "past due", "missed", "behind") {
				return map[string]any{}, true
			}
			return nil, false
		},
		Lead: func(_ map[string]any, n int) string {
			if n == 0 {
				return "No task is overdue."
			}
			return fmt.Sprintf("%d tasks are overdue:", n)
		}},
	{Name: "findings", Tool: "list_findings",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if !has(q, "finding", "nonconformit", "non-conformit", "audit issue") || asksAboutText(q) {
				return nil, false
			}
			args := map[string]any{}
			if s := firstWord(q, severityWords); s != "" {
				args["severity"] = s
			}
			switch {
			case has(q, "closed"):
				args["status"] = FindingClosed
			case has(q, "resolved"):
				args["status"] = FindingResolved
			case has(q, "in review", "under review"):
				args["status"] = FindingInReview
			}
			return args, true
		},
		Lead: func(args map[string]any, n int) string {
			what := "open"
			if s, ok := args["status"].(string); ok {
				what = statusLabel(s)
			}
			if s, ok := args["severity"].(string); ok {
				what += " " + s + "-severity"
			}
			if n == 0 {
				return "There are no " + what + " findings."
			}
			return fmt.Sprintf("%d %s findings:", n, what)
		}},
	{Name: "vendors", Tool: "list_vendors",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if !has(q, "vendor", "supplier", "third part", "processors", "sub-processor", "subprocessor") || asksAboutText(q) {
				return nil, false
			}
			args := map[string]any{}
			if has(q, "outside the eu", "outside eu", "non-eu", "outside the eea", "outside eea", "outside europe", "third countr", "non-eea", "international transfer") {
				args["outsideEEA"] = true
			}
			if has(q, "personal data", "pii", "personal information", "gdpr", "process data", "processes data", "process personal") {
				args["processesPersonalData"] = true
			}
			if c := firstWord(q, []string{"critical", "important"}); c != "" {
				args["criticality"] = c
			}
			// The country named first in the question.
			at := len(q)
			for name, code := range countryNames {
				if i := strings.Index(q, name); i >= 0 && i < at && hasWord(q, name) {
					at, args["country"] = i, code
				}
			}
			return args, true
		},
		Lead: func(args map[string]any, n int) string {
			var parts []string
			if c, ok := args["criticality"].(string); ok {
				parts = append(parts, c)
			}
			desc := strings.Join(append(parts, "vendors"), " ")
			var cond []string
			if args["processesPersonalData"] == true {
				cond = append(cond, "process personal data")
			}
			if args["outsideEEA"] == true {
				cond = append(cond, "are outside the EU/EEA")
			}
			if c, ok := args["country"].(string); ok {
				cond = append(cond, "are in "+c)
			}
			if len(cond) > 0 {
				desc += " that " + strings.Join(cond, " and ")
			}
			if n == 0 {
				return "No " + desc + " are recorded."
			}
			return fmt.Sprintf("%d %s:", n, desc)
		}},
	{Name: "risks", Tool: "list_risks",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if !has(q, "risk") || asksAboutText(q) || has(q, "policy", "policies") {
				return nil, false
			}
			args := map[string]any{}
			if b := firstWord(q, []string{"critical", "high", "medium", "low"}); b != "" {
				args["band"] = b
			} else if !has(q, "top", "list", "which", "show", "biggest", "highest", "how many", "risks") {
				return nil, false
			}
			return args, true
		},
		Lead: func(args map[string]any, n int) string {
			what := "risks"
			if b, ok := args["band"].(string); ok {
				what = b + " risks"
			}
			if n == 0 {
				return "There are no " + what + " in the register."
			}
			return fmt.Sprintf("%d %s, highest score first:", n, what)
		}},
	{Name: "controls_by_status", Tool: "list_controls",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if !has(q, "control") || asksAboutText(q) {
				return nil, false
			}
			var st string
			switch {
			case has(q, "not started", "not yet started", "unstarted"):
				st = ControlNotStarted
			case has(q, "in progress", "in-progress", "being worked"):
				st = ControlInProgress
			case has(q, "not applicable", "n/a", "excluded"):
				st = ControlNotApplicable
			case has(q, "implemented", "done", "complete"):
				st = ControlImplemented
			default:
				return nil, false
			}
			args := map[string]any{"status": st}
			a.matchFramework(ctx, q, args)
			return args, true
		},
		Lead: func(args map[string]any, n int) string {
			st, _ := args["status"].(string)
			if n == 0 {
				return "No controls" + fwLabel(args) + " are " + statusLabel(st) + "."
			}
			return fmt.Sprintf("%d controls%s are %s:", n, fwLabel(args), statusLabel(st))
		}},
	{Name: "policy_acknowledgements", Tool: "policy_acknowledgements",
		Match: func(a *App, ctx context.Context, q string) (map[string]any, bool) {
			if has(q, "acknowledg", "signed the polic", "sign-off", "signed off", "attested", "read and accepted") {
				return map[string]any{}, true
			}
			return nil, false
		},
		Lead: func(_ map[string]any, n int) string {
			if n == 0 {
				return "No policy is published yet, so there is nothing to acknowledge."
			}
			return "Acknowledgement status of the published policies:"
		}},
}

// matchFramework sets args["framework"] to the enabled framework the
// question names ("ISO 27001", "SOC 2", "NIS2", ...), if any.
func (a *App) matchFramework(ctx context.Context, q string, args map[string]any) {
	on := true
	l, err := a.ListFrameworks(ctx, &on, Page{Page: 1, PerPage: MaxPerPage})
	if err != nil {
		return
	}
	nq := alnum(q)
	best := 0
	for _, f := range l.Items {
		for _, k := range frameworkKeys(f) {
			if len(k) >= 3 && len(k) > best && strings.Contains(nq, k) {
				best = len(k)
				args["framework"], args["frameworkName"] = f.ID, f.Name
			}
		}
	}
}

// frameworkKeys are the forms people type a framework's name in, without
// spaces or punctuation: its slug without the version ("iso27001",
// "soc2", "nistcsf"), the slug, the abbreviation in parentheses.
func frameworkKeys(f Framework) []string {
	keys := []string{alnum(f.Slug)}
	parts := strings.Split(f.Slug, "-")
	for len(parts) > 1 && parts[len(parts)-1] != "" && unicode.IsDigit(rune(parts[len(parts)-1][0])) {
		parts = parts[:len(parts)-1]
	}
	keys = append(keys, alnum(strings.Join(parts, "")))
	if i, j := strings.LastIndex(f.Name, "("), strings.LastIndex(f.Name, ")"); i >= 0 && j > i {
		keys = append(keys, alnum(f.Name[i+1:j]))
	}
	if f.ShortName != "" {
		keys = append(keys, alnum(f.ShortName))
	}
	return keys
}

func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// AssistantIntentNames lists the offline intents in matching order.
func AssistantIntentNames() []string {
	out := make([]string, len(assistantIntents))
	for i, in := range assistantIntents {
		out[i] = in.Name
	}
	return out
}

// answer answers a question: with the model when one is configured,
// falling back to the offline answer with a notice when it fails.
func (a *App) answer(ctx context.Context, question string, earlier []AssistantMessage, emit func(AssistantStreamEvent)) (assistantAnswer, []assistantToolCall) {
	if model, budget, limit := a.assistantModel(); model != nil {
		mctx, cancel := context.WithTimeout(ctx, limit)
		ans, calls, err := a.modelAnswer(mctx, model, budget, question, earlier, emit)
		cancel()
		if err == nil {
			return ans, calls
		}
		a.log.WarnContext(ctx, "assistant model failed; answering offline", "error", err.Error(), "request_id", RequestIDFrom(ctx))
		off, more := a.offlineAnswer(ctx, question)
		off.Notice = "The language model did not answer (" + modelFailure(err) + "); this answer comes from your records without it."
		if emit != nil {
			emit(AssistantStreamEvent{Type: "notice", Text: off.Notice})
			emit(AssistantStreamEvent{Type: "delta", Text: off.Text})
		}
		return off, append(calls, more...)
	}
	off, calls := a.offlineAnswer(ctx, question)
	if emit != nil {
		emit(AssistantStreamEvent{Type: "delta", Text: off.Text})
	}
	return off, calls
}

// modelFailure says in a few words why the model failed, without the
// endpoint's own text (which may carry anything).
func modelFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "it timed out"
	case errors.Is(err, ErrModelUnavailable):
		return "it could not be reached or returned an error"
	case errors.Is(err, errModelToolArgs):
		return "it called a tool with malformed arguments"
	default:
		return "its reply could not be used"
	}
}

// offlineAnswer answers from intents and retrieval alone.
func (a *App) offlineAnswer(ctx context.Context, question string) (assistantAnswer, []assistantToolCall) {
	q := strings.ToLower(question)
	for _, in := range assistantIntents {
		args, ok := in.Match(a, ctx, q)
		if !ok {
			continue
		}
		toolArgs := map[string]any{}
		for k, v := range args {
			if k != "frameworkName" {
				toolArgs[k] = v
			}
		}
		raw, _ := json.Marshal(toolArgs)
		res, err := assistantToolByName(in.Tool).Run(a, ctx, raw)
		call := assistantToolCall{Name: in.Tool, Args: toolArgs, Outcome: "ok"}
		if err != nil {
			call.Outcome = "error"
			if errors.Is(err, ErrForbidden) {
				return assistantAnswer{Mode: AssistantOffline, Intent: in.Name, Sources: []AssistantSource{},
					Text: "Your role may not read the records this question is about."}, []assistantToolCall{call}
			}
			a.log.WarnContext(ctx, "assistant tool failed", "tool", in.Tool, "error", err.Error())
			return assistantAnswer{Mode: AssistantOffline, Intent: in.Name, Sources: []AssistantSource{},
				Text: "I could not read the records for this question (" + in.Tool + " failed)."}, []assistantToolCall{call}
		}
		var b strings.Builder
		b.WriteString(in.Lead(args, res.Total))
		for _, l := range res.Lines {
			b.WriteString("\n- " + l)
		}
		if res.Total > len(res.Lines) && len(res.Lines) > 0 {
			fmt.Fprintf(&b, "\n(showing %d of %d)", len(res.Lines), res.Total)
		}
		srcs := res.Sources
		if srcs == nil {
			srcs = []AssistantSource{}
		}
		return assistantAnswer{Text: b.String(), Mode: AssistantOffline, Intent: in.Name, Sources: srcs}, []assistantToolCall{call}
	}
	passages, err := a.retrieve(ctx, question, 5)
	call := assistantToolCall{Name: "search_records", Args: map[string]any{"query": question}, Outcome: "ok"}
	if err != nil {
		call.Outcome = "error"
		a.log.WarnContext(ctx, "assistant retrieval failed", "error", err.Error())
		return assistantAnswer{Mode: AssistantOffline, Intent: "search", Sources: []AssistantSource{},
			Text: "I could not search your records just now."}, []assistantToolCall{call}
	}
	if len(passages) == 0 {
		return assistantAnswer{Mode: AssistantOffline, Intent: "search", Sources: []AssistantSource{},
			Text: "I found nothing in your organization's records that matches this question. " +
				"I can answer questions about framework scores, controls by status or without evidence, expiring evidence, " +
				"findings, overdue tasks and corrective actions, vendors, risks and policy acknowledgements, " +
				"and search knowledge-base answers, policies, controls and requirements."}, []assistantToolCall{call}
	}
	var b strings.Builder
	b.WriteString("The most relevant passages in your records:")
	for i, p := range passages {
		fmt.Fprintf(&b, "\n[%d] %s %q: %s", i+1, sourceTypeLabel(p.Type), p.Title, p.Snippet)
	}
	return assistantAnswer{Text: b.String(), Mode: AssistantOffline, Intent: "search", Sources: passages}, []assistantToolCall{call}
}

func sourceTypeLabel(t string) string {
	switch t {
	case SearchKB:
		return "Knowledge-base answer"
	case SearchPolicy:
		return "Policy"
	case SearchControl:
		return "Control"
	case SearchRequirement:
		return "Requirement"
	case SearchVendor:
		return "Vendor"
	case SearchRisk:
		return "Risk"
	case SearchFinding:
		return "Finding"
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// retrievalTypes are the types the assistant retrieves passages from.
var retrievalTypes = []string{SearchKB, SearchPolicy, SearchControl, SearchRequirement, SearchVendor, SearchRisk, SearchFinding}

// assistantStopwords are left out of retrieval queries: question words and words
// every record has.
var assistantStopwords = set("a an the and or of to in on for with by is are was were be been being do does did what which who whom whose when where why how " +
	"our we us you your my i me it its this that these those there their they them say says said about tell show list give find any all " +
	"have has had can could should would will shall may might must not no yes please from as at into than then so if some " +
	"organization organisation company records place approach explain regarding know anything something get use used " +
	"describe does doing done")

// synonyms expand a term into phrases that say the same.
var synonyms = map[string][]string{
	"mfa": {"multi factor", "multifactor", "two factor", "2fa"}, "2fa": {"two factor", "mfa"},
	"sso": {"single sign on"}, "dpa": {"data processing agreement"}, "pii": {"personal data"},
	"bcp": {"business continuity"}, "dr": {"disaster recovery"}, "byod": {"bring your own device"},
	"vpn": {"virtual private network"}, "siem": {"security information"}, "pentest": {"penetration test"},
	"mdm": {"mobile device management"}, "edr": {"endpoint detection"}, "iam": {"identity and access management"},
	"dlp": {"data loss prevention"}, "kms": {"key management"}, "dpo": {"data protection officer"},
	"isms": {"information security management"}, "sdlc": {"development lifecycle"}, "rbac": {"role based access"},
	"pam": {"privileged access"}, "rto": {"recovery time"}, "rpo": {"recovery point"},
}

// retrievalMatch builds the full-text expression of a question: its
// meaningful words and their synonyms, any of them (BM25 ranks records
// matching more and rarer words first). "" when nothing is left.
func retrievalMatch(question string) string {
	var parts []string
	seen := map[string]bool{}
	for _, t := range ParseSearchQuery(question).Terms {
		t = strings.ToLower(t)
		if assistantStopwords[t] || len([]rune(t)) < 2 || seen[t] {
			continue
		}
		seen[t] = true
		parts = append(parts, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		for _, s := range synonyms[t] {
			parts = append(parts, `"`+s+`"`)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > 24 {
		parts = parts[:24]
	}
	return "{title body} : (" + strings.Join(parts, " OR ") + ")"
}

// retrieve returns the best n passages for a question among the records
// the principal may read, as sources with their snippets.
func (a *App) retrieve(ctx context.Context, question string, n int) ([]AssistantSource, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	spec := SearchSpec{Match: retrievalMatch(question)}
	allowed := searchTypesFor(p)
	for _, t := range retrievalTypes {
		if contains(allowed, t) {
			spec.Types = append(spec.Types, t)
		}
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" {
			spec.Match = ""
		}
		spec.ViewerID = p.UserID
	}
	out := []AssistantSource{}
	if spec.Match == "" {
		return out, nil
	}
	if spec.Frameworks, err = a.catalogFrameworksIndexed(ctx, p.OrgID); err != nil {
		return nil, err
	}
	hits, err := a.store.SearchRecords(ctx, p.OrgID, spec, n*2, 0)
	if err != nil {
		return nil, fmt.Errorf("assistant: retrieve: %w", err)
	}
	if hits, err = a.visibleHits(ctx, p, hits); err != nil {
		return nil, err
	}
	for _, h := range hits {
		if len(out) == n {
			break
		}
		s := src(h.Type, h.ID, h.ParentID, h.Title.String())
		s.Snippet = h.Snippet.String()
		out = append(out, s)
	}
	return out, nil
}
