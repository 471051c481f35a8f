package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The browser sign-in: without an enrolment token the agent listens on a
// loopback port, prints the appliance's /agent/authorize address (with the
// port, a state and the challenge of a verifier only it knows) and waits
// for the signed-in person's approval to come back with a one-time code,
// which it exchanges, with the verifier, for a short sign-in token.

// SignInTimeout is how long the agent waits for the approval.
const SignInTimeout = 10 * time.Minute

// Organization is one organization the person can enrol a device into.
type Organization struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
	Role string `json:"role"`
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// SignInRequest is a started browser sign-in: open URL in a browser, then Wait.
type SignInRequest struct {
	URL      string
	verifier string
	state    string
	ln       net.Listener
	srv      *http.Server
	codes    chan string
}

// StartSignIn listens on a loopback port and returns the page to open.
func (c *Client) StartSignIn() (*SignInRequest, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on a loopback port for the sign-in: %w", err)
	}
	sr := &SignInRequest{verifier: randomString(32), state: randomString(16), ln: ln, codes: make(chan string, 1)}
	sum := sha256.Sum256([]byte(sr.verifier))
	port := ln.Addr().(*net.TCPAddr).Port
	q := url.Values{"port": {fmt.Sprint(port)}, "state": {sr.state}, "challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}}
	sr.URL = c.Server + "/agent/authorize?" + q.Encode()
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		st, code := r.URL.Query().Get("state"), r.URL.Query().Get("code")
		if subtle.ConstantTimeCompare([]byte(st), []byte(sr.state)) != 1 || code == "" {
			http.Error(w, "This sign-in answer does not belong to the waiting agent.", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "The device agent received the approval. You can close this window.\n")
		select {
		case sr.codes <- code:
		default:
		}
	})
	sr.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = sr.srv.Serve(ln) }()
	return sr, nil
}

// Wait waits for the approval and exchanges its code for a sign-in token.
func (c *Client) Wait(ctx context.Context, sr *SignInRequest) (string, error) {
	defer sr.srv.Close()
	ctx, cancel := context.WithTimeout(ctx, SignInTimeout)
	defer cancel()
	var code string
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("no approval arrived from the browser: %w", ctx.Err())
	case code = <-sr.codes:
	}
	var out struct {
		SessionToken string `json:"session_token"`
	}
	if err := c.call(ctx, "POST", "/v1/device-agent/exchange-code", nil, map[string]string{"code": code, "code_verifier": sr.verifier}, &out); err != nil {
		return "", fmt.Errorf("exchange the sign-in code: %w", err)
	}
	if out.SessionToken == "" {
		return "", errors.New("the appliance answered the exchange without a sign-in token")
	}
	return out.SessionToken, nil
}

// MyOrganizations lists the organizations the signed-in person can enrol into.
func (c *Client) MyOrganizations(ctx context.Context, session string) ([]Organization, error) {
	var out struct {
		Organizations []Organization `json:"organizations"`
	}
	if err := c.call(ctx, "GET", "/v1/device-agent/my-organizations", map[string]string{"X-Agent-Session": session}, nil, &out); err != nil {
		return nil, fmt.Errorf("list your organizations: %w", err)
	}
	return out.Organizations, nil
}

// PickOrganization chooses the organization to enrol into: the one named
// (by id or slug), or the only one.
func PickOrganization(orgs []Organization, want string) (Organization, error) {
	var names []string
	for _, o := range orgs {
		if want != "" && (o.ID == want || strings.EqualFold(o.Slug, want)) {
			return o, nil
		}
		names = append(names, o.Slug+" ("+o.Name+")")
	}
	switch {
	case len(orgs) == 0:
		return Organization{}, errors.New("you cannot enrol devices into any organization (auditors are read-only)")
	case want != "":
		return Organization{}, fmt.Errorf("you are not a member of %q; you can enrol into: %s", want, strings.Join(names, ", "))
	case len(orgs) > 1:
		return Organization{}, fmt.Errorf("you belong to several organizations: run again with --organization one of %s", strings.Join(names, ", "))
	}
	return orgs[0], nil
}

// EnrollWithSession registers the device for the signed-in person.
func (c *Client) EnrollWithSession(ctx context.Context, session, orgID string, info DeviceInfo) (*State, error) {
	var out struct {
		DeviceID       string `json:"deviceId"`
		OrganizationID string `json:"organizationId"`
		DeviceToken    string `json:"deviceToken"`
	}
	info.AgentVersion = c.Version
	body := struct {
		DeviceInfo
		OrganizationID string `json:"organizationId"`
	}{info, orgID}
	if err := c.call(ctx, "POST", "/v1/device-agent/register", map[string]string{"X-Agent-Session": session}, body, &out); err != nil {
		return nil, fmt.Errorf("register the device: %w", err)
	}
	return &State{Server: c.Server, OrganizationID: out.OrganizationID, DeviceID: out.DeviceID, DeviceToken: out.DeviceToken}, nil
}
