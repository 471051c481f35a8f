package aws

import (
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/checkrun"
)

// Regions are the commercial regions offered as choices of the regions
// variable (static: the list does not need the account). Other partitions'
// regions (us-gov-*, cn-*) are accepted when typed.
var Regions = []string{
	"us-east-1", "us-east-2", "us-west-1", "us-west-2",
	"af-south-1",
	"ap-east-1", "ap-east-2", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4",
	"ap-southeast-5", "ap-southeast-7", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
	"ca-central-1", "ca-west-1",
	"eu-central-1", "eu-central-2", "eu-west-1", "eu-west-2", "eu-west-3", "eu-south-1", "eu-south-2", "eu-north-1",
	"il-central-1", "me-south-1", "me-central-1", "mx-central-1",
	"sa-east-1",
}

var _ app.VariableValidator = (*Provider)(nil)

// ValidateVariables checks the regions' names and the scan mode.
func (p *Provider) ValidateVariables(vars map[string]string) (string, string) {
	for _, r := range checkrun.SplitList(strings.ToLower(vars["regions"])) {
		if !ValidRegion(r) {
			return "variables.regions", fmt.Sprintf("%q is not an AWS region name (such as eu-west-1)", r)
		}
	}
	switch strings.TrimSpace(vars["scanMode"]) {
	case "", ScanSelectedRegions, ScanAllRegions:
	default:
		return "variables.scanMode", "must be selected_regions or all_regions"
	}
	return "", ""
}
