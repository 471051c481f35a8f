package app

import (
	"context"
	"net/url"
	"strings"
	"time"
)

// analyze-login: the appliance's Chromium loads a login page (through the
// session manager, its caps and the network policy, reaching the login
// URL's host only) and reads its DOM deterministically: which username,
// password and one-time-code fields and submit button are there (by the
// same selectors sign-in uses), single sign-on buttons and links, and
// CAPTCHA widgets. The result proposes an auth profile (URL and
// selectors). The analysis is recorded as a run (trigger "analyze") and
// answered synchronously, bounded by analyzeLoginTimeout.

// analyzeLoginTimeout bounds one analysis.
const analyzeLoginTimeout = 45 * time.Second

// BrowserLoginAnalysis is what analyze-login found.
type BrowserLoginAnalysis struct {
	RunID    string `json:"runId"`
	URL      string `json:"url"`
	FinalURL string `json:"finalUrl"`
	Hostname string `json:"hostname"`
	Loaded   bool   `json:"loaded"`
	// Form is password (username and password on one page),
	// username_first (the password is asked on a next page),
	// password_only, totp_only or none.
	Form            string                 `json:"form"`
	Fields          BrowserLoginSelectors  `json:"fields"`
	SSO             []string               `json:"sso"`
	Captcha         []string               `json:"captcha"`
	ProposedProfile BrowserProposedProfile `json:"proposedProfile"`
	Notes           []string               `json:"notes"`
	RefusedRequests []string               `json:"refusedRequests"`
	DurationMs      int64                  `json:"durationMs"`
}

// BrowserProposedProfile is an auth profile configuration to create with
// POST .../profiles/resolve and PATCH .../profiles/{id}.
type BrowserProposedProfile struct {
	URL       string                `json:"url"`
	Mode      string                `json:"mode"` // password, sso
	Selectors BrowserLoginSelectors `json:"selectors"`
}

// Candidate selectors, each tried alone so the proposal names the one
// that matched.
var (
	loginUsernameCandidates = []string{`input[autocomplete="username"]`, `input[type="email"]`, `input[name*="user" i]`, `input[name*="login" i]`,
		`input[name*="email" i]`, `input[id*="user" i]`, `input[id*="email" i]`}
	loginPasswordCandidates = []string{`input[autocomplete="current-password"]`, `input[type="password"]`}
	loginTOTPCandidates     = []string{`input[autocomplete="one-time-code"]`, `input[name*="otp" i]`, `input[name*="totp" i]`, `input[name*="code" i]`,
		`input[id*="otp" i]`, `input[id*="code" i]`}
	loginSubmitCandidates = []string{`button[type="submit"]`, `input[type="submit"]`, `form button:not([type])`}

	ssoSelectors = []struct{ name, sel string }{
		{"Google", `a[href*="accounts.google.com"], form[action*="accounts.google.com"]`},
		{"Microsoft", `a[href*="login.microsoftonline.com"], a[href*="login.live.com"], form[action*="login.microsoftonline.com"]`},
		{"Okta", `a[href*=".okta.com"], form[action*=".okta.com"]`},
		{"GitHub", `a[href*="github.com/login/oauth"]`},
		{"SAML", `a[href*="saml" i], form[action*="saml" i], a[href*="/sso" i]`},
	}
	ssoPhrases = []struct{ name, phrase string }{
		{"Google", "with google"}, {"Microsoft", "with microsoft"}, {"Apple", "with apple"}, {"Okta", "with okta"},
		{"GitHub", "with github"}, {"SAML", "single sign-on"}, {"SAML", "sign in with sso"}, {"SAML", "continue with sso"}, {"SAML", "log in with sso"},
	}
	captchaSelectors = []struct{ name, sel string }{
		{"reCAPTCHA", `.g-recaptcha, iframe[src*="recaptcha"], script[src*="recaptcha"], [data-sitekey][class*="recaptcha" i]`},
		{"hCaptcha", `.h-captcha, iframe[src*="hcaptcha"], script[src*="hcaptcha"]`},
		{"Cloudflare Turnstile", `.cf-turnstile, iframe[src*="challenges.cloudflare.com"], script[src*="challenges.cloudflare.com"]`},
		{"FunCaptcha", `iframe[src*="arkoselabs"], script[src*="arkoselabs"]`},
	}
	captchaPhrases = []string{"i'm not a robot", "i am not a robot", "verify you are human", "verify that you are human", "complete the captcha"}
)

// AnalyzeLogin loads a login page in the organization's browser and
// proposes an auth profile for it.
func (a *App) AnalyzeLogin(ctx context.Context, rawURL string) (*BrowserLoginAnalysis, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	rawURL = strings.TrimSpace(rawURL)
	if rawURL == "" {
		return nil, Invalid("url", CodeRequired, nil, "url is required: the login page to analyze")
	}
	if !validURL(rawURL) {
		return nil, Invalid("url", CodeInvalid, rawURL, "url must be an absolute http or https URL")
	}
	u, _ := url.Parse(rawURL)
	host := strings.ToLower(u.Hostname())
	run := a.newRun(&BrowserAutomation{}, "analyze")
	ls, err := a.openSession(context.WithoutCancel(ctx), p.OrgID, []string{host}, run.ID, true)
	if err != nil {
		return nil, err
	}
	defer a.closeSession(ls)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), analyzeLoginTimeout)
	defer cancel()
	start := time.Now()
	res := analyzeLoginPage(actx, ls.s, rawURL)
	res.RunID, res.Hostname = run.ID, host
	res.DurationMs = time.Since(start).Milliseconds()
	res.RefusedRequests = ls.s.Refused()
	if res.RefusedRequests == nil {
		res.RefusedRequests = []string{}
	}

	now := a.Now()
	run.CompletedAt, run.DurationMs, run.Refused, run.Success = &now, res.DurationMs, res.RefusedRequests, res.Loaded
	run.Status = BrowserRunCompleted
	status := "ok"
	msg := "loaded " + clip(res.FinalURL, 300)
	if !res.Loaded {
		run.Status, status = BrowserRunFailed, "failed"
		msg = strings.Join(res.Notes, " ")
		run.Error = Ptr(clip(msg, 500))
	}
	run.Steps = []BrowserStepResult{{Index: 0, Kind: StepNavigate, Status: status, Message: clip(msg, 500), DurationMs: res.DurationMs}}
	run.Extracted = map[string]string{"form": res.Form, "username": res.Fields.Username, "password": res.Fields.Password, "totp": res.Fields.TOTP,
		"submit": res.Fields.Submit, "sso": strings.Join(res.SSO, ", "), "captcha": strings.Join(res.Captcha, ", ")}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.SaveBrowserRun(ctx, p.OrgID, run); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "login_analyzed", ResourceType: "browser_automation_run", ResourceID: run.ID,
			After: map[string]any{"url": clip(rawURL, 500), "form": res.Form, "sso": res.SSO, "captcha": res.Captcha}})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// analyzeLoginPage reads the page's DOM.
func analyzeLoginPage(ctx context.Context, s BrowserSession, rawURL string) *BrowserLoginAnalysis {
	res := &BrowserLoginAnalysis{URL: rawURL, FinalURL: rawURL, Form: "none", SSO: []string{}, Captcha: []string{}, Notes: []string{}}
	if err := s.Navigate(ctx, rawURL); err != nil {
		res.Notes = append(res.Notes, "The page did not load: "+clip(err.Error(), 300))
		res.ProposedProfile = BrowserProposedProfile{URL: rawURL, Mode: "password"}
		return res
	}
	res.Loaded = true
	if fu, err := s.URL(ctx); err == nil && fu != "" {
		res.FinalURL = fu
	}
	first := func(cands []string) string {
		for _, c := range cands {
			if ok, _ := s.Exists(ctx, c); ok {
				return c
			}
		}
		return ""
	}
	res.Fields = BrowserLoginSelectors{Username: first(loginUsernameCandidates), Password: first(loginPasswordCandidates),
		TOTP: first(loginTOTPCandidates), Submit: first(loginSubmitCandidates)}
	body, _ := s.Text(ctx, "")
	text := strings.ToLower(normSpace(body))
	seen := map[string]bool{}
	addSSO := func(n string) {
		if !seen[n] {
			seen[n] = true
			res.SSO = append(res.SSO, n)
		}
	}
	for _, c := range ssoSelectors {
		if ok, _ := s.Exists(ctx, c.sel); ok {
			addSSO(c.name)
		}
	}
	for _, c := range ssoPhrases {
		if strings.Contains(text, c.phrase) {
			addSSO(c.name)
		}
	}
	for _, c := range captchaSelectors {
		if ok, _ := s.Exists(ctx, c.sel); ok {
			res.Captcha = append(res.Captcha, c.name)
		}
	}
	if len(res.Captcha) == 0 {
		for _, ph := range captchaPhrases {
			if strings.Contains(text, ph) {
				res.Captcha = append(res.Captcha, "CAPTCHA (by its text)")
				break
			}
		}
	}
	f := res.Fields
	switch {
	case f.Password != "" && f.Username != "":
		res.Form = "password"
	case f.Password != "":
		res.Form = "password_only"
	case f.Username != "":
		res.Form = "username_first"
		res.Notes = append(res.Notes, "The page asks for the username first; sign-in follows it to the password page.")
	case f.TOTP != "":
		res.Form = "totp_only"
	}
	mode := "password"
	if res.Form == "none" {
		if len(res.SSO) > 0 {
			mode = "sso"
			res.Notes = append(res.Notes, "Only single sign-on was found: the appliance cannot sign in through it (a person is needed at the keyboard); sign in the profile with the identity provider's own login page instead.")
		} else {
			res.Notes = append(res.Notes, "No sign-in form was found: the page may need a click to show it, or the session is already signed in.")
		}
	} else if len(res.SSO) > 0 {
		res.Notes = append(res.Notes, "The page also offers single sign-on ("+strings.Join(res.SSO, ", ")+"); the proposed profile uses the password form.")
	}
	if len(res.Captcha) > 0 {
		res.Notes = append(res.Notes, "A CAPTCHA is present ("+strings.Join(res.Captcha, ", ")+"): unattended sign-in will likely fail; ask the vendor for an API, an allowlisted address or a service account without CAPTCHA.")
	}
	res.ProposedProfile = BrowserProposedProfile{URL: res.FinalURL, Mode: mode, Selectors: f}
	return res
}
