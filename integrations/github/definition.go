package github

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// Check ids; stable across releases (findings are kept per check id).
const (
	CheckOrg2FARequired       = "github.org_2fa_required"
	CheckMembersWithout2FA    = "github.members_without_2fa"
	CheckBranchProtection     = "github.branch_protection"
	CheckRequiredReviews      = "github.required_reviews"
	CheckSecretScanning       = "github.secret_scanning"
	CheckDependabotAlerts     = "github.dependabot_alerts"
	CheckAdminCount           = "github.admin_count"
	CheckOutsideCollaborators = "github.outside_collaborators"
)

// DefaultBaseURL is github.com's API root.
const DefaultBaseURL = "https://api.github.com"

// DefaultMaxAdmins is the admin count above which github.admin_count fails.
const DefaultMaxAdmins = 5

func iso(ref string) app.RequirementRef {
	return app.RequirementRef{Framework: "iso27001-2022", Ref: ref}
}
func soc2(ref string) app.RequirementRef { return app.RequirementRef{Framework: "soc2-2017", Ref: ref} }
func csf(ref string) app.RequirementRef {
	return app.RequirementRef{Framework: "nist-csf-2.0", Ref: ref}
}

var definition = app.ProviderDefinition{
	Slug:         "github",
	Name:         "GitHub",
	Category:     "source_control",
	Description:  "Tests a GitHub organization on github.com or GitHub Enterprise Server: two-factor authentication, branch protection and reviews, secret scanning, Dependabot alerts, administrators and outside collaborators.",
	DocsURL:      "https://docs.github.com/en/rest/authentication/permissions-required-for-fine-grained-personal-access-tokens",
	AuthStrategy: app.ProviderAuthAPIKey,
	// Or through a GitHub OAuth app (github.com or GitHub Enterprise
	// Server); its tokens do not expire.
	AuthStrategies: []string{app.ProviderAuthAPIKey, app.ProviderAuthOAuth2},
	OAuth: &app.ProviderOAuth{
		Scopes: []string{"read:org", "repo"}, PKCE: true,
		SetupURL:  "https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/creating-an-oauth-app",
		SetupHelp: "In GitHub, create an OAuth app (organization Settings > Developer settings > OAuth Apps) with the callback URL below as its authorization callback URL. The person who connects should be an organization owner, and must grant the app access to the organization if it restricts OAuth apps.",
		TokenKey:  "token", BaseURLKey: "baseUrl", Endpoints: oauthEndpoints,
	},
	Credentials: []app.CredentialField{
		{Key: "token", Label: "Access token", Type: "password", Secret: true, Required: true,
			Help: "A fine-grained or classic personal access token, or a GitHub App installation token, of an organization owner. Classic scopes: read:org, repo (or public_repo for public repositories only). Fine-grained: organization Members and Administration read, repository Administration and Metadata read."},
		{Key: "baseUrl", Label: "API base URL", Type: "url", Required: false, Placeholder: DefaultBaseURL,
			Help: "Leave empty for github.com. GitHub Enterprise Server: https://HOST/api/v3."},
	},
	Variables: []app.ProviderVariable{
		{Key: "organization", Label: "Organization", Type: "text", Required: true,
			Help: "The organization's login, as in github.com/LOGIN."},
		{Key: "repositories", Label: "Repositories", Type: "text", OptionsFrom: app.OptionsProvider,
			Help: "Only these repositories (names separated by commas or new lines). Empty: every repository of the organization."},
		{Key: "maxAdmins", Label: "Most organization owners allowed", Type: "number", Default: "5",
			Help: "github.admin_count fails when the organization has more owners than this."},
		{Key: "includeArchived", Label: "Include archived repositories", Type: "boolean", Default: "false",
			Help: "Archived repositories are read-only and skipped unless this is on."},
	},
	Services:     []app.ProviderService{},
	Capabilities: []string{app.CapabilityChecks},
	Checks: []app.CheckDefinition{
		{
			ID:          CheckOrg2FARequired,
			Title:       "Organization requires two-factor authentication",
			Description: "The organization's setting that removes members, outside collaborators and billing managers who have not enabled two-factor authentication is on.",
			Severity:    "high",
			Remediation: "In the organization's Settings, Authentication security, tick \"Require two-factor authentication for everyone in the organization\".",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-03")},
		},
		{
			ID:          CheckMembersWithout2FA,
			Title:       "Members have two-factor authentication",
			Description: "Each organization member has two-factor authentication enabled (GitHub's 2fa_disabled member filter, which only organization owners may use).",
			Severity:    "high",
			Remediation: "Ask the member to enable two-factor authentication (Settings, Password and authentication) or remove them; then require 2FA for the organization.",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-03")},
		},
		{
			ID:          CheckBranchProtection,
			Title:       "Default branch is protected",
			Description: "The repository's default branch has a branch protection rule or an active ruleset, so history cannot be rewritten or the branch deleted without review of the rule.",
			Severity:    "high",
			Remediation: "In the repository's Settings, Branches (or Rules, Rulesets), add a rule for the default branch that blocks force pushes and deletions and requires pull requests.",
			Evidences:   []app.RequirementRef{iso("A.8.4"), iso("A.8.32"), soc2("CC8.1"), csf("PR.PS-01")},
		},
		{
			ID:          CheckRequiredReviews,
			Title:       "Default branch requires an approving review",
			Description: "Changes to the default branch need a pull request with at least one approving review (branch protection or a ruleset's pull_request rule).",
			Severity:    "high",
			Remediation: "In the default branch's protection rule or ruleset, require a pull request before merging with at least 1 required approval.",
			Evidences:   []app.RequirementRef{iso("A.8.28"), iso("A.8.32"), iso("A.8.4"), soc2("CC8.1"), csf("PR.PS-06")},
		},
		{
			ID:          CheckSecretScanning,
			Title:       "Secret scanning is enabled",
			Description: "GitHub secret scanning is enabled on the repository (security_and_analysis.secret_scanning.status).",
			Severity:    "medium",
			Remediation: "In the repository's Settings, Code security, enable Secret scanning (GitHub Advanced Security / Secret Protection for private repositories).",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.28"), soc2("CC6.1"), soc2("CC7.1"), csf("PR.DS-01")},
		},
		{
			ID:          CheckDependabotAlerts,
			Title:       "Dependabot alerts are enabled",
			Description: "Dependabot alerts (vulnerable dependency alerts) are enabled on the repository.",
			Severity:    "medium",
			Remediation: "In the repository's Settings, Code security, enable Dependabot alerts (or enable them for all repositories at organization level).",
			Evidences:   []app.RequirementRef{iso("A.8.8"), soc2("CC7.1"), csf("ID.RA-01")},
		},
		{
			ID:          CheckAdminCount,
			Title:       "Few organization owners",
			Description: "The organization has no more owners (members with the admin role) than the connection's threshold (maxAdmins, default 5).",
			Severity:    "medium",
			Remediation: "Review the organization's owners and change the role of those who do not need it to Member.",
			Evidences:   []app.RequirementRef{iso("A.8.2"), iso("A.5.15"), soc2("CC6.3"), csf("PR.AA-05")},
		},
		{
			ID:          CheckOutsideCollaborators,
			Title:       "Outside collaborators hold no admin permission",
			Description: "Lists the organization's outside collaborators; each fails when it has admin permission on a checked repository, and passes when it has at most maintain.",
			Severity:    "high",
			Remediation: "Lower the collaborator's permission on the listed repositories (Settings, Collaborators and teams) or make them an organization member under its policies.",
			Evidences:   []app.RequirementRef{iso("A.8.2"), iso("A.5.18"), iso("A.5.19"), soc2("CC6.2"), soc2("CC6.3"), csf("PR.AA-05")},
		},
	},
}

// oauthEndpoints are the OAuth app endpoints for an API base URL: github.com
// for api.github.com (or empty), the server's root for GitHub Enterprise
// Server's https://HOST/api/v3.
func oauthEndpoints(base string) (string, string, error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" || base == DefaultBaseURL {
		return "https://github.com/login/oauth/authorize", "https://github.com/login/oauth/access_token", nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("GitHub API URL %q is not an http(s) URL (https://HOST/api/v3 for GitHub Enterprise Server)", base)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3")
	r := strings.TrimRight(u.String(), "/")
	return r + "/login/oauth/authorize", r + "/login/oauth/access_token", nil
}
