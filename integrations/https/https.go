// Package https is the integration provider that tests web endpoints the
// organization runs (internal or external): the TLS versions offered, the
// certificate chain, host name and expiry, HSTS, and the security headers
// of the answer. It reaches the URLs through the outbound client, so the
// network policy applies.
package https

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
)

// Check ids.
const (
	CheckTLSVersion   = "https.tls_version"
	CheckCertificate  = "https.certificate_valid"
	CheckHostname     = "https.certificate_hostname"
	CheckExpiry       = "https.certificate_expiry"
	CheckHSTS         = "https.hsts"
	CheckHeaders      = "https.security_headers"
	hstsMinimum       = 180 * 24 * time.Hour
	expiryFailWithin  = 14 * 24 * time.Hour
	expiryWarnWithin  = 30 * 24 * time.Hour
	maxURLs           = 50
	maxHeaderBodyRead = 64 << 10
)

var (
	iso  = func(ref string) app.RequirementRef { return app.RequirementRef{Framework: "iso27001-2022", Ref: ref} }
	soc2 = func(ref string) app.RequirementRef { return app.RequirementRef{Framework: "soc2-2017", Ref: ref} }
	csf  = func(ref string) app.RequirementRef { return app.RequirementRef{Framework: "nist-csf-2.0", Ref: ref} }
)

var definition = app.ProviderDefinition{
	Slug:     "https",
	Name:     "HTTPS endpoints",
	Category: "web",
	Description: "Tests the web endpoints you run, inside or outside your network: TLS 1.2 or later only, a valid certificate chain for the " +
		"host name, certificate expiry, HSTS and the security headers of the answer.",
	AuthStrategy: app.ProviderAuthNone,
	Credentials:  []app.CredentialField{},
	Variables: []app.ProviderVariable{{Key: "urls", Label: "URLs", Type: "url_list", Required: true,
		Help: "One https:// URL per line (at most 50). Each is a resource of every check."}},
	Services:     []app.ProviderService{},
	Capabilities: []string{app.CapabilityChecks},
	Checks: []app.CheckDefinition{
		{ID: CheckTLSVersion, Title: "TLS 1.2 or later only", Severity: "high",
			Description: "The endpoint negotiates TLS 1.2 or later and refuses TLS 1.0 and 1.1.",
			Remediation: "Disable TLS 1.0 and 1.1 in the server or load balancer configuration (minimum protocol TLS 1.2).",
			Evidences:   []app.RequirementRef{iso("A.8.24"), iso("A.8.20"), soc2("CC6.7.2"), soc2("CC6.1.10"), csf("PR.DS-02")}},
		{ID: CheckCertificate, Title: "Certificate chain is trusted", Severity: "high",
			Description: "The certificate chains to a trusted root and is within its validity period.",
			Remediation: "Install a certificate issued by a trusted CA and serve the full intermediate chain.",
			Evidences:   []app.RequirementRef{iso("A.8.24"), soc2("CC6.7.2"), csf("PR.DS-02")}},
		{ID: CheckHostname, Title: "Certificate matches the host name", Severity: "high",
			Description: "The certificate names the host the URL uses.",
			Remediation: "Issue the certificate for the host name clients use (subject alternative names).",
			Evidences:   []app.RequirementRef{iso("A.8.24"), soc2("CC6.7.2"), csf("PR.DS-02")}},
		{ID: CheckExpiry, Title: "Certificate is not about to expire", Severity: "medium",
			Description: "Fails when the certificate has expired or expires within 14 days; passes with a warning within 30 days.",
			Remediation: "Renew the certificate, and automate renewal (ACME) so it never runs this close.",
			Evidences:   []app.RequirementRef{iso("A.8.24"), soc2("CC6.7.2"), csf("PR.DS-02")}},
		{ID: CheckHSTS, Title: "HSTS is on for at least 180 days", Severity: "medium",
			Description: "The answer carries Strict-Transport-Security with max-age of at least 180 days (15552000 seconds).",
			Remediation: "Send Strict-Transport-Security: max-age=31536000; includeSubDomains on every HTTPS answer.",
			Evidences:   []app.RequirementRef{iso("A.8.24"), iso("A.8.26"), soc2("CC6.7.2"), csf("PR.DS-02")}},
		{ID: CheckHeaders, Title: "Security headers are set", Severity: "low",
			Description: "The answer sets Content-Security-Policy, X-Content-Type-Options: nosniff, X-Frame-Options (or CSP frame-ancestors) and Referrer-Policy.",
			Remediation: "Add the missing headers in the application or the reverse proxy.",
			Evidences:   []app.RequirementRef{iso("A.8.26"), iso("A.8.28"), soc2("CC6.6.1"), csf("PR.PS-06")}},
	},
}

// Provider tests HTTPS endpoints.
type Provider struct {
	client *http.Client
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	roots  *x509.CertPool
	now    func() time.Time
}

var _ app.IntegrationProvider = (*Provider)(nil)

// New returns the provider over the outbound client; TLS probes use the
// client's policy-checking dialer and root CAs.
func New(c *http.Client) *Provider {
	p := &Provider{client: c, dial: outbound.DialContext(c), now: time.Now}
	if cfg := outbound.TLSConfig(c); cfg != nil {
		p.roots = cfg.RootCAs
	}
	return p
}

// Definition returns the provider's catalog entry.
func (p *Provider) Definition() app.ProviderDefinition { return definition }

func targets(t app.ConnectionTarget) ([]*url.URL, error) {
	list := app.SplitList(t.Variables["urls"])
	if len(list) == 0 {
		return nil, errors.New("no URLs configured: set the urls variable")
	}
	if len(list) > maxURLs {
		list = list[:maxURLs]
	}
	out := make([]*url.URL, 0, len(list))
	for _, s := range list {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("%q is not an http(s) URL", s)
		}
		out = append(out, u)
	}
	return out, nil
}

// Test fetches every URL once.
func (p *Provider) Test(ctx context.Context, t app.ConnectionTarget) app.TestResult {
	us, err := targets(t)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	for _, u := range us {
		resp, err := p.get(ctx, u)
		if err != nil {
			return app.TestResult{Message: fmt.Sprintf("%s: %s", u, err)}
		}
		resp.Body.Close()
	}
	return app.TestResult{Success: true, Message: fmt.Sprintf("%d URLs answered", len(us))}
}

func (p *Provider) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "compliance-appliance https check")
	return p.client.Do(req)
}

// Run evaluates the checks for every URL.
func (p *Provider) Run(ctx context.Context, t app.ConnectionTarget, ids []string, out app.CheckSink) error {
	us, err := targets(t)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	on := func(id string) bool { return len(ids) == 0 || want[id] }
	for _, u := range us {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.runURL(ctx, u, on, out)
	}
	return nil
}

func (p *Provider) runURL(ctx context.Context, u *url.URL, on func(string) bool, out app.CheckSink) {
	res := u.String()
	emit := func(check, status, msg string, details map[string]any) {
		if on(check) {
			out.Outcome(app.CheckOutcome{CheckID: check, ResourceType: "url", ResourceID: res, ResourceName: res, Status: status, Message: msg, Details: details})
		}
	}
	tlsChecks := []string{CheckTLSVersion, CheckCertificate, CheckHostname, CheckExpiry, CheckHSTS}
	if u.Scheme != "https" {
		for _, c := range tlsChecks {
			emit(c, app.CheckFail, "the URL is served over plain HTTP, without TLS", nil)
		}
	} else {
		p.tlsChecks(ctx, u, emit)
	}
	if !on(CheckHeaders) && !on(CheckHSTS) {
		return
	}
	resp, err := p.get(ctx, u)
	if err != nil {
		msg := "could not fetch the URL over a trusted connection: " + err.Error()
		emit(CheckHeaders, app.CheckError, msg, nil)
		if u.Scheme == "https" {
			emit(CheckHSTS, app.CheckError, msg, nil)
		}
		out.Log("warn", res+": "+msg)
		return
	}
	_, _ = outbound.ReadBody(resp, maxHeaderBodyRead)
	if u.Scheme == "https" {
		hsts(resp.Header, emit)
	}
	securityHeaders(resp.Header, emit)
}

func (p *Provider) tlsConfig(host string) *tls.Config {
	return &tls.Config{ServerName: host, InsecureSkipVerify: true, RootCAs: p.roots} //nolint:gosec // verified below, by hand, to report chain and host name apart
}

func (p *Provider) handshake(ctx context.Context, addr string, cfg *tls.Config) (*tls.ConnectionState, error) {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	raw, err := p.dial(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(dctx); err != nil {
		return nil, err
	}
	st := conn.ConnectionState()
	return &st, nil
}

func (p *Provider) tlsChecks(ctx context.Context, u *url.URL, emit func(check, status, msg string, details map[string]any)) {
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = "443"
	}
	addr := net.JoinHostPort(host, port)
	st, err := p.handshake(ctx, addr, p.tlsConfig(host))
	if err != nil {
		// Perhaps only legacy versions are offered.
		legacy := p.tlsConfig(host)
		legacy.MinVersion, legacy.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
		if lst, lerr := p.handshake(ctx, addr, legacy); lerr == nil {
			emit(CheckTLSVersion, app.CheckFail, fmt.Sprintf("only %s is offered; TLS 1.2 or later is required", tls.VersionName(lst.Version)),
				map[string]any{"negotiated": tls.VersionName(lst.Version)})
		} else {
			emit(CheckTLSVersion, app.CheckError, "TLS handshake failed: "+err.Error(), nil)
		}
		for _, c := range []string{CheckCertificate, CheckHostname, CheckExpiry} {
			emit(c, app.CheckError, "TLS handshake with TLS 1.2 or later failed: "+err.Error(), nil)
		}
		return
	}
	legacy := p.tlsConfig(host)
	legacy.MinVersion, legacy.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	details := map[string]any{"negotiated": tls.VersionName(st.Version), "cipherSuite": tls.CipherSuiteName(st.CipherSuite)}
	if lst, lerr := p.handshake(ctx, addr, legacy); lerr == nil {
		details["legacyAccepted"] = tls.VersionName(lst.Version)
		emit(CheckTLSVersion, app.CheckFail, fmt.Sprintf("%s is still accepted; only TLS 1.2 or later may be", tls.VersionName(lst.Version)), details)
	} else {
		emit(CheckTLSVersion, app.CheckPass, fmt.Sprintf("negotiates %s; TLS 1.0 and 1.1 are refused", tls.VersionName(st.Version)), details)
	}
	if len(st.PeerCertificates) == 0 {
		for _, c := range []string{CheckCertificate, CheckHostname, CheckExpiry} {
			emit(c, app.CheckError, "the server sent no certificate", nil)
		}
		return
	}
	leaf := st.PeerCertificates[0]
	now := p.now()
	cd := map[string]any{"subject": leaf.Subject.String(), "issuer": leaf.Issuer.String(), "notBefore": leaf.NotBefore.UTC(),
		"notAfter": leaf.NotAfter.UTC(), "dnsNames": leaf.DNSNames}
	inter := x509.NewCertPool()
	for _, c := range st.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: p.roots, Intermediates: inter, CurrentTime: now}); err != nil {
		emit(CheckCertificate, app.CheckFail, "the certificate is not trusted: "+err.Error(), cd)
	} else {
		emit(CheckCertificate, app.CheckPass, "the chain verifies to a trusted root", cd)
	}
	if err := leaf.VerifyHostname(host); err != nil {
		emit(CheckHostname, app.CheckFail, err.Error(), cd)
	} else {
		emit(CheckHostname, app.CheckPass, "the certificate names "+host, cd)
	}
	left := leaf.NotAfter.Sub(now)
	days := int(left.Hours() / 24)
	switch {
	case left <= 0:
		emit(CheckExpiry, app.CheckFail, fmt.Sprintf("the certificate expired on %s", leaf.NotAfter.UTC().Format("2006-01-02")), cd)
	case left < expiryFailWithin:
		emit(CheckExpiry, app.CheckFail, fmt.Sprintf("the certificate expires in %d days (%s)", days, leaf.NotAfter.UTC().Format("2006-01-02")), cd)
	case left < expiryWarnWithin:
		emit(CheckExpiry, app.CheckPass, fmt.Sprintf("warning: the certificate expires in %d days (%s); renew it soon", days, leaf.NotAfter.UTC().Format("2006-01-02")), cd)
	default:
		emit(CheckExpiry, app.CheckPass, fmt.Sprintf("the certificate is valid for %d more days", days), cd)
	}
}

func hsts(h http.Header, emit func(check, status, msg string, details map[string]any)) {
	v := h.Get("Strict-Transport-Security")
	if v == "" {
		emit(CheckHSTS, app.CheckFail, "no Strict-Transport-Security header", nil)
		return
	}
	d := map[string]any{"header": v}
	for _, part := range strings.Split(v, ";") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "max-age") {
			continue
		}
		n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
		if err != nil {
			emit(CheckHSTS, app.CheckFail, "Strict-Transport-Security has an unreadable max-age", d)
			return
		}
		if time.Duration(n)*time.Second < hstsMinimum {
			emit(CheckHSTS, app.CheckFail, fmt.Sprintf("max-age is %d seconds, below 180 days (15552000)", n), d)
			return
		}
		emit(CheckHSTS, app.CheckPass, fmt.Sprintf("HSTS max-age %d seconds", n), d)
		return
	}
	emit(CheckHSTS, app.CheckFail, "Strict-Transport-Security has no max-age", d)
}

func securityHeaders(h http.Header, emit func(check, status, msg string, details map[string]any)) {
	var missing []string
	csp := h.Get("Content-Security-Policy")
	if csp == "" {
		missing = append(missing, "Content-Security-Policy")
	}
	if !strings.EqualFold(strings.TrimSpace(h.Get("X-Content-Type-Options")), "nosniff") {
		missing = append(missing, "X-Content-Type-Options: nosniff")
	}
	xfo := strings.ToUpper(strings.TrimSpace(h.Get("X-Frame-Options")))
	if xfo != "DENY" && xfo != "SAMEORIGIN" && !strings.Contains(strings.ToLower(csp), "frame-ancestors") {
		missing = append(missing, "X-Frame-Options (or CSP frame-ancestors)")
	}
	if h.Get("Referrer-Policy") == "" {
		missing = append(missing, "Referrer-Policy")
	}
	d := map[string]any{"contentSecurityPolicy": csp, "xContentTypeOptions": h.Get("X-Content-Type-Options"),
		"xFrameOptions": h.Get("X-Frame-Options"), "referrerPolicy": h.Get("Referrer-Policy")}
	if len(missing) > 0 {
		d["missing"] = missing
		emit(CheckHeaders, app.CheckFail, "missing: "+strings.Join(missing, ", "), d)
		return
	}
	emit(CheckHeaders, app.CheckPass, "every security header is set", d)
}
