package scanner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

const maxBody = 256 << 10

// page is a response with the start of its body.
type page struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL
}

// fetch sends one request; follow decides whether redirects are followed
// (always only to hosts the guard accepts).
func (s *scan) fetch(ctx context.Context, method, target string, hdr map[string]string, follow bool) (*page, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, err
	}
	// Every request counts against the target's rate, whether or not it
	// opens a new connection.
	if err := s.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	s.requests.Add(1)
	req.Header.Set("User-Agent", "compliance-scanner/1")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := s.client
	if !follow {
		cc := *s.client
		cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c = &cc
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	return &page{status: resp.StatusCode, header: resp.Header, body: body, url: resp.Request.URL}, nil
}

// soft404 is what the site answers for a path that cannot exist, so a
// catch-all page answering 200 is not mistaken for an exposed file.
type soft404 struct {
	status int
	body   []byte
}

// same reports whether a response looks like the site's not-found answer.
func (n *soft404) same(p *page) bool {
	if n == nil || p.status != n.status {
		return false
	}
	a, b := normalize(p.body), normalize(n.body)
	if a == b {
		return true
	}
	// Pages that echo the path differ a little: compare lengths.
	la, lb := len(a), len(b)
	if la == 0 || lb == 0 {
		return la == lb
	}
	d := la - lb
	if d < 0 {
		d = -d
	}
	return d*10 < max(la, lb)
}

var pathEcho = regexp.MustCompile(`/[A-Za-z0-9._/-]*`)

func normalize(b []byte) string { return pathEcho.ReplaceAllString(string(b), "/") }

func randomName() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// exposedFile is a path that must not be served, with a test of its
// content: a status 200 alone is not enough.
type exposedFile struct {
	path  string
	rule  string
	valid func(body []byte) bool
}

var (
	gitHead     = regexp.MustCompile(`^(ref: refs/[^\s]+|[0-9a-f]{40})\s*$`)
	envLine     = regexp.MustCompile(`(?m)^[A-Z][A-Z0-9_]*=\S*`)
	sqlDump     = regexp.MustCompile(`(?i)(CREATE TABLE|INSERT INTO|-- MySQL dump|PostgreSQL database dump)`)
	stackTraces = regexp.MustCompile(`(Traceback \(most recent call last\)|goroutine \d+ \[running\]|Exception in thread "|at [a-z]+\.[A-Za-z.]+\([A-Za-z]+\.java:\d+\)|Fatal error: .* on line \d+|Warning: .* on line \d+|SQLSTATE\[|Whitelabel Error Page|Server Error in '/' Application)`)
	versionRe   = regexp.MustCompile(`\d+\.\d+`)
	mixedRe     = regexp.MustCompile(`(?i)<(script|img|iframe|link|audio|video|source|embed|object)\b[^>]*\b(src|href|data)\s*=\s*["']http://[^"']+`)
	listingRe   = regexp.MustCompile(`(?i)(<title>Index of /|<h1>Index of /|Directory listing for /|^<!doctype html>\s*<meta name="viewport"[^>]*>\s*<pre>\s*<a href=)`)
	defaultRe   = regexp.MustCompile(`(Welcome to nginx!|Apache2 (Ubuntu|Debian) Default Page|<h1>It works!</h1>|IIS Windows Server|Test Page for the (Apache|Nginx) HTTP Server|Welcome to CentOS)`)
)

// versionHeaders are the response headers that name software versions.
var versionHeaders = []string{"Server", "X-Powered-By", "X-AspNet-Version", "X-AspNetMvc-Version", "X-Generator"}

var exposedFiles = []exposedFile{
	{"/.git/HEAD", "exposed.git", func(b []byte) bool { return gitHead.Match(bytes.TrimSpace(b)) }},
	{"/.git/config", "exposed.git", func(b []byte) bool { return bytes.Contains(b, []byte("[core]")) }},
	{"/.env", "exposed.env", func(b []byte) bool { return !looksHTML(b) && len(envLine.FindAll(b, 3)) >= 1 }},
	{"/backup.zip", "exposed.backup", func(b []byte) bool { return bytes.HasPrefix(b, []byte("PK\x03\x04")) }},
	{"/backup.tar.gz", "exposed.backup", func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }},
	{"/site.tar.gz", "exposed.backup", func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }},
	{"/backup.sql", "exposed.backup", func(b []byte) bool { return !looksHTML(b) && sqlDump.Match(b) }},
	{"/dump.sql", "exposed.backup", func(b []byte) bool { return !looksHTML(b) && sqlDump.Match(b) }},
	{"/db.sql", "exposed.backup", func(b []byte) bool { return !looksHTML(b) && sqlDump.Match(b) }},
	{"/index.php.bak", "exposed.backup", func(b []byte) bool { return bytes.Contains(b, []byte("<?php")) }},
	{"/wp-config.php.bak", "exposed.backup", func(b []byte) bool { return bytes.Contains(b, []byte("<?php")) }},
	{"/server-status", "exposed.server_status", func(b []byte) bool { return bytes.Contains(b, []byte("Apache Server Status")) }},
	{"/phpinfo.php", "exposed.phpinfo", func(b []byte) bool {
		return bytes.Contains(b, []byte("<title>phpinfo()</title>")) || bytes.Contains(b, []byte("PHP Version")) && bytes.Contains(b, []byte("PHP License"))
	}},
	{"/info.php", "exposed.phpinfo", func(b []byte) bool { return bytes.Contains(b, []byte("<title>phpinfo()</title>")) }},
}

func looksHTML(b []byte) bool {
	t := bytes.ToLower(bytes.TrimSpace(b[:min(len(b), 512)]))
	return bytes.HasPrefix(t, []byte("<!doctype")) || bytes.HasPrefix(t, []byte("<html")) || bytes.Contains(t, []byte("<body"))
}

var listingDirs = []string{"/static/", "/images/", "/uploads/", "/files/", "/backup/", "/assets/", "/public/"}

var redirectParams = []string{"next", "url", "redirect", "redirect_uri", "return", "returnTo", "return_to", "continue", "dest", "goto", "target"}

var redirectPaths = []string{"/login", "/logout", "/redirect", "/out"}

const probeHost = "pentest-redirect-probe.invalid"

// checkHTTP runs the HTTP checks and returns the categories that ran.
func (s *scan) checkHTTP(ctx context.Context, on func(string) bool) (map[string]bool, error) {
	ran := map[string]bool{}
	main, err := s.fetch(ctx, http.MethodGet, s.target.String(), nil, true)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if s.req.Event != nil {
			s.req.Event("http.unreachable", "the target did not answer HTTP: "+err.Error())
		}
		return ran, nil
	}
	origin := s.target.Scheme + "://" + s.target.Host
	loc := main.url.String()
	https := main.url.Scheme == "https"
	nf, err := s.fetch(ctx, http.MethodGet, origin+"/"+randomName()+".html", nil, false)
	if err != nil {
		return nil, fmt.Errorf("not-found probe: %w", err)
	}
	notFound := &soft404{status: nf.status, body: nf.body}
	// Product versions the site announces, for the known-vulnerabilities
	// check (matched against the imported OSV records by the caller).
	for _, h := range versionHeaders {
		if v := main.header.Get(h); v != "" && versionRe.MatchString(v) {
			s.software = append(s.software, app.ScanSoftware{Location: origin + " header " + h, Text: truncate(v, 300)})
		}
	}
	step := func(pct int, c string) bool {
		if !on(c) || ctx.Err() != nil {
			return false
		}
		s.progress("http", pct, c)
		ran[c] = true
		return true
	}

	if step(62, app.CheckHeaders) {
		h := main.header
		if https && h.Get("Strict-Transport-Security") == "" {
			s.add(issue("http.hsts.missing", loc, "no Strict-Transport-Security header"))
		}
		csp := strings.ToLower(h.Get("Content-Security-Policy"))
		if csp == "" {
			s.add(issue("http.csp.missing", loc, "no Content-Security-Policy header"))
		}
		if h.Get("X-Frame-Options") == "" && !strings.Contains(csp, "frame-ancestors") {
			s.add(issue("http.frame_options.missing", loc, "neither X-Frame-Options nor CSP frame-ancestors"))
		}
		if !strings.EqualFold(strings.TrimSpace(h.Get("X-Content-Type-Options")), "nosniff") {
			s.add(issue("http.content_type_options.missing", loc, "X-Content-Type-Options: "+quoteOrNone(h.Get("X-Content-Type-Options"))))
		}
		if rp := strings.ToLower(h.Get("Referrer-Policy")); rp == "" || strings.Contains(rp, "unsafe-url") || rp == "no-referrer-when-downgrade" {
			s.add(issue("http.referrer_policy.missing", loc, "Referrer-Policy: "+quoteOrNone(h.Get("Referrer-Policy"))))
		}
	}
	if step(65, app.CheckCookies) {
		for _, c := range (&http.Response{Header: main.header}).Cookies() {
			where := loc + " cookie " + c.Name
			if https && !c.Secure {
				s.add(issue("cookie.secure.missing", where, "Set-Cookie "+c.Name+" without Secure"))
			}
			if !c.HttpOnly {
				s.add(issue("cookie.httponly.missing", where, "Set-Cookie "+c.Name+" without HttpOnly"))
			}
			if c.SameSite == 0 || c.SameSite == http.SameSiteDefaultMode {
				s.add(issue("cookie.samesite.missing", where, "Set-Cookie "+c.Name+" without SameSite"))
			}
		}
	}
	if step(68, app.CheckCORS) {
		probe := "https://" + probeHost
		if p, err := s.fetch(ctx, http.MethodGet, s.target.String(), map[string]string{"Origin": probe}, false); err == nil {
			if p.header.Get("Access-Control-Allow-Origin") == probe && strings.EqualFold(p.header.Get("Access-Control-Allow-Credentials"), "true") {
				s.add(issue("cors.reflect_credentials", s.target.String(), "Origin "+probe+" answered with Access-Control-Allow-Origin: "+probe+" and Access-Control-Allow-Credentials: true"))
			}
		}
	}
	if step(71, app.CheckHTTPMethods) {
		if p, err := s.fetch(ctx, "TRACE", origin+"/", map[string]string{"X-Scanner-Trace": "probe"}, false); err == nil {
			if p.status == http.StatusOK && bytes.Contains(p.body, []byte("TRACE /")) && bytes.Contains(bytes.ToLower(p.body), []byte("x-scanner-trace")) {
				s.add(issue("http.trace.enabled", origin+"/", "TRACE / was echoed back with status 200"))
			}
		}
	}
	if step(74, app.CheckExposedFiles) {
		for _, f := range exposedFiles {
			p, err := s.fetch(ctx, http.MethodGet, origin+f.path, nil, false)
			if err != nil || p.status != http.StatusOK || notFound.same(p) || !f.valid(p.body) {
				continue
			}
			s.add(issue(f.rule, origin+f.path, fmt.Sprintf("GET %s answered 200 with %d bytes starting %q", f.path, len(p.body), truncate(string(p.body), 60))))
		}
	}
	if step(80, app.CheckDirectoryListing) {
		if listingRe.Match(main.body) {
			s.add(issue("http.directory_listing", loc, "the page is an automatic directory index"))
		}
		for _, d := range listingDirs {
			p, err := s.fetch(ctx, http.MethodGet, origin+d, nil, false)
			if err != nil || p.status != http.StatusOK || notFound.same(p) {
				continue
			}
			if listingRe.Match(p.body) {
				s.add(issue("http.directory_listing", origin+d, "GET "+d+" answered with an automatic directory index"))
			}
		}
	}
	if step(85, app.CheckOpenRedirect) {
		paths := append([]string{s.target.EscapedPath()}, redirectPaths...)
		dest := "https://" + probeHost + "/"
	paths:
		for _, path := range paths {
			if path == "" {
				path = "/"
			}
			for _, param := range redirectParams {
				u := origin + path + "?" + url.Values{param: {dest}}.Encode()
				p, err := s.fetch(ctx, http.MethodGet, u, nil, false)
				if err != nil || p.status < 300 || p.status > 399 {
					continue
				}
				if l, err := url.Parse(p.header.Get("Location")); err == nil && strings.EqualFold(l.Hostname(), probeHost) {
					s.add(issue("http.open_redirect", origin+path+"?"+param+"=", "GET "+path+"?"+param+"="+dest+" redirected to "+l.String()))
					continue paths
				}
			}
		}
	}
	if step(90, app.CheckMixedContent) && https {
		if m := mixedRe.Find(main.body); m != nil {
			s.add(issue("http.mixed_content", loc, string(m)))
		}
	}
	if step(93, app.CheckErrorPages) {
		for _, u := range []string{origin + "/" + randomName() + "%00'\"", s.target.String() + "?id=%27%22%3C"} {
			p, err := s.fetch(ctx, http.MethodGet, u, nil, false)
			if err != nil {
				continue
			}
			if m := stackTraces.Find(p.body); m != nil {
				s.add(issue("http.verbose_errors", origin+"/", fmt.Sprintf("status %d with %q", p.status, m)))
				break
			}
		}
	}
	if step(96, app.CheckSoftwareVersions) {
		for _, h := range versionHeaders {
			if v := main.header.Get(h); v != "" && versionRe.MatchString(v) {
				s.add(issue("http.version_disclosure", origin+" header "+h, h+": "+v))
			}
		}
	}
	if step(98, app.CheckDefaultPages) {
		if m := defaultRe.Find(main.body); m != nil {
			s.add(issue("http.default_page", loc, string(m)))
		}
	}
	return ran, ctx.Err()
}

func quoteOrNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", v)
}
