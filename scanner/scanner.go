// Package scanner is the appliance's own penetration-test scanner: a TCP
// connect scan with service banners, TLS inspection and HTTP checks, run
// from the appliance against targets the organization listed. It never
// exploits anything: every check observes responses to ordinary requests.
// Every connection it makes is first put to the request's Guard, after DNS
// resolution, so a name that resolves somewhere unlisted is not reached.
package scanner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/compliance-appliance/compliance/app"
)

// Options configure a Scanner. Zero values take the defaults.
type Options struct {
	// LookupIP resolves a host name; nil uses the system resolver. Tests
	// inject names here.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// RootCAs are the roots certificate chains are checked against; nil
	// uses the system roots.
	RootCAs *x509.CertPool
	// Ports overrides the port list of every depth (tests).
	Ports func(depth string) []int
	// ConnectTimeout bounds each TCP connection attempt (2 s).
	ConnectTimeout time.Duration
	// BannerTimeout is how long an open port is given to speak first (1 s).
	BannerTimeout time.Duration
	// RequestTimeout bounds each HTTP request (10 s).
	RequestTimeout time.Duration
	// Now is the clock certificates are judged by.
	Now func() time.Time
}

// Scanner implements app.PentestScanner.
type Scanner struct {
	lookup         func(ctx context.Context, host string) ([]netip.Addr, error)
	roots          *x509.CertPool
	ports          func(depth string) []int
	connectTimeout time.Duration
	bannerTimeout  time.Duration
	requestTimeout time.Duration
	now            func() time.Time
}

var _ app.PentestScanner = (*Scanner)(nil)

// New builds a scanner.
func New(o Options) *Scanner {
	s := &Scanner{lookup: o.LookupIP, roots: o.RootCAs, ports: o.Ports, connectTimeout: o.ConnectTimeout, bannerTimeout: o.BannerTimeout,
		requestTimeout: o.RequestTimeout, now: o.Now}
	if s.lookup == nil {
		s.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if s.ports == nil {
		s.ports = PortsFor
	}
	if s.connectTimeout <= 0 {
		s.connectTimeout = 2 * time.Second
	}
	if s.bannerTimeout <= 0 {
		s.bannerTimeout = time.Second
	}
	if s.requestTimeout <= 0 {
		s.requestTimeout = 10 * time.Second
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// ErrNotAllowed wraps a refusal by the guard.
var ErrNotAllowed = errors.New("outside the targets allowlist")

// scan is the state of one Scan call.
type scan struct {
	sc       *Scanner
	req      app.ScanRequest
	target   *url.URL
	host     string
	port     int
	limiter  *rate.Limiter
	requests atomic.Int64
	mu       sync.Mutex
	issues   []app.ScanIssue
	software []app.ScanSoftware
	seen     map[string]bool
	client   *http.Client
	// cp is the durable progress handed to req.Checkpoint.
	cp app.ScanCheckpoint
}

// Scan runs the requested checks against the target.
func (sc *Scanner) Scan(ctx context.Context, req app.ScanRequest) (*app.ScanResult, error) {
	t0 := time.Now()
	u, err := url.Parse(req.TargetURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("target %q is not an http(s) URL", req.TargetURL)
	}
	if req.Guard == nil {
		return nil, errors.New("a scan needs a guard")
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("target port %q: %w", p, err)
		}
	}
	r := req.RatePerSecond
	if r <= 0 {
		r = 50
	}
	s := &scan{sc: sc, req: req, target: u, host: u.Hostname(), port: port, limiter: newLimiter(r),
		seen: map[string]bool{}}
	s.client = s.newClient()
	done := map[string]bool{}
	if cp := req.Resume; cp != nil {
		s.cp = *cp
		s.cp.Phases = append([]string(nil), cp.Phases...)
		s.cp.OpenPorts = append([]app.ScanPort(nil), cp.OpenPorts...)
		s.cp.Checks = append([]app.ScanCheckStatus(nil), cp.Checks...)
		for _, p := range cp.Phases {
			done[p] = true
		}
		for _, is := range cp.Issues {
			s.add(is)
		}
		s.software = append(s.software, cp.Software...)
		s.requests.Store(cp.RequestsSent)
	}
	want := map[string]bool{}
	for _, c := range req.Checks {
		want[c] = true
	}
	on := func(c string) bool { return len(want) == 0 || want[c] }
	res := &app.ScanResult{OpenPorts: []app.ScanPort{}}
	status := func(c, st, note string) {
		res.Checks = append(res.Checks, app.ScanCheckStatus{Check: c, Status: st, Note: note})
	}

	// The target itself must be reachable: a refusal here ends the scan.
	s.progress("connect", 2, "")
	conn, err := s.dial(ctx, "tcp", net.JoinHostPort(s.host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("connect to the target: %w", err)
	}
	conn.Close()

	var open []app.ScanPort
	switch {
	case done[app.ScanPhasePorts]:
		open = append(open, s.cp.OpenPorts...)
		res.Checks = append(res.Checks, s.cp.Checks...)
	case on(app.CheckPorts):
		ports := sc.ports(req.Depth)
		start := min(s.cp.PortsTried, len(ports))
		open = s.scanPorts(ctx, ports[start:], start, s.cp.OpenPorts)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, p := range open {
			if name, ok := riskyServices[p.Port]; ok {
				s.add(issue("ports.risky_service", s.hostPort(p.Port), fmt.Sprintf("%s (port %d) accepted a connection; banner: %q", name, p.Port, p.Banner)))
			}
			if s.req.Event != nil {
				msg := fmt.Sprintf("port %d open", p.Port)
				if p.Banner != "" {
					msg += ": " + p.Banner
				}
				s.req.Event("port.open", msg)
			}
		}
		status(app.CheckPorts, "ran", fmt.Sprintf("%d ports tried, %d open", len(ports), len(open)))
		s.phaseDone(app.ScanPhasePorts, open, res.Checks)
	default:
		status(app.CheckPorts, "skipped", "not requested")
		s.phaseDone(app.ScanPhasePorts, open, res.Checks)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	switch {
	case done[app.ScanPhaseTLS]:
	case on(app.CheckTLS):
		s.progress("tls", 45, app.CheckTLS)
		tlsPorts := []int{}
		if u.Scheme == "https" {
			tlsPorts = append(tlsPorts, port)
		} else {
			s.add(issue("http.cleartext", u.Scheme+"://"+u.Host, "the target URL uses http://"))
		}
		for i := range open {
			if open[i].Port == port && u.Scheme == "https" {
				open[i].TLS = true
				continue
			}
			if open[i].Port != port && s.speaksTLS(ctx, open[i].Port) {
				open[i].TLS = true
				tlsPorts = append(tlsPorts, open[i].Port)
			}
		}
		for _, p := range tlsPorts {
			s.checkTLS(ctx, p)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		status(app.CheckTLS, "ran", fmt.Sprintf("%d TLS ports inspected", len(tlsPorts)))
		s.phaseDone(app.ScanPhaseTLS, open, res.Checks)
	default:
		status(app.CheckTLS, "skipped", "not requested")
		s.phaseDone(app.ScanPhaseTLS, open, res.Checks)
	}
	res.OpenPorts = append(res.OpenPorts, open...)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	ran := map[string]bool{}
	if done[app.ScanPhaseHTTP] {
		for _, c := range s.cp.HTTPRan {
			ran[c] = true
		}
	} else {
		s.progress("http", 60, "")
		if ran, err = s.checkHTTP(ctx, on); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.checkpoint(func(cp *app.ScanCheckpoint) {
			cp.Phases = append(cp.Phases, app.ScanPhaseHTTP)
			cp.HTTPRan = cp.HTTPRan[:0]
			for _, c := range app.PentestChecks {
				if ran[c] {
					cp.HTTPRan = append(cp.HTTPRan, c)
				}
			}
		})
	}
	for _, c := range app.PentestChecks[2:] {
		switch {
		case c == app.CheckKnownVulns:
			if on(c) {
				status(c, "did_not_run", "no vulnerability database (OSV) has been imported")
			} else {
				status(c, "skipped", "not requested")
			}
		case ran[c]:
			status(c, "ran", "")
		case on(c):
			status(c, "did_not_run", "the target did not answer HTTP")
		default:
			status(c, "skipped", "not requested")
		}
	}
	s.progress("report", 100, "")
	res.Issues = s.issues
	if res.Issues == nil {
		res.Issues = []app.ScanIssue{}
	}
	res.Software = s.software
	for _, p := range res.OpenPorts {
		if p.Banner != "" {
			res.Software = append(res.Software, app.ScanSoftware{Location: s.hostPort(p.Port), Text: p.Banner})
		}
	}
	res.RequestsSent = s.requests.Load()
	res.Duration = time.Since(t0)
	return res, nil
}

// phaseDone records a completed phase with the open ports and check
// statuses known at its end.
func (s *scan) phaseDone(phase string, open []app.ScanPort, checks []app.ScanCheckStatus) {
	s.checkpoint(func(cp *app.ScanCheckpoint) {
		cp.Phases = append(cp.Phases, phase)
		cp.OpenPorts = append([]app.ScanPort{}, open...)
		cp.Checks = append([]app.ScanCheckStatus{}, checks...)
	})
}

// checkpoint updates the durable progress and hands a copy, with the
// issues, software and request count so far, to req.Checkpoint.
func (s *scan) checkpoint(update func(cp *app.ScanCheckpoint)) {
	s.mu.Lock()
	update(&s.cp)
	cp := s.cp
	cp.Phases = append([]string{}, s.cp.Phases...)
	cp.OpenPorts = append([]app.ScanPort{}, s.cp.OpenPorts...)
	cp.Checks = append([]app.ScanCheckStatus{}, s.cp.Checks...)
	cp.HTTPRan = append([]string{}, s.cp.HTTPRan...)
	cp.Issues = append([]app.ScanIssue{}, s.issues...)
	cp.Software = append([]app.ScanSoftware{}, s.software...)
	s.mu.Unlock()
	cp.RequestsSent = s.requests.Load()
	if s.req.Checkpoint != nil {
		s.req.Checkpoint(cp)
	}
}

func (s *scan) hostPort(p int) string { return net.JoinHostPort(s.host, strconv.Itoa(p)) }

func (s *scan) progress(phase string, pct int, check string) {
	if s.req.Progress != nil {
		s.req.Progress(app.ScanProgress{Phase: phase, Percent: pct, CurrentCheck: check})
	}
}

// add records an issue once per check and location.
func (s *scan) add(is app.ScanIssue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := is.CheckID + "\x00" + is.Location
	if s.seen[k] {
		return
	}
	s.seen[k] = true
	s.issues = append(s.issues, is)
}

// resolve returns the addresses of host the guard allows, or an error
// naming the refusal.
func (s *scan) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := s.req.Guard("", ip); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", ip, ErrNotAllowed, err)
		}
		return []netip.Addr{ip}, nil
	}
	addrs, err := s.sc.lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var ok []netip.Addr
	var refusal error
	for _, a := range addrs {
		if err := s.req.Guard(host, a.Unmap()); err != nil {
			refusal = err
			continue
		}
		ok = append(ok, a.Unmap())
	}
	if len(ok) == 0 {
		if refusal == nil {
			refusal = errors.New("no addresses")
		}
		return nil, fmt.Errorf("%s: %w: %v", host, ErrNotAllowed, refusal)
	}
	return ok, nil
}

// dial connects after the rate limiter and the guard agree: the address
// dialled is one the guard accepted, so DNS cannot change between check and
// connection.
func (s *scan) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := s.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if err := s.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	s.requests.Add(1)
	d := net.Dialer{Timeout: s.sc.connectTimeout}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// newClient is the HTTP client of a scan: every connection through dial,
// certificates not verified (the TLS checks judge them), redirects
// followed only to hosts the guard accepts.
func (s *scan) newClient() *http.Client {
	tr := &http.Transport{
		DialContext:           s.dial,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the TLS checks judge the certificate
		ResponseHeaderTimeout: s.sc.requestTimeout,
		MaxIdleConnsPerHost:   4,
		DisableCompression:    true,
		Proxy:                 nil,
	}
	return &http.Client{Transport: tr, Timeout: s.sc.requestTimeout, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return http.ErrUseLastResponse
		}
		if _, err := s.resolve(r.Context(), r.URL.Hostname()); err != nil {
			if s.req.Event != nil {
				s.req.Event("redirect.refused", fmt.Sprintf("redirect to %s not followed: %v", r.URL.Redacted(), err))
			}
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

func newLimiter(perSecond float64) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond)))
}
