package scanner

import (
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/app/osv"
)

// rule is one check: what it finds, how bad (a CVSS 3.1 base vector, its
// score computed from it), what to do about it and where to read more.
type rule struct {
	ID          string
	Category    string
	Title       string
	Vector      string
	Remediation string
	References  []string
}

const (
	refOWASPHeaders = "https://owasp.org/www-project-secure-headers/"
	refTLSBCP       = "https://www.rfc-editor.org/rfc/rfc9325"
	refTLSDeprecate = "https://www.rfc-editor.org/rfc/rfc8996"
	refWSTGConfig   = "https://owasp.org/www-project-web-security-testing-guide/latest/4-Web_Application_Security_Testing/02-Configuration_and_Deployment_Management_Testing/"
	refCWE200       = "https://cwe.mitre.org/data/definitions/200.html"
	refCWE295       = "https://cwe.mitre.org/data/definitions/295.html"
	refCWE601       = "https://cwe.mitre.org/data/definitions/601.html"
	refCWE942       = "https://cwe.mitre.org/data/definitions/942.html"
	refCWE548       = "https://cwe.mitre.org/data/definitions/548.html"
	refCWE538       = "https://cwe.mitre.org/data/definitions/538.html"
	refCWE1021      = "https://cwe.mitre.org/data/definitions/1021.html"
	refCWE614       = "https://cwe.mitre.org/data/definitions/614.html"
	refCWE1004      = "https://cwe.mitre.org/data/definitions/1004.html"
	refCWE319       = "https://cwe.mitre.org/data/definitions/319.html"
	refCWE209       = "https://cwe.mitre.org/data/definitions/209.html"
	refMDNHSTS      = "https://developer.mozilla.org/docs/Web/HTTP/Headers/Strict-Transport-Security"
	refMDNCSP       = "https://developer.mozilla.org/docs/Web/HTTP/CSP"
	refMDNMixed     = "https://developer.mozilla.org/docs/Web/Security/Mixed_content"
	refMDNCORS      = "https://developer.mozilla.org/docs/Web/HTTP/CORS"
)

// Rules is the check catalogue, by id.
var rules = map[string]rule{}

func init() {
	for _, r := range ruleList {
		if _, err := BaseScore(r.Vector); err != nil {
			panic(fmt.Sprintf("rule %s: %v", r.ID, err))
		}
		rules[r.ID] = r
	}
}

var ruleList = []rule{
	{"ports.risky_service", app.CheckPorts, "Sensitive service reachable over the network", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:L",
		"Close the port or restrict it to the hosts that need it with a firewall; put databases and caches behind the application tier, and replace cleartext remote logins (Telnet, FTP, r-services) with SSH/SFTP.",
		[]string{"https://www.cisecurity.org/controls/network-infrastructure-management"}},
	{"tls.protocol.tls10", app.CheckTLS, "TLS 1.0 accepted", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Disable TLS 1.0 on this service; accept TLS 1.2 and TLS 1.3 only.", []string{refTLSDeprecate, refTLSBCP}},
	{"tls.protocol.tls11", app.CheckTLS, "TLS 1.1 accepted", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Disable TLS 1.1 on this service; accept TLS 1.2 and TLS 1.3 only.", []string{refTLSDeprecate, refTLSBCP}},
	{"tls.cipher.weak", app.CheckTLS, "Weak TLS cipher suite accepted", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Remove RC4, 3DES, CBC-mode with SHA-256 and static-RSA key exchange suites; prefer ECDHE with AES-GCM or ChaCha20-Poly1305.",
		[]string{refTLSBCP, "https://ciphersuite.info/"}},
	{"tls.cert.expired", app.CheckTLS, "Certificate expired", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:N",
		"Renew the certificate and automate renewal (for example with ACME) so it cannot lapse again.", []string{refCWE295}},
	{"tls.cert.not_yet_valid", app.CheckTLS, "Certificate not yet valid", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:N",
		"Install a certificate whose validity has started; check the issuing system's clock.", []string{refCWE295}},
	{"tls.cert.self_signed", app.CheckTLS, "Self-signed certificate", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:N",
		"Replace the self-signed certificate with one issued by a certificate authority clients trust (a public CA, or the organization's internal CA distributed to clients).",
		[]string{refCWE295}},
	{"tls.cert.untrusted", app.CheckTLS, "Certificate chain not trusted", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:N",
		"Serve the complete chain up to a trusted root; check that every intermediate certificate is sent.", []string{refCWE295}},
	{"tls.cert.hostname", app.CheckTLS, "Certificate does not match the host name", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:H/A:N",
		"Issue a certificate whose subject alternative names include the host name clients use.", []string{refCWE295}},
	{"tls.cert.weak_key", app.CheckTLS, "Certificate key too short", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Use an RSA key of at least 2048 bits or an ECDSA key of at least 256 bits.", []string{refTLSBCP}},
	{"tls.cert.expiring", app.CheckTLS, "Certificate expires within 30 days", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:N",
		"Renew the certificate before it expires.", []string{refCWE295}},
	{"http.cleartext", app.CheckTLS, "Web application served over cleartext HTTP", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:L/A:N",
		"Serve the application over HTTPS only and redirect HTTP to HTTPS.", []string{refCWE319}},
	{"http.hsts.missing", app.CheckHeaders, "Strict-Transport-Security header missing", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:L/A:N",
		"Send Strict-Transport-Security: max-age=31536000; includeSubDomains on every HTTPS response.", []string{refMDNHSTS, refOWASPHeaders}},
	{"http.csp.missing", app.CheckHeaders, "Content-Security-Policy header missing", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:L/A:N",
		"Send a Content-Security-Policy that restricts script sources (at least default-src 'self').", []string{refMDNCSP, refOWASPHeaders}},
	{"http.frame_options.missing", app.CheckHeaders, "Page can be framed by any site (clickjacking)", "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:N/I:L/A:N",
		"Send X-Frame-Options: DENY (or SAMEORIGIN) or a Content-Security-Policy with frame-ancestors.", []string{refCWE1021, refOWASPHeaders}},
	{"http.content_type_options.missing", app.CheckHeaders, "X-Content-Type-Options: nosniff missing", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N",
		"Send X-Content-Type-Options: nosniff on every response.", []string{refOWASPHeaders}},
	{"http.referrer_policy.missing", app.CheckHeaders, "Referrer-Policy missing or unsafe", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N",
		"Send Referrer-Policy: strict-origin-when-cross-origin (or stricter).", []string{refOWASPHeaders}},
	{"cookie.secure.missing", app.CheckCookies, "Cookie without the Secure flag", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N",
		"Set the Secure attribute on every cookie sent over HTTPS.", []string{refCWE614}},
	{"cookie.httponly.missing", app.CheckCookies, "Cookie without the HttpOnly flag", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N",
		"Set the HttpOnly attribute on cookies scripts do not need to read (session cookies above all).", []string{refCWE1004}},
	{"cookie.samesite.missing", app.CheckCookies, "Cookie without a SameSite attribute", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:N/I:L/A:N",
		"Set SameSite=Lax or SameSite=Strict on cookies.", []string{"https://developer.mozilla.org/docs/Web/HTTP/Headers/Set-Cookie"}},
	{"cors.reflect_credentials", app.CheckCORS, "CORS reflects any origin with credentials", "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:L/A:N",
		"Answer Access-Control-Allow-Origin only for a fixed list of trusted origins; never echo the request's Origin together with Access-Control-Allow-Credentials: true.",
		[]string{refCWE942, refMDNCORS}},
	{"http.trace.enabled", app.CheckHTTPMethods, "HTTP TRACE method enabled", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N",
		"Disable the TRACE method on the web server (Apache: TraceEnable off).", []string{refWSTGConfig}},
	{"http.directory_listing", app.CheckDirectoryListing, "Directory listing enabled", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N",
		"Turn off automatic directory indexes (Apache: Options -Indexes; nginx: autoindex off).", []string{refCWE548}},
	{"exposed.git", app.CheckExposedFiles, "Git repository exposed", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Remove the .git directory from the web root or deny every path below /.git in the web server.", []string{refCWE538}},
	{"exposed.env", app.CheckExposedFiles, "Environment file exposed", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Remove the .env file from the web root, deny dot-files in the web server and rotate every secret it held.", []string{refCWE538}},
	{"exposed.backup", app.CheckExposedFiles, "Backup or dump file exposed", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
		"Remove backups and database dumps from the web root and keep them where the web server cannot serve them.", []string{refCWE538}},
	{"exposed.server_status", app.CheckExposedFiles, "Web server status page exposed", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N",
		"Restrict server-status (and server-info) to the administrators' addresses or turn the module off.", []string{refCWE200}},
	{"exposed.phpinfo", app.CheckExposedFiles, "phpinfo() page exposed", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N",
		"Delete the phpinfo page from the web root.", []string{refCWE200}},
	{"http.open_redirect", app.CheckOpenRedirect, "Open redirect", "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N",
		"Redirect only to relative paths or to an allowlist of destinations; reject absolute URLs to other hosts in redirect parameters.",
		[]string{refCWE601}},
	{"http.mixed_content", app.CheckMixedContent, "HTTPS page loads resources over HTTP", "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:L/A:N",
		"Load every script, style sheet, image and frame over HTTPS (or protocol-relative); add upgrade-insecure-requests to the CSP.", []string{refMDNMixed}},
	{"http.verbose_errors", app.CheckErrorPages, "Error page reveals internals (stack trace)", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N",
		"Show a generic error page in production and log the details on the server only.", []string{refCWE209}},
	{"http.version_disclosure", app.CheckSoftwareVersions, "Software version disclosed in headers", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:N/A:N",
		"Stop announcing product versions (nginx: server_tokens off; Apache: ServerTokens Prod; PHP: expose_php Off; remove X-Powered-By).", []string{refCWE200}},
	{"http.default_page", app.CheckDefaultPages, "Web server default page", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:N/A:N",
		"Replace the default page with the application or an empty page, and remove sample content.", []string{refWSTGConfig}},
}

// issue builds a ScanIssue from a rule.
func issue(id, location, evidence string) app.ScanIssue {
	r, ok := rules[id]
	if !ok {
		panic("unknown rule " + id)
	}
	score, _ := BaseScore(r.Vector)
	return app.ScanIssue{CheckID: r.ID, Category: r.Category, Title: r.Title, CVSS: score, Vector: r.Vector, Location: location,
		Evidence: truncate(evidence, 500), Remediation: r.Remediation, References: append([]string(nil), r.References...)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// BaseScore is the CVSS 3.1 base score of a base vector (the eight base
// metrics and nothing else), as osv.BaseScore computes it.
func BaseScore(vector string) (float64, error) {
	if strings.Count(vector, "/") != 8 || !strings.HasPrefix(vector, "CVSS:3.1/") {
		return 0, fmt.Errorf("%q is not a CVSS 3.1 base vector", vector)
	}
	return osv.BaseScore(vector)
}
