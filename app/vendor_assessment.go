package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Vendor risk assessment: on request, the appliance looks at a vendor's
// public web site (the HTTPS endpoint checks, /.well-known/security.txt per
// RFC 9116, a trust or security page the home page links to) and records
// what it found with a suggested inherent probability and impact and the
// reasons, for a person to accept onto the vendor.

// Vendor assessment statuses.
const (
	AssessmentQueued    = "queued"
	AssessmentRunning   = "running"
	AssessmentCompleted = "completed"
	AssessmentFailed    = "failed"
)

// Limits of an assessment.
const (
	maxAssessmentBatch   = 100
	maxSecurityTxtBytes  = 32 << 10
	maxHomePageBytes     = 512 << 10
	assessmentRunTimeout = 2 * time.Minute
	maxAssessmentsListed = 100
)

// WebPage is a fetched page.
type WebPage struct {
	URL         string
	Status      int
	ContentType string
	Body        []byte
}

// WebFetcher reads public pages through the outbound policy (timeouts,
// network policy, proxy), reading at most max bytes of a body.
type WebFetcher interface {
	Fetch(ctx context.Context, url string, max int64) (*WebPage, error)
}

// SetWebFetcher wires in the outbound page reader; without it, an
// assessment records that security.txt and trust pages were not read.
func (a *App) SetWebFetcher(f WebFetcher) { a.webFetch = f }

// VendorAssessment is one assessment of a vendor's public site.
type VendorAssessment struct {
	ID                   string            `json:"id"`
	RunID                string            `json:"runId"`
	VendorID             string            `json:"vendorId"`
	BatchID              *string           `json:"batchId"`
	Status               string            `json:"status"`
	Website              string            `json:"website"`
	Results              AssessmentResults `json:"results"`
	SuggestedProbability *string           `json:"suggestedProbability"`
	SuggestedImpact      *string           `json:"suggestedImpact"`
	Reasons              []string          `json:"reasons"`
	Error                *string           `json:"error"`
	RequestedBy          string            `json:"requestedBy"`
	CreatedAt            time.Time         `json:"createdAt"`
	StartedAt            *time.Time        `json:"startedAt"`
	FinishedAt           *time.Time        `json:"finishedAt"`
	AcceptedAt           *time.Time        `json:"acceptedAt"`
	AcceptedBy           *string           `json:"acceptedBy"`

	OrganizationID string `json:"-"`
}

// AssessmentResults is what an assessment checked and found.
type AssessmentResults struct {
	Checked     []string          `json:"checked"`
	Checks      []AssessmentCheck `json:"checks"`
	SecurityTxt *SecurityTxt      `json:"securityTxt"`
	TrustPage   *TrustPage        `json:"trustPage"`
	Logs        []RunLog          `json:"logs"`
}

// AssessmentCheck is one HTTPS check's verdict on the vendor's site.
type AssessmentCheck struct {
	CheckID  string `json:"checkId"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
	Message  string `json:"message"`
}

// SecurityTxt is the vendor's /.well-known/security.txt (RFC 9116).
type SecurityTxt struct {
	URL                string     `json:"url"`
	Found              bool       `json:"found"`
	Contact            []string   `json:"contact"`
	Expires            *time.Time `json:"expires"`
	Expired            bool       `json:"expired"`
	Policy             []string   `json:"policy"`
	Encryption         []string   `json:"encryption"`
	Acknowledgments    []string   `json:"acknowledgments"`
	PreferredLanguages string     `json:"preferredLanguages"`
	Canonical          []string   `json:"canonical"`
	Hiring             []string   `json:"hiring"`
	Signed             bool       `json:"signed"`
	Problems           []string   `json:"problems"`
}

// TrustPage is a trust or security page the vendor's home page links to.
type TrustPage struct {
	URL       string `json:"url"`
	Status    int    `json:"status"`
	Reachable bool   `json:"reachable"`
}

// VendorAssessmentTrigger is the body of trigger-single.
type VendorAssessmentTrigger struct {
	VendorID string `json:"vendorId"`
}

// VendorAssessmentBatch is the body of trigger-batch.
type VendorAssessmentBatch struct {
	Vendors []VendorAssessmentTrigger `json:"vendors"`
}

// VendorAssessmentBatchResult answers trigger-batch.
type VendorAssessmentBatchResult struct {
	BatchID     string             `json:"batchId"`
	Assessments []VendorAssessment `json:"assessments"`
	Skipped     []AssessmentSkip   `json:"skipped"`
}

// AssessmentSkip is a vendor of a batch that was not assessed.
type AssessmentSkip struct {
	VendorID string `json:"vendorId"`
	Reason   string `json:"reason"`
}

// VendorAssessmentStore keeps assessments.
type VendorAssessmentStore interface {
	CreateVendorAssessment(ctx context.Context, orgID string, v *VendorAssessment) error
	UpdateVendorAssessment(ctx context.Context, orgID string, v *VendorAssessment) error
	GetVendorAssessment(ctx context.Context, orgID, id string) (*VendorAssessment, error)
	// ListVendorAssessments lists a vendor's assessments, newest first.
	ListVendorAssessments(ctx context.Context, orgID, vendorID string, limit int) ([]VendorAssessment, error)
	// ClaimVendorAssessment moves the oldest queued assessment (of any
	// organization) to running; ErrNotFound when none is queued.
	ClaimVendorAssessment(ctx context.Context, now time.Time) (*VendorAssessment, error)
	// FailRunningVendorAssessments marks assessments left running failed.
	FailRunningVendorAssessments(ctx context.Context, now time.Time, reason string) (int, error)
}

func vendorWebsite(v *Vendor) (string, error) {
	if v.Website == nil || strings.TrimSpace(*v.Website) == "" {
		return "", errors.New("the vendor has no website")
	}
	s := strings.TrimSpace(*v.Website)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("the vendor's website %q is not an http(s) URL", *v.Website)
	}
	return u.String(), nil
}

func (a *App) queueAssessment(ctx context.Context, p *Principal, vendorID string, batch *string) (*VendorAssessment, error) {
	v, err := a.store.GetVendor(ctx, p.OrgID, vendorID)
	if err != nil {
		return nil, err
	}
	site, err := vendorWebsite(v)
	if err != nil {
		return nil, Invalid("vendorId", CodeInvalid, vendorID, err.Error())
	}
	id := NewID(PrefixVendorAssessment)
	as := &VendorAssessment{ID: id, RunID: id, VendorID: v.ID, BatchID: batch, Status: AssessmentQueued, Website: site,
		Results: AssessmentResults{Checked: []string{}, Checks: []AssessmentCheck{}, Logs: []RunLog{}}, Reasons: []string{},
		RequestedBy: p.ActorID(), CreatedAt: a.Now(), OrganizationID: p.OrgID}
	if err := a.store.CreateVendorAssessment(ctx, p.OrgID, as); err != nil {
		return nil, err
	}
	if err := a.record(ctx, Mutation{Action: "assessment_requested", ResourceType: "vendor", ResourceID: v.ID,
		After: map[string]any{"assessmentId": id, "website": site}}); err != nil {
		return nil, err
	}
	return as, nil
}

// TriggerVendorAssessment queues an assessment of one vendor (which must
// have a website) and wakes the worker; the answer carries its run id.
func (a *App) TriggerVendorAssessment(ctx context.Context, in VendorAssessmentTrigger) (*VendorAssessment, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	in.VendorID = strings.TrimSpace(in.VendorID)
	if in.VendorID == "" {
		return nil, Invalid("vendorId", CodeRequired, nil, "vendorId is required")
	}
	var out *VendorAssessment
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		out, err = a.queueAssessment(ctx, p, in.VendorID, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("assess vendor %s: %w", in.VendorID, err)
	}
	a.wakeIntegrationWorker()
	return out, nil
}

// TriggerVendorAssessmentBatch queues an assessment of each vendor with a
// website; the others are listed as skipped with the reason.
func (a *App) TriggerVendorAssessmentBatch(ctx context.Context, in VendorAssessmentBatch) (*VendorAssessmentBatchResult, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	switch {
	case len(in.Vendors) == 0:
		ve.Add("vendors", CodeRequired, nil, "vendors is required: at least one {vendorId}")
	case len(in.Vendors) > maxAssessmentBatch:
		ve.Add("vendors", CodeInvalid, len(in.Vendors), fmt.Sprintf("at most %d vendors per batch", maxAssessmentBatch))
	}
	for i, v := range in.Vendors {
		if strings.TrimSpace(v.VendorID) == "" {
			ve.Add(fmt.Sprintf("vendors[%d].vendorId", i), CodeRequired, nil, "vendorId is required")
		}
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	batch := NewID(PrefixVendorAssessment)
	out := &VendorAssessmentBatchResult{BatchID: batch, Assessments: []VendorAssessment{}, Skipped: []AssessmentSkip{}}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		seen := map[string]bool{}
		for i, v := range in.Vendors {
			id := strings.TrimSpace(v.VendorID)
			if seen[id] {
				continue
			}
			seen[id] = true
			as, err := a.queueAssessment(ctx, p, id, &batch)
			var vErr *ValidationError
			switch {
			case errors.Is(err, ErrNotFound):
				return Invalid(fmt.Sprintf("vendors[%d].vendorId", i), CodeUnknownReference, id, "no vendor "+id)
			case errors.As(err, &vErr):
				out.Skipped = append(out.Skipped, AssessmentSkip{VendorID: id, Reason: vErr.Error()})
			case err != nil:
				return err
			default:
				out.Assessments = append(out.Assessments, *as)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("assess vendors: %w", err)
	}
	a.wakeIntegrationWorker()
	return out, nil
}

// ListVendorAssessments lists a vendor's assessments, newest first.
func (a *App) ListVendorAssessments(ctx context.Context, vendorID string) ([]VendorAssessment, error) {
	v, err := a.GetVendor(ctx, vendorID)
	if err != nil {
		return nil, err
	}
	p, _ := principal(ctx)
	return a.store.ListVendorAssessments(ctx, p.OrgID, v.ID, maxAssessmentsListed)
}

// GetVendorAssessment returns one assessment of a vendor.
func (a *App) GetVendorAssessment(ctx context.Context, vendorID, id string) (*VendorAssessment, error) {
	v, err := a.GetVendor(ctx, vendorID)
	if err != nil {
		return nil, err
	}
	p, _ := principal(ctx)
	as, err := a.store.GetVendorAssessment(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if as.VendorID != v.ID {
		return nil, ErrNotFound
	}
	return as, nil
}

// AcceptVendorAssessment copies a completed assessment's suggested inherent
// probability and impact onto the vendor (audited as a vendor update) and
// marks the assessment accepted. Accepting twice, or an assessment that has
// not completed, is a conflict.
func (a *App) AcceptVendorAssessment(ctx context.Context, vendorID, id string) (*VendorAssessment, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *VendorAssessment
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		as, err := a.GetVendorAssessment(ctx, vendorID, id)
		if err != nil {
			return err
		}
		if as.Status != AssessmentCompleted || as.SuggestedProbability == nil || as.SuggestedImpact == nil {
			return Errorf(ErrConflict, "the assessment is %s; only a completed assessment can be accepted", as.Status)
		}
		if as.AcceptedAt != nil {
			return Errorf(ErrConflict, "the assessment was already accepted")
		}
		if _, err := a.UpdateVendor(ctx, vendorID, VendorInput{InherentProbability: as.SuggestedProbability, InherentImpact: as.SuggestedImpact}); err != nil {
			return err
		}
		now := a.Now()
		as.AcceptedAt, as.AcceptedBy = &now, Ptr(p.ActorID())
		if err := a.store.UpdateVendorAssessment(ctx, p.OrgID, as); err != nil {
			return err
		}
		out = as
		return a.record(ctx, Mutation{Action: "assessment_accepted", ResourceType: "vendor", ResourceID: vendorID,
			After: map[string]any{"assessmentId": id, "inherentProbability": *as.SuggestedProbability, "inherentImpact": *as.SuggestedImpact}})
	})
	if err != nil {
		return nil, fmt.Errorf("accept assessment %s: %w", id, err)
	}
	return out, nil
}

// ProcessVendorAssessments runs queued assessments until none is left
// (the integration worker calls it) and returns how many ran.
func (a *App) ProcessVendorAssessments(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		as, err := a.store.ClaimVendorAssessment(ctx, a.Now())
		if errors.Is(err, ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("claim vendor assessment: %w", err)
		}
		n++
		if err := a.runAssessment(ctx, as); err != nil {
			return n, err
		}
	}
	return n, nil
}

// FailStaleAssessments marks assessments a stop left running as failed.
func (a *App) FailStaleAssessments(ctx context.Context) (int, error) {
	return a.store.FailRunningVendorAssessments(ctx, a.Now(), "the appliance stopped while the assessment was in progress")
}

func (a *App) runAssessment(ctx context.Context, as *VendorAssessment) error {
	sys := SystemContext(ctx, as.OrganizationID)
	rctx, cancel := context.WithTimeout(ctx, assessmentRunTimeout)
	defer cancel()
	log := func(level, msg string) {
		as.Results.Logs = append(as.Results.Logs, RunLog{At: a.Now(), Level: level, Message: msg})
	}
	res := &as.Results
	// The HTTPS endpoint checks, through the engine's provider.
	if prov, ok := a.provider("https"); ok {
		res.Checked = append(res.Checked, "https")
		sink := &runSink{now: a.Now}
		err := safeRun(rctx, prov, ConnectionTarget{OrganizationID: as.OrganizationID, Variables: map[string]string{"urls": as.Website}}, nil, sink)
		defs := map[string]CheckDefinition{}
		for _, d := range prov.Definition().Checks {
			defs[d.ID] = d
		}
		sink.mu.Lock()
		for _, o := range sink.outcomes {
			d := defs[o.CheckID]
			res.Checks = append(res.Checks, AssessmentCheck{CheckID: o.CheckID, Title: d.Title, Severity: d.Severity, Status: o.Status, Message: o.Message})
		}
		res.Logs = append(res.Logs, sink.logs...)
		sink.mu.Unlock()
		if err != nil {
			log("error", "HTTPS checks: "+err.Error())
		}
	} else {
		log("warn", "the HTTPS endpoint checks are not available (switched off by the appliance operator)")
	}
	if a.webFetch == nil {
		log("warn", "no outbound client: security.txt and the trust page were not read")
	} else {
		res.Checked = append(res.Checked, "security.txt", "trust_page")
		res.SecurityTxt = a.fetchSecurityTxt(rctx, as.Website, log)
		res.TrustPage = a.findTrustPage(rctx, as.Website, log)
	}
	v, err := a.store.GetVendor(sys, as.OrganizationID, as.VendorID)
	if err != nil {
		return a.finishAssessment(sys, as, "the vendor is gone: "+err.Error())
	}
	prob, impact, reasons := suggestVendorRisk(v, res)
	as.SuggestedProbability, as.SuggestedImpact, as.Reasons = &prob, &impact, reasons
	return a.finishAssessment(sys, as, "")
}

func (a *App) finishAssessment(ctx context.Context, as *VendorAssessment, failure string) error {
	now := a.Now()
	as.FinishedAt, as.Status = &now, AssessmentCompleted
	if failure != "" {
		as.Status, as.Error = AssessmentFailed, &failure
	}
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.UpdateVendorAssessment(ctx, as.OrganizationID, as); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "assessment_" + as.Status, ResourceType: "vendor", ResourceID: as.VendorID,
			After: map[string]any{"assessmentId": as.ID, "suggestedProbability": as.SuggestedProbability, "suggestedImpact": as.SuggestedImpact}})
	})
	if err != nil {
		return fmt.Errorf("finish vendor assessment %s: %w", as.ID, err)
	}
	return nil
}

func siteRoot(website string) *url.URL {
	u, err := url.Parse(website)
	if err != nil {
		return nil
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}
}

func (a *App) fetchSecurityTxt(ctx context.Context, website string, log func(string, string)) *SecurityTxt {
	root := siteRoot(website)
	if root == nil {
		return nil
	}
	u := root.String() + "/.well-known/security.txt"
	out := &SecurityTxt{URL: u, Contact: []string{}, Policy: []string{}, Encryption: []string{}, Acknowledgments: []string{},
		Canonical: []string{}, Hiring: []string{}, Problems: []string{}}
	page, err := a.webFetch.Fetch(ctx, u, maxSecurityTxtBytes)
	if err != nil {
		log("warn", "security.txt: "+err.Error())
		out.Problems = append(out.Problems, "could not be read: "+err.Error())
		return out
	}
	if page.Status != 200 {
		out.Problems = append(out.Problems, fmt.Sprintf("answered HTTP %d", page.Status))
		return out
	}
	if ct := strings.ToLower(page.ContentType); !strings.HasPrefix(ct, "text/plain") {
		out.Problems = append(out.Problems, fmt.Sprintf("served as %q, not text/plain", page.ContentType))
		return out
	}
	ParseSecurityTxt(string(page.Body), a.Now(), out)
	return out
}

// ParseSecurityTxt reads the fields of a security.txt (RFC 9116) into out:
// Contact and Expires are required, Expires at most once and in the future.
func ParseSecurityTxt(body string, now time.Time, out *SecurityTxt) {
	out.Found = true
	out.Signed = strings.Contains(body, "-----BEGIN PGP SIGNED MESSAGE-----")
	expires := 0
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-----") || strings.HasPrefix(line, "Hash:") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "contact":
			out.Contact = append(out.Contact, value)
		case "expires":
			expires++
			t, err := time.Parse(time.RFC3339, value)
			if err != nil {
				out.Problems = append(out.Problems, fmt.Sprintf("Expires %q is not an RFC 3339 time", value))
				continue
			}
			t = t.UTC()
			out.Expires = &t
			out.Expired = !t.After(now)
		case "policy":
			out.Policy = append(out.Policy, value)
		case "encryption":
			out.Encryption = append(out.Encryption, value)
		case "acknowledgments", "acknowledgements":
			out.Acknowledgments = append(out.Acknowledgments, value)
		case "preferred-languages":
			out.PreferredLanguages = value
		case "canonical":
			out.Canonical = append(out.Canonical, value)
		case "hiring":
			out.Hiring = append(out.Hiring, value)
		}
	}
	if len(out.Contact) == 0 {
		out.Problems = append(out.Problems, "no Contact field (required)")
	}
	switch {
	case expires == 0:
		out.Problems = append(out.Problems, "no Expires field (required)")
	case expires > 1:
		out.Problems = append(out.Problems, "Expires appears more than once")
	}
	if out.Expired {
		out.Problems = append(out.Problems, "Expires is in the past")
	}
}

var hrefRe = regexp.MustCompile(`(?is)<a\s[^>]*href\s*=\s*["']([^"']+)["'][^>]*>(.*?)</a>`)

// findTrustPage reads the vendor's home page for a link to a trust or
// security page and fetches the first one found.
func (a *App) findTrustPage(ctx context.Context, website string, log func(string, string)) *TrustPage {
	home, err := a.webFetch.Fetch(ctx, website, maxHomePageBytes)
	if err != nil {
		log("warn", "home page: "+err.Error())
		return nil
	}
	base, err := url.Parse(home.URL)
	if err != nil {
		return nil
	}
	for _, m := range hrefRe.FindAllStringSubmatch(string(home.Body), 500) {
		href, text := strings.ToLower(m[1]), strings.ToLower(m[2])
		if strings.Contains(href, "security.txt") || strings.HasPrefix(href, "mailto:") {
			continue
		}
		if !strings.Contains(href, "trust") && !strings.Contains(href, "security") && !strings.Contains(text, "trust") && !strings.Contains(text, "security") {
			continue
		}
		ref, err := url.Parse(strings.TrimSpace(m[1]))
		if err != nil {
			continue
		}
		u := base.ResolveReference(ref)
		if u.Scheme != "https" && u.Scheme != "http" {
			continue
		}
		tp := &TrustPage{URL: u.String()}
		page, err := a.webFetch.Fetch(ctx, tp.URL, 64<<10)
		if err != nil {
			log("warn", "trust page: "+err.Error())
			return tp
		}
		tp.Status, tp.Reachable = page.Status, page.Status >= 200 && page.Status < 300
		return tp
	}
	log("info", "the home page links to no trust or security page")
	return nil
}

// suggestVendorRisk turns the findings into a suggested inherent
// probability (from the site's security posture) and impact (from what the
// register says the vendor handles), with the reasons.
func suggestVendorRisk(v *Vendor, r *AssessmentResults) (prob, impact string, reasons []string) {
	points := 0
	failed, errored := 0, 0
	for _, c := range r.Checks {
		switch c.Status {
		case CheckFail:
			failed++
			w := map[string]int{"critical": 3, "high": 2, "medium": 1}[c.Severity]
			points += w
			reasons = append(reasons, fmt.Sprintf("HTTPS check failed (%s): %s — %s", c.Severity, c.Title, c.Message))
		case CheckError:
			errored++
		}
	}
	switch {
	case len(r.Checks) > 0 && errored == len(r.Checks):
		points += 2
		reasons = append(reasons, "the website could not be checked (every HTTPS check errored): its security cannot be observed")
	case failed == 0 && len(r.Checks) > 0:
		reasons = append(reasons, "every HTTPS check passed (TLS 1.2+, trusted certificate for the host, not about to expire, HSTS, security headers)")
	}
	if st := r.SecurityTxt; st != nil {
		switch {
		case !st.Found:
			points++
			reasons = append(reasons, "no security.txt ("+strings.Join(st.Problems, "; ")+"): no published way to report vulnerabilities")
		case len(st.Problems) > 0:
			points++
			reasons = append(reasons, "security.txt has problems: "+strings.Join(st.Problems, "; "))
		default:
			reasons = append(reasons, "security.txt is valid (RFC 9116) with a contact and a future expiry")
		}
	}
	if tp := r.TrustPage; tp != nil && tp.Reachable {
		reasons = append(reasons, "the home page links to a trust or security page ("+tp.URL+")")
	} else if r.SecurityTxt != nil {
		reasons = append(reasons, "no reachable trust or security page is linked from the home page")
	}
	switch {
	case points == 0:
		prob = "unlikely"
	case points <= 2:
		prob = "possible"
	case points <= 4:
		prob = "likely"
	default:
		prob = "very_likely"
	}
	level := 1 // minor
	if v.ProcessesPersonalData {
		level++
		reasons = append(reasons, "impact: the vendor processes personal data")
	}
	if v.ICTService {
		level++
		reasons = append(reasons, "impact: the vendor provides an ICT service")
	}
	switch v.Criticality {
	case "critical":
		level += 2
		reasons = append(reasons, "impact: the vendor is marked critical")
	case "important":
		level++
		reasons = append(reasons, "impact: the vendor is marked important")
	}
	if level > 4 {
		level = 4
	}
	impact = Impacts[level]
	reasons = append(reasons, fmt.Sprintf("suggested: probability %s, impact %s (probability from the site's posture; impact from the register's criticality, personal data and ICT fields)", prob, impact))
	return prob, impact, reasons
}
