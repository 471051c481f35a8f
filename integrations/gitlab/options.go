package gitlab

import (
	"context"
	"errors"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

var _ app.VariableOptionsProvider = (*Provider)(nil)

// VariableOptions lists the choices of the projects variable: the group's
// projects (subgroups included), read with the connection's token. Other
// variables have no list (app.ErrNotFound).
func (p *Provider) VariableOptions(ctx context.Context, c app.ConnectionTarget, key string) ([]app.VariableOption, error) {
	if key != "projects" {
		return nil, app.ErrNotFound
	}
	cfg, err := parseConfig(c)
	if err != nil {
		return nil, err
	}
	api := p.api(cfg)
	var out []app.VariableOption
	_, err = restapi.List(ctx, api, cfg.groupPath("/projects?include_subgroups=true&with_shared=false&order_by=path&sort=asc&per_page=100"), func(page []project) error {
		for _, pr := range page {
			label := pr.PathWithNamespace
			if pr.Archived {
				label += " (archived)"
			}
			out = append(out, app.VariableOption{Value: pr.PathWithNamespace, Label: label})
		}
		return nil
	})
	if err != nil {
		if msg, ok := refused(err); ok {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return out, nil
}
