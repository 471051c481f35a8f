package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// PrefixVariable starts the id of an organization variable.
const PrefixVariable = "var"

const (
	maxVariableValue = 10_000
	maxVariables     = 1000
)

// variableName is the form of a variable name: lower case, digits and
// underscores, starting with a letter, as in {{company_name}}.
var variableName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// placeholder matches {{name}} with optional spaces inside the braces. It
// accepts a wider alphabet than variableName so that a misspelt placeholder
// ({{Company-Name}}) is reported as unknown instead of silently kept.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

// BuiltInVariables describes the variables every organization has. An
// organization variable of the same name overrides a built-in one.
var BuiltInVariables = map[string]string{
	"company_name":    "the organization's name",
	"company_website": "the organization's website, when set",
	"policy_name":     "the name of the policy being published",
	"policy_version":  "the version number being published",
	"published_date":  "the publish date, YYYY-MM-DD (UTC)",
}

// Variable is an organization-scoped value substituted into policy text
// where {{name}} appears, when a policy is published.
type Variable struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Placeholder string    `json:"placeholder"`
	Value       string    `json:"value"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// VariableInput is the body of POST and PATCH /v1/variables. Create
// requires name and value.
type VariableInput struct {
	Name        *string `json:"name"`
	Value       *string `json:"value"`
	Description *string `json:"description"`
}

// VariableFilter narrows the variable list.
type VariableFilter struct {
	Search string
	Page   Page
}

// VariableStore persists organization variables.
type VariableStore interface {
	CreateVariable(ctx context.Context, orgID string, v *Variable) error
	UpdateVariable(ctx context.Context, orgID string, v *Variable) error
	DeleteVariable(ctx context.Context, orgID, id string) error
	GetVariable(ctx context.Context, orgID, id string) (*Variable, error)
	ListVariables(ctx context.Context, orgID string, f VariableFilter) (List[Variable], error)
	// VariableValues returns every variable of the organization by name.
	VariableValues(ctx context.Context, orgID string) (map[string]string, error)
	CountVariables(ctx context.Context, orgID string) (int, error)
}

// Rendered is a text with its variables substituted.
type Rendered struct {
	Content    string
	Used       map[string]string // name -> value substituted
	Unresolved []string          // names with no value, sorted; their placeholders stay
}

// Render substitutes {{name}} placeholders with vars. Substituted values
// are inserted as they are and never expanded again.
func Render(text string, vars map[string]string) Rendered {
	r := Rendered{Used: map[string]string{}, Unresolved: []string{}}
	unresolved := map[string]bool{}
	r.Content = placeholder.ReplaceAllStringFunc(text, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		if v, ok := vars[name]; ok {
			r.Used[name] = v
			return v
		}
		unresolved[name] = true
		return m
	})
	for n := range unresolved {
		r.Unresolved = append(r.Unresolved, n)
	}
	sort.Strings(r.Unresolved)
	return r
}

// variableValues returns the built-in values, then extra, then the
// organization's own variables, later ones overriding earlier ones.
func (a *App) variableValues(ctx context.Context, orgID string, extra map[string]string) (map[string]string, error) {
	out := map[string]string{}
	o, err := a.store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("load organization: %w", err)
	}
	out["company_name"] = o.Name
	if o.Website != nil && *o.Website != "" {
		out["company_website"] = *o.Website
	}
	for k, v := range extra {
		out[k] = v
	}
	own, err := a.store.VariableValues(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("load variables: %w", err)
	}
	for k, v := range own {
		out[k] = v
	}
	return out, nil
}

// NormalizeVariableName trims a name and strips surrounding {{ }}.
func NormalizeVariableName(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && len(s) >= 4 {
		s = strings.TrimSpace(s[2 : len(s)-2])
	}
	return s
}

func (in *VariableInput) apply(v *Variable, ve *ValidationError) {
	if in.Name != nil {
		n := NormalizeVariableName(*in.Name)
		switch {
		case n == "":
			ve.Add("name", CodeRequired, nil, "name must not be empty")
		case !variableName.MatchString(n):
			ve.Add("name", CodeInvalid, *in.Name, "name must be 1 to 64 lower-case letters, digits or underscores, starting with a letter (used as {{name}})")
		}
		v.Name = n
		v.Placeholder = "{{" + n + "}}"
	}
	if in.Value != nil {
		maxLen(ve, "value", *in.Value, maxVariableValue)
		v.Value = *in.Value
	}
	if in.Description != nil {
		s := strings.TrimSpace(*in.Description)
		maxLen(ve, "description", s, 1000)
		v.Description = s
	}
}

func variableConflict(err error, name string) error {
	if errors.Is(err, ErrConflict) {
		return Errorf(ErrConflict, "a variable named %s already exists", name)
	}
	return err
}

// readsOrgSettings rejects employees and contractors, who see only what is
// assigned to them, from organization-wide settings.
func readsOrgSettings(p *Principal) error {
	if p.SeesOnlyAssigned() {
		return Errorf(ErrForbidden, "the %s role may not read organization settings", p.Role)
	}
	return nil
}

// CreateVariable adds an organization variable.
func (a *App) CreateVariable(ctx context.Context, in VariableInput) (*Variable, error) {
	pr, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	v := &Variable{ID: NewID(PrefixVariable), CreatedAt: now, UpdatedAt: now}
	ve := NewValidationError()
	if in.Name == nil || NormalizeVariableName(*in.Name) == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	if in.Value == nil {
		ve.Add("value", CodeRequired, nil, "value is required")
	}
	in.apply(v, ve)
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		n, err := a.store.CountVariables(ctx, pr.OrgID)
		if err != nil {
			return err
		}
		if n >= maxVariables {
			return Invalid("name", CodeInvalid, v.Name, fmt.Sprintf("an organization may have at most %d variables", maxVariables))
		}
		if err := a.store.CreateVariable(ctx, pr.OrgID, v); err != nil {
			return variableConflict(err, v.Name)
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "variable", ResourceID: v.ID, After: v})
	})
	if err != nil {
		return nil, fmt.Errorf("create variable: %w", err)
	}
	return v, nil
}

// UpdateVariable changes a variable's name, value or description. Published
// policy versions keep the values they were published with.
func (a *App) UpdateVariable(ctx context.Context, id string, in VariableInput) (*Variable, error) {
	return updateRecorded(ctx, a, "variable", id, a.store.GetVariable, in.apply,
		func(v *Variable) *time.Time { return &v.UpdatedAt },
		func(ctx context.Context, orgID string, v *Variable) error {
			return variableConflict(a.store.UpdateVariable(ctx, orgID, v), v.Name)
		})
}

// DeleteVariable removes a variable.
func (a *App) DeleteVariable(ctx context.Context, id string) error {
	return deleteRecorded(ctx, a, "variable", id, a.store.GetVariable, a.store.DeleteVariable)
}

// GetVariable returns one variable.
func (a *App) GetVariable(ctx context.Context, id string) (*Variable, error) {
	pr, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := readsOrgSettings(pr); err != nil {
		return nil, err
	}
	return a.store.GetVariable(ctx, pr.OrgID, id)
}

// ListVariables lists the organization's variables by name.
func (a *App) ListVariables(ctx context.Context, f VariableFilter) (List[Variable], error) {
	pr, err := principal(ctx)
	if err != nil {
		return List[Variable]{}, err
	}
	if err := readsOrgSettings(pr); err != nil {
		return List[Variable]{}, err
	}
	l, err := a.store.ListVariables(ctx, pr.OrgID, f)
	if err != nil {
		return l, fmt.Errorf("list variables: %w", err)
	}
	return l, nil
}
