package sso

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/compliance-appliance/compliance/app"
)

// The SAML 2.0 service provider of single sign-on, on crewjam/saml: the
// identity provider's metadata (read through the outbound client), the
// service provider's metadata and key pair, the AuthnRequest (Redirect
// binding, signed with RSA-SHA256) and the verification of a response
// (POST binding). It implements app.SAMLProvider.
//
// Checks made on a response, on top of crewjam/saml's (signature with the
// metadata's certificates, Destination, Issuer, InResponseTo, Recipient,
// NotBefore/NotOnOrAfter with saml.MaxClockSkew, IssueInstant within
// saml.MaxIssueDelay): exactly one assertion, in clear, itself signed (a
// signed response around an unsigned assertion is refused too), with a
// bearer subject confirmation and an audience restriction naming our
// entity id and nothing else.

// maxMetadataBytes bounds an identity provider's metadata document.
const maxMetadataBytes = 512 << 10

// SAML is the SAML service provider adapter.
type SAML struct {
	http *http.Client
}

// NewSAML returns the adapter; metadata URLs are read through c.
func NewSAML(c *http.Client) *SAML { return &SAML{http: c} }

var _ app.SAMLProvider = (*SAML)(nil)

// FetchMetadata reads an identity provider's metadata document.
func (s *SAML) FetchMetadata(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("the metadata URL %q is not valid", u)
	}
	req.Header.Set("Accept", "application/samlmetadata+xml, application/xml, text/xml")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, explainSAML(err, u)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the metadata URL %s answered HTTP %d", u, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return nil, explainSAML(err, u)
	}
	if len(b) > maxMetadataBytes {
		return nil, fmt.Errorf("the metadata at %s is larger than %d KiB", u, maxMetadataBytes>>10)
	}
	return b, nil
}

func explainSAML(err error, target string) error {
	e := explain(err, target)
	if strings.Contains(e.Error(), "discovery document") {
		return fmt.Errorf("the identity provider at %s failed: %w", target, err)
	}
	return e
}

// entityDescriptor reads metadata that is an EntityDescriptor or an
// EntitiesDescriptor holding one identity provider.
func entityDescriptor(raw []byte) (*saml.EntityDescriptor, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("the metadata is empty")
	}
	var ed saml.EntityDescriptor
	errOne := xml.Unmarshal(raw, &ed)
	if errOne == nil {
		return &ed, nil
	}
	var set saml.EntitiesDescriptor
	if err := xml.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("the metadata is not a SAML EntityDescriptor: %v", errOne)
	}
	var found *saml.EntityDescriptor
	var walk func(s *saml.EntitiesDescriptor)
	walk = func(s *saml.EntitiesDescriptor) {
		for i := range s.EntityDescriptors {
			if found == nil && len(s.EntityDescriptors[i].IDPSSODescriptors) > 0 {
				found = &s.EntityDescriptors[i]
			}
		}
		for i := range s.EntitiesDescriptors {
			walk(&s.EntitiesDescriptors[i])
		}
	}
	walk(&set)
	if found == nil {
		return nil, errors.New("the metadata holds no identity provider (IDPSSODescriptor)")
	}
	return found, nil
}

var spaceRe = regexp.MustCompile(`\s+`)

// ParseMetadata reads the identity provider's entity id, its Redirect
// binding sign-on address and its signing certificates.
func (s *SAML) ParseMetadata(raw []byte) (*app.SAMLIdP, error) {
	ed, err := entityDescriptor(raw)
	if err != nil {
		return nil, err
	}
	if ed.EntityID == "" {
		return nil, errors.New("the metadata names no entityID")
	}
	if len(ed.IDPSSODescriptors) == 0 {
		return nil, errors.New("the metadata holds no identity provider (IDPSSODescriptor)")
	}
	idp := &app.SAMLIdP{EntityID: ed.EntityID, Certificates: []app.SAMLCertificate{}}
	seen := map[string]bool{}
	for _, d := range ed.IDPSSODescriptors {
		for _, ep := range d.SingleSignOnServices {
			if ep.Binding == saml.HTTPRedirectBinding && idp.SSOURL == "" {
				idp.SSOURL = ep.Location
			}
		}
		for _, kd := range d.KeyDescriptors {
			if kd.Use != "" && kd.Use != "signing" {
				continue
			}
			for _, xc := range kd.KeyInfo.X509Data.X509Certificates {
				der, err := base64.StdEncoding.DecodeString(spaceRe.ReplaceAllString(xc.Data, ""))
				if err != nil {
					return nil, errors.New("a signing certificate in the metadata is not base64")
				}
				c, err := x509.ParseCertificate(der)
				if err != nil {
					return nil, fmt.Errorf("a signing certificate in the metadata cannot be read: %v", err)
				}
				sum := sha256.Sum256(c.Raw)
				fp := hex.EncodeToString(sum[:])
				if seen[fp] {
					continue
				}
				seen[fp] = true
				idp.Certificates = append(idp.Certificates, app.SAMLCertificate{Subject: c.Subject.String(),
					NotBefore: c.NotBefore.UTC(), NotAfter: c.NotAfter.UTC(), SHA256: fp})
			}
		}
	}
	if idp.SSOURL == "" {
		return nil, errors.New("the metadata has no SingleSignOnService with the HTTP-Redirect binding")
	}
	if u, err := url.Parse(idp.SSOURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("the sign-on address %q in the metadata is not an http(s) URL", idp.SSOURL)
	}
	if len(idp.Certificates) == 0 {
		return nil, errors.New("the metadata holds no signing certificate")
	}
	return idp, nil
}

// NewKeyPair makes the service provider's RSA key and a self-signed
// certificate for it, valid ten years.
func (s *SAML) NewKeyPair(commonName string) (string, string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return "", "", err
	}
	now := time.Now().UTC()
	tpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return string(keyPEM), string(certPEM), nil
}

// serviceProvider builds crewjam/saml's service provider for one
// organization.
func serviceProvider(c app.SAMLConfig) (*saml.ServiceProvider, error) {
	kb, _ := pem.Decode([]byte(c.KeyPEM))
	cb, _ := pem.Decode([]byte(c.CertificatePEM))
	if kb == nil || cb == nil {
		return nil, errors.New("the service provider's key pair is missing")
	}
	key, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the service provider's key cannot be read: %w", err)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the service provider's certificate cannot be read: %w", err)
	}
	acs, err := url.Parse(c.ACSURL)
	if err != nil {
		return nil, err
	}
	md, err := url.Parse(c.EntityID)
	if err != nil {
		return nil, err
	}
	sp := &saml.ServiceProvider{EntityID: c.EntityID, Key: key, Certificate: cert, AcsURL: *acs, MetadataURL: *md,
		AuthnNameIDFormat: saml.UnspecifiedNameIDFormat, SignatureMethod: dsig.RSASHA256SignatureMethod,
		MetadataValidDuration: 7 * 24 * time.Hour}
	sp.ValidateAudienceRestriction = func(a *saml.Assertion) error {
		if a.Conditions == nil || len(a.Conditions.AudienceRestrictions) == 0 {
			return errors.New("the assertion has no audience restriction")
		}
		for _, r := range a.Conditions.AudienceRestrictions {
			if r.Audience.Value != c.EntityID {
				return fmt.Errorf("the assertion is for the audience %q, not for this service provider (%s)", r.Audience.Value, c.EntityID)
			}
		}
		return nil
	}
	if c.IdPMetadata != "" {
		ed, err := entityDescriptor([]byte(c.IdPMetadata))
		if err != nil {
			return nil, err
		}
		sp.IDPMetadata = ed
	}
	return sp, nil
}

// Metadata is the service provider's metadata document: entity id, the
// ACS (HTTP-POST), the signing certificate, signed requests and signed
// assertions wanted. No encryption key is offered (encrypted assertions
// are not supported) and no artifact binding.
func (s *SAML) Metadata(c app.SAMLConfig) ([]byte, error) {
	sp, err := serviceProvider(c)
	if err != nil {
		return nil, err
	}
	ed := sp.Metadata()
	for i := range ed.SPSSODescriptors {
		d := &ed.SPSSODescriptors[i]
		kept := d.KeyDescriptors[:0]
		for _, kd := range d.KeyDescriptors {
			if kd.Use == "signing" {
				kept = append(kept, kd)
			}
		}
		d.KeyDescriptors = kept
		acs := d.AssertionConsumerServices[:0]
		for _, ep := range d.AssertionConsumerServices {
			if ep.Binding == saml.HTTPPostBinding {
				acs = append(acs, ep)
			}
		}
		d.AssertionConsumerServices = acs
	}
	b, err := xml.MarshalIndent(ed, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}

// AuthnRequest makes a signed AuthnRequest for the HTTP-Redirect binding
// and returns the address to send the browser to and the request's id.
func (s *SAML) AuthnRequest(c app.SAMLConfig) (string, string, error) {
	sp, err := serviceProvider(c)
	if err != nil {
		return "", "", err
	}
	if sp.IDPMetadata == nil {
		return "", "", errors.New("the identity provider's metadata is not set")
	}
	loc := sp.GetSSOBindingLocation(saml.HTTPRedirectBinding)
	if loc == "" {
		return "", "", errors.New("the identity provider's metadata has no HTTP-Redirect sign-on address")
	}
	req, err := sp.MakeAuthenticationRequest(loc, saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return "", "", err
	}
	u, err := req.Redirect("", sp)
	if err != nil {
		return "", "", err
	}
	return u.String(), req.ID, nil
}

const (
	nsProtocol  = "urn:oasis:names:tc:SAML:2.0:protocol"
	nsAssertion = "urn:oasis:names:tc:SAML:2.0:assertion"
	nsDSig      = "http://www.w3.org/2000/09/xmldsig#"
)

// decodeResponse reads the base64 of the POST binding and the response
// element, and checks its shape: a Response with exactly one Assertion,
// not encrypted, carrying its own signature.
func decodeResponse(samlResponse string) ([]byte, *etree.Element, *etree.Element, error) {
	raw, err := base64.StdEncoding.DecodeString(spaceRe.ReplaceAllString(samlResponse, ""))
	if err != nil || len(raw) == 0 {
		return nil, nil, nil, errors.New("the SAMLResponse is not base64")
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil || doc.Root() == nil {
		return nil, nil, nil, errors.New("the SAMLResponse is not XML")
	}
	root := doc.Root()
	if root.Tag != "Response" || root.NamespaceURI() != nsProtocol {
		return nil, nil, nil, errors.New("the SAMLResponse is not a SAML Response")
	}
	var assertion *etree.Element
	for _, el := range root.ChildElements() {
		switch {
		case el.Tag == "EncryptedAssertion":
			return nil, nil, nil, errors.New("the assertion is encrypted; encrypted assertions are not supported (turn assertion encryption off at the identity provider)")
		case el.Tag == "Assertion" && el.NamespaceURI() == nsAssertion:
			if assertion != nil {
				return nil, nil, nil, errors.New("the response holds more than one assertion")
			}
			assertion = el
		}
	}
	return raw, root, assertion, nil
}

// Inspect reads a response's InResponseTo and its assertion's id before
// anything is verified: only to find the request it answers and to refuse
// a replay early.
func (s *SAML) Inspect(samlResponse string) (*app.SAMLResponseInfo, error) {
	_, root, assertion, err := decodeResponse(samlResponse)
	if err != nil {
		return nil, err
	}
	info := &app.SAMLResponseInfo{InResponseTo: root.SelectAttrValue("InResponseTo", "")}
	if assertion != nil {
		info.AssertionID = assertion.SelectAttrValue("ID", "")
		if info.InResponseTo == "" {
			if el := assertion.FindElement("./Subject/SubjectConfirmation/SubjectConfirmationData"); el != nil {
				info.InResponseTo = el.SelectAttrValue("InResponseTo", "")
			}
		}
	}
	if st := root.FindElement("./Status/StatusCode"); st != nil {
		info.Status = st.SelectAttrValue("Value", "")
	}
	return info, nil
}

// Verify checks a response to the request requestID and returns the
// signed assertion's identity.
func (s *SAML) Verify(c app.SAMLConfig, samlResponse, requestID string) (*app.SAMLAssertion, error) {
	raw, _, assertion, err := decodeResponse(samlResponse)
	if err != nil {
		return nil, err
	}
	if assertion == nil {
		return nil, errors.New("the response holds no assertion")
	}
	if sig := assertion.FindElement("./Signature"); sig == nil || sig.NamespaceURI() != nsDSig {
		return nil, errors.New("the assertion is not signed; signed assertions are required")
	}
	if assertion.FindElement("./Conditions") == nil {
		return nil, errors.New("the assertion has no conditions (validity and audience)")
	}
	if assertion.FindElement("./Subject/SubjectConfirmation/SubjectConfirmationData") == nil {
		return nil, errors.New("the assertion has no subject confirmation (recipient and request)")
	}
	sp, err := serviceProvider(c)
	if err != nil {
		return nil, err
	}
	if sp.IDPMetadata == nil {
		return nil, errors.New("the identity provider's metadata is not set")
	}
	acs, _ := url.Parse(c.ACSURL)
	a, err := sp.ParseXMLResponse(raw, []string{requestID}, *acs)
	if err != nil {
		var ire *saml.InvalidResponseError
		if errors.As(err, &ire) && ire.PrivateErr != nil {
			err = ire.PrivateErr
		}
		var bad saml.ErrBadStatus
		if errors.As(err, &bad) {
			return nil, fmt.Errorf("the identity provider answered %s", strings.TrimPrefix(bad.Status, "urn:oasis:names:tc:SAML:2.0:status:"))
		}
		return nil, explainVerify(err)
	}
	if a.ID != assertion.SelectAttrValue("ID", "") {
		return nil, errors.New("the verified assertion is not the one in the response")
	}
	bearer := false
	for _, sc := range a.Subject.SubjectConfirmations {
		bearer = bearer || sc.Method == "urn:oasis:names:tc:SAML:2.0:cm:bearer"
	}
	if !bearer {
		return nil, errors.New("the assertion has no bearer subject confirmation")
	}
	out := &app.SAMLAssertion{ID: a.ID, NotOnOrAfter: a.Conditions.NotOnOrAfter, IssueInstant: a.IssueInstant}
	for _, sc := range a.Subject.SubjectConfirmations {
		if d := sc.SubjectConfirmationData; d != nil && d.NotOnOrAfter.After(out.NotOnOrAfter) {
			out.NotOnOrAfter = d.NotOnOrAfter
		}
	}
	id := &app.SSOIdentity{EmailVerified: true}
	if a.Subject.NameID != nil {
		id.Subject = strings.TrimSpace(a.Subject.NameID.Value)
	}
	id.Email = firstValue(a, c.EmailAttribute)
	if id.Email == "" && strings.Contains(id.Subject, "@") {
		id.Email = id.Subject
	}
	id.Name = firstValue(a, c.NameAttribute)
	id.Groups = values(a, c.GroupsAttribute)
	out.Identity = id
	return out, nil
}

// values returns the values of the attributes whose Name or FriendlyName
// is name.
func values(a *saml.Assertion, name string) []string {
	var out []string
	if name == "" {
		return out
	}
	for _, st := range a.AttributeStatements {
		for _, at := range st.Attributes {
			if at.Name != name && at.FriendlyName != name {
				continue
			}
			for _, v := range at.Values {
				if v := strings.TrimSpace(v.Value); v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func firstValue(a *saml.Assertion, name string) string {
	if v := values(a, name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// explainVerify turns crewjam/saml's reasons into words for the error
// page (they name the check that failed, never the assertion's content).
func explainVerify(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Recipient is not"):
		return fmt.Errorf("the assertion is addressed to another recipient (%s)", msg)
	case strings.Contains(msg, "Destination"):
		return errors.New("the response is addressed to another destination than this service provider's ACS URL")
	case strings.Contains(msg, "AudienceRestriction") || strings.Contains(msg, "audience"):
		return fmt.Errorf("wrong audience: %s", msg)
	case strings.Contains(msg, "expired"), strings.Contains(msg, "not yet valid"):
		return fmt.Errorf("the assertion is outside its validity period (%s)", msg)
	case strings.Contains(msg, "InResponseTo"), strings.Contains(msg, "possible request IDs"):
		return errors.New("the response does not answer a sign-in this appliance started")
	case strings.Contains(msg, "issuer"), strings.Contains(msg, "Issuer"):
		return errors.New("the response comes from another identity provider than the metadata names")
	case strings.Contains(msg, "signature"), strings.Contains(msg, "Signature"), strings.Contains(msg, "validate"):
		return fmt.Errorf("the signature is not valid with the identity provider's certificate (%s)", msg)
	}
	return fmt.Errorf("the response is not valid: %s", msg)
}
