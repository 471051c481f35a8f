package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Vendor enumerations (spec: Vendor).
var (
	VendorCategories  = []string{"cloud", "infrastructure", "software_as_a_service", "finance", "marketing", "sales", "hr", "other"}
	VendorStatuses    = []string{"not_assessed", "in_progress", "assessed"}
	Probabilities     = []string{"very_unlikely", "unlikely", "possible", "likely", "very_likely"}
	Impacts           = []string{"insignificant", "minor", "moderate", "major", "severe"}
	Criticalities     = []string{"critical", "important", "standard"}
	DPAStatuses       = []string{"signed", "pending", "not_required"}
	maxSubProcessors  = 200
	vendorDescription = 20000
)

// SubProcessor is a party a vendor passes personal data on to.
type SubProcessor struct {
	Name    string `json:"name"`
	Country string `json:"country"`
	Purpose string `json:"purpose"`
}

// Vendor is a third party in the vendor register.
type Vendor struct {
	ID                    string         `json:"id"`
	Name                  string         `json:"name"`
	Description           string         `json:"description"`
	Category              string         `json:"category"`
	Status                string         `json:"status"`
	InherentProbability   string         `json:"inherentProbability"`
	InherentImpact        string         `json:"inherentImpact"`
	ResidualProbability   *string        `json:"residualProbability"`
	ResidualImpact        *string        `json:"residualImpact"`
	Website               *string        `json:"website"`
	AssigneeID            *string        `json:"assigneeId"`
	ContactEmail          *string        `json:"contactEmail"`
	Country               *string        `json:"country"`
	Criticality           string         `json:"criticality"`
	ICTService            bool           `json:"ictService"`
	ProcessesPersonalData bool           `json:"processesPersonalData"`
	DPAStatus             string         `json:"dpaStatus"`
	DPASignedAt           *time.Time     `json:"dpaSignedAt"`
	DPAURL                *string        `json:"dpaUrl"`
	LastReviewedAt        *time.Time     `json:"lastReviewedAt"`
	NextReviewDue         *string        `json:"nextReviewDue"`
	TransferMechanism     *string        `json:"transferMechanism"`
	SubProcessors         []SubProcessor `json:"subProcessors"`
	RiskScore             *int           `json:"riskScore"`
	ArchivedAt            *time.Time     `json:"archivedAt"`
	CreatedAt             time.Time      `json:"createdAt"`
	UpdatedAt             time.Time      `json:"updatedAt"`
}

// VendorInput is the body of POST and PATCH /v1/vendors. Every field is
// optional in the type; create requires name.
type VendorInput struct {
	Name                  *string             `json:"name"`
	Description           *string             `json:"description"`
	Category              *string             `json:"category"`
	Status                *string             `json:"status"`
	InherentProbability   *string             `json:"inherentProbability"`
	InherentImpact        *string             `json:"inherentImpact"`
	ResidualProbability   Opt[string]         `json:"residualProbability"`
	ResidualImpact        Opt[string]         `json:"residualImpact"`
	Website               Opt[string]         `json:"website"`
	AssigneeID            Opt[string]         `json:"assigneeId"`
	ContactEmail          Opt[string]         `json:"contactEmail"`
	Country               Opt[string]         `json:"country"`
	Criticality           *string             `json:"criticality"`
	ICTService            *bool               `json:"ictService"`
	ProcessesPersonalData *bool               `json:"processesPersonalData"`
	DataProcessing        *bool               `json:"dataProcessing"`
	DPAStatus             *string             `json:"dpaStatus"`
	DPASignedAt           Opt[string]         `json:"dpaSignedAt"`
	DPAURL                Opt[string]         `json:"dpaUrl"`
	LastReviewedAt        Opt[string]         `json:"lastReviewedAt"`
	NextReviewDue         Opt[string]         `json:"nextReviewDue"`
	TransferMechanism     Opt[string]         `json:"transferMechanism"`
	SubProcessors         Opt[[]SubProcessor] `json:"subProcessors"`
}

// VendorFilter holds the list's filters; they combine with AND.
type VendorFilter struct {
	Criticality           string
	ProcessesPersonalData *bool
	ICTService            *bool
	Category              string
	Country               string
	DPAStatus             string
	Status                string
	AssigneeID            string
	Archived              bool
	Search                string
	Sort                  string // column name, "-" prefix for descending
	Page                  Page
}

// VendorSorts are the sort keys the list accepts.
var VendorSorts = []string{"name", "createdAt", "updatedAt", "riskScore", "nextReviewDue"}

// VendorStore persists vendors.
type VendorStore interface {
	CreateVendor(ctx context.Context, orgID string, v *Vendor) error
	UpdateVendor(ctx context.Context, orgID string, v *Vendor) error
	GetVendor(ctx context.Context, orgID, id string) (*Vendor, error)
	ListVendors(ctx context.Context, orgID string, f VendorFilter) (List[Vendor], error)
}

var probabilityScore = map[string]int{"very_unlikely": 1, "unlikely": 2, "possible": 3, "likely": 4, "very_likely": 5}
var impactScore = map[string]int{"insignificant": 1, "minor": 2, "moderate": 3, "major": 4, "severe": 5}

// RiskScoreOf is probability (1-5) times impact (1-5), 1 to 25.
func RiskScoreOf(probability, impact string) int {
	return probabilityScore[probability] * impactScore[impact]
}

func (v *Vendor) deriveRiskScore() {
	if v.ResidualProbability != nil && v.ResidualImpact != nil {
		v.RiskScore = Ptr(RiskScoreOf(*v.ResidualProbability, *v.ResidualImpact))
		return
	}
	v.RiskScore = Ptr(RiskScoreOf(v.InherentProbability, v.InherentImpact))
}

// NormalizeCategory maps free text to the category enum, case-insensitively
// ("Cloud" -> "cloud", "Software as a Service" -> "software_as_a_service").
func NormalizeCategory(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "_"), "-", "_")
}

// apply copies the set fields of in onto v and validates the result.
func (in *VendorInput) apply(v *Vendor, ve *ValidationError) {
	str := func(dst *string, src *string, field string, max int, required bool) {
		if src == nil {
			return
		}
		s := strings.TrimSpace(*src)
		if required && s == "" {
			ve.Add(field, CodeRequired, nil, field+" must not be empty")
		}
		maxLen(ve, field, s, max)
		*dst = s
	}
	enum := func(dst *string, src *string, field string, allowed []string) {
		if src == nil {
			return
		}
		oneOf(ve, field, *src, allowed)
		if *src == "" {
			ve.Add(field, CodeInvalidEnum, *src, field+" must be one of "+strings.Join(allowed, ", "))
		}
		*dst = *src
	}
	optEnum := func(dst **string, src Opt[string], field string, allowed []string) {
		if !src.Set {
			return
		}
		*dst = nil
		if !src.Null {
			oneOf(ve, field, src.Value, allowed)
			*dst = Ptr(src.Value)
		}
	}
	optStr := func(dst **string, src Opt[string], field string, max int, check func(string) bool, msg string) {
		if !src.Set {
			return
		}
		*dst = nil
		if src.Null {
			return
		}
		s := strings.TrimSpace(src.Value)
		if s == "" {
			return
		}
		maxLen(ve, field, s, max)
		if check != nil && !check(s) {
			ve.Add(field, CodeInvalid, src.Value, msg)
		}
		*dst = &s
	}
	optTime := func(dst **time.Time, src Opt[string], field string) {
		if !src.Set {
			return
		}
		*dst = nil
		if src.Null || src.Value == "" {
			return
		}
		t, ok := ParseTime(src.Value)
		if !ok {
			ve.Add(field, CodeInvalid, src.Value, field+" must be a date (YYYY-MM-DD) or an RFC 3339 time")
			return
		}
		*dst = &t
	}

	str(&v.Name, in.Name, "name", 255, true)
	str(&v.Description, in.Description, "description", vendorDescription, false)
	if in.Category != nil {
		c := NormalizeCategory(*in.Category)
		in.Category = &c
	}
	enum(&v.Category, in.Category, "category", VendorCategories)
	enum(&v.Status, in.Status, "status", VendorStatuses)
	enum(&v.InherentProbability, in.InherentProbability, "inherentProbability", Probabilities)
	enum(&v.InherentImpact, in.InherentImpact, "inherentImpact", Impacts)
	optEnum(&v.ResidualProbability, in.ResidualProbability, "residualProbability", Probabilities)
	optEnum(&v.ResidualImpact, in.ResidualImpact, "residualImpact", Impacts)
	optStr(&v.Website, in.Website, "website", 2048, validURL, "website must be an http or https URL")
	if in.AssigneeID.Set {
		v.AssigneeID = nil
		if id := strings.TrimSpace(in.AssigneeID.Value); !in.AssigneeID.Null && id != "" {
			v.AssigneeID = &id
		}
	}
	optStr(&v.ContactEmail, in.ContactEmail, "contactEmail", 320, validEmail, "contactEmail must be an email address")
	optStr(&v.Country, in.Country, "country", 64, func(s string) bool { return ValidCountry(strings.ToUpper(s)) },
		"country must be an ISO 3166-1 alpha-2 code")
	if v.Country != nil {
		v.Country = Ptr(strings.ToUpper(*v.Country))
	}
	enum(&v.Criticality, in.Criticality, "criticality", Criticalities)
	if in.ICTService != nil {
		v.ICTService = *in.ICTService
	}
	if in.DataProcessing != nil && in.ProcessesPersonalData != nil && *in.DataProcessing != *in.ProcessesPersonalData {
		ve.Add("dataProcessing", CodeInvalid, *in.DataProcessing, "dataProcessing is an alias of processesPersonalData and must agree with it")
	}
	if in.ProcessesPersonalData != nil {
		v.ProcessesPersonalData = *in.ProcessesPersonalData
	} else if in.DataProcessing != nil {
		v.ProcessesPersonalData = *in.DataProcessing
	}
	enum(&v.DPAStatus, in.DPAStatus, "dpaStatus", DPAStatuses)
	optTime(&v.DPASignedAt, in.DPASignedAt, "dpaSignedAt")
	optStr(&v.DPAURL, in.DPAURL, "dpaUrl", 2048, validURL, "dpaUrl must be an http or https URL")
	optTime(&v.LastReviewedAt, in.LastReviewedAt, "lastReviewedAt")
	if in.NextReviewDue.Set {
		v.NextReviewDue = nil
		if !in.NextReviewDue.Null && in.NextReviewDue.Value != "" {
			if t, ok := ParseDate(in.NextReviewDue.Value); ok {
				v.NextReviewDue = Ptr(t.Format("2006-01-02"))
			} else {
				ve.Add("nextReviewDue", CodeInvalid, in.NextReviewDue.Value, "nextReviewDue must be a date (YYYY-MM-DD)")
			}
		}
	}
	optStr(&v.TransferMechanism, in.TransferMechanism, "transferMechanism", 500, nil, "")
	if in.SubProcessors.Set {
		v.SubProcessors = []SubProcessor{}
		if !in.SubProcessors.Null {
			if len(in.SubProcessors.Value) > maxSubProcessors {
				ve.Add("subProcessors", CodeTooLong, len(in.SubProcessors.Value), fmt.Sprintf("subProcessors may list at most %d entries", maxSubProcessors))
			}
			for i, sp := range in.SubProcessors.Value {
				f := fmt.Sprintf("subProcessors[%d]", i)
				sp.Name, sp.Purpose = strings.TrimSpace(sp.Name), strings.TrimSpace(sp.Purpose)
				sp.Country = strings.ToUpper(strings.TrimSpace(sp.Country))
				if sp.Name == "" {
					ve.Add(f+".name", CodeRequired, nil, f+".name is required")
				}
				maxLen(ve, f+".name", sp.Name, 255)
				if sp.Country == "" {
					ve.Add(f+".country", CodeRequired, nil, f+".country is required")
				} else if !ValidCountry(sp.Country) {
					ve.Add(f+".country", CodeInvalid, sp.Country, f+".country must be an ISO 3166-1 alpha-2 code")
				}
				if sp.Purpose == "" {
					ve.Add(f+".purpose", CodeRequired, nil, f+".purpose is required")
				}
				maxLen(ve, f+".purpose", sp.Purpose, 255)
				v.SubProcessors = append(v.SubProcessors, sp)
			}
		}
	}
}

// checkRules applies the cross-field rules of the register.
func (v *Vendor) checkRules(ve *ValidationError) {
	if v.ProcessesPersonalData && v.Country != nil && !InEEA(*v.Country) && v.TransferMechanism == nil {
		ve.Add("transferMechanism", CodeRequired, nil,
			"transferMechanism is required for a vendor outside the EU/EEA that processes personal data")
	}
}

func (a *App) checkAssignee(ctx context.Context, orgID string, id *string, ve *ValidationError) error {
	if id == nil {
		return nil
	}
	_, err := a.store.GetPerson(ctx, orgID, *id)
	if errors.Is(err, ErrNotFound) {
		ve.Add("assigneeId", CodeUnknownReference, *id, "assigneeId must be a person of this organization")
		return nil
	}
	return err
}

// CreateVendor adds a vendor to the register.
func (a *App) CreateVendor(ctx context.Context, in VendorInput) (*Vendor, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	v := &Vendor{ID: NewID(PrefixVendor), Category: "other", Status: "not_assessed", InherentProbability: "very_unlikely",
		InherentImpact: "insignificant", Criticality: "standard", SubProcessors: []SubProcessor{}, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	in.apply(v, ve)
	if in.DPAStatus == nil {
		v.DPAStatus = "not_required"
		if v.ProcessesPersonalData {
			v.DPAStatus = "pending"
		}
	}
	v.checkRules(ve)
	v.deriveRiskScore()
	// Validated before the write transaction, the assignee read from
	// committed state; the transaction checks again only that the assignee
	// still exists.
	if err := a.checkAssignee(ctx, p.OrgID, v.AssigneeID, ve); err != nil {
		return nil, fmt.Errorf("create vendor: %w", err)
	}
	if err := ve.Err(); err != nil {
		return nil, fmt.Errorf("create vendor: %w", err)
	}
	// The journal is rendered before the write transaction: the vendor
	// is complete here and the transaction does not change it.
	pm, err := a.prepare(ctx, Mutation{Action: "created", ResourceType: "vendor", ResourceID: v.ID, After: v,
		Events: []Event{ResourceEvent("vendor", "created", v)}})
	if err != nil {
		return nil, fmt.Errorf("create vendor: %w", err)
	}
	err = a.createTx(ctx, func(ctx context.Context) error {
		if v.AssigneeID != nil {
			ve := NewValidationError()
			if err := a.checkAssignee(ctx, p.OrgID, v.AssigneeID, ve); err != nil {
				return err
			}
			if err := ve.Err(); err != nil {
				return err
			}
		}
		if err := a.store.CreateVendor(ctx, p.OrgID, v); err != nil {
			return err
		}
		return a.recordPrepared(ctx, pm)
	})
	if err != nil {
		return nil, fmt.Errorf("create vendor: %w", err)
	}
	return v, nil
}

// UpdateVendor applies a patch to a vendor.
func (a *App) UpdateVendor(ctx context.Context, id string, in VendorInput) (*Vendor, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Vendor
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetVendor(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		v := *before
		v.SubProcessors = append([]SubProcessor{}, before.SubProcessors...)
		ve := NewValidationError()
		in.apply(&v, ve)
		if in.AssigneeID.Set {
			if err := a.checkAssignee(ctx, p.OrgID, v.AssigneeID, ve); err != nil {
				return err
			}
		}
		v.checkRules(ve)
		if err := ve.Err(); err != nil {
			return err
		}
		v.deriveRiskScore()
		v.UpdatedAt = a.Now()
		if err := a.store.UpdateVendor(ctx, p.OrgID, &v); err != nil {
			return err
		}
		out = &v
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "vendor", ResourceID: id, Before: before, After: &v,
			Events: []Event{ResourceEvent("vendor", "updated", &v)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update vendor %s: %w", id, err)
	}
	return out, nil
}

// SetVendorArchived archives or restores a vendor. Archived vendors leave the
// default list.
func (a *App) SetVendorArchived(ctx context.Context, id string, archived bool) (*Vendor, error) {
	return setArchived(ctx, a, "vendor", id, archived, a.store.GetVendor,
		func(v *Vendor) (**time.Time, *time.Time) { return &v.ArchivedAt, &v.UpdatedAt }, a.store.UpdateVendor)
}

// GetVendor returns one vendor; employees and contractors see only vendors
// assigned to them.
func (a *App) GetVendor(ctx context.Context, id string) (*Vendor, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	v, err := a.store.GetVendor(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && (v.AssigneeID == nil || *v.AssigneeID != p.UserID) {
		return nil, ErrNotFound
	}
	return v, nil
}

// ListVendors lists vendors matching every filter given.
func (a *App) ListVendors(ctx context.Context, f VendorFilter) (List[Vendor], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Vendor]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "criticality", f.Criticality, Criticalities)
	oneOf(ve, "dpaStatus", f.DPAStatus, DPAStatuses)
	oneOf(ve, "status", f.Status, VendorStatuses)
	if f.Country != "" {
		f.Country = strings.ToUpper(f.Country)
		if !ValidCountry(f.Country) {
			ve.Add("country", CodeInvalid, f.Country, "country must be an ISO 3166-1 alpha-2 code")
		}
	}
	if f.Category != "" {
		f.Category = NormalizeCategory(f.Category)
	}
	if f.Sort != "" {
		key := strings.TrimPrefix(f.Sort, "-")
		ok := false
		for _, s := range VendorSorts {
			ok = ok || s == key
		}
		if !ok {
			ve.Add("sort", CodeInvalidEnum, f.Sort, "sort must be one of "+strings.Join(VendorSorts, ", ")+" with an optional - prefix")
		}
	}
	if err := ve.Err(); err != nil {
		return List[Vendor]{}, err
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" || (f.AssigneeID != "" && f.AssigneeID != p.UserID) {
			return List[Vendor]{Items: []Vendor{}}, nil
		}
		f.AssigneeID = p.UserID
	}
	return a.store.ListVendors(ctx, p.OrgID, f)
}
