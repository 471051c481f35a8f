package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// KeyPrefix starts every API key.
const KeyPrefix = "cmp_"

// keyCacheTTL bounds how long a revocation made outside this process (the
// CLI against a running server) takes to apply.
const keyCacheTTL = time.Second

// APIKey is an organization-scoped credential with a role. The plaintext is
// never stored; Key is set only in the create response.
type APIKey struct {
	ID             string     `json:"id"`
	OrganizationID string     `json:"-"`
	Name           string     `json:"name"`
	Role           Role       `json:"role"`
	Prefix         string     `json:"prefix"`
	CreatedByID    *string    `json:"createdById"`
	CreatedAt      time.Time  `json:"createdAt"`
	ExpiresAt      *time.Time `json:"expiresAt"`
	LastUsedAt     *time.Time `json:"lastUsedAt"`
	RevokedAt      *time.Time `json:"revokedAt"`
	Key            string     `json:"key,omitempty"`
	Hash           string     `json:"-"`
}

// APIKeyCreate is the body of POST /v1/api-keys.
type APIKeyCreate struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	ExpiresAt string `json:"expiresAt"`
	// ExpiresIn is a Go duration (720h); the CLI uses it.
	ExpiresIn string `json:"expiresIn"`
}

// APIKeyStore persists keys.
type APIKeyStore interface {
	CreateAPIKey(ctx context.Context, k *APIKey) error
	ListAPIKeys(ctx context.Context, orgID string) ([]APIKey, error)
	GetAPIKey(ctx context.Context, orgID, id string) (*APIKey, error)
	// FindAPIKeyByID looks a key up in any organization (CLI revoke).
	FindAPIKeyByID(ctx context.Context, id string) (*APIKey, error)
	// FindAPIKeyByHash returns the key and its organization's plan.
	FindAPIKeyByHash(ctx context.Context, hash string) (*APIKey, string, error)
	RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) error
	TouchAPIKeys(ctx context.Context, used map[string]time.Time) error
}

// ParseLifetime parses a Go duration (720h) or a number of days (90d).
func ParseLifetime(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100*366 {
			return 0, fmt.Errorf("invalid lifetime %q", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// HashKey returns the stored form of a plaintext key.
func HashKey(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// CreateAPIKey creates a key and returns it with its plaintext, shown once.
func (a *App) CreateAPIKey(ctx context.Context, in APIKeyCreate) (*APIKey, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	v := NewValidationError()
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		v.Add("name", CodeRequired, nil, "name is required")
	}
	maxLen(v, "name", in.Name, 200)
	role, ok := ParseRole(in.Role)
	switch {
	case in.Role == "":
		v.Add("role", CodeRequired, nil, "role is required")
	case !ok:
		v.Add("role", CodeInvalidEnum, in.Role, "role must be one of owner, admin, auditor, employee, contractor")
	case role == RoleOwner && p.Role != RoleOwner:
		v.Add("role", CodeInvalid, in.Role, "only an owner may create an owner key")
	}
	now := a.Now()
	var expires *time.Time
	switch {
	case in.ExpiresAt != "" && in.ExpiresIn != "":
		v.Add("expiresAt", CodeInvalid, in.ExpiresAt, "give expiresAt or expiresIn, not both")
	case in.ExpiresAt != "":
		t, ok := ParseTime(in.ExpiresAt)
		if !ok {
			v.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be an RFC 3339 time")
		} else if !t.After(now) {
			v.Add("expiresAt", CodeInvalid, in.ExpiresAt, "expiresAt must be in the future")
		}
		expires = &t
	case in.ExpiresIn != "":
		d, err := ParseLifetime(in.ExpiresIn)
		if err != nil || d <= 0 {
			v.Add("expiresIn", CodeInvalid, in.ExpiresIn, "expiresIn must be a positive duration such as 720h or 90d")
		}
		t := now.Add(d)
		expires = &t
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	plain := KeyPrefix + RandomToken(32)
	k := &APIKey{ID: NewID(PrefixAPIKey), OrganizationID: p.OrgID, Name: in.Name, Role: role, Prefix: plain[:12],
		CreatedAt: now, ExpiresAt: expires, Hash: HashKey(plain)}
	if p.UserID != "" {
		k.CreatedByID = Ptr(p.UserID)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		if err := a.store.CreateAPIKey(ctx, k); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "created", ResourceType: "api_key", ResourceID: k.ID, After: k,
			Events: []Event{ResourceEvent("api_key", "created", k)}})
	})
	if err != nil {
		return nil, fmt.Errorf("create api key: %w", err)
	}
	k.Key = plain
	return k, nil
}

// ListAPIKeys lists the organization's keys, revoked ones included.
func (a *App) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	p, err := authorize(ctx, CapManageKeys)
	if err != nil {
		return nil, err
	}
	return a.store.ListAPIKeys(ctx, p.OrgID)
}

// RevokeAPIKey revokes a key; it stops working at once in this process.
func (a *App) RevokeAPIKey(ctx context.Context, id string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(CapManageKeys); err != nil {
		return err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetAPIKey(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		if before.RevokedAt != nil {
			return nil
		}
		now := a.Now()
		if err := a.store.RevokeAPIKey(ctx, p.OrgID, id, now); err != nil {
			return err
		}
		after := *before
		after.RevokedAt = &now
		return a.record(ctx, Mutation{Action: "revoked", ResourceType: "api_key", ResourceID: id, Before: before, After: &after,
			Events: []Event{ResourceEvent("api_key", "revoked", &after)}})
	})
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, err)
	}
	a.keys().invalidate(id)
	return nil
}

// RevokeAPIKeyByID revokes a key of any organization (CLI).
func (a *App) RevokeAPIKeyByID(ctx context.Context, id string) error {
	k, err := a.store.FindAPIKeyByID(ctx, id)
	if err != nil {
		return err
	}
	return a.RevokeAPIKey(SystemContext(ctx, k.OrganizationID), id)
}

type cachedKey struct {
	key     *APIKey
	plan    string
	fetched time.Time
}

// keyCache keeps recent key lookups and last-used times in memory so that
// authenticating a request needs no database round trip and no write.
type keyCache struct {
	// off: every request reads its key from the database. Set when other
	// processes share the store (replicas on PostgreSQL), where a key
	// revoked through one replica must be refused by every other at once.
	off    bool
	mu     sync.Mutex
	byHash map[[sha256.Size]byte]cachedKey
	used   map[string]time.Time
	usedMu sync.Mutex
}

func newKeyCache() *keyCache {
	return &keyCache{byHash: map[[sha256.Size]byte]cachedKey{}, used: map[string]time.Time{}}
}

func (a *App) keys() *keyCache { return a.keyc }

func (c *keyCache) invalidate(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.byHash {
		if e.key.ID == id {
			delete(c.byHash, h)
		}
	}
}

// AuthenticateKey resolves a plaintext key to a principal. Missing,
// unknown, revoked and expired keys are ErrUnauthenticated.
func (a *App) AuthenticateKey(ctx context.Context, plain string) (*Principal, error) {
	if !strings.HasPrefix(plain, KeyPrefix) || len(plain) < 20 || len(plain) > 200 {
		return nil, ErrUnauthenticated
	}
	sum := sha256.Sum256([]byte(plain))
	c := a.keys()
	now := a.now()
	c.mu.Lock()
	e, ok := c.byHash[sum]
	c.mu.Unlock()
	if !ok || c.off || now.Sub(e.fetched) > keyCacheTTL || now.Before(e.fetched) {
		k, plan, err := a.store.FindAPIKeyByHash(ctx, hex.EncodeToString(sum[:]))
		if errors.Is(err, ErrNotFound) {
			return nil, ErrUnauthenticated
		}
		if err != nil {
			return nil, fmt.Errorf("find api key: %w", err)
		}
		e = cachedKey{key: k, plan: plan, fetched: now}
		c.mu.Lock()
		if len(c.byHash) > 100000 {
			c.byHash = map[[sha256.Size]byte]cachedKey{}
		}
		c.byHash[sum] = e
		c.mu.Unlock()
	}
	k := e.key
	if k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)) {
		return nil, ErrUnauthenticated
	}
	c.usedMu.Lock()
	c.used[k.ID] = now
	c.usedMu.Unlock()
	p := &Principal{OrgID: k.OrganizationID, Plan: e.plan, Role: k.Role, AuthType: AuthAPIKey, KeyID: k.ID}
	if k.CreatedByID != nil {
		p.UserID = *k.CreatedByID
	}
	return p, nil
}

// FlushKeyUsage writes the last-used times gathered since the previous
// flush in one transaction. serve calls it periodically and at shutdown.
func (a *App) FlushKeyUsage(ctx context.Context) error {
	c := a.keys()
	c.usedMu.Lock()
	used := c.used
	c.used = map[string]time.Time{}
	c.usedMu.Unlock()
	if len(used) == 0 {
		return nil
	}
	if err := a.store.TouchAPIKeys(ctx, used); err != nil {
		return fmt.Errorf("flush key usage: %w", err)
	}
	return nil
}
