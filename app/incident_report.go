package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// NIS2 entity types (Directive (EU) 2022/2555 Art. 3).
const (
	NIS2Essential  = "essential"
	NIS2Important  = "important"
	NIS2NotInScope = "not_in_scope"
)

// GDPR roles.
const (
	GDPRController             = "controller"
	GDPRProcessor              = "processor"
	GDPRControllerAndProcessor = "controller_and_processor"
)

// Profile enumerations.
var (
	NIS2EntityTypes = []string{NIS2Essential, NIS2Important, NIS2NotInScope}
	GDPRRoles       = []string{GDPRController, GDPRProcessor, GDPRControllerAndProcessor}
)

// IncidentProfile holds the facts about the organization that decide which
// regimes apply and who reports go to. A nil field is unanswered.
type IncidentProfile struct {
	LegalName *string `json:"legalName"`
	// MemberState is the ISO code of the main establishment.
	MemberState *string `json:"memberState"`
	// NIS2EntityType: essential, important or not_in_scope (NIS2 Art. 3).
	NIS2EntityType *string `json:"nis2EntityType"`
	NIS2Sector     *string `json:"nis2Sector"`
	// FinancialEntity: a financial entity under DORA Art. 2(1).
	FinancialEntity     *bool   `json:"financialEntity"`
	FinancialEntityType *string `json:"financialEntityType"`
	LEI                 *string `json:"lei"`
	// GDPRRole: controller, processor or controller_and_processor.
	GDPRRole *string `json:"gdprRole"`
	// CRAManufacturer: a manufacturer of products with digital elements.
	CRAManufacturer *bool `json:"craManufacturer"`
	// Contacts for the reports.
	ContactName  *string `json:"contactName"`
	ContactEmail *string `json:"contactEmail"`
	ContactPhone *string `json:"contactPhone"`
	DPOContact   *string `json:"dpoContact"`
	// Authorities reports go to, by regime (names as you address them).
	NIS2Authority *string    `json:"nis2Authority"`
	DORAAuthority *string    `json:"doraAuthority"`
	GDPRAuthority *string    `json:"gdprAuthority"`
	CRAAuthority  *string    `json:"craAuthority"`
	UpdatedAt     *time.Time `json:"updatedAt"`
	UpdatedBy     *ActorRef  `json:"updatedBy"`
}

// Authority returns the recorded authority of a regime, or "".
func (p *IncidentProfile) Authority(regime string) string {
	if p == nil {
		return ""
	}
	m := map[string]*string{RegimeNIS2: p.NIS2Authority, RegimeDORA: p.DORAAuthority, RegimeGDPR: p.GDPRAuthority, RegimeCRA: p.CRAAuthority}
	return sp(m[regime])
}

func sp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// IncidentProfileInput is the body of PATCH /v1/incident-profile: an absent
// field stays, null clears it.
type IncidentProfileInput struct {
	LegalName           Opt[string] `json:"legalName"`
	MemberState         Opt[string] `json:"memberState"`
	NIS2EntityType      Opt[string] `json:"nis2EntityType"`
	NIS2Sector          Opt[string] `json:"nis2Sector"`
	FinancialEntity     Opt[bool]   `json:"financialEntity"`
	FinancialEntityType Opt[string] `json:"financialEntityType"`
	LEI                 Opt[string] `json:"lei"`
	GDPRRole            Opt[string] `json:"gdprRole"`
	CRAManufacturer     Opt[bool]   `json:"craManufacturer"`
	ContactName         Opt[string] `json:"contactName"`
	ContactEmail        Opt[string] `json:"contactEmail"`
	ContactPhone        Opt[string] `json:"contactPhone"`
	DPOContact          Opt[string] `json:"dpoContact"`
	NIS2Authority       Opt[string] `json:"nis2Authority"`
	DORAAuthority       Opt[string] `json:"doraAuthority"`
	GDPRAuthority       Opt[string] `json:"gdprAuthority"`
	CRAAuthority        Opt[string] `json:"craAuthority"`
}

func (in *IncidentProfileInput) apply(p *IncidentProfile, ve *ValidationError) {
	text := func(dst **string, src Opt[string], field string) { optText(ve, dst, src, field, 500) }
	enum := func(dst **string, src Opt[string], field string, allowed []string) {
		if !src.Set {
			return
		}
		*dst = nil
		if !src.Null && strings.TrimSpace(src.Value) != "" {
			v := normEnum(&src.Value)
			oneOf(ve, field, v, allowed)
			*dst = &v
		}
	}
	text(&p.LegalName, in.LegalName, "legalName")
	if in.MemberState.Set {
		p.MemberState = nil
		if !in.MemberState.Null && strings.TrimSpace(in.MemberState.Value) != "" {
			c := strings.ToUpper(strings.TrimSpace(in.MemberState.Value))
			if !InEEA(c) {
				ve.Add("memberState", CodeInvalid, in.MemberState.Value, "memberState must be the ISO code of an EU/EEA member state")
			}
			p.MemberState = &c
		}
	}
	enum(&p.NIS2EntityType, in.NIS2EntityType, "nis2EntityType", NIS2EntityTypes)
	text(&p.NIS2Sector, in.NIS2Sector, "nis2Sector")
	optBool(&p.FinancialEntity, in.FinancialEntity)
	text(&p.FinancialEntityType, in.FinancialEntityType, "financialEntityType")
	text(&p.LEI, in.LEI, "lei")
	if p.LEI != nil && len(*p.LEI) != 20 {
		ve.Add("lei", CodeInvalid, *p.LEI, "lei must be the 20-character Legal Entity Identifier")
	}
	enum(&p.GDPRRole, in.GDPRRole, "gdprRole", GDPRRoles)
	optBool(&p.CRAManufacturer, in.CRAManufacturer)
	text(&p.ContactName, in.ContactName, "contactName")
	text(&p.ContactEmail, in.ContactEmail, "contactEmail")
	if p.ContactEmail != nil && !validEmail(*p.ContactEmail) {
		ve.Add("contactEmail", CodeInvalid, *p.ContactEmail, "contactEmail must be an email address")
	}
	text(&p.ContactPhone, in.ContactPhone, "contactPhone")
	text(&p.DPOContact, in.DPOContact, "dpoContact")
	text(&p.NIS2Authority, in.NIS2Authority, "nis2Authority")
	text(&p.DORAAuthority, in.DORAAuthority, "doraAuthority")
	text(&p.GDPRAuthority, in.GDPRAuthority, "gdprAuthority")
	text(&p.CRAAuthority, in.CRAAuthority, "craAuthority")
}

// incidentProfile returns the organization's profile, empty before the
// first update.
func (a *App) incidentProfile(ctx context.Context, orgID string) (*IncidentProfile, error) {
	p, err := a.store.GetIncidentProfile(ctx, orgID)
	if errors.Is(err, ErrNotFound) {
		return &IncidentProfile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("incident profile: %w", err)
	}
	return p, nil
}

// GetIncidentProfile returns the organization's reporting profile.
func (a *App) GetIncidentProfile(ctx context.Context) (*IncidentProfile, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	if err := readsOrgSettings(p); err != nil {
		return nil, err
	}
	return a.incidentProfile(ctx, p.OrgID)
}

// UpdateIncidentProfile changes the reporting profile and recomputes the
// clocks of every incident not closed (the GDPR role changes which reports
// are due).
func (a *App) UpdateIncidentProfile(ctx context.Context, in IncidentProfileInput) (*IncidentProfile, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *IncidentProfile
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.incidentProfile(ctx, p.OrgID)
		if err != nil {
			return err
		}
		prof := *before
		ve := NewValidationError()
		in.apply(&prof, ve)
		if err := ve.Err(); err != nil {
			return err
		}
		now := a.Now()
		prof.UpdatedAt, prof.UpdatedBy = &now, &ActorRef{Type: p.ActorType(), ID: p.ActorID()}
		if err := a.store.SaveIncidentProfile(ctx, p.OrgID, &prof); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "updated", ResourceType: "incident_profile", ResourceID: p.OrgID, Before: before, After: &prof}); err != nil {
			return err
		}
		ids, err := a.store.OpenIncidentIDs(ctx, p.OrgID)
		if err != nil {
			return err
		}
		for _, id := range ids {
			inc, err := a.store.GetIncident(ctx, p.OrgID, id)
			if err != nil {
				return err
			}
			if err := a.syncReports(ctx, p.OrgID, inc); err != nil {
				return err
			}
		}
		out = &prof
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update incident profile: %w", err)
	}
	return out, nil
}

// IncidentReport is one report a regime asks for: its clock and state.
type IncidentReport struct {
	ID          string     `json:"id"`
	IncidentID  string     `json:"incidentId"`
	Regime      string     `json:"regime"`
	Kind        string     `json:"kind"`
	Title       string     `json:"title"`
	Status      string     `json:"status"`
	DueAt       *time.Time `json:"dueAt"`
	StartEvent  string     `json:"startEvent"`
	StartAt     *time.Time `json:"startAt"`
	Provisional bool       `json:"provisional"`
	Basis       string     `json:"basis"`
	Reasoning   string     `json:"reasoning"`
	FirstSentAt *time.Time `json:"firstSentAt"`
	LastSentAt  *time.Time `json:"lastSentAt"`
	Versions    int        `json:"versions"`
	// Overdue: not sent and past its due time.
	Overdue bool `json:"overdue"`
	// SecondsLeft until the due time (negative when overdue); null without one.
	SecondsLeft *int64    `json:"secondsLeft"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// open reports whether the report still has to be sent.
func (r *IncidentReport) open() bool {
	return r.Status == ReportPending || r.Status == ReportAwaitingFacts
}

// derive fills the title and the fields that depend on now.
func (r *IncidentReport) derive(now time.Time) {
	r.Title = ReportTitle(r.Regime, r.Kind)
	r.Overdue, r.SecondsLeft = false, nil
	if r.DueAt != nil && r.open() {
		s := int64(r.DueAt.Sub(now) / time.Second)
		r.SecondsLeft = &s
		r.Overdue = now.After(*r.DueAt)
	}
}

// ReportTitle names a report for people.
func ReportTitle(regime, kind string) string {
	names := map[string]string{
		ReportKey(RegimeNIS2, ReportEarlyWarning):     "NIS2 early warning",
		ReportKey(RegimeNIS2, ReportNotification):     "NIS2 incident notification",
		ReportKey(RegimeNIS2, ReportIntermediate):     "NIS2 intermediate report",
		ReportKey(RegimeNIS2, ReportProgress):         "NIS2 progress report",
		ReportKey(RegimeNIS2, ReportFinal):            "NIS2 final report",
		ReportKey(RegimeDORA, ReportInitial):          "DORA initial notification",
		ReportKey(RegimeDORA, ReportIntermediate):     "DORA intermediate report",
		ReportKey(RegimeDORA, ReportFinal):            "DORA final report",
		ReportKey(RegimeGDPR, ReportNotification):     "GDPR notification to the supervisory authority",
		ReportKey(RegimeGDPR, ReportCommunication):    "GDPR communication to the data subjects",
		ReportKey(RegimeGDPR, ReportControllerNotice): "GDPR notification to the controller",
		ReportKey(RegimeCRA, ReportEarlyWarning):      "CRA early warning",
		ReportKey(RegimeCRA, ReportNotification):      "CRA notification",
		ReportKey(RegimeCRA, ReportFinal):             "CRA final report",
	}
	if n, ok := names[ReportKey(regime, kind)]; ok {
		return n
	}
	return strings.ToUpper(regime) + " " + strings.ReplaceAll(kind, "_", " ")
}

// ReportVersion is a saved draft or a sent report. Versions never change:
// a later edit is a new version.
type ReportVersion struct {
	ID            string            `json:"id"`
	ReportID      string            `json:"reportId"`
	IncidentID    string            `json:"incidentId"`
	Version       int               `json:"version"`
	State         string            `json:"state"` // draft or sent
	Content       map[string]string `json:"content"`
	ContentSHA256 string            `json:"contentSha256"`
	Note          string            `json:"note"`
	// Authority and Reference say to whom it was sent and under which
	// reference; SentAt when.
	Authority *string    `json:"authority"`
	Reference *string    `json:"reference"`
	SentAt    *time.Time `json:"sentAt"`
	CreatedBy ActorRef   `json:"createdBy"`
	CreatedAt time.Time  `json:"createdAt"`
}

// ReportDetail is a report with its template, current content and versions.
type ReportDetail struct {
	IncidentReport
	// Fields are the report's structure, in the order the regulation or its
	// templates list the information.
	Fields []ReportField `json:"fields"`
	// Content is the latest version's content, or the draft filled from the
	// incident record when no version was saved (Prefilled true).
	Content        map[string]string `json:"content"`
	Prefilled      bool              `json:"prefilled"`
	VersionHistory []ReportVersion   `json:"versionHistory"`
	// Authority is where the report goes by default (the profile's).
	Authority string `json:"authority"`
}

// ReportDraftInput is the body of PATCH /v1/incidents/{id}/reports/{reportId}:
// field values to change (the others keep their current content). Saving
// makes a new draft version.
type ReportDraftInput struct {
	Content map[string]string `json:"content"`
	Note    *string           `json:"note"`
}

// ReportSendInput is the body of POST .../reports/{reportId}/send: the
// report was sent to an authority outside the appliance; record it.
type ReportSendInput struct {
	// Authority is to whom (default: the profile's authority of the regime).
	Authority *string `json:"authority"`
	// Reference is the authority's or portal's reference, if any.
	Reference *string `json:"reference"`
	// SentAt is when it was sent (RFC 3339; default now).
	SentAt *string `json:"sentAt"`
	// Content changes field values before sending, as in a draft save.
	Content map[string]string `json:"content"`
	Note    *string           `json:"note"`
}

// syncReports recomputes the clocks of an incident from its facts and
// stores them: new reports are added, changed ones updated, reports of a
// regime no longer confirmed marked not required. A report is never removed.
func (a *App) syncReports(ctx context.Context, orgID string, inc *Incident) error {
	prof, err := a.incidentProfile(ctx, orgID)
	if err != nil {
		return err
	}
	existing, err := a.store.ListIncidentReports(ctx, orgID, []string{inc.ID})
	if err != nil {
		return err
	}
	byKey := map[string]*IncidentReport{}
	sent := map[string]SentTimes{}
	for i := range existing {
		r := &existing[i]
		byKey[ReportKey(r.Regime, r.Kind)] = r
		sent[ReportKey(r.Regime, r.Kind)] = SentTimes{First: r.FirstSentAt, Last: r.LastSentAt}
	}
	now := a.Now()
	seen := map[string]bool{}
	for _, pl := range PlanReports(inc, prof, sent) {
		seen[pl.Key()] = true
		ex := byKey[pl.Key()]
		r := IncidentReport{ID: NewID(PrefixIncidentReport), IncidentID: inc.ID, CreatedAt: now}
		if ex != nil {
			r = *ex
		}
		r.Regime, r.Kind, r.Status, r.DueAt, r.StartEvent, r.StartAt = pl.Regime, pl.Kind, pl.Status, pl.DueAt, pl.StartEvent, pl.StartAt
		r.Provisional, r.Basis, r.Reasoning = pl.Provisional, pl.Basis, pl.Reasoning
		if err := a.saveClock(ctx, orgID, ex, &r, now); err != nil {
			return err
		}
	}
	for _, ex := range existing {
		if seen[ReportKey(ex.Regime, ex.Kind)] || ex.Status == ReportSent || ex.Status == ReportNotRequired {
			continue
		}
		r := ex
		r.Status, r.DueAt, r.Provisional = ReportNotRequired, nil, false
		r.Reasoning = "The regime is no longer confirmed for this incident."
		if err := a.saveClock(ctx, orgID, &ex, &r, now); err != nil {
			return err
		}
	}
	return nil
}

// saveClock writes a report's clock when it is new or changed, with an
// audit record.
func (a *App) saveClock(ctx context.Context, orgID string, before, r *IncidentReport, now time.Time) error {
	if before == nil {
		r.UpdatedAt = now
		if err := a.store.CreateIncidentReport(ctx, orgID, r); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "clock_started", ResourceType: "incident_report", ResourceID: r.ID, After: r})
	}
	same := before.Status == r.Status && eqTime(before.DueAt, r.DueAt) && before.StartEvent == r.StartEvent && eqTime(before.StartAt, r.StartAt) &&
		before.Provisional == r.Provisional && before.Basis == r.Basis && before.Reasoning == r.Reasoning
	if same {
		return nil
	}
	r.UpdatedAt = now
	if err := a.store.UpdateIncidentReport(ctx, orgID, r); err != nil {
		return err
	}
	return a.record(ctx, Mutation{Action: "clock_updated", ResourceType: "incident_report", ResourceID: r.ID, Before: before, After: r})
}

func eqTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// ListIncidentReports lists an incident's reports (its clocks).
func (a *App) ListIncidentReports(ctx context.Context, incidentID string) ([]IncidentReport, error) {
	inc, err := a.GetIncident(ctx, incidentID)
	if err != nil {
		return nil, err
	}
	return inc.Reports, nil
}

// reportContext loads an incident (visible to the principal) and one of
// its reports.
func (a *App) reportContext(ctx context.Context, p *Principal, incidentID, reportID string) (*Incident, *IncidentReport, error) {
	inc, err := a.store.GetIncident(ctx, p.OrgID, incidentID)
	if err != nil {
		return nil, nil, err
	}
	if err := visibleIncident(p, inc); err != nil {
		return nil, nil, err
	}
	r, err := a.store.GetIncidentReport(ctx, p.OrgID, incidentID, reportID)
	if err != nil {
		return nil, nil, err
	}
	r.derive(a.Now())
	return inc, r, nil
}

// GetIncidentReport returns a report with its template, its current
// content (the latest version, else the draft filled from the incident)
// and its versions.
func (a *App) GetIncidentReport(ctx context.Context, incidentID, reportID string) (*ReportDetail, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	inc, r, err := a.reportContext(ctx, p, incidentID, reportID)
	if err != nil {
		return nil, err
	}
	return a.reportDetail(ctx, p.OrgID, inc, r)
}

func (a *App) reportDetail(ctx context.Context, orgID string, inc *Incident, r *IncidentReport) (*ReportDetail, error) {
	versions, err := a.store.ListReportVersions(ctx, orgID, r.ID)
	if err != nil {
		return nil, err
	}
	prof, err := a.incidentProfile(ctx, orgID)
	if err != nil {
		return nil, err
	}
	org, err := a.store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	d := &ReportDetail{IncidentReport: *r, Fields: ReportFields(r.Regime, r.Kind, inc), VersionHistory: versions, Authority: prof.Authority(r.Regime)}
	if len(versions) > 0 {
		d.Content = versions[len(versions)-1].Content
	} else {
		d.Content, d.Prefilled = DraftReport(inc, prof, org.Name, r), true
	}
	return d, nil
}

// ListReportVersions lists a report's versions, oldest first.
func (a *App) ListReportVersions(ctx context.Context, incidentID, reportID string) ([]ReportVersion, error) {
	p, err := authorize(ctx, CapRead)
	if err != nil {
		return nil, err
	}
	_, r, err := a.reportContext(ctx, p, incidentID, reportID)
	if err != nil {
		return nil, err
	}
	return a.store.ListReportVersions(ctx, p.OrgID, r.ID)
}

// mergeContent checks the keys of a change against the report's fields and
// applies it to the current content.
func mergeContent(ve *ValidationError, fields []ReportField, current, change map[string]string) map[string]string {
	known := map[string]bool{}
	for _, f := range fields {
		known[f.Key] = true
	}
	out := map[string]string{}
	for _, f := range fields {
		out[f.Key] = current[f.Key]
	}
	keys := make([]string, 0, len(change))
	for k := range change {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			ve.Add("content."+k, CodeInvalid, k, "content."+k+" is not a field of this report")
			continue
		}
		v := strings.TrimSpace(change[k])
		maxLen(ve, "content."+k, v, maxIncidentText)
		out[k] = v
	}
	return out
}

func contentHash(c map[string]string) string {
	raw, _ := json.Marshal(c) // map keys are sorted: a stable form
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// SaveReportDraft saves a new draft version of a report (owners, admins).
func (a *App) SaveReportDraft(ctx context.Context, incidentID, reportID string, in ReportDraftInput) (*ReportDetail, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *ReportDetail
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		inc, r, err := a.reportContext(ctx, p, incidentID, reportID)
		if err != nil {
			return err
		}
		cur, err := a.reportDetail(ctx, p.OrgID, inc, r)
		if err != nil {
			return err
		}
		ve := NewValidationError()
		if in.Content == nil {
			ve.Add("content", CodeRequired, nil, "content is required: the field values to save")
		}
		content := mergeContent(ve, cur.Fields, cur.Content, in.Content)
		note := trimmed(in.Note)
		maxLen(ve, "note", note, maxTimelineContent)
		if err := ve.Err(); err != nil {
			return err
		}
		now := a.Now()
		v := &ReportVersion{ID: NewID(PrefixIncidentVersion), ReportID: r.ID, IncidentID: inc.ID, Version: r.Versions + 1, State: "draft",
			Content: content, ContentSHA256: contentHash(content), Note: note, CreatedBy: ActorRef{Type: p.ActorType(), ID: p.ActorID()}, CreatedAt: now}
		if err := a.store.AddReportVersion(ctx, p.OrgID, v); err != nil {
			return err
		}
		before := *r
		r.Versions, r.UpdatedAt = v.Version, now
		if err := a.store.UpdateIncidentReport(ctx, p.OrgID, r); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "draft_saved", ResourceType: "incident_report", ResourceID: r.ID, Before: &before,
			After: map[string]any{"version": v.Version, "contentSha256": v.ContentSHA256, "incidentId": inc.ID}}); err != nil {
			return err
		}
		out, err = a.reportDetail(ctx, p.OrgID, inc, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("save report %s draft: %w", reportID, err)
	}
	return out, nil
}

// SendIncidentReport records that a report was sent to an authority
// outside the appliance (the appliance submits nothing): the exact content
// becomes an immutable version with when, by whom and to whom. A GDPR
// notification after its 72 hours must carry the reasons for the delay
// (GDPR Art. 33(1)).
func (a *App) SendIncidentReport(ctx context.Context, incidentID, reportID string, in ReportSendInput) (*ReportDetail, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *ReportDetail
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		inc, r, err := a.reportContext(ctx, p, incidentID, reportID)
		if err != nil {
			return err
		}
		cur, err := a.reportDetail(ctx, p.OrgID, inc, r)
		if err != nil {
			return err
		}
		now := a.Now()
		ve := NewValidationError()
		content := mergeContent(ve, cur.Fields, cur.Content, in.Content)
		authority := trimmed(in.Authority)
		if authority == "" {
			authority = cur.Authority
		}
		if authority == "" {
			ve.Add("authority", CodeRequired, nil, "authority is required: to whom the report was sent (or record the "+r.Regime+" authority in the incident profile)")
		}
		maxLen(ve, "authority", authority, 500)
		var reference *string
		if s := trimmed(in.Reference); s != "" {
			maxLen(ve, "reference", s, 500)
			reference = &s
		}
		sentAt := now
		if trimmed(in.SentAt) != "" {
			if t, ok := parseInstant(ve, "sentAt", *in.SentAt); ok {
				sentAt = t
				if t.After(now.Add(incidentClockSkew)) {
					ve.Add("sentAt", CodeInvalid, *in.SentAt, "sentAt must not be in the future")
				}
				if t.Before(inc.AwareAt) {
					ve.Add("sentAt", CodeInvalid, *in.SentAt, "sentAt must not be before the incident's awareAt")
				}
			}
		}
		late := r.DueAt != nil && sentAt.After(*r.DueAt)
		if late && r.Regime == RegimeGDPR && r.Kind == ReportNotification && strings.TrimSpace(content["reasonsForDelay"]) == "" {
			ve.Add("content.reasonsForDelay", CodeRequired, nil, fmt.Sprintf("the notification is sent after its 72 hours (due %s): give the reasons for the delay (GDPR Art. 33(1))",
				r.DueAt.Format(time.RFC3339)))
		}
		note := trimmed(in.Note)
		maxLen(ve, "note", note, maxTimelineContent)
		if err := ve.Err(); err != nil {
			return err
		}
		actor := ActorRef{Type: p.ActorType(), ID: p.ActorID()}
		v := &ReportVersion{ID: NewID(PrefixIncidentVersion), ReportID: r.ID, IncidentID: inc.ID, Version: r.Versions + 1, State: "sent",
			Content: content, ContentSHA256: contentHash(content), Note: note, Authority: &authority, Reference: reference, SentAt: &sentAt,
			CreatedBy: actor, CreatedAt: now}
		if err := a.store.AddReportVersion(ctx, p.OrgID, v); err != nil {
			return err
		}
		before := *r
		r.Versions, r.UpdatedAt, r.Status = v.Version, now, ReportSent
		if r.FirstSentAt == nil || sentAt.Before(*r.FirstSentAt) {
			r.FirstSentAt = &sentAt
		}
		if r.LastSentAt == nil || sentAt.After(*r.LastSentAt) {
			r.LastSentAt = &sentAt
		}
		if err := a.store.UpdateIncidentReport(ctx, p.OrgID, r); err != nil {
			return err
		}
		text := fmt.Sprintf("%s (version %d) sent to %s", r.Title, v.Version, authority)
		if reference != nil {
			text += ", reference " + *reference
		}
		if late {
			text += fmt.Sprintf("; after its due time %s", r.DueAt.Format(time.RFC3339))
		}
		if err := a.timeline(ctx, p, inc.ID, sentAt, "report", text+"."); err != nil {
			return err
		}
		if err := a.record(ctx, Mutation{Action: "sent", ResourceType: "incident_report", ResourceID: r.ID, Before: &before, After: r,
			Events: []Event{{Type: EventIncidentReportSent, Data: map[string]any{"incidentId": inc.ID, "reportId": r.ID, "regime": r.Regime,
				"kind": r.Kind, "version": v.Version, "sentAt": sentAt, "authority": authority, "reference": reference, "dueAt": r.DueAt,
				"late": late, "contentSha256": v.ContentSHA256}}}}); err != nil {
			return err
		}
		// Later clocks start from this submission (NIS2 and CRA final
		// reports, DORA intermediate and final reports).
		if err := a.syncReports(ctx, p.OrgID, inc); err != nil {
			return err
		}
		r, err = a.store.GetIncidentReport(ctx, p.OrgID, inc.ID, r.ID)
		if err != nil {
			return err
		}
		r.derive(now)
		out, err = a.reportDetail(ctx, p.OrgID, inc, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("send report %s: %w", reportID, err)
	}
	return out, nil
}

// reminderThresholds are the times before a due time at which the
// scheduler reminds; a report gets those shorter than its whole period.
var reminderThresholds = []struct {
	name string
	d    time.Duration
}{{"7d", 7 * 24 * time.Hour}, {"3d", 3 * 24 * time.Hour}, {"24h", 24 * time.Hour}, {"4h", 4 * time.Hour}, {"1h", time.Hour}}

// ReminderOverdue is the threshold name of the reminder after the due time.
const ReminderOverdue = "overdue"

// RemindIncidentDeadlines raises incident.deadline.approaching for every
// report not yet sent whose due time is within a reminder threshold, once
// per report and threshold, and once more when it is overdue. When several
// thresholds were crossed since the last run, one event (the closest
// threshold) is raised and the others are recorded as passed. It returns
// how many events it raised.
func (a *App) RemindIncidentDeadlines(ctx context.Context) (int, error) {
	orgs, err := a.store.ListOrganizations(ctx)
	if err != nil {
		return 0, fmt.Errorf("remind incident deadlines: %w", err)
	}
	n := 0
	for _, o := range orgs {
		now := a.Now()
		due, err := a.store.DueIncidentReports(ctx, o.ID, now.Add(reminderThresholds[0].d))
		if err != nil {
			return n, fmt.Errorf("remind incident deadlines: %w", err)
		}
		for _, r := range due {
			if !r.open() || r.DueAt == nil {
				continue
			}
			var crossed []string
			if now.After(*r.DueAt) {
				crossed = append(crossed, ReminderOverdue)
			}
			period := time.Duration(1<<62 - 1)
			if r.StartAt != nil {
				period = r.DueAt.Sub(*r.StartAt)
			}
			for i := len(reminderThresholds) - 1; i >= 0; i-- {
				th := reminderThresholds[i]
				if th.d < period && !now.Before(r.DueAt.Add(-th.d)) {
					crossed = append(crossed, th.name)
				}
			}
			if len(crossed) == 0 {
				continue
			}
			r := r
			emitted := false
			err := a.store.InTx(ctx, func(ctx context.Context) error {
				octx := SystemContext(ctx, o.ID)
				// Sent or moved since the scan read it: the next run decides.
				cur, err := a.store.GetIncidentReport(octx, o.ID, r.IncidentID, r.ID)
				if err != nil {
					return err
				}
				if !cur.open() || !eqTime(cur.DueAt, r.DueAt) {
					return nil
				}
				for i, th := range crossed {
					ok, err := a.store.RecordReminder(octx, o.ID, ReportReminder{ReportID: r.ID, Threshold: th, DueAt: *r.DueAt, SentAt: now, Emitted: i == 0})
					if err != nil {
						return err
					}
					if i > 0 || !ok {
						continue
					}
					r.derive(now)
					emitted = true
					data := map[string]any{"incidentId": r.IncidentID, "reportId": r.ID, "regime": r.Regime, "kind": r.Kind, "title": r.Title,
						"dueAt": *r.DueAt, "threshold": th, "overdue": r.Overdue, "status": r.Status, "provisional": r.Provisional}
					if err := a.record(octx, Mutation{Action: "deadline_" + map[bool]string{true: "overdue", false: "approaching"}[th == ReminderOverdue],
						ResourceType: "incident_report", ResourceID: r.ID, After: data,
						Events: []Event{{Type: EventIncidentDeadlineApproaching, Data: data}}}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return n, fmt.Errorf("remind report %s: %w", r.ID, err)
			}
			if emitted {
				n++
			}
		}
	}
	return n, nil
}
