package gitlab

import (
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// Check ids; stable across releases (findings are kept per check id).
const (
	CheckProtectedDefaultBranch = "gitlab.protected_default_branch"
	CheckMergeRequestApprovals  = "gitlab.mr_approvals"
	CheckGroup2FARequired       = "gitlab.group_2fa_required"
	CheckMembersWithout2FA      = "gitlab.members_without_2fa"
)

// DefaultBaseURL is gitlab.com.
const DefaultBaseURL = "https://gitlab.com"

// GitLab access levels.
const (
	accessNoOne      = 0
	accessMaintainer = 40
)

func iso(ref string) app.RequirementRef {
	return app.RequirementRef{Framework: "iso27001-2022", Ref: ref}
}
func soc2(ref string) app.RequirementRef { return app.RequirementRef{Framework: "soc2-2017", Ref: ref} }
func csf(ref string) app.RequirementRef {
	return app.RequirementRef{Framework: "nist-csf-2.0", Ref: ref}
}

var definition = app.ProviderDefinition{
	Slug:         "gitlab",
	Name:         "GitLab",
	Category:     "source_control",
	Description:  "Tests a GitLab group on gitlab.com or a self-managed instance: protected default branches, merge request approvals, the group's two-factor requirement and members without two-factor authentication.",
	DocsURL:      "https://docs.gitlab.com/user/profile/personal_access_tokens/",
	AuthStrategy: app.ProviderAuthAPIKey,
	// Or through a GitLab OAuth application (gitlab.com or the instance):
	// PKCE, and tokens that expire after two hours with a refresh token.
	AuthStrategies: []string{app.ProviderAuthAPIKey, app.ProviderAuthOAuth2},
	OAuth: &app.ProviderOAuth{
		Scopes: []string{"read_api"}, PKCE: true, RefreshTokens: true,
		SetupURL:  "https://docs.gitlab.com/integration/oauth_provider/",
		SetupHelp: "In GitLab, add an application (group or instance: Settings > Applications; or your user's Preferences > Applications) with the callback URL below, confidential, scope read_api. The person who connects needs the Owner role in the group for the two-factor checks.",
		TokenKey:  "token", BaseURLKey: "baseUrl", Endpoints: oauthEndpoints,
	},
	Credentials: []app.CredentialField{
		{Key: "token", Label: "Access token", Type: "password", Secret: true, Required: true,
			Help: "A personal, group or project access token with the read_api scope, of a user with the Owner role in the group (members' 2FA status), or an administrator's on self-managed."},
		{Key: "baseUrl", Label: "GitLab URL", Type: "url", Required: false, Placeholder: DefaultBaseURL,
			Help: "Leave empty for gitlab.com. Self-managed: the instance's URL (https://gitlab.example.com); the API is under /api/v4."},
	},
	Variables: []app.ProviderVariable{
		{Key: "group", Label: "Group", Type: "text", Required: true,
			Help: "The group's full path (acme/platform) or numeric id. Projects of its subgroups are included."},
		{Key: "projects", Label: "Projects", Type: "text", OptionsFrom: app.OptionsProvider,
			Help: "Only these projects (paths relative to the group or full paths, separated by commas or new lines). Empty: every project."},
		{Key: "includeArchived", Label: "Include archived projects", Type: "boolean", Default: "false",
			Help: "Archived projects are read-only and skipped unless this is on."},
	},
	Services:     []app.ProviderService{},
	Capabilities: []string{app.CapabilityChecks},
	Checks: []app.CheckDefinition{
		{
			ID:          CheckProtectedDefaultBranch,
			Title:       "Default branch is protected",
			Description: "The project's default branch matches a protected branch rule that forbids force pushes and lets only Maintainers (or no one, or named users, groups or deploy keys) push.",
			Severity:    "high",
			Remediation: "In the project's Settings, Repository, Protected branches, protect the default branch with \"Allowed to push and merge\" set to Maintainers (or No one) and \"Allowed to force push\" off.",
			Evidences:   []app.RequirementRef{iso("A.8.4"), iso("A.8.32"), soc2("CC8.1"), csf("PR.PS-01")},
		},
		{
			ID:          CheckMergeRequestApprovals,
			Title:       "Merge requests need an approval",
			Description: "Merge requests into the default branch need at least one approval: an approval rule (any approver or a named rule) for all branches or for the default branch, or the project's approvals_before_merge.",
			Severity:    "high",
			Remediation: "In the project's Settings, Merge requests, Merge request approvals, add a rule with at least 1 required approval that applies to the default branch (GitLab Premium or Ultimate).",
			Evidences:   []app.RequirementRef{iso("A.8.28"), iso("A.8.32"), iso("A.8.4"), soc2("CC8.1"), csf("PR.PS-06")},
		},
		{
			ID:          CheckGroup2FARequired,
			Title:       "Group requires two-factor authentication",
			Description: "The group's \"Require all users in this group to set up two-factor authentication\" setting (require_two_factor_authentication) is on.",
			Severity:    "high",
			Remediation: "In the group's Settings, General, Permissions and group features, tick \"Require all users in this group to set up two-factor authentication\".",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-03")},
		},
		{
			ID:          CheckMembersWithout2FA,
			Title:       "Members have two-factor authentication",
			Description: "Each active member of the group (direct or inherited; bot users excepted) has two-factor authentication enabled, as the group members API shows group Owners, or as the users API's two_factor filter shows administrators of a self-managed instance.",
			Severity:    "high",
			Remediation: "Ask the member to enable two-factor authentication (Edit profile, Account) or remove them; then require 2FA for the group.",
			Evidences:   []app.RequirementRef{iso("A.5.17"), iso("A.8.5"), soc2("CC6.1"), csf("PR.AA-03")},
		},
	},
}

// oauthEndpoints are the OAuth application endpoints of a GitLab URL
// (empty: gitlab.com), under the instance's relative root if any.
func oauthEndpoints(base string) (string, string, error) {
	api, err := APIURL(base)
	if err != nil {
		return "", "", err
	}
	root := *api
	root.Path = strings.TrimSuffix(root.Path, "/api/v4")
	r := strings.TrimRight(root.String(), "/")
	return r + "/oauth/authorize", r + "/oauth/token", nil
}
