package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// SAML 2.0 sign-in per organization, as the other protocol of the same
// single sign-on settings: the allowed domains, role mapping, just-in-time
// creation, "SSO required" and error pages are those of OpenID Connect.
// What SAML adds: the identity provider's metadata (from a URL, read
// through the outbound client, or pasted), the attribute names, and the
// service provider's own key pair (private key sealed at rest). Sign-in is
// SP-initiated only: every response must answer an AuthnRequest this
// appliance issued (its id is stored and answered once); an assertion the
// identity provider sends unasked is refused. Accepted assertion ids are
// kept in SQLite until they expire, so a replay is refused even after a
// restart.

// SSO protocols.
const (
	SSOProtocolOIDC = "oidc"
	SSOProtocolSAML = "saml"
)

// SAMLCertificate is a signing certificate of the identity provider.
type SAMLCertificate struct {
	Subject   string    `json:"subject"`
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
	SHA256    string    `json:"sha256"`
}

// SAMLIdP is what the identity provider's metadata says.
type SAMLIdP struct {
	EntityID     string            `json:"entityId"`
	SSOURL       string            `json:"ssoUrl"`
	Certificates []SAMLCertificate `json:"certificates"`
}

// SAMLSettings is the SAML part of the single sign-on settings.
type SAMLSettings struct {
	MetadataURL     string     `json:"metadataUrl"`
	MetadataXML     string     `json:"metadataXml"`
	MetadataReadAt  *time.Time `json:"metadataReadAt"`
	IdP             *SAMLIdP   `json:"idp"`
	EmailAttribute  string     `json:"emailAttribute"`
	NameAttribute   string     `json:"nameAttribute"`
	GroupsAttribute string     `json:"groupsAttribute"`
	// The service provider, to register at the identity provider. The
	// addresses are filled in by the web layer (it knows the public URL).
	SPEntityID     string `json:"spEntityId"`
	SPMetadataURL  string `json:"spMetadataUrl"`
	ACSURL         string `json:"acsUrl"`
	SPCertificate  string `json:"spCertificate"`
	SealedKey      []byte `json:"-"`
	keyJustCreated bool
}

// SAMLSettingsInput is the saml part of PUT /v1/organization/sso. A
// metadataUrl is read at once (and again by the test); without one,
// metadataXml is the pasted metadata.
type SAMLSettingsInput struct {
	MetadataURL     string `json:"metadataUrl"`
	MetadataXML     string `json:"metadataXml"`
	EmailAttribute  string `json:"emailAttribute"`
	NameAttribute   string `json:"nameAttribute"`
	GroupsAttribute string `json:"groupsAttribute"`
}

// SAMLRequest is an AuthnRequest this appliance issued.
type SAMLRequest struct {
	ID             string
	OrganizationID string
	Next           string
	ExpiresAt      time.Time
}

// SAMLStore persists the SAML part of the settings, the requests in
// flight and the replay cache.
type SAMLStore interface {
	// GetSAMLSettings returns ErrNotFound when the organization has none.
	GetSAMLSettings(ctx context.Context, orgID string) (protocol string, s *SAMLSettings, err error)
	PutSAMLSettings(ctx context.Context, orgID, protocol string, s *SAMLSettings) error
	CreateSAMLRequest(ctx context.Context, r *SAMLRequest) error
	// TakeSAMLRequest deletes and returns the organization's request
	// (ErrNotFound when unknown or already answered).
	TakeSAMLRequest(ctx context.Context, orgID, id string) (*SAMLRequest, error)
	// SAMLAssertionSeen says whether an assertion id is in the replay
	// cache.
	SAMLAssertionSeen(ctx context.Context, orgID, id string) (bool, error)
	// AddSAMLAssertion stores an accepted assertion id; ErrConflict when
	// it is there already.
	AddSAMLAssertion(ctx context.Context, orgID, id string, expires time.Time) error
	// PurgeSAML deletes requests and replay entries expired before t.
	PurgeSAML(ctx context.Context, t time.Time) error
}

// SAMLConfig is what the SAML adapter needs for one organization.
type SAMLConfig struct {
	EntityID        string
	ACSURL          string
	KeyPEM          string
	CertificatePEM  string
	IdPMetadata     string
	EmailAttribute  string
	NameAttribute   string
	GroupsAttribute string
}

// SAMLResponseInfo is read from a response before it is verified.
type SAMLResponseInfo struct {
	InResponseTo string
	AssertionID  string
	Status       string
}

// SAMLAssertion is a verified assertion.
type SAMLAssertion struct {
	ID           string
	IssueInstant time.Time
	NotOnOrAfter time.Time
	Identity     *SSOIdentity
}

// SAMLProvider is the SAML service provider (the sso adapter on
// crewjam/saml). Its errors are shown to people.
type SAMLProvider interface {
	FetchMetadata(ctx context.Context, url string) ([]byte, error)
	ParseMetadata(raw []byte) (*SAMLIdP, error)
	NewKeyPair(commonName string) (keyPEM, certPEM string, err error)
	Metadata(c SAMLConfig) ([]byte, error)
	// AuthnRequest returns the Redirect binding address and the request id.
	AuthnRequest(c SAMLConfig) (string, string, error)
	Inspect(samlResponse string) (*SAMLResponseInfo, error)
	Verify(c SAMLConfig, samlResponse, requestID string) (*SAMLAssertion, error)
}

// SetSAMLProvider sets the SAML service provider; without one, SAML
// cannot be configured or used.
func (a *App) SetSAMLProvider(p SAMLProvider) { a.samlSP = p }

// SAMLClockSkew is the tolerance on NotBefore/NotOnOrAfter (crewjam/saml's
// MaxClockSkew); SAMLMaxIssueDelay bounds a response's age from its
// IssueInstant (MaxIssueDelay). Documented in docs/sso.md.
const (
	SAMLClockSkew     = 180 * time.Second
	SAMLMaxIssueDelay = 90 * time.Second
)

// samlRequestLifetime bounds the time between the AuthnRequest and the
// response.
const samlRequestLifetime = 10 * time.Minute

// SAMLPaths are the service provider's addresses under the public URL.
func SAMLPaths(orgID string) (metadata, acs string) {
	base := "/sso/saml/" + url.PathEscape(orgID)
	return base + "/metadata", base + "/acs"
}

// FillSAMLURLs sets the service provider's addresses in the settings.
func FillSAMLURLs(s *SSOSettings, baseURL string) {
	if s.SAML == nil {
		return
	}
	md, acs := SAMLPaths(s.OrganizationID)
	s.SAML.SPEntityID, s.SAML.SPMetadataURL, s.SAML.ACSURL = baseURL+md, baseURL+md, baseURL+acs
}

func samlDefaults() *SAMLSettings {
	return &SAMLSettings{EmailAttribute: "email", NameAttribute: "name", GroupsAttribute: "groups"}
}

// loadSAML completes the settings with their SAML part.
func (a *App) loadSAML(ctx context.Context, s *SSOSettings) error {
	proto, sm, err := a.store.GetSAMLSettings(ctx, s.OrganizationID)
	if errors.Is(err, ErrNotFound) {
		s.Protocol, s.SAML = SSOProtocolOIDC, samlDefaults()
		return nil
	}
	if err != nil {
		return fmt.Errorf("saml settings: %w", err)
	}
	s.Protocol, s.SAML = proto, sm
	if sm.MetadataXML != "" && a.samlSP != nil {
		if idp, err := a.samlSP.ParseMetadata([]byte(sm.MetadataXML)); err == nil {
			sm.IdP = idp
		}
	}
	return nil
}

// validateSAML reads the protocol and SAML part of a PUT: the metadata is
// fetched (URL) or parsed (XML) now, so that a wrong one is a 400 naming
// the field.
func (a *App) validateSAML(ctx context.Context, before *SSOSettings, in SSOSettingsInput, s *SSOSettings, v *ValidationError) {
	s.Protocol = before.Protocol
	switch in.Protocol {
	case "":
	case SSOProtocolOIDC, SSOProtocolSAML:
		s.Protocol = in.Protocol
	default:
		v.Add("protocol", CodeInvalidEnum, in.Protocol, "protocol must be oidc or saml")
	}
	prev := before.SAML
	if prev == nil {
		prev = samlDefaults()
	}
	sm := *prev
	sm.IdP = nil
	s.SAML = &sm
	if in.SAML == nil {
		if s.Protocol == SSOProtocolSAML && sm.MetadataXML != "" && a.samlSP != nil {
			sm.IdP, _ = a.samlSP.ParseMetadata([]byte(sm.MetadataXML))
		}
		return
	}
	si := in.SAML
	sm.MetadataURL = strings.TrimSpace(si.MetadataURL)
	sm.MetadataXML = strings.TrimSpace(si.MetadataXML)
	sm.EmailAttribute = strings.TrimSpace(si.EmailAttribute)
	sm.NameAttribute = strings.TrimSpace(si.NameAttribute)
	sm.GroupsAttribute = strings.TrimSpace(si.GroupsAttribute)
	if sm.EmailAttribute == "" {
		sm.EmailAttribute = "email"
	}
	if sm.NameAttribute == "" {
		sm.NameAttribute = "name"
	}
	if sm.GroupsAttribute == "" {
		sm.GroupsAttribute = "groups"
	}
	maxLen(v, "saml.metadataUrl", sm.MetadataURL, 1000)
	maxLen(v, "saml.metadataXml", sm.MetadataXML, 512<<10)
	maxLen(v, "saml.emailAttribute", sm.EmailAttribute, 300)
	maxLen(v, "saml.nameAttribute", sm.NameAttribute, 300)
	maxLen(v, "saml.groupsAttribute", sm.GroupsAttribute, 300)
	if sm.MetadataURL != "" {
		u, err := url.Parse(sm.MetadataURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
			v.Add("saml.metadataUrl", CodeInvalid, sm.MetadataURL, "saml.metadataUrl must be an http(s) URL without fragment")
			return
		}
	}
	if len(v.Fields) > 0 || (sm.MetadataURL == "" && sm.MetadataXML == "") {
		return
	}
	if a.samlSP == nil {
		v.Add("saml", CodeInvalid, nil, "SAML is not available on this appliance")
		return
	}
	field := "saml.metadataXml"
	if sm.MetadataURL != "" {
		field = "saml.metadataUrl"
		raw, err := a.samlSP.FetchMetadata(ctx, sm.MetadataURL)
		if err != nil {
			v.Add(field, CodeInvalid, sm.MetadataURL, "saml.metadataUrl could not be read: "+err.Error())
			return
		}
		sm.MetadataXML = string(raw)
		now := a.Now()
		sm.MetadataReadAt = &now
	} else {
		sm.MetadataReadAt = nil
	}
	idp, err := a.samlSP.ParseMetadata([]byte(sm.MetadataXML))
	if err != nil {
		v.Add(field, CodeInvalid, nil, field+" is not usable identity provider metadata: "+err.Error())
		return
	}
	sm.IdP = idp
}

// finishSAML checks what enabling SAML needs and makes the service
// provider's key pair the first time the protocol is SAML.
func (a *App) finishSAML(s *SSOSettings, v *ValidationError) error {
	if s.Protocol != SSOProtocolSAML {
		return nil
	}
	if s.Enabled && s.SAML.IdP == nil {
		f := "saml.metadataXml"
		if s.SAML.MetadataURL != "" {
			f = "saml.metadataUrl"
		}
		v.Add(f, CodeRequired, nil, "the identity provider's metadata (saml.metadataUrl or saml.metadataXml) is required to enable SAML sign-in")
	}
	if s.Enabled && len(s.AllowedDomains) == 0 {
		v.Add("allowedDomains", CodeRequired, nil, "allowedDomains needs at least one domain to enable single sign-on")
	}
	if a.samlSP == nil {
		v.Add("protocol", CodeInvalid, SSOProtocolSAML, "SAML is not available on this appliance")
	}
	if len(v.Fields) > 0 || len(s.SAML.SealedKey) > 0 {
		return nil
	}
	key, cert, err := a.samlSP.NewKeyPair("compliance SAML service provider " + s.OrganizationID)
	if err != nil {
		return fmt.Errorf("saml key pair: %w", err)
	}
	s.SAML.SealedKey = a.sealSecret("saml-sp:"+s.OrganizationID, key)
	s.SAML.SPCertificate = cert
	s.SAML.keyJustCreated = true
	return nil
}

func (a *App) samlConfig(s *SSOSettings, baseURL string) (SAMLConfig, error) {
	key, err := a.openSecret("saml-sp:"+s.OrganizationID, s.SAML.SealedKey)
	if err != nil {
		return SAMLConfig{}, fmt.Errorf("open saml key: %w", err)
	}
	md, acs := SAMLPaths(s.OrganizationID)
	return SAMLConfig{EntityID: baseURL + md, ACSURL: baseURL + acs, KeyPEM: key, CertificatePEM: s.SAML.SPCertificate,
		IdPMetadata: s.SAML.MetadataXML, EmailAttribute: s.SAML.EmailAttribute, NameAttribute: s.SAML.NameAttribute,
		GroupsAttribute: s.SAML.GroupsAttribute}, nil
}

// testSAML checks the SAML settings: the metadata can be read (fresh from
// its URL) and parsed, and its certificates are valid now.
func (a *App) testSAML(ctx context.Context, s *SSOSettings) *SSOTestResult {
	sm := s.SAML
	fail := func(msg string) *SSOTestResult { return &SSOTestResult{Message: msg} }
	if a.samlSP == nil {
		return fail("SAML is not available on this appliance.")
	}
	raw := []byte(sm.MetadataXML)
	if sm.MetadataURL != "" {
		b, err := a.samlSP.FetchMetadata(ctx, sm.MetadataURL)
		if err != nil {
			return fail("The metadata could not be read: " + err.Error())
		}
		raw = b
	}
	if len(raw) == 0 {
		return fail("No identity provider metadata is set.")
	}
	idp, err := a.samlSP.ParseMetadata(raw)
	if err != nil {
		return fail("The metadata is not usable: " + err.Error())
	}
	now := a.Now()
	valid, soon := 0, ""
	for _, c := range idp.Certificates {
		switch {
		case now.After(c.NotAfter):
		case now.Before(c.NotBefore):
		default:
			valid++
			if c.NotAfter.Sub(now) < 30*24*time.Hour {
				soon = c.NotAfter.Format("2006-01-02")
			}
		}
	}
	res := &SSOTestResult{SAML: idp}
	if valid == 0 {
		res.Message = "Every signing certificate in the metadata is expired or not yet valid: no assertion could be verified."
		return res
	}
	res.OK = true
	res.Message = fmt.Sprintf("The metadata of %s is valid: sign-on address %s, %d signing certificate(s) valid now.",
		idp.EntityID, idp.SSOURL, valid)
	if soon != "" {
		res.Message += " A signing certificate expires on " + soon + ": update the metadata when the identity provider rolls it over."
	}
	if sm.MetadataURL != "" && sm.MetadataXML != string(raw) {
		res.Message += " The metadata changed since it was saved: save the settings again to use the new one."
	}
	return res
}

// SAMLMetadata is the service provider's metadata of an organization
// that uses SAML (public: the identity provider reads it).
func (a *App) SAMLMetadata(ctx context.Context, orgID, baseURL string) ([]byte, error) {
	if !HasPrefix(orgID, PrefixOrganization) || a.samlSP == nil {
		return nil, ErrNotFound
	}
	s, err := a.ssoSettings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if s.Protocol != SSOProtocolSAML || len(s.SAML.SealedKey) == 0 {
		return nil, ErrNotFound
	}
	cfg, err := a.samlConfig(s, baseURL)
	if err != nil {
		return nil, err
	}
	return a.samlSP.Metadata(cfg)
}

// beginSAML issues an AuthnRequest (Redirect binding) and remembers its id.
func (a *App) beginSAML(ctx context.Context, s *SSOSettings, baseURL, next string) (string, error) {
	if a.samlSP == nil {
		return "", &SSOError{Msg: "SAML sign-in is not available on this appliance.", Upstream: true}
	}
	if s.SAML.IdP == nil || len(s.SAML.SealedKey) == 0 {
		return "", &SSOError{Msg: "The identity provider's metadata is not usable. Ask an administrator to check the single sign-on settings.", Upstream: true}
	}
	cfg, err := a.samlConfig(s, baseURL)
	if err != nil {
		return "", err
	}
	now := a.Now()
	to, id, err := a.samlSP.AuthnRequest(cfg)
	if err != nil {
		return "", &SSOError{Msg: "The sign-in request could not be made: " + err.Error(), Upstream: true}
	}
	r := &SAMLRequest{ID: id, OrganizationID: s.OrganizationID, Next: next, ExpiresAt: now.Add(samlRequestLifetime)}
	// Expired requests and replay entries go when a new request comes.
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.PurgeSAML(ctx, now); err != nil {
			return err
		}
		return a.store.CreateSAMLRequest(ctx, r)
	})
	if err != nil {
		return "", fmt.Errorf("begin saml: %w", err)
	}
	return to, nil
}

// CompleteSAML verifies a response POSTed to an organization's ACS and
// signs the person in. Every refusal is an *SSOError (an error page) and
// a log line naming the organization and the reason, never the
// assertion.
func (a *App) CompleteSAML(ctx context.Context, orgID, baseURL, samlResponse, ip, userAgent string) (*SSOLogin, error) {
	res, err := a.completeSAML(ctx, orgID, baseURL, samlResponse, ip, userAgent)
	var se *SSOError
	if errors.As(err, &se) {
		a.log.Warn("saml sign-in refused", slog.String("organization", orgID), slog.String("reason", se.Msg),
			slog.String("ip", ip))
	}
	return res, err
}

func (a *App) completeSAML(ctx context.Context, orgID, baseURL, samlResponse, ip, userAgent string) (*SSOLogin, error) {
	refuse := func(format string, args ...any) error { return &SSOError{Msg: fmt.Sprintf(format, args...)} }
	if !HasPrefix(orgID, PrefixOrganization) {
		return nil, refuse("This organization does not use SAML sign-in.")
	}
	s, err := a.ssoSettings(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("complete saml: %w", err)
	}
	if !s.Enabled || s.Protocol != SSOProtocolSAML {
		return nil, refuse("This organization does not use SAML sign-in.")
	}
	if a.samlSP == nil {
		return nil, &SSOError{Msg: "SAML sign-in is not available on this appliance.", Upstream: true}
	}
	if samlResponse == "" {
		return nil, refuse("The identity provider sent no SAMLResponse.")
	}
	info, err := a.samlSP.Inspect(samlResponse)
	if err != nil {
		return nil, refuse("The sign-in response was refused: %s.", err.Error())
	}
	now := a.Now()
	if info.AssertionID != "" {
		seen, err := a.store.SAMLAssertionSeen(ctx, orgID, info.AssertionID)
		if err != nil {
			return nil, fmt.Errorf("complete saml: %w", err)
		}
		if seen {
			return nil, refuse("This assertion was already used (replay refused). Start the sign-in again.")
		}
	}
	if info.InResponseTo == "" {
		return nil, refuse("The identity provider sent an assertion this appliance did not ask for; sign-in started at the identity provider is not supported. Start the sign-in from this appliance.")
	}
	req, err := a.store.TakeSAMLRequest(ctx, orgID, info.InResponseTo)
	if errors.Is(err, ErrNotFound) || (err == nil && !now.Before(req.ExpiresAt)) {
		return nil, refuse("This sign-in has expired, was already used, or was not started here. Start the sign-in again.")
	}
	if err != nil {
		return nil, fmt.Errorf("complete saml: %w", err)
	}
	cfg, err := a.samlConfig(s, baseURL)
	if err != nil {
		return nil, err
	}
	as, err := a.samlSP.Verify(cfg, samlResponse, req.ID)
	if err != nil {
		return nil, refuse("The sign-in response was refused: %s.", err.Error())
	}
	// The id is kept until the assertion could no longer pass the checks.
	exp := as.NotOnOrAfter.Add(SAMLClockSkew)
	if e := as.IssueInstant.Add(SAMLMaxIssueDelay); e.After(exp) {
		exp = e
	}
	if exp.Before(now.Add(SAMLClockSkew)) {
		exp = now.Add(SAMLClockSkew)
	}
	if err := a.store.AddSAMLAssertion(ctx, orgID, as.ID, exp); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, refuse("This assertion was already used (replay refused). Start the sign-in again.")
		}
		return nil, fmt.Errorf("complete saml: %w", err)
	}
	login, err := a.ssoSignIn(ctx, s, as.Identity, ip, userAgent)
	if err != nil {
		return nil, err
	}
	return &SSOLogin{LoginResult: login, Next: req.Next}, nil
}
