package scanner

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// handshake connects to port and runs a TLS handshake with cfg, returning
// the connection state.
func (s *scan) handshake(ctx context.Context, port int, cfg *tls.Config) (tls.ConnectionState, error) {
	hctx, cancel := context.WithTimeout(ctx, s.sc.connectTimeout+s.sc.bannerTimeout)
	defer cancel()
	raw, err := s.dial(hctx, "tcp", s.hostPort(port))
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer raw.Close()
	if net.ParseIP(s.host) == nil {
		cfg.ServerName = s.host
	}
	cfg.InsecureSkipVerify = true //nolint:gosec // the certificate is judged below, not trusted
	c := tls.Client(raw, cfg)
	if err := c.HandshakeContext(hctx); err != nil {
		return tls.ConnectionState{}, err
	}
	return c.ConnectionState(), nil
}

// speaksTLS reports whether a port completes a TLS handshake.
func (s *scan) speaksTLS(ctx context.Context, port int) bool {
	_, err := s.handshake(ctx, port, &tls.Config{MinVersion: tls.VersionTLS10})
	return err == nil
}

// checkTLS inspects one TLS port: the protocol versions it accepts (each
// offered alone: Go's client offers TLS 1.0 and 1.1 when MinVersion allows
// them, which the tests confirm against a TLS 1.0 server), weak suites, and
// the certificate.
func (s *scan) checkTLS(ctx context.Context, port int) {
	loc := s.hostPort(port)
	for _, v := range []struct {
		ver  uint16
		rule string
		name string
	}{{tls.VersionTLS10, "tls.protocol.tls10", "TLS 1.0"}, {tls.VersionTLS11, "tls.protocol.tls11", "TLS 1.1"}} {
		st, err := s.handshake(ctx, port, &tls.Config{MinVersion: v.ver, MaxVersion: v.ver, CipherSuites: allSuites()})
		if err == nil && st.Version == v.ver {
			s.add(issue(v.rule, loc, fmt.Sprintf("handshake completed with %s (%s)", v.name, tls.CipherSuiteName(st.CipherSuite))))
		}
	}
	if st, err := s.handshake(ctx, port, &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS12, CipherSuites: weakSuites()}); err == nil {
		s.add(issue("tls.cipher.weak", loc, "the server chose "+tls.CipherSuiteName(st.CipherSuite)))
	}
	st, err := s.handshake(ctx, port, &tls.Config{MinVersion: tls.VersionTLS10})
	if err != nil || len(st.PeerCertificates) == 0 {
		return
	}
	s.checkCertificate(loc, st.PeerCertificates)
}

// allSuites is every TLS 1.0-1.2 suite Go implements.
func allSuites() []uint16 {
	var out []uint16
	for _, c := range tls.CipherSuites() {
		out = append(out, c.ID)
	}
	return append(out, weakSuites()...)
}

// weakSuites are the suites Go implements and classes insecure (RC4, 3DES,
// CBC with SHA-256), and the static-RSA key exchange suites (no forward
// secrecy), which RFC 9325 says not to negotiate.
func weakSuites() []uint16 {
	var out []uint16
	for _, c := range tls.InsecureCipherSuites() {
		out = append(out, c.ID)
	}
	for _, c := range tls.CipherSuites() {
		if strings.HasPrefix(c.Name, "TLS_RSA_") {
			out = append(out, c.ID)
		}
	}
	return out
}

// timeError reports whether err is a certificate outside its validity.
func timeError(err error) bool {
	var ie x509.CertificateInvalidError
	return errors.As(err, &ie) && ie.Reason == x509.Expired
}

// checkCertificate judges the leaf and its chain.
func (s *scan) checkCertificate(loc string, chain []*x509.Certificate) {
	leaf := chain[0]
	now := s.sc.now()
	subject := leaf.Subject.String()
	switch {
	case now.After(leaf.NotAfter):
		s.add(issue("tls.cert.expired", loc, fmt.Sprintf("certificate %q expired on %s", subject, leaf.NotAfter.UTC().Format(time.DateOnly))))
	case now.Before(leaf.NotBefore):
		s.add(issue("tls.cert.not_yet_valid", loc, fmt.Sprintf("certificate %q is valid from %s", subject, leaf.NotBefore.UTC().Format(time.DateOnly))))
	case leaf.NotAfter.Sub(now) < 30*24*time.Hour:
		s.add(issue("tls.cert.expiring", loc, fmt.Sprintf("certificate %q expires on %s", subject, leaf.NotAfter.UTC().Format(time.DateOnly))))
	}
	selfSigned := bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	// An expired (or not yet valid) certificate is reported above: its
	// chain is judged at a moment it was valid, and a chain that was only
	// out of its validity then too is not also called untrusted.
	_, verr := leaf.Verify(x509.VerifyOptions{Roots: s.sc.roots, Intermediates: inter, CurrentTime: now})
	if timeError(verr) {
		_, verr = leaf.Verify(x509.VerifyOptions{Roots: s.sc.roots, Intermediates: inter,
			CurrentTime: leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)})
		if timeError(verr) {
			verr = nil
		}
	}
	switch {
	case selfSigned && verr != nil:
		s.add(issue("tls.cert.self_signed", loc, fmt.Sprintf("certificate %q is signed by its own key", subject)))
	case verr != nil:
		s.add(issue("tls.cert.untrusted", loc, verr.Error()))
	}
	if net.ParseIP(s.host) == nil || len(leaf.IPAddresses) > 0 || len(leaf.DNSNames) > 0 {
		if err := leaf.VerifyHostname(s.host); err != nil {
			s.add(issue("tls.cert.hostname", loc, err.Error()))
		}
	}
	switch k := leaf.PublicKey.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			s.add(issue("tls.cert.weak_key", loc, "RSA key of "+strconv.Itoa(k.N.BitLen())+" bits"))
		}
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize < 256 {
			s.add(issue("tls.cert.weak_key", loc, "ECDSA key of "+strconv.Itoa(k.Curve.Params().BitSize)+" bits"))
		}
	}
}
