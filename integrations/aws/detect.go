package aws

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var (
	_ app.CloudServiceDetector = (*Provider)(nil)
	_ app.ConnectionValidator  = (*Provider)(nil)
)

// ValidateConnection checks a new connection's settings: the access key's
// shape, the role ARN, the regions, the scan mode and the endpoint.
func (p *Provider) ValidateConnection(c app.ConnectionTarget) (string, string) {
	var fe *FieldError
	if err := Validate(c); errors.As(err, &fe) {
		return fe.Field, fe.Message
	}
	return "", ""
}

// DetectServices calls one read-only operation of each service in each
// region the connection names (the home region for IAM, S3 and
// CloudTrail's trail listing) and reports which answered.
func (p *Provider) DetectServices(ctx context.Context, c app.ConnectionTarget) ([]app.CloudServiceAccess, error) {
	cfg, err := parseConfig(c)
	if err != nil {
		return nil, app.Invalid("credentials", app.CodeInvalid, nil, err.Error())
	}
	cl, _, err := p.connect(ctx, cfg)
	if err != nil {
		return nil, app.Errorf(app.ErrConflict, "AWS refused the credentials: %s", err.Error())
	}
	home := cfg.regions[0]
	probes := []struct {
		id, name string
		global   bool
		call     func(region string) error
	}{
		{"iam", "IAM", true, func(region string) error {
			var v struct{}
			return cl.query(ctx, "iam", region, iamVersion, "GetAccountSummary", nil, &v)
		}},
		{"cloudtrail", "CloudTrail", false, func(region string) error {
			var v struct{}
			return cl.jsonTarget(ctx, "cloudtrail", region, "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.DescribeTrails", map[string]any{}, &v)
		}},
		{"s3", "S3", true, func(region string) error {
			_, _, err := cl.rest(ctx, "s3", region, "", http.MethodGet, "/", url.Values{"max-buckets": {"1"}}, nil, false)
			return err
		}},
		{"ec2", "EC2 (EBS, security groups)", false, func(region string) error {
			var v struct{}
			return cl.query(ctx, "ec2", region, ec2Version, "GetEbsEncryptionByDefault", nil, &v)
		}},
		{"kms", "KMS", false, func(region string) error {
			var v struct{}
			return cl.jsonTarget(ctx, "kms", region, "TrentService.ListKeys", map[string]any{"Limit": 1}, &v)
		}},
		{"guardduty", "GuardDuty", false, func(region string) error {
			_, _, err := cl.rest(ctx, "guardduty", region, "", http.MethodGet, "/detector", url.Values{"maxResults": {"1"}}, nil, true)
			return err
		}},
	}
	out := make([]app.CloudServiceAccess, 0, len(probes))
	for _, pr := range probes {
		regions := cfg.regions
		if pr.global {
			regions = []string{home}
		}
		sa := app.CloudServiceAccess{ID: pr.id, Name: pr.name, Regions: []string{}}
		var problems []string
		for _, r := range regions {
			if err := pr.call(r); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s", r, err.Error()))
				continue
			}
			sa.Regions = append(sa.Regions, r)
		}
		sa.Accessible = len(sa.Regions) > 0
		if len(problems) > 0 {
			sa.Message = clip(strings.Join(problems, "; "), 600)
		} else {
			sa.Message = "readable"
		}
		out = append(out, sa)
	}
	return out, nil
}
