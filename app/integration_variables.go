package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Variables: a provider's non-secret settings of a connection (which
// repositories, projects or regions the checks cover), read and saved on
// their own, with the choices for a variable fetched from the provider
// (through the connection's credentials) where the provider offers them.

// Where a variable's choices come from.
const (
	OptionsStatic   = "static"   // the definition's Options
	OptionsProvider = "provider" // asked from the provider with the connection's credentials
)

// maxVariableOptions bounds the choices returned for one variable.
const maxVariableOptions = 1000

// VariableOption is one choice of a variable.
type VariableOption struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// VariableOptionsProvider is implemented by providers that list a
// variable's choices from the system itself (the organization's
// repositories). ErrNotFound: the variable has no such list.
type VariableOptionsProvider interface {
	VariableOptions(ctx context.Context, c ConnectionTarget, key string) ([]VariableOption, error)
}

// VariableValidator is implemented by providers with format rules of their
// own for variables (AWS region names): it returns the field
// ("variables.<key>") and the message of the first problem.
type VariableValidator interface {
	ValidateVariables(vars map[string]string) (field, msg string)
}

// ProviderVariables answers GET /v1/integrations/variables/providers/{providerSlug}.
type ProviderVariables struct {
	ProviderSlug string             `json:"providerSlug"`
	Variables    []ProviderVariable `json:"variables"`
}

// ConnectionVariables answers GET /v1/integrations/variables/connections/{connectionId}.
type ConnectionVariables struct {
	ConnectionID string             `json:"connectionId"`
	ProviderSlug string             `json:"providerSlug"`
	Variables    map[string]string  `json:"variables"`
	Definitions  []ProviderVariable `json:"definitions"`
}

// VariableOptions answers GET .../options/{variableId}.
type VariableOptions struct {
	ConnectionID string           `json:"connectionId"`
	VariableID   string           `json:"variableId"`
	Source       string           `json:"source"`
	Options      []VariableOption `json:"options"`
	Truncated    bool             `json:"truncated"`
}

// VariablesSave is the body of POST /v1/integrations/variables/connections/{connectionId}.
type VariablesSave struct {
	Variables map[string]json.RawMessage `json:"variables"`
}

// VariablesSaved answers the save.
type VariablesSaved struct {
	Success      bool              `json:"success"`
	ConnectionID string            `json:"connectionId"`
	Variables    map[string]string `json:"variables"`
}

func variableDefs(d ProviderDefinition) []ProviderVariable {
	out := make([]ProviderVariable, 0, len(d.Variables))
	for _, v := range d.Variables {
		if v.Options == nil {
			v.Options = []string{}
		}
		if v.OptionsFrom == "" && len(v.Options) > 0 {
			v.OptionsFrom = OptionsStatic
		}
		out = append(out, v)
	}
	return out
}

// GetProviderVariables lists a provider's variables.
func (a *App) GetProviderVariables(ctx context.Context, slug string) (*ProviderVariables, error) {
	if _, err := a.integrationReader(ctx); err != nil {
		return nil, err
	}
	p, ok := a.provider(slug)
	if !ok {
		return nil, Errorf(ErrNotFound, "no integration provider %q", slug)
	}
	return &ProviderVariables{ProviderSlug: slug, Variables: variableDefs(p.Definition())}, nil
}

// GetConnectionVariables returns a connection's variables with their
// definitions.
func (a *App) GetConnectionVariables(ctx context.Context, id string) (*ConnectionVariables, error) {
	c, err := a.GetConnection(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &ConnectionVariables{ConnectionID: c.ID, ProviderSlug: c.ProviderSlug, Variables: c.Variables, Definitions: []ProviderVariable{}}
	if p, ok := a.compiledProvider(c.ProviderSlug); ok {
		out.Definitions = variableDefs(p.Definition())
	}
	return out, nil
}

// SaveConnectionVariables sets the variables given (an empty value removes
// one; the others are kept), validated against the provider's definition:
// a 400 names variables.<key>.
func (a *App) SaveConnectionVariables(ctx context.Context, id string, in VariablesSave) (*VariablesSaved, error) {
	c, err := a.mutateConnection(ctx, id, "variables_updated", func(c *Connection, d ProviderDefinition, ve *ValidationError) (bool, error) {
		if in.Variables == nil {
			ve.Add("variables", CodeRequired, nil, "variables is required: an object of variable values")
			return false, nil
		}
		c.Variables = validateVariables(ve, d, in.Variables, c.Variables)
		if ve.Empty() {
			// The provider's own format rules (AWS region names); only
			// the variables are checked, credentials are not opened.
			if prov, ok := a.compiledProvider(c.ProviderSlug); ok {
				if v, ok := prov.(VariableValidator); ok {
					if field, msg := v.ValidateVariables(c.Variables); field != "" {
						ve.Add(field, CodeInvalid, nil, field+" "+msg)
					}
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return &VariablesSaved{Success: true, ConnectionID: c.ID, Variables: c.Variables}, nil
}

// FetchVariableOptions lists a variable's choices: the definition's static
// options, or the provider's list read with the connection's credentials
// (GitHub repositories, GitLab projects). A provider that refuses or cannot
// be reached is a 400 on variableId with its message, never a 5xx.
func (a *App) FetchVariableOptions(ctx context.Context, connectionID, key string) (*VariableOptions, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	prov, ok := a.provider(c.ProviderSlug)
	if !ok {
		return nil, Errorf(ErrConflict, "provider %s is not available (not in this build, or switched off by the appliance operator)", c.ProviderSlug)
	}
	var def *ProviderVariable
	for _, v := range variableDefs(prov.Definition()) {
		if v.Key == key {
			v := v
			def = &v
		}
	}
	if def == nil {
		return nil, Errorf(ErrNotFound, "provider %s has no variable %q", c.ProviderSlug, key)
	}
	out := &VariableOptions{ConnectionID: c.ID, VariableID: key, Options: []VariableOption{}}
	if def.OptionsFrom != OptionsProvider {
		out.Source = OptionsStatic
		for _, o := range def.Options {
			out.Options = append(out.Options, VariableOption{Value: o, Label: o})
		}
		return out, nil
	}
	out.Source = OptionsProvider
	op, ok := prov.(VariableOptionsProvider)
	if !ok {
		return out, nil
	}
	if c.Status == ConnectionDisconnected {
		return nil, Errorf(ErrConflict, "the connection is disconnected: set its credentials again")
	}
	if err := a.refreshOAuthToken(ctx, p.OrgID, c); err != nil {
		return nil, Invalid("variableId", CodeInvalid, key, err.Error())
	}
	target, err := a.target(p.OrgID, c)
	if err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	opts, err := safeOptions(octx, op, target, key)
	if errors.Is(err, ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, Invalid("variableId", CodeInvalid, key, fmt.Sprintf("%s did not list the choices of %s: %v", prov.Definition().Name, key, err))
	}
	if len(opts) > maxVariableOptions {
		opts, out.Truncated = opts[:maxVariableOptions], true
	}
	if opts != nil {
		out.Options = opts
	}
	return out, nil
}

func safeOptions(ctx context.Context, p VariableOptionsProvider, t ConnectionTarget, key string) (out []VariableOption, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the provider failed: %v", r)
		}
	}()
	return p.VariableOptions(ctx, t, key)
}
