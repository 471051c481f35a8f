package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ID prefixes of the trust portal and trust access.
const (
	PrefixTrustDocument = "tdoc"
	PrefixTrustRequest  = "tar"
	PrefixNDASignature  = "tna"
	PrefixTrustDownload = "tdl"
)

// Trust document access levels and access request statuses.
const (
	TrustPublic = "public"
	TrustNDA    = "nda"

	RequestUnderReview = "under_review"
	RequestApproved    = "approved"
	RequestDenied      = "denied"
	RequestRevoked     = "revoked"
)

// Trust access bounds.
const (
	defaultAccessDays  = 30
	maxAccessDays      = 365
	requestTokenDays   = 30
	maxTrustFrameworks = 50
	ndaTextMax         = 50000
)

// TrustRequestStatuses lists the statuses of access requests.
var TrustRequestStatuses = []string{RequestUnderReview, RequestApproved, RequestDenied, RequestRevoked}

// reservedSlugs would collide with the fixed paths under /v1/trust-access.
var reservedSlugs = set("admin nda access requests downloads settings documents")

// DefaultNDAText is the NDA offered until the organization sets its own.
const DefaultNDAText = `Confidentiality undertaking

By signing, you agree that the documents made available to you through this trust portal are confidential information of the organization. You will use them only to evaluate the organization's security and compliance posture for a business relationship, you will not disclose them to anyone outside your organization who does not need them for that purpose and is not bound by equivalent confidentiality obligations, and you will delete them when that evaluation ends or when the organization asks you to.

This undertaking is a template. The organization may replace it with its own agreement.`

// TrustSettings configures the organization's public trust portal.
type TrustSettings struct {
	Enabled      bool      `json:"enabled"`
	Slug         string    `json:"slug"`
	Title        string    `json:"title"`
	Overview     string    `json:"overview"`
	ContactEmail *string   `json:"contactEmail"`
	PrimaryColor *string   `json:"primaryColor"`
	LogoURL      *string   `json:"logoUrl"`
	Frameworks   []string  `json:"frameworks"`
	ShowControls bool      `json:"showControls"`
	NDAVersion   string    `json:"ndaVersion"`
	NDAText      string    `json:"ndaText"`
	UpdatedAt    time.Time `json:"updatedAt"`
	CreatedAt    time.Time `json:"-"`
	stored       bool
}

// TrustSettingsPatch is the body of PATCH /v1/trust-portal/settings.
type TrustSettingsPatch struct {
	Enabled      *bool         `json:"enabled"`
	Slug         *string       `json:"slug"`
	Title        *string       `json:"title"`
	Overview     *string       `json:"overview"`
	ContactEmail Opt[string]   `json:"contactEmail"`
	PrimaryColor Opt[string]   `json:"primaryColor"`
	LogoURL      Opt[string]   `json:"logoUrl"`
	Frameworks   Opt[[]string] `json:"frameworks"`
	ShowControls *bool         `json:"showControls"`
	NDAText      *string       `json:"ndaText"`
	NDAVersion   *string       `json:"ndaVersion"`
}

// TrustDocument is a document published on the trust portal, public or
// released only to visitors who signed the NDA and were granted access.
type TrustDocument struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Access      string    `json:"access"`
	FileName    string    `json:"fileName"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// TrustDocumentInput carries the fields of an upload or a PATCH.
type TrustDocumentInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Access      *string `json:"access"`
}

// TrustAccessRequest is a visitor's request for the NDA-gated documents.
type TrustAccessRequest struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Email           string     `json:"email"`
	Company         string     `json:"company"`
	Reason          string     `json:"reason"`
	Status          string     `json:"status"`
	NDASignedAt     *time.Time `json:"ndaSignedAt"`
	DecidedAt       *time.Time `json:"decidedAt"`
	DecidedBy       *string    `json:"decidedBy"`
	DecisionReason  *string    `json:"decisionReason"`
	AccessExpiresAt *time.Time `json:"accessExpiresAt"`
	IPAddress       string     `json:"ipAddress"`
	UserAgent       string     `json:"userAgent"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
	OrganizationID  string     `json:"-"`
	TokenHash       string     `json:"-"`
	TokenExpiresAt  time.Time  `json:"-"`
}

// EventTrustAccessRequested is raised when a visitor asks for the
// NDA-gated documents of the trust portal.
const EventTrustAccessRequested = "trust.access_requested"

// TrustAccessRequestedEventData is the payload of trust.access_requested:
// who asked and why (never the visitor's token, address or browser).
type TrustAccessRequestedEventData struct {
	RequestID   string    `json:"requestId"`
	Name        string    `json:"name"`
	Email       string    `json:"email"`
	Company     string    `json:"company"`
	Reason      string    `json:"reason"`
	Status      string    `json:"status"`
	RequestedAt time.Time `json:"requestedAt"`
}

// TrustAccessRequestInput is the visitor's request form.
type TrustAccessRequestInput struct {
	Name    string `json:"name"`
	Email   string `json:"email"`
	Company string `json:"company"`
	Reason  string `json:"reason"`
}

// NDASignInput is the visitor's signature.
type NDASignInput struct {
	Name   string `json:"name"`
	Email  string `json:"email"`
	Accept bool   `json:"accept"`
}

// NDASignature records who signed which NDA version, when and from where.
type NDASignature struct {
	ID         string    `json:"id"`
	RequestID  string    `json:"requestId"`
	Name       string    `json:"name"`
	Email      string    `json:"email"`
	Company    string    `json:"company"`
	NDAVersion string    `json:"ndaVersion"`
	NDASHA256  string    `json:"ndaSha256"`
	IPAddress  string    `json:"ipAddress"`
	UserAgent  string    `json:"userAgent"`
	SignedAt   time.Time `json:"signedAt"`
}

// TrustDecision is the body of approve, deny and revoke.
type TrustDecision struct {
	DurationDays *int    `json:"durationDays"`
	Reason       *string `json:"reason"`
}

// TrustDownload is one logged download of a portal document.
type TrustDownload struct {
	ID           string    `json:"id"`
	DocumentID   string    `json:"documentId"`
	RequestID    *string   `json:"requestId"`
	IPAddress    string    `json:"ipAddress"`
	UserAgent    string    `json:"userAgent"`
	DownloadedAt time.Time `json:"downloadedAt"`
}

// Visitor is who calls a public trust route.
type Visitor struct {
	IP        string
	UserAgent string
}

// TrustStore persists the portal, its documents and access requests.
type TrustStore interface {
	GetTrustSettings(ctx context.Context, orgID string) (*TrustSettings, error)
	// GetTrustSettingsBySlug returns the organization id and settings of a slug.
	GetTrustSettingsBySlug(ctx context.Context, slug string) (string, *TrustSettings, error)
	PutTrustSettings(ctx context.Context, orgID string, s *TrustSettings) error
	CreateTrustDocument(ctx context.Context, orgID string, d *TrustDocument) error
	UpdateTrustDocument(ctx context.Context, orgID string, d *TrustDocument) error
	DeleteTrustDocument(ctx context.Context, orgID, id string) error
	GetTrustDocument(ctx context.Context, orgID, id string) (*TrustDocument, error)
	ListTrustDocuments(ctx context.Context, orgID, access string) ([]TrustDocument, error)
	CreateTrustRequest(ctx context.Context, orgID string, r *TrustAccessRequest) error
	GetTrustRequest(ctx context.Context, orgID, id string) (*TrustAccessRequest, error)
	GetTrustRequestByToken(ctx context.Context, tokenHash string) (*TrustAccessRequest, error)
	UpdateTrustRequest(ctx context.Context, orgID string, r *TrustAccessRequest) error
	ListTrustRequests(ctx context.Context, orgID, status string, p Page) (List[TrustAccessRequest], error)
	CreateNDASignature(ctx context.Context, orgID string, s *NDASignature) error
	ListNDASignatures(ctx context.Context, orgID string, p Page) (List[NDASignature], error)
	LogTrustDownload(ctx context.Context, orgID string, d *TrustDownload) error
	ListTrustDownloads(ctx context.Context, orgID, requestID string, p Page) (List[TrustDownload], error)
}

var trustSlugRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// trustSettings returns the stored settings or the defaults (disabled, the
// organization's slug and name, the template NDA).
func (a *App) trustSettings(ctx context.Context, orgID string) (*TrustSettings, error) {
	s, err := a.store.GetTrustSettings(ctx, orgID)
	if err == nil {
		s.stored = true
		return s, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	o, err := a.store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	slug := o.Slug
	if reservedSlugs[slug] {
		slug += "-trust"
	}
	return &TrustSettings{Slug: slug, Title: o.Name, Frameworks: []string{}, NDAVersion: "1", NDAText: DefaultNDAText,
		PrimaryColor: o.Branding.PrimaryColor, LogoURL: o.Branding.LogoURL, UpdatedAt: o.UpdatedAt, CreatedAt: o.CreatedAt}, nil
}

// GetTrustSettings returns the portal settings.
func (a *App) GetTrustSettings(ctx context.Context) (*TrustSettings, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := staffRead(p); err != nil {
		return nil, err
	}
	return a.trustSettings(ctx, p.OrgID)
}

// UpdateTrustSettings patches the portal settings. Changing the NDA text
// without naming a version increments a numeric version.
func (a *App) UpdateTrustSettings(ctx context.Context, in TrustSettingsPatch) (*TrustSettings, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *TrustSettings
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.trustSettings(ctx, p.OrgID)
		if err != nil {
			return err
		}
		s := *before
		ve := NewValidationError()
		if in.Enabled != nil {
			s.Enabled = *in.Enabled
		}
		if in.Slug != nil {
			s.Slug = strings.ToLower(strings.TrimSpace(*in.Slug))
			if !trustSlugRe.MatchString(s.Slug) || reservedSlugs[s.Slug] {
				ve.Add("slug", CodeInvalid, *in.Slug, "slug must be 1 to 64 lower-case letters, digits and inner hyphens, and not a reserved word")
			}
		}
		if in.Title != nil {
			s.Title = strings.TrimSpace(*in.Title)
			maxLen(ve, "title", s.Title, 200)
		}
		if in.Overview != nil {
			s.Overview = strings.TrimSpace(*in.Overview)
			maxLen(ve, "overview", s.Overview, 10000)
		}
		optStr := func(dst **string, src Opt[string], field string, ok func(string) bool, msg string) {
			if !src.Set {
				return
			}
			*dst = nil
			if v := strings.TrimSpace(src.Value); !src.Null && v != "" {
				if !ok(v) {
					ve.Add(field, CodeInvalid, src.Value, msg)
				}
				*dst = &v
			}
		}
		optStr(&s.ContactEmail, in.ContactEmail, "contactEmail", validEmail, "contactEmail must be an email address")
		optStr(&s.PrimaryColor, in.PrimaryColor, "primaryColor", colorRe.MatchString, "primaryColor must be #RRGGBB")
		optStr(&s.LogoURL, in.LogoURL, "logoUrl", func(v string) bool { return validURL(v) && strings.HasPrefix(v, "https://") },
			"logoUrl must be an https URL")
		if in.Frameworks.Set {
			s.Frameworks = []string{}
			seen := map[string]bool{}
			for _, f := range in.Frameworks.Value {
				f = strings.TrimSpace(f)
				if f == "" || seen[f] {
					continue
				}
				seen[f] = true
				maxLen(ve, "frameworks", f, 100)
				s.Frameworks = append(s.Frameworks, f)
			}
			if len(s.Frameworks) > maxTrustFrameworks {
				ve.Add("frameworks", CodeTooLong, len(s.Frameworks), fmt.Sprintf("at most %d frameworks", maxTrustFrameworks))
			}
		}
		if in.ShowControls != nil {
			s.ShowControls = *in.ShowControls
		}
		if in.NDAText != nil {
			s.NDAText = strings.TrimSpace(*in.NDAText)
			if s.NDAText == "" {
				ve.Add("ndaText", CodeRequired, nil, "ndaText must not be empty")
			}
			maxLen(ve, "ndaText", s.NDAText, ndaTextMax)
		}
		if in.NDAVersion != nil {
			s.NDAVersion = strings.TrimSpace(*in.NDAVersion)
			if s.NDAVersion == "" {
				ve.Add("ndaVersion", CodeRequired, nil, "ndaVersion must not be empty")
			}
			maxLen(ve, "ndaVersion", s.NDAVersion, 50)
		} else if s.NDAText != before.NDAText {
			n, err := strconv.Atoi(s.NDAVersion)
			if err != nil {
				ve.Add("ndaVersion", CodeRequired, nil, "ndaVersion is required when ndaText changes and the current version is not a number")
			}
			s.NDAVersion = strconv.Itoa(n + 1)
		}
		if err := ve.Err(); err != nil {
			return err
		}
		now := a.Now()
		s.UpdatedAt = now
		if !before.stored {
			s.CreatedAt = now
		}
		if err := a.store.PutTrustSettings(ctx, p.OrgID, &s); err != nil {
			if errors.Is(err, ErrConflict) {
				return Invalid("slug", CodeInvalid, s.Slug, "slug is taken by another organization")
			}
			return err
		}
		out = &s
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "trust_portal", ResourceID: p.OrgID, Before: before, After: &s})
	})
	if err != nil {
		return nil, fmt.Errorf("update trust settings: %w", err)
	}
	return out, nil
}

func (in *TrustDocumentInput) apply(d *TrustDocument, ve *ValidationError) {
	if in.Name != nil {
		d.Name = strings.TrimSpace(*in.Name)
		if d.Name == "" {
			ve.Add("name", CodeRequired, nil, "name must not be empty")
		}
		maxLen(ve, "name", d.Name, 200)
	}
	if in.Description != nil {
		d.Description = strings.TrimSpace(*in.Description)
		maxLen(ve, "description", d.Description, 2000)
	}
	if in.Access != nil {
		d.Access = *in.Access
		oneOf(ve, "access", d.Access, []string{TrustPublic, TrustNDA})
		if d.Access == "" {
			ve.Add("access", CodeInvalidEnum, "", "access must be public or nda")
		}
	}
}

// CreateTrustDocument stores an uploaded file and publishes it on the portal.
func (a *App) CreateTrustDocument(ctx context.Context, in TrustDocumentInput, fileName, contentType string, r io.Reader) (*TrustDocument, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	if a.files == nil {
		return nil, errors.New("create trust document: no file store configured")
	}
	now := a.Now()
	d := &TrustDocument{ID: NewID(PrefixTrustDocument), Access: TrustNDA, FileName: fileName, ContentType: contentType,
		CreatedAt: now, UpdatedAt: now}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		in.Name = Ptr(fileName)
	}
	ve := NewValidationError()
	in.apply(d, ve)
	maxLen(ve, "file", fileName, 255)
	if d.ContentType == "" {
		d.ContentType = "application/octet-stream"
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	blob, err := a.files.Put(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("store trust document: %w", err)
	}
	d.SHA256, d.Size = blob.SHA256, blob.Size
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateTrustDocument(ctx, p.OrgID, d); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "trust_document", ResourceID: d.ID, After: d})
	})
	if err != nil {
		return nil, fmt.Errorf("create trust document: %w", err)
	}
	return d, nil
}

// UpdateTrustDocument changes a document's name, description or access.
func (a *App) UpdateTrustDocument(ctx context.Context, id string, in TrustDocumentInput) (*TrustDocument, error) {
	return updateRecorded(ctx, a, "trust_document", id, a.store.GetTrustDocument, in.apply,
		func(d *TrustDocument) *time.Time { return &d.UpdatedAt }, a.store.UpdateTrustDocument)
}

// DeleteTrustDocument withdraws a document from the portal.
func (a *App) DeleteTrustDocument(ctx context.Context, id string) error {
	return deleteRecorded(ctx, a, "trust_document", id, a.store.GetTrustDocument, a.store.DeleteTrustDocument)
}

// GetTrustDocument returns one document.
func (a *App) GetTrustDocument(ctx context.Context, id string) (*TrustDocument, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := staffRead(p); err != nil {
		return nil, err
	}
	return a.store.GetTrustDocument(ctx, p.OrgID, id)
}

// ListTrustDocuments lists the portal's documents; access may narrow it.
func (a *App) ListTrustDocuments(ctx context.Context, access string) ([]TrustDocument, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := staffRead(p); err != nil {
		return nil, err
	}
	ve := NewValidationError()
	oneOf(ve, "access", access, []string{TrustPublic, TrustNDA})
	if err := ve.Err(); err != nil {
		return nil, err
	}
	return a.store.ListTrustDocuments(ctx, p.OrgID, access)
}

// OpenTrustDocumentFile returns a document and its content for members of
// the organization.
func (a *App) OpenTrustDocumentFile(ctx context.Context, id string) (*TrustDocument, io.ReadSeekCloser, error) {
	d, err := a.GetTrustDocument(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	f, err := a.files.Open(ctx, d.SHA256)
	if err != nil {
		return nil, nil, fmt.Errorf("open trust document %s: %w", id, err)
	}
	return d, f, nil
}

// ListNDASignatures lists who signed the NDA, newest first.
func (a *App) ListNDASignatures(ctx context.Context, pg Page) (List[NDASignature], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[NDASignature]{}, err
	}
	if err := staffRead(p); err != nil {
		return List[NDASignature]{}, err
	}
	return a.store.ListNDASignatures(ctx, p.OrgID, pg)
}

// ---- the public portal ----

// TrustPortal is the public view of an organization's portal.
type TrustPortal struct {
	OrganizationID string           `json:"-"`
	Name           string           `json:"name"`
	Slug           string           `json:"slug"`
	Title          string           `json:"title"`
	Overview       string           `json:"overview"`
	ContactEmail   *string          `json:"contactEmail"`
	PrimaryColor   *string          `json:"primaryColor"`
	LogoURL        *string          `json:"logoUrl"`
	Frameworks     []TrustFramework `json:"frameworks"`
	// FrameworksPublished is false when no source of compliance data is
	// wired in or none of the chosen frameworks is enabled.
	FrameworksPublished bool            `json:"frameworksPublished"`
	Documents           []TrustDocument `json:"documents"`
	NDAVersion          string          `json:"ndaVersion"`
	NDAText             string          `json:"-"`
}

// publicPortal loads an enabled portal by slug; a disabled or unknown one
// is not found.
func (a *App) publicPortal(ctx context.Context, slug string) (string, *TrustSettings, error) {
	orgID, s, err := a.store.GetTrustSettingsBySlug(ctx, strings.ToLower(slug))
	if err != nil {
		return "", nil, err
	}
	if !s.Enabled {
		return "", nil, ErrNotFound
	}
	return orgID, s, nil
}

// TrustPortalBySlug returns the public portal: its texts, the frameworks
// chosen for it with their scores and control status (from the compliance
// source), and its documents (NDA-gated ones listed without a link).
func (a *App) TrustPortalBySlug(ctx context.Context, slug string) (*TrustPortal, error) {
	orgID, s, err := a.publicPortal(ctx, slug)
	if err != nil {
		return nil, err
	}
	o, err := a.store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if o.Branding.DisplayName != nil && *o.Branding.DisplayName != "" {
		name = *o.Branding.DisplayName
	}
	tp := &TrustPortal{OrganizationID: orgID, Name: name, Slug: s.Slug, Title: s.Title, Overview: s.Overview,
		ContactEmail: s.ContactEmail, PrimaryColor: s.PrimaryColor, LogoURL: s.LogoURL, Frameworks: []TrustFramework{},
		NDAVersion: s.NDAVersion, NDAText: s.NDAText}
	if src := a.trustSource(); src != nil && len(s.Frameworks) > 0 {
		fws, err := src.TrustFrameworks(ctx, orgID, s.ShowControls)
		if err != nil {
			return nil, fmt.Errorf("read trust frameworks: %w", err)
		}
		chosen := map[string]bool{}
		for _, f := range s.Frameworks {
			chosen[f] = true
		}
		for _, f := range fws {
			if !chosen[f.ID] && (f.Slug == "" || !chosen[f.Slug]) {
				continue
			}
			if !s.ShowControls {
				f.Controls = nil
			}
			tp.Frameworks = append(tp.Frameworks, f)
		}
	}
	tp.FrameworksPublished = len(tp.Frameworks) > 0
	tp.Documents, err = a.store.ListTrustDocuments(ctx, orgID, "")
	if err != nil {
		return nil, err
	}
	return tp, nil
}

// OpenPublicTrustDocument returns a public document's content and logs the download.
func (a *App) OpenPublicTrustDocument(ctx context.Context, slug, id string, v Visitor) (*TrustDocument, io.ReadSeekCloser, error) {
	orgID, _, err := a.publicPortal(ctx, slug)
	if err != nil {
		return nil, nil, err
	}
	d, err := a.store.GetTrustDocument(ctx, orgID, id)
	if err != nil {
		return nil, nil, err
	}
	if d.Access != TrustPublic {
		return nil, nil, ErrNotFound
	}
	return a.openLogged(ctx, orgID, d, nil, v)
}

func (a *App) openLogged(ctx context.Context, orgID string, d *TrustDocument, requestID *string, v Visitor) (*TrustDocument, io.ReadSeekCloser, error) {
	f, err := a.files.Open(ctx, d.SHA256)
	if err != nil {
		return nil, nil, fmt.Errorf("open trust document %s: %w", d.ID, err)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		return a.store.LogTrustDownload(ctx, orgID, &TrustDownload{ID: NewID(PrefixTrustDownload), DocumentID: d.ID, RequestID: requestID,
			IPAddress: v.IP, UserAgent: clipRunes(v.UserAgent, 500), DownloadedAt: a.Now()})
	})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("log download of %s: %w", d.ID, err)
	}
	return d, f, nil
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// ---- trust access ----

// RequestTrustAccess records a visitor's request. The returned token is the
// visitor's secret for signing the NDA and, once granted, downloading the
// gated documents; it is shown once and stored hashed.
func (a *App) RequestTrustAccess(ctx context.Context, slug string, in TrustAccessRequestInput, v Visitor) (*TrustAccessRequest, string, error) {
	orgID, _, err := a.publicPortal(ctx, slug)
	if err != nil {
		return nil, "", err
	}
	ve := NewValidationError()
	r := &TrustAccessRequest{ID: NewID(PrefixTrustRequest), Name: strings.TrimSpace(in.Name), Email: strings.ToLower(strings.TrimSpace(in.Email)),
		Company: strings.TrimSpace(in.Company), Reason: strings.TrimSpace(in.Reason), Status: RequestUnderReview,
		IPAddress: v.IP, UserAgent: clipRunes(v.UserAgent, 500), OrganizationID: orgID}
	if r.Name == "" {
		ve.Add("name", CodeRequired, nil, "name is required")
	}
	maxLen(ve, "name", r.Name, 200)
	if r.Email == "" {
		ve.Add("email", CodeRequired, nil, "email is required")
	} else if !validEmail(r.Email) {
		ve.Add("email", CodeInvalid, in.Email, "email must be an email address")
	}
	maxLen(ve, "company", r.Company, 200)
	maxLen(ve, "reason", r.Reason, 2000)
	if err := ve.Err(); err != nil {
		return nil, "", err
	}
	now := a.Now()
	token := "ta_" + RandomToken(32)
	r.TokenHash, r.TokenExpiresAt = HashToken(token), now.Add(requestTokenDays*24*time.Hour)
	r.CreatedAt, r.UpdatedAt = now, now
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		ctx = WithPrincipal(ctx, &Principal{OrgID: orgID, Role: RoleOwner, AuthType: AuthSystem})
		if err := a.store.CreateTrustRequest(ctx, orgID, r); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "requested", ResourceType: "trust_access_request", ResourceID: r.ID, After: r,
			Events: []Event{{Type: EventTrustAccessRequested, Data: TrustAccessRequestedEventData{RequestID: r.ID, Name: r.Name,
				Email: r.Email, Company: r.Company, Reason: r.Reason, Status: r.Status, RequestedAt: r.CreatedAt}}}})
	})
	if err != nil {
		return nil, "", fmt.Errorf("request trust access: %w", err)
	}
	return r, token, nil
}

// VisitorAccess is what a visitor's token shows: the request, the NDA to
// sign and, when access is granted and current, the gated documents.
type VisitorAccess struct {
	Request   *TrustAccessRequest
	Portal    *TrustPortal
	Granted   bool
	Documents []TrustDocument
}

// requestByToken resolves a visitor token.
func (a *App) requestByToken(ctx context.Context, token string) (*TrustAccessRequest, error) {
	r, err := a.store.GetTrustRequestByToken(ctx, HashToken(token))
	if err != nil {
		return nil, err
	}
	if !a.Now().Before(r.TokenExpiresAt) {
		return nil, Errorf(ErrNotFound, "this access link has expired")
	}
	return r, nil
}

func (r *TrustAccessRequest) granted(now time.Time) bool {
	return r.Status == RequestApproved && r.AccessExpiresAt != nil && now.Before(*r.AccessExpiresAt)
}

// VisitorAccessByToken returns the visitor's view.
func (a *App) VisitorAccessByToken(ctx context.Context, token string) (*VisitorAccess, error) {
	r, err := a.requestByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	s, err := a.store.GetTrustSettings(ctx, r.OrganizationID)
	if err != nil {
		return nil, err
	}
	if !s.Enabled {
		return nil, ErrNotFound
	}
	tp, err := a.TrustPortalBySlug(ctx, s.Slug)
	if err != nil {
		return nil, err
	}
	va := &VisitorAccess{Request: r, Portal: tp, Granted: r.granted(a.Now()), Documents: []TrustDocument{}}
	if va.Granted {
		va.Documents, err = a.store.ListTrustDocuments(ctx, r.OrganizationID, TrustNDA)
		if err != nil {
			return nil, err
		}
	}
	return va, nil
}

// SignNDA records the visitor's signature of the current NDA with the
// time, address and NDA version.
func (a *App) SignNDA(ctx context.Context, token string, in NDASignInput, v Visitor) (*TrustAccessRequest, error) {
	var out *TrustAccessRequest
	err := a.store.InTx(ctx, func(ctx context.Context) error {
		r, err := a.requestByToken(ctx, token)
		if err != nil {
			return err
		}
		s, err := a.store.GetTrustSettings(ctx, r.OrganizationID)
		if err != nil {
			return err
		}
		if !s.Enabled {
			return ErrNotFound
		}
		if r.NDASignedAt != nil {
			return Errorf(ErrConflict, "the NDA has already been signed")
		}
		if r.Status != RequestUnderReview {
			return Errorf(ErrConflict, "the request is %s", r.Status)
		}
		ve := NewValidationError()
		name := strings.TrimSpace(in.Name)
		if len([]rune(name)) < 2 {
			ve.Add("name", CodeRequired, nil, "name (at least 2 characters) is required to sign")
		}
		maxLen(ve, "name", name, 200)
		if !strings.EqualFold(strings.TrimSpace(in.Email), r.Email) {
			ve.Add("email", CodeInvalid, in.Email, "email must be the address the request was made with")
		}
		if !in.Accept {
			ve.Add("accept", CodeRequired, false, "accept must be true to sign the NDA")
		}
		if err := ve.Err(); err != nil {
			return err
		}
		now := a.Now()
		sum := sha256.Sum256([]byte(s.NDAText))
		sig := &NDASignature{ID: NewID(PrefixNDASignature), RequestID: r.ID, Name: name, Email: r.Email, Company: r.Company,
			NDAVersion: s.NDAVersion, NDASHA256: hex.EncodeToString(sum[:]), IPAddress: v.IP, UserAgent: clipRunes(v.UserAgent, 500), SignedAt: now}
		ctx = WithPrincipal(ctx, &Principal{OrgID: r.OrganizationID, Role: RoleOwner, AuthType: AuthSystem})
		if err := a.store.CreateNDASignature(ctx, r.OrganizationID, sig); err != nil {
			return err
		}
		before := *r
		r.NDASignedAt, r.UpdatedAt = &now, now
		if err := a.store.UpdateTrustRequest(ctx, r.OrganizationID, r); err != nil {
			return err
		}
		out = r
		if err := a.record(ctx, Mutation{Action: "nda_signed", ResourceType: "trust_access_request", ResourceID: r.ID, Before: &before, After: r}); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "nda_signature", ResourceID: sig.ID, After: sig})
	})
	if err != nil {
		return nil, fmt.Errorf("sign NDA: %w", err)
	}
	return out, nil
}

// OpenGatedTrustDocument returns an NDA-gated (or public) document for a
// visitor whose access is granted and current, and logs the download.
func (a *App) OpenGatedTrustDocument(ctx context.Context, token, id string, v Visitor) (*TrustDocument, io.ReadSeekCloser, error) {
	r, err := a.requestByToken(ctx, token)
	if err != nil {
		return nil, nil, err
	}
	s, err := a.store.GetTrustSettings(ctx, r.OrganizationID)
	if err != nil {
		return nil, nil, err
	}
	if !s.Enabled {
		return nil, nil, ErrNotFound
	}
	if !r.granted(a.Now()) {
		return nil, nil, Errorf(ErrForbidden, "access to the NDA documents has not been granted, or it has expired or been revoked")
	}
	d, err := a.store.GetTrustDocument(ctx, r.OrganizationID, id)
	if err != nil {
		return nil, nil, err
	}
	return a.openLogged(ctx, r.OrganizationID, d, &r.ID, v)
}

// ListTrustRequests lists access requests, newest first.
func (a *App) ListTrustRequests(ctx context.Context, status string, pg Page) (List[TrustAccessRequest], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[TrustAccessRequest]{}, err
	}
	if err := staffRead(p); err != nil {
		return List[TrustAccessRequest]{}, err
	}
	ve := NewValidationError()
	oneOf(ve, "status", status, TrustRequestStatuses)
	if err := ve.Err(); err != nil {
		return List[TrustAccessRequest]{}, err
	}
	return a.store.ListTrustRequests(ctx, p.OrgID, status, pg)
}

// GetTrustRequest returns one access request.
func (a *App) GetTrustRequest(ctx context.Context, id string) (*TrustAccessRequest, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := staffRead(p); err != nil {
		return nil, err
	}
	return a.store.GetTrustRequest(ctx, p.OrgID, id)
}

// Trust decisions.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionRevoke  = "revoke"
)

// DecideTrustRequest approves (the NDA must be signed first), denies or
// revokes an access request.
func (a *App) DecideTrustRequest(ctx context.Context, id, decision string, in TrustDecision) (*TrustAccessRequest, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	ve := NewValidationError()
	days := defaultAccessDays
	if in.DurationDays != nil {
		days = *in.DurationDays
		if days < 1 || days > maxAccessDays {
			ve.Add("durationDays", CodeInvalid, days, fmt.Sprintf("durationDays must be from 1 to %d", maxAccessDays))
		}
	}
	var reason *string
	if in.Reason != nil && strings.TrimSpace(*in.Reason) != "" {
		reason = Ptr(strings.TrimSpace(*in.Reason))
		maxLen(ve, "reason", *reason, 2000)
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	var out *TrustAccessRequest
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetTrustRequest(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		r := *before
		now := a.Now()
		switch decision {
		case DecisionApprove, DecisionDeny:
			if r.Status != RequestUnderReview {
				return Errorf(ErrConflict, "the request is already %s", r.Status)
			}
			if decision == DecisionApprove {
				if r.NDASignedAt == nil {
					return Errorf(ErrConflict, "the visitor has not signed the NDA yet")
				}
				exp := now.Add(time.Duration(days) * 24 * time.Hour)
				r.Status, r.AccessExpiresAt, r.TokenExpiresAt = RequestApproved, &exp, exp
			} else {
				r.Status = RequestDenied
			}
		case DecisionRevoke:
			if r.Status != RequestApproved {
				return Errorf(ErrConflict, "only approved access can be revoked; the request is %s", r.Status)
			}
			r.Status = RequestRevoked
		default:
			return fmt.Errorf("unknown decision %q", decision)
		}
		actor := p.ActorID()
		r.DecidedAt, r.DecidedBy, r.DecisionReason, r.UpdatedAt = &now, &actor, reason, now
		if err := a.store.UpdateTrustRequest(ctx, p.OrgID, &r); err != nil {
			return err
		}
		out = &r
		return a.record(ctx, Mutation{Action: decision, ResourceType: "trust_access_request", ResourceID: id, Before: before, After: &r})
	})
	if err != nil {
		return nil, fmt.Errorf("%s trust access request %s: %w", decision, id, err)
	}
	return out, nil
}

// ListTrustDownloads lists logged downloads, newest first; requestID may narrow it.
func (a *App) ListTrustDownloads(ctx context.Context, requestID string, pg Page) (List[TrustDownload], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[TrustDownload]{}, err
	}
	if err := staffRead(p); err != nil {
		return List[TrustDownload]{}, err
	}
	return a.store.ListTrustDownloads(ctx, p.OrgID, requestID, pg)
}
