package automation

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
)

// hostAllowed reports whether host matches one of the declared patterns.
func (x *run) hostAllowed(host string) bool {
	return app.HostAllowed(x.job.Hosts, host)
}

func (x *run) refuseHost(host string) error {
	msg := fmt.Sprintf("host %q is not among the hosts this automation declares (%s)", host, strings.Join(x.job.Hosts, ", "))
	if len(x.job.Hosts) == 0 {
		msg = fmt.Sprintf("host %q refused: this automation declares no hosts", host)
	}
	x.halt(StopHost, msg)
	return errors.New(msg)
}

// httpCall is http.get and http.post: url, headers= (dict of strings),
// body= (string, or a dict/list sent as JSON). It answers a struct with
// status, headers (lower-case names), body (text) and json() for the body
// decoded. Bodies are capped at MaxHTTPBody bytes.
func (x *run) httpCall(method string) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var rawURL string
		var headers *starlark.Dict
		var body starlark.Value = starlark.None
		if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "url", &rawURL, "headers?", &headers, "body?", &body); err != nil {
			return nil, err
		}
		if x.client() == nil {
			return nil, errors.New("http: outbound connections are not configured on this appliance")
		}
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return nil, fmt.Errorf("%s: %q is not an http or https URL", fn.Name(), rawURL)
		}
		if !x.hostAllowed(u.Hostname()) {
			return nil, x.refuseHost(u.Hostname())
		}
		x.mu.Lock()
		x.out.HTTPRequests++
		n := x.out.HTTPRequests
		x.mu.Unlock()
		if n > x.limits.MaxHTTPRequests {
			msg := fmt.Sprintf("the script made more than %d HTTP requests", x.limits.MaxHTTPRequests)
			x.halt(StopOutput, msg)
			return nil, errors.New(msg)
		}
		var rd io.Reader
		ctype := ""
		switch b := body.(type) {
		case starlark.NoneType:
		case starlark.String:
			rd = strings.NewReader(string(b))
		case *starlark.Dict, *starlark.List:
			v, err := toGo(b)
			if err != nil {
				return nil, fmt.Errorf("%s: body: %w", fn.Name(), err)
			}
			raw, _ := jsonMarshal(v)
			rd, ctype = strings.NewReader(string(raw)), "application/json"
		default:
			return nil, fmt.Errorf("%s: body must be a string, dict or list", fn.Name())
		}
		req, err := http.NewRequestWithContext(x.ctx, method, u.String(), rd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fn.Name(), err)
		}
		req.Header.Set("User-Agent", "compliance-appliance-automation")
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if headers != nil {
			for _, item := range headers.Items() {
				k, ok1 := starlark.AsString(item[0])
				v, ok2 := starlark.AsString(item[1])
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("%s: headers must map strings to strings", fn.Name())
				}
				req.Header.Set(k, v)
			}
		}
		resp, err := x.client().Do(req)
		if err != nil {
			var de *app.DeniedAddressError
			if errors.As(err, &de) {
				msg := de.Error()
				x.halt(StopHost, msg)
				return nil, errors.New(msg)
			}
			if x.ctx.Err() != nil {
				return nil, errors.New("http: the run was stopped")
			}
			return nil, fmt.Errorf("%s %s: %v", method, u.Redacted(), err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, x.limits.MaxHTTPBody+1))
		if err != nil {
			return nil, fmt.Errorf("%s %s: reading the body: %v", method, u.Redacted(), err)
		}
		if int64(len(data)) > x.limits.MaxHTTPBody {
			return nil, fmt.Errorf("%s %s: the body is over the %d bytes a script may read", method, u.Redacted(), x.limits.MaxHTTPBody)
		}
		if err := x.charge(len(data)); err != nil {
			return nil, err
		}
		hd := starlark.NewDict(len(resp.Header))
		names := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			_ = hd.SetKey(starlark.String(strings.ToLower(k)), starlark.String(strings.Join(resp.Header.Values(k), ", ")))
		}
		text := string(data)
		jsonFn := starlark.NewBuiltin("json", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			dec := jsonDecode()
			return starlark.Call(&starlark.Thread{}, dec, starlark.Tuple{starlark.String(text)}, nil)
		})
		return newStruct(starlark.StringDict{
			"status":  starlark.MakeInt(resp.StatusCode),
			"headers": hd,
			"body":    starlark.String(text),
			"url":     starlark.String(resp.Request.URL.String()),
			"json":    jsonFn,
		}), nil
	}
}

// client returns the outbound client with redirects held to the declared
// hosts.
func (x *run) client() *http.Client {
	if x.httpc == nil {
		return nil
	}
	c := *x.httpc
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		if !x.hostAllowed(req.URL.Hostname()) {
			return x.refuseHost(req.URL.Hostname())
		}
		return nil
	}
	return &c
}

// tlsInspect is tls.inspect("host:port"): a TLS handshake through the
// outbound dialer, answering the negotiated version, cipher, whether the
// chain verifies against the appliance's trusted roots, and the leaf
// certificate's subject, issuer, names and validity.
func (x *run) tlsInspect(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var addr string
	if err := starlark.UnpackPositionalArgs(fn.Name(), args, kwargs, 1, &addr); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "443"
	}
	if host == "" {
		return nil, fmt.Errorf("tls.inspect: %q is not host:port", addr)
	}
	if !x.hostAllowed(host) {
		return nil, x.refuseHost(host)
	}
	if x.httpc == nil {
		return nil, errors.New("tls.inspect: outbound connections are not configured on this appliance")
	}
	ctx, cancel := context.WithTimeout(x.ctx, 15*time.Second)
	defer cancel()
	dial := outbound.DialContext(x.httpc)
	raw, err := dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		var de *app.DeniedAddressError
		if errors.As(err, &de) {
			x.halt(StopHost, de.Error())
			return nil, errors.New(de.Error())
		}
		return nil, fmt.Errorf("tls.inspect %s: %v", addr, err)
	}
	defer raw.Close()
	base := outbound.TLSConfig(x.httpc)
	var roots *x509.CertPool
	if base != nil {
		roots = base.RootCAs
	}
	// The chain is verified below against the same roots; the handshake
	// itself accepts any certificate so an invalid one can be reported.
	conn := tls.Client(raw, &tls.Config{ServerName: host, InsecureSkipVerify: true, MinVersion: tls.VersionTLS10}) //nolint:gosec // verified by hand below
	if err := conn.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("tls.inspect %s: handshake: %v", addr, err)
	}
	st := conn.ConnectionState()
	if len(st.PeerCertificates) == 0 {
		return nil, fmt.Errorf("tls.inspect %s: no certificate", addr)
	}
	leaf := st.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range st.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	verifyErr := ""
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter}); err != nil {
		verifyErr = err.Error()
	}
	names := make([]starlark.Value, 0, len(leaf.DNSNames))
	for _, n := range leaf.DNSNames {
		names = append(names, starlark.String(n))
	}
	now := time.Now()
	return newStruct(starlark.StringDict{
		"version":      starlark.String(tls.VersionName(st.Version)),
		"version_num":  starlark.Float(tlsVersionNumber(st.Version)),
		"cipher":       starlark.String(tls.CipherSuiteName(st.CipherSuite)),
		"verified":     starlark.Bool(verifyErr == ""),
		"verify_error": starlark.String(verifyErr),
		"subject":      starlark.String(leaf.Subject.String()),
		"issuer":       starlark.String(leaf.Issuer.String()),
		"dns_names":    starlark.NewList(names),
		"not_before":   starlark.String(leaf.NotBefore.UTC().Format(time.RFC3339)),
		"not_after":    starlark.String(leaf.NotAfter.UTC().Format(time.RFC3339)),
		"days_left":    starlark.MakeInt(int(leaf.NotAfter.Sub(now).Hours() / 24)),
	}), nil
}

func tlsVersionNumber(v uint16) float64 {
	switch v {
	case tls.VersionTLS10:
		return 1.0
	case tls.VersionTLS11:
		return 1.1
	case tls.VersionTLS12:
		return 1.2
	case tls.VersionTLS13:
		return 1.3
	}
	return 0
}
