package github

import (
	"context"
	"errors"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

var _ app.VariableOptionsProvider = (*Provider)(nil)

// VariableOptions lists the choices of the repositories variable: the
// organization's repositories, read with the connection's token (archived
// ones are marked). Other variables have no list (app.ErrNotFound).
func (p *Provider) VariableOptions(ctx context.Context, c app.ConnectionTarget, key string) ([]app.VariableOption, error) {
	if key != "repositories" {
		return nil, app.ErrNotFound
	}
	cfg, err := parseConfig(c)
	if err != nil {
		return nil, err
	}
	cfg.repos = nil
	r := &run{p: p, cfg: cfg, api: p.api(cfg)}
	var out []app.VariableOption
	_, err = restapi.List(ctx, r.api, r.orgPath("/repos?type=all&sort=full_name&per_page=100"), func(page []repository) error {
		for _, rp := range page {
			label := rp.FullName
			if rp.Archived {
				label += " (archived)"
			}
			out = append(out, app.VariableOption{Value: rp.Name, Label: label})
		}
		return nil
	})
	if err != nil {
		if restapi.Status(err) == http.StatusUnauthorized {
			return nil, errors.New("GitHub refused the token: " + restapi.Message(err))
		}
		return nil, err
	}
	return out, nil
}
