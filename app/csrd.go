package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// StandardESRS2 is the standard code of the ESRS 2 general disclosures.
const StandardESRS2 = "ESRS2"

// esrsStandards maps each standard of ESRS set 1 (Commission Delegated
// Regulation (EU) 2023/2772) to its disclosure requirement codes.
var esrsStandards = map[string][]string{
	StandardESRS2: {"BP-1", "BP-2", "GOV-1", "GOV-2", "GOV-3", "GOV-4", "GOV-5", "SBM-1", "SBM-2", "SBM-3",
		"IRO-1", "IRO-2", "MDR-P", "MDR-A", "MDR-M", "MDR-T"},
	"E1": seq("E1", 9),
	"E2": seq("E2", 6),
	"E3": seq("E3", 5),
	"E4": seq("E4", 6),
	"E5": seq("E5", 6),
	"S1": seq("S1", 17),
	"S2": seq("S2", 5),
	"S3": seq("S3", 5),
	"S4": seq("S4", 5),
	"G1": seq("G1", 6),
}

func seq(std string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", std, i+1)
	}
	return out
}

// esrsCodeStandard maps every disclosure requirement code to its standard.
var esrsCodeStandard = func() map[string]string {
	m := map[string]string{}
	for std, codes := range esrsStandards {
		for _, c := range codes {
			m[c] = std
		}
	}
	return m
}()

// ESRSStandards lists the standard codes of ESRS set 1.
var ESRSStandards = []string{StandardESRS2, "E1", "E2", "E3", "E4", "E5", "S1", "S2", "S3", "S4", "G1"}

// ESRSCodes returns the disclosure requirement codes of a standard.
func ESRSCodes(standard string) []string { return append([]string{}, esrsStandards[standard]...) }

// NormalizeESRSCode upper-cases a disclosure code and drops an "ESRS"
// prefix ("esrs E1-6" -> "E1-6", "ESRS 2 GOV-1" -> "GOV-1").
func NormalizeESRSCode(s string) string {
	s = strings.ToUpper(strings.Join(strings.Fields(s), " "))
	s = strings.TrimPrefix(s, "ESRS ")
	s = strings.TrimPrefix(s, "2 ")
	return strings.ReplaceAll(s, " ", "")
}

// NormalizeESRSStandard maps "E1", "ESRS E1", "esrs-e1", "ESRS 2", "2" to
// a standard code; "" when it is not one.
func NormalizeESRSStandard(s string) string {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "_", "").Replace(s))
	if s == "2" || s == "ESRS2" {
		return StandardESRS2
	}
	s = strings.TrimPrefix(s, "ESRS")
	if _, ok := esrsStandards[s]; ok {
		return s
	}
	return ""
}

// ESGDataPoint is one reported value of a CSRD/ESRS data point for a
// reporting period. There is one value per esrsCode, dataPointId and period.
type ESGDataPoint struct {
	ID          string    `json:"id"`
	ESRSCode    string    `json:"esrsCode"`
	Standard    string    `json:"standard"`
	DataPointID string    `json:"dataPointId"`
	Value       float64   `json:"value"`
	Unit        string    `json:"unit"`
	Period      string    `json:"period"`
	Methodology string    `json:"methodology"`
	Notes       string    `json:"notes"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// ESGDataPointInput is the body of POST and PATCH /v1/csrd/data-points.
type ESGDataPointInput struct {
	ESRSCode    *string  `json:"esrsCode"`
	DataPointID *string  `json:"dataPointId"`
	Value       *float64 `json:"value"`
	Unit        *string  `json:"unit"`
	Period      *string  `json:"period"`
	Methodology *string  `json:"methodology"`
	Notes       *string  `json:"notes"`
}

// ESGFilter holds the data point list's filters.
type ESGFilter struct {
	Standard string
	Period   string
	ESRSCode string
	Page     Page
}

// ESGStore persists data points.
type ESGStore interface {
	CreateESGDataPoint(ctx context.Context, orgID string, d *ESGDataPoint) error
	UpdateESGDataPoint(ctx context.Context, orgID string, d *ESGDataPoint) error
	GetESGDataPoint(ctx context.Context, orgID, id string) (*ESGDataPoint, error)
	FindESGDataPoint(ctx context.Context, orgID, esrsCode, dataPointID, period string) (*ESGDataPoint, error)
	ListESGDataPoints(ctx context.Context, orgID string, f ESGFilter) (List[ESGDataPoint], error)
}

func validPeriod(s string) bool {
	if len(s) != 4 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s >= "1900" && s <= "2200"
}

func (in *ESGDataPointInput) apply(d *ESGDataPoint, ve *ValidationError) {
	if in.ESRSCode != nil {
		d.ESRSCode = NormalizeESRSCode(*in.ESRSCode)
		if d.ESRSCode == "" {
			ve.Add("esrsCode", CodeRequired, nil, "esrsCode is required")
		} else if std, ok := esrsCodeStandard[d.ESRSCode]; ok {
			d.Standard = std
		} else {
			ve.Add("esrsCode", CodeInvalid, *in.ESRSCode, "esrsCode must be an ESRS disclosure requirement code such as E1-6, S1-1, G1-1 or GOV-1")
		}
	}
	if in.DataPointID != nil {
		d.DataPointID = strings.TrimSpace(*in.DataPointID)
		maxLen(ve, "dataPointId", d.DataPointID, 100)
	}
	if in.Value != nil {
		if math.IsNaN(*in.Value) || math.IsInf(*in.Value, 0) {
			ve.Add("value", CodeInvalid, nil, "value must be a finite number")
		}
		d.Value = *in.Value
	}
	if in.Period != nil {
		d.Period = strings.TrimSpace(*in.Period)
		if !validPeriod(d.Period) {
			ve.Add("period", CodeInvalid, *in.Period, "period must be a reporting year (YYYY)")
		}
	}
	text := func(dst *string, src *string, field string, max int) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
			maxLen(ve, field, *dst, max)
		}
	}
	text(&d.Unit, in.Unit, "unit", 50)
	text(&d.Methodology, in.Methodology, "methodology", 5000)
	text(&d.Notes, in.Notes, "notes", 5000)
}

// duplicate returns the conflict error for a second value of a data point.
func (a *App) esgDuplicate(ctx context.Context, orgID string, d *ESGDataPoint) error {
	prev, err := a.store.FindESGDataPoint(ctx, orgID, d.ESRSCode, d.DataPointID, d.Period)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if prev.ID == d.ID {
		return nil
	}
	return Errorf(ErrConflict, "a value for %s%s in period %s already exists (%s); update it with PATCH /v1/csrd/data-points/%s",
		d.ESRSCode, dpSuffix(d.DataPointID), d.Period, prev.ID, prev.ID)
}

func dpSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " data point " + id
}

// CreateESGDataPoint records a value. A second value for the same data
// point and period is a conflict; change the first with UpdateESGDataPoint.
func (a *App) CreateESGDataPoint(ctx context.Context, in ESGDataPointInput) (*ESGDataPoint, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	d := &ESGDataPoint{ID: NewID(PrefixESG), CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.ESRSCode == nil {
		ve.Add("esrsCode", CodeRequired, nil, "esrsCode is required")
	}
	if in.Value == nil {
		ve.Add("value", CodeRequired, nil, "value is required and must be a number")
	}
	if in.Period == nil {
		ve.Add("period", CodeRequired, nil, "period (reporting year) is required")
	}
	in.apply(d, ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.esgDuplicate(ctx, p.OrgID, d); err != nil {
			return err
		}
		if err := a.store.CreateESGDataPoint(ctx, p.OrgID, d); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "esg_data_point", ResourceID: d.ID, After: d})
	})
	if err != nil {
		return nil, fmt.Errorf("create esg data point: %w", err)
	}
	return d, nil
}

// UpdateESGDataPoint changes a recorded value (or its unit, methodology,
// notes, code or period).
func (a *App) UpdateESGDataPoint(ctx context.Context, id string, in ESGDataPointInput) (*ESGDataPoint, error) {
	return updateRecorded(ctx, a, "esg_data_point", id, a.store.GetESGDataPoint, in.apply,
		func(d *ESGDataPoint) *time.Time { return &d.UpdatedAt },
		func(ctx context.Context, orgID string, d *ESGDataPoint) error {
			if err := a.esgDuplicate(ctx, orgID, d); err != nil {
				return err
			}
			return a.store.UpdateESGDataPoint(ctx, orgID, d)
		})
}

// GetESGDataPoint returns one data point value.
func (a *App) GetESGDataPoint(ctx context.Context, id string) (*ESGDataPoint, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() {
		return nil, ErrNotFound
	}
	return a.store.GetESGDataPoint(ctx, p.OrgID, id)
}

// ListESGDataPoints lists values by standard, period and code.
func (a *App) ListESGDataPoints(ctx context.Context, f ESGFilter) (List[ESGDataPoint], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[ESGDataPoint]{}, err
	}
	ve := NewValidationError()
	if f.Standard != "" {
		std := NormalizeESRSStandard(f.Standard)
		if std == "" {
			ve.Add("standard", CodeInvalidEnum, f.Standard, "standard must be one of "+strings.Join(ESRSStandards, ", "))
		}
		f.Standard = std
	}
	if f.Period != "" && !validPeriod(f.Period) {
		ve.Add("period", CodeInvalid, f.Period, "period must be a reporting year (YYYY)")
	}
	if f.ESRSCode != "" {
		code := NormalizeESRSCode(f.ESRSCode)
		if _, ok := esrsCodeStandard[code]; !ok {
			ve.Add("esrsCode", CodeInvalid, f.ESRSCode, "esrsCode must be an ESRS disclosure requirement code")
		}
		f.ESRSCode = code
	}
	if err := ve.Err(); err != nil {
		return List[ESGDataPoint]{}, err
	}
	if p.SeesOnlyAssigned() {
		return List[ESGDataPoint]{Items: []ESGDataPoint{}}, nil
	}
	return a.store.ListESGDataPoints(ctx, p.OrgID, f)
}
