package mcp

import (
	"context"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

type listCloudFindingsIn struct {
	pageIn
	ConnectionID string `json:"connectionId,omitempty" jsonschema:"only this cloud connection (icn_...)"`
	Severity     string `json:"severity,omitempty" jsonschema:"critical, high, medium, low or informational"`
	Service      string `json:"service,omitempty" jsonschema:"only checks of this service (iam, s3, ec2, kms, cloudtrail, guardduty)"`
	Status       string `json:"status,omitempty" jsonschema:"open, excepted or resolved"`
}

func (s *Server) toolListCloudFindings(ctx context.Context, in listCloudFindingsIn) (listOut[app.CloudFinding], error) {
	pg, err := in.page()
	if err != nil {
		return listOut[app.CloudFinding]{}, err
	}
	all, err := s.app.ListCloudFindings(ctx, app.CloudFindingFilter{ConnectionID: in.ConnectionID, Severity: in.Severity, Service: in.Service, Status: in.Status})
	if err != nil {
		return listOut[app.CloudFinding]{}, err
	}
	items := []app.CloudFinding{}
	if off := pg.Offset(); off < len(all) {
		items = all[off:min(len(all), off+pg.PerPage)]
	}
	return listOut[app.CloudFinding]{Data: items, Meta: httpx.NewMeta(pg, len(all))}, nil
}
