package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Risk enumerations. Probabilities and impacts are the vendor scales.
var (
	RiskCategories = []string{"customer", "fraud", "governance", "operations", "other", "people", "regulatory",
		"reporting", "resilience", "technology", "vendor_management"}
	RiskStatuses   = []string{"open", "pending", "closed"}
	RiskTreatments = []string{"mitigate", "accept", "transfer", "avoid"}
	RiskBands      = []string{BandLow, BandMedium, BandHigh, BandCritical}
)

// Risk score bands over the 1-25 score (probability x impact).
const (
	BandLow      = "low"      // 1-4
	BandMedium   = "medium"   // 5-9
	BandHigh     = "high"     // 10-14
	BandCritical = "critical" // 15-25
)

// EventRiskScoreChanged is raised when a risk changes band or its score
// moves by RiskScoreStep or more.
const EventRiskScoreChanged = "risk.score.changed"

// RiskScoreStep is the score movement that is significant on its own.
const RiskScoreStep = 5

// RiskBand returns the band of a 1-25 score.
func RiskBand(score int) string {
	switch {
	case score >= 15:
		return BandCritical
	case score >= 10:
		return BandHigh
	case score >= 5:
		return BandMedium
	}
	return BandLow
}

// bandRange is the inclusive score range of a band.
func bandRange(band string) (int, int) {
	switch band {
	case BandLow:
		return 1, 4
	case BandMedium:
		return 5, 9
	case BandHigh:
		return 10, 14
	}
	return 15, 25
}

// ScoreChangeSignificant reports whether moving from prev to next changes
// band or moves the score by RiskScoreStep or more.
func ScoreChangeSignificant(prev, next int) bool {
	d := next - prev
	if d < 0 {
		d = -d
	}
	return RiskBand(prev) != RiskBand(next) || d >= RiskScoreStep
}

// Risk is an entry of the risk register.
type Risk struct {
	ID                   string     `json:"id"`
	Title                string     `json:"title"`
	Description          string     `json:"description"`
	Category             string     `json:"category"`
	Status               string     `json:"status"`
	InherentProbability  string     `json:"inherentProbability"`
	InherentImpact       string     `json:"inherentImpact"`
	ResidualProbability  *string    `json:"residualProbability"`
	ResidualImpact       *string    `json:"residualImpact"`
	InherentScore        int        `json:"inherentScore"`
	ResidualScore        *int       `json:"residualScore"`
	Score                int        `json:"score"`
	Band                 string     `json:"band"`
	Treatment            *string    `json:"treatment"`
	TreatmentDescription *string    `json:"treatmentDescription"`
	OwnerID              *string    `json:"ownerId"`
	LinkedControlIDs     []string   `json:"linkedControlIds"`
	ArchivedAt           *time.Time `json:"archivedAt"`
	CreatedAt            time.Time  `json:"createdAt"`
	UpdatedAt            time.Time  `json:"updatedAt"`
}

// derive computes the scores and band from the scales.
func (r *Risk) derive() {
	r.InherentScore = RiskScoreOf(r.InherentProbability, r.InherentImpact)
	r.ResidualScore = nil
	r.Score = r.InherentScore
	if r.ResidualProbability != nil && r.ResidualImpact != nil {
		r.ResidualScore = Ptr(RiskScoreOf(*r.ResidualProbability, *r.ResidualImpact))
		r.Score = *r.ResidualScore
	}
	r.Band = RiskBand(r.Score)
}

// RiskInput is the body of POST and PATCH /v1/risks. The reference field
// names (likelihood, impact, residualLikelihood, treatmentStrategy,
// treatmentStrategyDescription, assigneeId) are accepted as aliases.
type RiskInput struct {
	Title                *string       `json:"title"`
	Description          *string       `json:"description"`
	Category             *string       `json:"category"`
	Status               *string       `json:"status"`
	InherentProbability  *string       `json:"inherentProbability"`
	InherentImpact       *string       `json:"inherentImpact"`
	ResidualProbability  Opt[string]   `json:"residualProbability"`
	ResidualImpact       Opt[string]   `json:"residualImpact"`
	Treatment            Opt[string]   `json:"treatment"`
	TreatmentDescription Opt[string]   `json:"treatmentDescription"`
	OwnerID              Opt[string]   `json:"ownerId"`
	LinkedControlIDs     Opt[[]string] `json:"linkedControlIds"`

	Likelihood                   *string     `json:"likelihood"`
	Impact                       *string     `json:"impact"`
	ResidualLikelihood           Opt[string] `json:"residualLikelihood"`
	TreatmentStrategy            Opt[string] `json:"treatmentStrategy"`
	TreatmentStrategyDescription Opt[string] `json:"treatmentStrategyDescription"`
	AssigneeID                   Opt[string] `json:"assigneeId"`
}

// RiskFilter holds the risk list's filters; they combine with AND.
type RiskFilter struct {
	Status   string
	OwnerID  string
	Category string
	Band     string
	MinScore *int
	MaxScore *int
	Archived bool
	Page     Page
}

// RiskStore persists risks with their linked controls.
type RiskStore interface {
	CreateRisk(ctx context.Context, orgID string, r *Risk) error
	UpdateRisk(ctx context.Context, orgID string, r *Risk) error
	GetRisk(ctx context.Context, orgID, id string) (*Risk, error)
	ListRisks(ctx context.Context, orgID string, f RiskFilter) (List[Risk], error)
}

func (in *RiskInput) resolveAliases() {
	if in.InherentProbability == nil {
		in.InherentProbability = in.Likelihood
	}
	if in.InherentImpact == nil {
		in.InherentImpact = in.Impact
	}
	if !in.ResidualProbability.Set {
		in.ResidualProbability = in.ResidualLikelihood
	}
	if !in.Treatment.Set {
		in.Treatment = in.TreatmentStrategy
	}
	if !in.TreatmentDescription.Set {
		in.TreatmentDescription = in.TreatmentStrategyDescription
	}
	if !in.OwnerID.Set {
		in.OwnerID = in.AssigneeID
	}
}

func (in *RiskInput) apply(r *Risk, ve *ValidationError) {
	in.resolveAliases()
	if in.Title != nil {
		r.Title = strings.TrimSpace(*in.Title)
		if r.Title == "" {
			ve.Add("title", CodeRequired, nil, "title must not be empty")
		}
		maxLen(ve, "title", r.Title, 255)
	}
	if in.Description != nil {
		r.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", r.Description, 20000)
	}
	enum := func(dst *string, src *string, field string, allowed []string) {
		if src != nil {
			*dst = strings.ToLower(strings.TrimSpace(*src))
			enumIn(ve, field, *dst, allowed)
		}
	}
	optEnum := func(dst **string, src Opt[string], field string, allowed []string) {
		if !src.Set {
			return
		}
		*dst = nil
		if !src.Null {
			s := strings.ToLower(strings.TrimSpace(src.Value))
			enumIn(ve, field, s, allowed)
			*dst = &s
		}
	}
	if in.Category != nil {
		in.Category = Ptr(NormalizeCategory(*in.Category))
	}
	enum(&r.Category, in.Category, "category", RiskCategories)
	enum(&r.Status, in.Status, "status", RiskStatuses)
	enum(&r.InherentProbability, in.InherentProbability, "inherentProbability", Probabilities)
	enum(&r.InherentImpact, in.InherentImpact, "inherentImpact", Impacts)
	optEnum(&r.ResidualProbability, in.ResidualProbability, "residualProbability", Probabilities)
	optEnum(&r.ResidualImpact, in.ResidualImpact, "residualImpact", Impacts)
	optEnum(&r.Treatment, in.Treatment, "treatment", RiskTreatments)
	optText(ve, &r.TreatmentDescription, in.TreatmentDescription, "treatmentDescription", 20000)
	if in.OwnerID.Set {
		r.OwnerID = nil
		if !in.OwnerID.Null && strings.TrimSpace(in.OwnerID.Value) != "" {
			r.OwnerID = Ptr(strings.TrimSpace(in.OwnerID.Value))
		}
	}
	if in.LinkedControlIDs.Set {
		r.LinkedControlIDs = cleanIDs(in.LinkedControlIDs.Value)
	}
	if (r.ResidualProbability == nil) != (r.ResidualImpact == nil) {
		if r.ResidualProbability == nil {
			ve.Add("residualProbability", CodeRequired, nil, "residualProbability and residualImpact are set together")
		} else {
			ve.Add("residualImpact", CodeRequired, nil, "residualProbability and residualImpact are set together")
		}
	}
}

// checkRefs validates the owner and the linked controls.
func (a *App) checkRiskRefs(ctx context.Context, orgID string, r *Risk, in *RiskInput, ve *ValidationError) error {
	if in.OwnerID.Set {
		if err := a.checkPersonRef(ctx, orgID, "ownerId", r.OwnerID, ve); err != nil {
			return err
		}
	}
	if in.LinkedControlIDs.Set {
		return a.checkControlRefs(ctx, orgID, "linkedControlIds", r.LinkedControlIDs, ve)
	}
	return nil
}

// scoreEvents returns risk.score.changed when the change is significant.
func scoreEvents(before, after *Risk, now time.Time) []Event {
	if !ScoreChangeSignificant(before.Score, after.Score) {
		return nil
	}
	return []Event{{Type: EventRiskScoreChanged, Data: map[string]any{
		"riskId": after.ID, "previousScore": before.Score, "score": after.Score,
		"previousBand": before.Band, "band": after.Band, "changedAt": now,
	}}}
}

// CreateRisk adds a risk to the register.
func (a *App) CreateRisk(ctx context.Context, in RiskInput) (*Risk, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	r := &Risk{ID: NewID(PrefixRisk), Category: "other", Status: "open", InherentProbability: "possible",
		InherentImpact: "moderate", LinkedControlIDs: []string{}, CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		ve.Add("title", CodeRequired, nil, "title is required")
	}
	in.apply(r, ve)
	r.derive()
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.checkRiskRefs(ctx, p.OrgID, r, &in, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateRisk(ctx, p.OrgID, r); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "risk", ResourceID: r.ID, After: r,
			Events: []Event{ResourceEvent("risk", "created", r)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create risk: %w", err)
	}
	return r, nil
}

// UpdateRisk applies a patch to a risk. A significant score change raises
// risk.score.changed.
func (a *App) UpdateRisk(ctx context.Context, id string, in RiskInput) (*Risk, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Risk
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetRisk(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		r := *before
		r.LinkedControlIDs = append([]string{}, before.LinkedControlIDs...)
		ve := NewValidationError()
		in.apply(&r, ve)
		if err := a.checkRiskRefs(ctx, p.OrgID, &r, &in, ve); err != nil {
			return err
		}
		if err := ve.Err(); err != nil {
			return err
		}
		r.derive()
		now := a.Now()
		r.UpdatedAt = now
		if err := a.store.UpdateRisk(ctx, p.OrgID, &r); err != nil {
			return err
		}
		out = &r
		events := append([]Event{ResourceEvent("risk", "updated", &r)}, scoreEvents(before, &r, now)...)
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "risk", ResourceID: id, Before: before, After: &r, Events: events})
	})
	if err != nil {
		return nil, fmt.Errorf("update risk %s: %w", id, err)
	}
	return out, nil
}

// SetRiskArchived archives or restores a risk. Archived risks leave the
// default list.
func (a *App) SetRiskArchived(ctx context.Context, id string, archived bool) (*Risk, error) {
	return setArchived(ctx, a, "risk", id, archived, a.store.GetRisk,
		func(v *Risk) (**time.Time, *time.Time) { return &v.ArchivedAt, &v.UpdatedAt }, a.store.UpdateRisk)
}

// GetRisk returns one risk; employees and contractors see only risks they own.
func (a *App) GetRisk(ctx context.Context, id string) (*Risk, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	r, err := a.store.GetRisk(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && (r.OwnerID == nil || *r.OwnerID != p.UserID) {
		return nil, ErrNotFound
	}
	return r, nil
}

// ListRisks lists risks matching every filter given.
func (a *App) ListRisks(ctx context.Context, f RiskFilter) (List[Risk], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Risk]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", f.Status, RiskStatuses)
	if f.Category != "" {
		f.Category = NormalizeCategory(f.Category)
		oneOf(ve, "category", f.Category, RiskCategories)
	}
	oneOf(ve, "band", f.Band, RiskBands)
	if f.MinScore != nil && (*f.MinScore < 1 || *f.MinScore > 25) {
		ve.Add("minScore", CodeInvalid, *f.MinScore, "minScore must be from 1 to 25")
	}
	if f.MaxScore != nil && (*f.MaxScore < 1 || *f.MaxScore > 25) {
		ve.Add("maxScore", CodeInvalid, *f.MaxScore, "maxScore must be from 1 to 25")
	}
	if f.MinScore != nil && f.MaxScore != nil && *f.MinScore > *f.MaxScore {
		ve.Add("minScore", CodeInvalid, *f.MinScore, "minScore must not exceed maxScore")
	}
	if err := ve.Err(); err != nil {
		return List[Risk]{}, err
	}
	if f.Band != "" {
		lo, hi := bandRange(f.Band)
		if f.MinScore == nil || *f.MinScore < lo {
			f.MinScore = &lo
		}
		if f.MaxScore == nil || *f.MaxScore > hi {
			f.MaxScore = &hi
		}
		if *f.MinScore > *f.MaxScore {
			return List[Risk]{Items: []Risk{}}, nil
		}
	}
	if p.SeesOnlyAssigned() {
		if p.UserID == "" || (f.OwnerID != "" && f.OwnerID != p.UserID) {
			return List[Risk]{Items: []Risk{}}, nil
		}
		f.OwnerID = p.UserID
	}
	return a.store.ListRisks(ctx, p.OrgID, f)
}
