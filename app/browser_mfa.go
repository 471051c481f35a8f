package app

import (
	"context"
	"net/url"
	"strings"
	"time"
)

// MFA setup instructions for the account an auth profile signs in with:
// how to enrol an authenticator app on a common admin console and keep its
// secret key, which the profile's TOTP seed takes. The reference asks a
// hosted model; here the instructions are a curated table compiled into
// the appliance (source "builtin", grounded). For a host the table does
// not know, a configured model may answer (source "model", not grounded:
// a person checks it against the vendor's documentation).

// MFAInstructions answers GET /v1/browserbase/mfa-instructions.
type MFAInstructions struct {
	Hostname  string    `json:"hostname"`
	Provider  string    `json:"provider"`
	Steps     []string  `json:"steps"`
	Tips      []string  `json:"tips"`
	Confident bool      `json:"confident"`
	Grounded  bool      `json:"grounded"`
	CheckedAt time.Time `json:"checkedAt"`
	Source    string    `json:"source"` // builtin, model
	DocsURL   string    `json:"docsUrl,omitempty"`
}

// mfaGuide is one console of the table.
type mfaGuide struct {
	Provider string
	Hosts    []string // exact hosts, or "*.domain" for subdomains
	Steps    []string
	Tips     []string
	Docs     string
}

// keepSeed is the last step of every guide: where the secret key goes.
const keepSeed = "Copy the secret key shown (the text form of the QR code, base32) into the auth profile's TOTP seed on this appliance (Browser automations → auth profile → TOTP seed), then enter the current code the appliance or your authenticator shows to finish enrolment."

var mfaGuides = []mfaGuide{
	{Provider: "Google Workspace", Hosts: []string{"admin.google.com", "accounts.google.com", "myaccount.google.com", "workspace.google.com"},
		Docs: "https://support.google.com/accounts/answer/185839",
		Steps: []string{
			"Sign in to https://myaccount.google.com as the account the appliance will use.",
			"Open Security → 2-Step Verification and turn it on if it is off (Google asks for a phone first; a security key or backup codes can replace it later).",
			"Under Authenticator app, choose Set up authenticator, then \"Can't scan it?\" to show the secret key.",
			keepSeed,
		},
		Tips: []string{"If the organization enforces 2-Step Verification, an admin may have to allow enrolment for the account (Admin console → Security → Authentication → 2-Step Verification).",
			"Keep the backup codes in your password manager: the appliance does not need them."}},
	{Provider: "Microsoft 365 / Entra ID", Hosts: []string{"portal.azure.com", "entra.microsoft.com", "admin.microsoft.com", "login.microsoftonline.com", "mysignins.microsoft.com", "portal.office.com"},
		Docs: "https://learn.microsoft.com/entra/identity/authentication/howto-mfa-userstates",
		Steps: []string{
			"Sign in to https://mysignins.microsoft.com/security-info as the account the appliance will use.",
			"Choose Add sign-in method → Authenticator app, then \"I want to use a different authenticator app\".",
			"On the QR code page choose \"Can't scan image?\" to show the secret key.",
			keepSeed,
		},
		Tips: []string{"Conditional Access policies that require a compliant device or phish-resistant MFA will block a headless browser; exclude the automation account from them or scope it to read-only roles.",
			"Entra ID may ask for the Microsoft Authenticator app by default; the \"different authenticator app\" link gives a standard TOTP secret."}},
	{Provider: "Okta", Hosts: []string{"*.okta.com", "*.oktapreview.com", "*.okta-emea.com"},
		Docs: "https://help.okta.com/en-us/content/topics/security/mfa/google-authenticator.htm",
		Steps: []string{
			"An Okta admin enables Google Authenticator (TOTP) as an authenticator: Security → Authenticators → Add authenticator → Google Authenticator, and allows it in the enrollment policy.",
			"Sign in to the Okta end-user dashboard as the account the appliance will use and open Settings → Security Methods.",
			"Set up Google Authenticator and choose \"Can't scan?\" to show the secret key.",
			keepSeed,
		},
		Tips: []string{"Okta Verify push or FastPass cannot be answered by the appliance; the account needs the TOTP authenticator."}},
	{Provider: "GitHub", Hosts: []string{"github.com"},
		Docs: "https://docs.github.com/authentication/securing-your-account-with-two-factor-authentication-2fa/configuring-two-factor-authentication",
		Steps: []string{
			"Sign in to https://github.com as the account the appliance will use and open Settings → Password and authentication.",
			"Choose Enable two-factor authentication (or Authenticator app → Edit).",
			"Under the QR code choose \"setup key\" to show the secret key.",
			keepSeed,
		},
		Tips: []string{"Download the recovery codes and keep them in your password manager.",
			"GitHub may ask for a sudo-mode re-authentication with a code during runs of sensitive pages."}},
	{Provider: "GitLab", Hosts: []string{"gitlab.com"},
		Docs: "https://docs.gitlab.com/ee/user/profile/account/two_factor_authentication.html",
		Steps: []string{
			"Sign in to GitLab as the account the appliance will use and open Edit profile → Account.",
			"Choose Enable two-factor authentication.",
			"Next to the QR code, GitLab shows the key (\"Can't scan the code?\").",
			keepSeed,
		},
		Tips: []string{"On a self-managed GitLab, use the auth profile of that host: the steps are the same."}},
	{Provider: "AWS", Hosts: []string{"console.aws.amazon.com", "*.signin.aws.amazon.com", "signin.aws.amazon.com", "*.console.aws.amazon.com"},
		Docs: "https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_mfa_enable_virtual.html",
		Steps: []string{
			"Sign in to the AWS console as the IAM user the appliance will use (prefer a read-only IAM user over the root user).",
			"Open the account menu → Security credentials → Multi-factor authentication (MFA) → Assign MFA device.",
			"Choose Authenticator app, then \"Show secret key\".",
			keepSeed + " AWS asks for two consecutive codes.",
		},
		Tips: []string{"Accounts signing in through IAM Identity Center enrol MFA in the access portal instead (\"Register device\").",
			"Give the IAM user only the read permissions the evidence pages need."}},
	{Provider: "Atlassian", Hosts: []string{"*.atlassian.net", "admin.atlassian.com", "id.atlassian.com"},
		Docs: "https://support.atlassian.com/atlassian-account/docs/manage-two-step-verification-for-your-atlassian-account/",
		Steps: []string{
			"Sign in to https://id.atlassian.com/manage-profile/security as the account the appliance will use.",
			"Under Two-step verification choose Configure.",
			"Choose \"Can't scan the QR code?\" to show the secret key.",
			keepSeed,
		},
		Tips: []string{"If the organization signs in through an identity provider (SAML SSO), MFA is set there: use that provider's instructions."}},
	{Provider: "Slack", Hosts: []string{"slack.com", "*.slack.com"},
		Docs: "https://slack.com/help/articles/204509068-Set-up-two-factor-authentication",
		Steps: []string{
			"Sign in to the Slack workspace in a browser as the account the appliance will use and open Account → Settings.",
			"Next to Two-factor authentication choose Expand → Set up two-factor authentication → Use an app.",
			"Choose \"Can't scan the code?\" (or enter the key manually) to show the secret key.",
			keepSeed,
		},
		Tips: []string{"Workspaces that sign in with SSO set MFA at the identity provider."}},
	{Provider: "Cloudflare", Hosts: []string{"dash.cloudflare.com"},
		Docs: "https://developers.cloudflare.com/fundamentals/setup/account/account-security/2fa/",
		Steps: []string{
			"Sign in to https://dash.cloudflare.com as the account the appliance will use and open My Profile → Authentication.",
			"Under Two-Factor Authentication choose Mobile App Authentication.",
			"Choose to show the key when the QR code is displayed.",
			keepSeed,
		},
		Tips: []string{"Store the backup codes Cloudflare shows in your password manager."}},
}

// mfaGuideFor finds the table's guide for a host.
func mfaGuideFor(host string) *mfaGuide {
	for i := range mfaGuides {
		if hostAllowed(host, mfaGuides[i].Hosts) {
			return &mfaGuides[i]
		}
	}
	return nil
}

const mfaModelPrompt = `You help a compliance team set up TOTP (authenticator app) two-factor authentication for a service account that a headless browser signs in with.
Answer with numbered steps, one per line, at most 8, for the admin console at the host given, ending with where the secret key (base32) is shown.
Then a line "TIPS:" and at most 3 short tips, one per line. If you do not know this console, answer exactly UNKNOWN.`

// GetMFAInstructions returns MFA setup steps for a host (a host name or a
// URL): from the built-in table, else from the configured model (marked
// not grounded), else not found.
func (a *App) GetMFAInstructions(ctx context.Context, host string) (*MFAInstructions, error) {
	if _, err := a.browserReader(ctx); err != nil {
		return nil, err
	}
	h := strings.ToLower(strings.TrimSpace(host))
	if u, err := url.Parse(h); err == nil && u.Host != "" {
		h = u.Hostname()
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return nil, Invalid("host", CodeRequired, nil, "host is required: the host name of the admin console (for example admin.google.com)")
	}
	if !hostNameRe.MatchString(h) || strings.HasPrefix(h, "*.") {
		return nil, Invalid("host", CodeInvalid, host, "host must be a host name such as admin.google.com, or a URL")
	}
	if g := mfaGuideFor(h); g != nil {
		return &MFAInstructions{Hostname: h, Provider: g.Provider, Steps: g.Steps, Tips: g.Tips, Confident: true, Grounded: true,
			CheckedAt: a.Now(), Source: "builtin", DocsURL: g.Docs}, nil
	}
	model, budget, limit := a.assistantModel()
	if model == nil {
		return nil, Errorf(ErrNotFound, "no MFA instructions for %s: the built-in table covers %s, and no language model is configured", h, mfaProviderNames())
	}
	mctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	reply, err := model.Chat(mctx, ModelRequest{MaxTokens: budget, Messages: []ModelMessage{{Role: "system", Content: mfaModelPrompt},
		{Role: "user", Content: "Host: " + h}}}, nil)
	if err != nil {
		return nil, Errorf(ErrNotFound, "no MFA instructions for %s: it is not in the built-in table and the language model did not answer (%s)", h, modelFailure(err))
	}
	text := strings.TrimSpace(reply.Content)
	if text == "" || strings.EqualFold(text, "UNKNOWN") {
		return nil, Errorf(ErrNotFound, "no MFA instructions for %s: it is not in the built-in table and the language model does not know it", h)
	}
	out := &MFAInstructions{Hostname: h, Steps: []string{}, Tips: []string{}, Confident: false, Grounded: false, CheckedAt: a.Now(), Source: "model"}
	tips := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(strings.ToUpper(line), "TIPS:") {
			tips = true
			if rest := strings.TrimSpace(line[5:]); rest != "" {
				out.Tips = append(out.Tips, clip(rest, 500))
			}
			continue
		}
		line = clip(strings.TrimLeft(line, "0123456789.)-* "), 500)
		if tips {
			if len(out.Tips) < 5 {
				out.Tips = append(out.Tips, line)
			}
		} else if len(out.Steps) < 12 {
			out.Steps = append(out.Steps, line)
		}
	}
	if len(out.Steps) == 0 {
		return nil, Errorf(ErrNotFound, "no MFA instructions for %s: the language model's answer had no steps", h)
	}
	out.Tips = append(out.Tips, "Written by the configured language model, not from the built-in table: check it against the vendor's documentation.")
	return out, nil
}

func mfaProviderNames() string {
	names := make([]string, len(mfaGuides))
	for i, g := range mfaGuides {
		names[i] = g.Provider
	}
	return strings.Join(names, ", ")
}
