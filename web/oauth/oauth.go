package oauth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	"github.com/ory/fosite/token/hmac"
)

// The OAuth 2.0 authorization server. github.com/ory/fosite implements the
// protocol (authorization code with PKCE, refresh-token rotation with reuse
// detection, RFC 7009 revocation, HMAC-signed opaque tokens whose
// signatures alone are stored); this file supplies its storage over the app
// services, the session type, dynamic registration (RFC 7591), the
// metadata documents (RFC 8414, RFC 9728) and the bearer authenticator.

// oauthServer holds the protocol provider.
type oauthServer struct {
	provider fosite.OAuth2Provider
}

// Token kinds as stored.
const (
	kindCode    = "code"
	kindPKCE    = "pkce"
	kindAccess  = "access"
	kindRefresh = "refresh"
)

func newOAuthServer(a *app.App, secret []byte) *oauthServer {
	if len(secret) < 32 {
		secret = []byte(httpx.RandomString(32))
	}
	ac := a.AuthSettings()
	cfg := &fosite.Config{
		AccessTokenLifespan:            ac.AccessTokenLifetime,
		RefreshTokenLifespan:           ac.RefreshTokenLifetime,
		AuthorizeCodeLifespan:          10 * time.Minute,
		GlobalSecret:                   secret,
		EnforcePKCE:                    true,
		EnforcePKCEForPublicClients:    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		RefreshTokenScopes:             []string{},
		ClientSecretsHasher:            sha256Hasher{},
		TokenEntropy:                   32,
	}
	store := &fositeStore{app: a}
	// The handlers are wired by hand rather than through fosite's compose
	// package, which would also link the OpenID Connect, PAR and JWT
	// grant handlers this server does not offer.
	strategy := oauth2.NewHMACSHAStrategy(&hmac.HMACStrategy{Config: cfg}, cfg)
	explicit := &oauth2.AuthorizeExplicitGrantHandler{AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy,
		AuthorizeCodeStrategy: strategy, CoreStorage: store, TokenRevocationStorage: store, Config: cfg}
	refresh := &oauth2.RefreshTokenGrantHandler{AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy,
		TokenRevocationStorage: store, Config: cfg}
	revocation := &oauth2.TokenRevocationHandler{TokenRevocationStorage: store, AccessTokenStrategy: strategy, RefreshTokenStrategy: strategy}
	introspection := &oauth2.CoreValidator{CoreStrategy: strategy, CoreStorage: store, Config: cfg}
	pkceHandler := &pkce.Handler{AuthorizeCodeStrategy: strategy, Storage: store, Config: cfg}
	cfg.AuthorizeEndpointHandlers.Append(explicit)
	cfg.AuthorizeEndpointHandlers.Append(pkceHandler)
	cfg.TokenEndpointHandlers.Append(explicit)
	cfg.TokenEndpointHandlers.Append(refresh)
	cfg.TokenEndpointHandlers.Append(pkceHandler)
	cfg.TokenIntrospectionHandlers.Append(introspection)
	cfg.RevocationHandlers.Append(revocation)
	return &oauthServer{provider: fosite.NewOAuth2Provider(store, cfg)}
}

// oauthSession is what a code or token carries: who, where, under which grant.
type oauthSession struct {
	ExpiresAt map[fosite.TokenType]time.Time `json:"expiresAt"`
	UserID    string                         `json:"userId"`
	Email     string                         `json:"email"`
	OrgID     string                         `json:"orgId"`
	GrantID   string                         `json:"grantId"`
}

func (s *oauthSession) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

func (s *oauthSession) GetExpiresAt(key fosite.TokenType) time.Time { return s.ExpiresAt[key] }
func (s *oauthSession) GetUsername() string                         { return s.Email }
func (s *oauthSession) GetSubject() string                          { return s.UserID }
func (s *oauthSession) Clone() fosite.Session {
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}

// sha256Hasher compares client secrets. They are 256-bit random strings,
// so a fast hash is as safe as a slow one, like API keys.
type sha256Hasher struct{}

func (sha256Hasher) Compare(_ context.Context, hash, data []byte) error {
	if len(hash) > 0 && subtle.ConstantTimeCompare(hash, []byte(app.HashKey(string(data)))) == 1 {
		return nil
	}
	return errors.New("client secret does not match")
}

func (sha256Hasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	return []byte(app.HashKey(string(data))), nil
}

// fositeClient is a client with the organization of a confidential app.
type fositeClient struct {
	*fosite.DefaultClient
	orgID string
	name  string
}

func toFositeClient(c *app.OAuthClient) *fositeClient {
	fc := &fositeClient{DefaultClient: &fosite.DefaultClient{ID: c.ID, Secret: []byte(c.SecretHash), RedirectURIs: c.RedirectURIs,
		GrantTypes: c.GrantTypes, ResponseTypes: c.ResponseTypes, Scopes: c.Scopes, Public: c.Public()}, name: c.Name}
	if c.OrganizationID != nil {
		fc.orgID = *c.OrganizationID
	}
	return fc
}

// fositeStore implements fosite's storage over the app services.
type fositeStore struct{ app *app.App }

func (s *fositeStore) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	c, err := s.app.OAuthClient(ctx, id)
	if errors.Is(err, app.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return toFositeClient(c), nil
}

// Client assertions (private_key_jwt) are not offered.
func (s *fositeStore) ClientAssertionJWTValid(context.Context, string) error { return nil }
func (s *fositeStore) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return nil
}

// storedRequest is the serialized form of a fosite request.
type storedRequest struct {
	ID                string        `json:"id"`
	RequestedAt       time.Time     `json:"requestedAt"`
	ClientID          string        `json:"clientId"`
	RequestedScopes   []string      `json:"requestedScopes"`
	GrantedScopes     []string      `json:"grantedScopes"`
	RequestedAudience []string      `json:"requestedAudience"`
	GrantedAudience   []string      `json:"grantedAudience"`
	Form              url.Values    `json:"form"`
	Session           *oauthSession `json:"session"`
}

func (s *fositeStore) save(ctx context.Context, kind, sig string, req fosite.Requester) error {
	sess, ok := req.GetSession().(*oauthSession)
	if !ok || sess == nil {
		return fmt.Errorf("store %s: unexpected session type %T", kind, req.GetSession())
	}
	form := url.Values{}
	for _, k := range []string{"redirect_uri", "code_challenge", "code_challenge_method", "resource"} {
		if v := req.GetRequestForm().Get(k); v != "" {
			form.Set(k, v)
		}
	}
	raw, err := json.Marshal(storedRequest{ID: req.GetID(), RequestedAt: req.GetRequestedAt(), ClientID: req.GetClient().GetID(),
		RequestedScopes: req.GetRequestedScopes(), GrantedScopes: req.GetGrantedScopes(),
		RequestedAudience: req.GetRequestedAudience(), GrantedAudience: req.GetGrantedAudience(), Form: form, Session: sess})
	if err != nil {
		return err
	}
	tt := map[string]fosite.TokenType{kindCode: fosite.AuthorizeCode, kindPKCE: fosite.AuthorizeCode, kindAccess: fosite.AccessToken, kindRefresh: fosite.RefreshToken}[kind]
	exp := sess.GetExpiresAt(tt)
	if exp.IsZero() {
		exp = time.Now().Add(s.app.AuthSettings().RefreshTokenLifetime)
	}
	t := &app.OAuthToken{Signature: sig, Kind: kind, RequestID: req.GetID(), GrantID: sess.GrantID,
		ClientID: req.GetClient().GetID(), OrganizationID: sess.OrgID, UserID: sess.UserID, Active: true, Request: raw, ExpiresAt: exp}
	return s.Write(ctx, func(ctx context.Context) error { return s.app.SaveOAuthToken(ctx, t) })
}

func (s *fositeStore) load(ctx context.Context, kind, sig string, session fosite.Session) (fosite.Requester, bool, error) {
	t, err := s.app.LoadOAuthToken(ctx, kind, sig)
	if errors.Is(err, app.ErrNotFound) {
		return nil, false, fosite.ErrNotFound
	}
	if err != nil {
		return nil, false, err
	}
	var sr storedRequest
	if err := json.Unmarshal(t.Request, &sr); err != nil || sr.Session == nil {
		return nil, false, fmt.Errorf("decode stored %s: %v", kind, err)
	}
	client, err := s.GetClient(ctx, sr.ClientID)
	if err != nil {
		return nil, false, err
	}
	var sess fosite.Session = sr.Session
	if target, ok := session.(*oauthSession); ok && target != nil {
		*target = *sr.Session
		sess = target
	}
	req := &fosite.Request{ID: sr.ID, RequestedAt: sr.RequestedAt, Client: client, RequestedScope: sr.RequestedScopes,
		GrantedScope: sr.GrantedScopes, RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
		Form: sr.Form, Session: sess}
	if req.Form == nil {
		req.Form = url.Values{}
	}
	return req, t.Active, nil
}

func notFoundOK(err error) error {
	if errors.Is(err, app.ErrNotFound) {
		return fosite.ErrNotFound
	}
	return err
}

func (s *fositeStore) CreateAuthorizeCodeSession(ctx context.Context, code string, req fosite.Requester) error {
	return s.save(ctx, kindCode, code, req)
}

func (s *fositeStore) GetAuthorizeCodeSession(ctx context.Context, code string, session fosite.Session) (fosite.Requester, error) {
	req, active, err := s.load(ctx, kindCode, code, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return req, fosite.ErrInvalidatedAuthorizeCode
	}
	return req, nil
}

func (s *fositeStore) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	return s.Write(ctx, func(ctx context.Context) error { return notFoundOK(s.app.DeactivateOAuthToken(ctx, kindCode, code)) })
}

func (s *fositeStore) CreatePKCERequestSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.save(ctx, kindPKCE, sig, req)
}

func (s *fositeStore) GetPKCERequestSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	req, _, err := s.load(ctx, kindPKCE, sig, session)
	return req, err
}

func (s *fositeStore) DeletePKCERequestSession(ctx context.Context, sig string) error {
	return s.Write(ctx, func(ctx context.Context) error { return notFoundOK(s.app.DeleteOAuthToken(ctx, kindPKCE, sig)) })
}

func (s *fositeStore) CreateAccessTokenSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.save(ctx, kindAccess, sig, req)
}

func (s *fositeStore) GetAccessTokenSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	req, active, err := s.load(ctx, kindAccess, sig, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return nil, fosite.ErrNotFound
	}
	return req, nil
}

func (s *fositeStore) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return s.Write(ctx, func(ctx context.Context) error { return notFoundOK(s.app.DeleteOAuthToken(ctx, kindAccess, sig)) })
}

func (s *fositeStore) CreateRefreshTokenSession(ctx context.Context, sig, _ string, req fosite.Requester) error {
	return s.save(ctx, kindRefresh, sig, req)
}

// GetRefreshTokenSession returns ErrInactiveToken with the request for a
// rotated token: fosite then revokes the whole family (reuse detection).
func (s *fositeStore) GetRefreshTokenSession(ctx context.Context, sig string, session fosite.Session) (fosite.Requester, error) {
	req, active, err := s.load(ctx, kindRefresh, sig, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return req, fosite.ErrInactiveToken
	}
	return req, nil
}

func (s *fositeStore) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return s.Write(ctx, func(ctx context.Context) error { return notFoundOK(s.app.DeleteOAuthToken(ctx, kindRefresh, sig)) })
}

// RotateRefreshToken marks the used refresh token inactive (kept so that
// presenting it again is detected) and ends the family's access tokens.
func (s *fositeStore) RotateRefreshToken(ctx context.Context, requestID, sig string) error {
	return s.Write(ctx, func(ctx context.Context) error {
		if err := s.app.DeactivateOAuthToken(ctx, kindRefresh, sig); err != nil {
			return notFoundOK(err)
		}
		return s.app.RevokeOAuthFamily(ctx, kindAccess, requestID)
	})
}

func (s *fositeStore) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.Write(ctx, func(ctx context.Context) error { return s.app.RevokeOAuthFamily(ctx, kindRefresh, requestID) })
}

func (s *fositeStore) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.Write(ctx, func(ctx context.Context) error { return s.app.RevokeOAuthFamily(ctx, kindAccess, requestID) })
}

// oauthTx holds the writes of one token-endpoint exchange (a code for
// tokens, a refresh-token rotation, a reuse revocation) between fosite's
// BeginTX and Commit; Commit applies them in one database transaction, so
// a crash or a failed write never leaves a used refresh token or code
// without the tokens that replace it.
type oauthTx struct {
	mu  sync.Mutex
	ops []func(ctx context.Context) error
}

type oauthTxKey struct{}

// write applies op now, or at Commit when fosite has begun a transaction.
// Inside one, fosite only writes (it reads before BeginTX), so nothing
// needs to see a queued write before it commits.
func (s *fositeStore) Write(ctx context.Context, op func(ctx context.Context) error) error {
	if tx, ok := ctx.Value(oauthTxKey{}).(*oauthTx); ok {
		tx.mu.Lock()
		tx.ops = append(tx.ops, op)
		tx.mu.Unlock()
		return nil
	}
	return op(ctx)
}

// BeginTX starts collecting writes (fosite's storage.Transactional).
func (s *fositeStore) BeginTX(ctx context.Context) (context.Context, error) {
	return context.WithValue(ctx, oauthTxKey{}, &oauthTx{}), nil
}

// Commit applies the collected writes in one transaction: all or none.
func (s *fositeStore) Commit(ctx context.Context) error {
	tx, ok := ctx.Value(oauthTxKey{}).(*oauthTx)
	if !ok {
		return nil
	}
	tx.mu.Lock()
	ops := tx.ops
	tx.ops = nil
	tx.mu.Unlock()
	if len(ops) == 0 {
		return nil
	}
	return s.app.InOAuthTx(context.WithValue(ctx, oauthTxKey{}, nil), func(ctx context.Context) error {
		for _, op := range ops {
			if err := op(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// Rollback drops the collected writes.
func (s *fositeStore) Rollback(ctx context.Context) error {
	if tx, ok := ctx.Value(oauthTxKey{}).(*oauthTx); ok {
		tx.mu.Lock()
		tx.ops = nil
		tx.mu.Unlock()
	}
	return nil
}

// resourceMetadataURL is the RFC 9728 document for the resource a request
// addressed: the MCP endpoint has its own.
func (s *Server) resourceMetadataURL(r *http.Request) string {
	u := s.BaseURL(r) + "/.well-known/oauth-protected-resource"
	if strings.HasPrefix(r.URL.Path, "/v1/mcp") {
		u += "/v1/mcp"
	}
	return u
}

// challenge is the WWW-Authenticate value of a 401: a bearer challenge
// naming the resource metadata (RFC 9728), and the API-key scheme.
func (s *Server) challenge(r *http.Request) string {
	c := `Bearer resource_metadata="` + s.resourceMetadataURL(r) + `"`
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ") {
		c += `, error="invalid_token"`
	}
	return c + `, ApiKey realm="compliance"`
}

// bearerAuth resolves an OAuth access token to the person with their
// current role in the organization chosen at consent.
func (s *Server) bearerAuth(r *http.Request) (*app.Principal, error) {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return nil, nil
	}
	token := strings.TrimSpace(h[7:])
	sess := &oauthSession{}
	_, ar, err := s.oauth.provider.IntrospectToken(r.Context(), token, fosite.AccessToken, sess)
	if err != nil {
		var rfc *fosite.RFC6749Error
		if errors.As(err, &rfc) || errors.Is(err, fosite.ErrNotFound) {
			return nil, app.ErrUnauthenticated
		}
		return nil, fmt.Errorf("introspect token: %w", err)
	}
	p, err := s.app.OAuthPrincipal(r.Context(), sess.GrantID, sess.UserID, sess.OrgID, ar.GetClient().GetID())
	if err != nil {
		return nil, err
	}
	p.Scopes = ar.GetGrantedScopes()
	if !httpx.SafeMethod(r.Method) && !ar.GetGrantedScopes().Has(app.ScopeWrite) && r.URL.Path != "/v1/mcp" {
		return nil, &httpx.HTTPError{Status: http.StatusForbidden, Code: "forbidden",
			Msg: "the token lacks the " + app.ScopeWrite + " scope", Details: map[string]any{"scope": app.ScopeWrite}}
	}
	return p, nil
}

func (s *Server) authServerMetadata(w http.ResponseWriter, r *http.Request) error {
	base := s.BaseURL(r)
	httpx.AllowCORS(w)
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         base,
		"authorization_endpoint":                         base + "/oauth/authorize",
		"token_endpoint":                                 base + "/oauth/token",
		"registration_endpoint":                          base + "/oauth/register",
		"revocation_endpoint":                            base + "/oauth/revoke",
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post"},
		"revocation_endpoint_auth_methods_supported":     []string{"none", "client_secret_basic", "client_secret_post"},
		"scopes_supported":                               app.Scopes,
		"service_documentation":                          base + "/v1/openapi.json",
		"authorization_response_iss_parameter_supported": false,
	})
	return nil
}

func (s *Server) protectedResourceMetadata(resourcePath string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		base := s.BaseURL(r)
		httpx.AllowCORS(w)
		httpx.WriteJSON(w, http.StatusOK, map[string]any{
			"resource":                 base + resourcePath,
			"authorization_servers":    []string{base},
			"bearer_methods_supported": []string{"header"},
			"scopes_supported":         app.Scopes,
			"resource_name":            "compliance API",
			"resource_documentation":   base + "/v1/openapi.json",
		})
		return nil
	}
}

// registration is an RFC 7591 client registration request and response.
type registration struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// oauthError writes the RFC 6749 / 7591 error body.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	httpx.AllowCORS(w)
	httpx.WriteJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// register is RFC 7591 dynamic registration of a public client: no
// pre-shared secret; PKCE replaces it.
func (s *Server) register(w http.ResponseWriter, r *http.Request) error {
	// Registration needs no account, so each address gets a small
	// allowance: nobody fills the database with clients.
	var te *app.ThrottleError
	if err := s.app.AllowRegistration(s.ClientAddress(r)); errors.As(err, &te) {
		w.Header().Set("Retry-After", strconv.Itoa(te.RetrySeconds()))
		oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable",
			fmt.Sprintf("too many client registrations from this address; retry after %d seconds", te.RetrySeconds()))
		return nil
	}
	var in registration
	if err := httpx.Decode(r, &in); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return nil
	}
	for _, g := range in.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only")
			return nil
		}
	}
	for _, rt := range in.ResponseTypes {
		if rt != "code" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "response_types may hold code only")
			return nil
		}
	}
	input := app.OAuthClientInput{RedirectURIs: in.RedirectURIs, Scopes: strings.Fields(in.Scope)}
	if in.ClientName != "" {
		input.Name = &in.ClientName
	}
	if in.ClientURI != "" {
		input.ClientURI = &in.ClientURI
	}
	c, err := s.app.RegisterClient(r.Context(), input)
	var ve *app.ValidationError
	if errors.As(err, &ve) {
		code := "invalid_client_metadata"
		if _, bad := ve.Fields["redirect_uris"]; bad {
			code = "invalid_redirect_uri"
		}
		oauthError(w, http.StatusBadRequest, code, ve.Error())
		return nil
	}
	if err != nil {
		return err
	}
	out := registration{ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		GrantTypes: c.GrantTypes, ResponseTypes: c.ResponseTypes, TokenEndpointAuthMethod: c.TokenEndpointAuthMethod,
		Scope: strings.Join(c.Scopes, " ")}
	if c.ClientURI != nil {
		out.ClientURI = *c.ClientURI
	}
	httpx.AllowCORS(w)
	httpx.WriteJSON(w, http.StatusCreated, out)
	return nil
}

// token is the token endpoint: authorization code (with PKCE) and refresh.
func (s *Server) token(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	httpx.AllowCORS(w)
	ar, err := s.oauth.provider.NewAccessRequest(ctx, r, &oauthSession{})
	if err != nil {
		s.oauth.provider.WriteAccessError(ctx, w, ar, err)
		return nil
	}
	// A refresh under a revoked grant or ended membership fails.
	if sess, ok := ar.GetSession().(*oauthSession); ok && ar.GetGrantTypes().ExactOne("refresh_token") {
		if _, err := s.app.OAuthPrincipal(ctx, sess.GrantID, sess.UserID, sess.OrgID, ar.GetClient().GetID()); err != nil {
			s.oauth.provider.WriteAccessError(ctx, w, ar, fosite.ErrInvalidGrant.WithHint("The authorization was withdrawn."))
			return nil
		}
	}
	resp, err := s.oauth.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.oauth.provider.WriteAccessError(ctx, w, ar, err)
		return nil
	}
	s.oauth.provider.WriteAccessResponse(ctx, w, ar, resp)
	return nil
}

// revoke is RFC 7009 token revocation.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) error {
	httpx.AllowCORS(w)
	err := s.oauth.provider.NewRevocationRequest(r.Context(), r)
	s.oauth.provider.WriteRevocationResponse(r.Context(), w, err)
	return nil
}

// grantedScopes are the requested scopes the client may have, or all of the
// client's scopes when none were requested.
func grantedScopes(ar fosite.AuthorizeRequester) []string {
	req := ar.GetRequestedScopes()
	if len(req) == 0 {
		return slices.Clone(ar.GetClient().GetScopes())
	}
	var out []string
	for _, s := range req {
		if slices.Contains(app.Scopes, s) {
			out = append(out, s)
		}
	}
	return out
}
