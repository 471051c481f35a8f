package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// certReloader holds the certificate of tls_cert_file and tls_key_file for
// the TLS handshake (tls.Config.GetCertificate) and loads the files again
// on Reload (SIGHUP): new connections get the new certificate, open ones
// keep theirs. A reload that fails leaves the current certificate in use.
type certReloader struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if _, err := r.Reload(time.Now()); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload loads the pair again; a pair that does not load, does not match
// or has expired is refused and the current one stays.
func (r *certReloader) Reload(now time.Time) (*x509.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load tls certificate %s: %w", r.certFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse tls certificate %s: %w", r.certFile, err)
	}
	if now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("tls certificate %s expired at %s", r.certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	pair.Leaf = leaf
	r.cert.Store(&pair)
	return leaf, nil
}

// GetCertificate is tls.Config.GetCertificate.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cert.Load(), nil
}

// tlsConfig is the server's TLS configuration: TLS 1.2 or later, the
// certificate from r.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}

// tlsFiles reads tls_cert_file and tls_key_file: both or neither.
func tlsFiles(certFile, keyFile, redirectAddr string) (bool, error) {
	if (certFile == "") != (keyFile == "") {
		return false, errors.New("tls_cert_file and tls_key_file go together: set both to serve HTTPS, or neither")
	}
	if certFile == "" && redirectAddr != "" {
		return false, errors.New("tls_redirect_addr redirects to HTTPS: set tls_cert_file and tls_key_file too")
	}
	return certFile != "", nil
}

// redirectHandler sends every plain-HTTP request to the same path over
// HTTPS: at public_url when it is an https URL, else at the request's host
// on the TLS listener's port.
func redirectHandler(publicURL, tlsAddr string) http.Handler {
	base := ""
	if u, err := url.Parse(publicURL); err == nil && u.Scheme == "https" && u.Host != "" {
		base = "https://" + u.Host
	}
	_, port, _ := net.SplitHostPort(tlsAddr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := base
		if target == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if host == "" || strings.ContainsAny(host, "/\\@") {
				http.Error(w, "use HTTPS", http.StatusBadRequest)
				return
			}
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
			if port != "" && port != "443" {
				host += ":" + port
			}
			target = "https://" + host
		}
		http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// reloadOnHangup reloads the TLS certificate on each SIGHUP until ctx ends.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, certs *certReloader, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		if certs == nil {
			log.Info("sighup: no tls certificate to reload")
			continue
		}
		leaf, err := certs.Reload(time.Now())
		if err != nil {
			log.Error("tls certificate reload failed; the current certificate stays", slog.Any("error", err))
			continue
		}
		log.Info("tls certificate reloaded", slog.String("subject", leaf.Subject.String()),
			slog.String("serial", leaf.SerialNumber.String()), slog.Time("not_after", leaf.NotAfter))
	}
}
