package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

func openAuthTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := OpenURL(context.Background(), testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSessionStore(t *testing.T) {
	t.Parallel()
	db := openAuthTestDB(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	if err := db.CreateUser(ctx, "usr_1", "ada@example.com", "Ada", "hash", now); err != nil {
		t.Fatal(err)
	}
	s := &app.Session{ID: "h1", UserID: "usr_1", CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour), IP: "127.0.0.1"}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchSession(ctx, "h1", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSession(ctx, "h1")
	if err != nil || got.UserID != "usr_1" || !got.LastSeenAt.Equal(now.Add(time.Minute)) || got.RevokedAt != nil {
		t.Fatalf("get session: %+v %v", got, err)
	}
	if err := db.RevokeSession(ctx, "h1", now); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeSession(ctx, "h1", now); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("second revoke: %v", err)
	}
	if n, err := db.PurgeSessions(ctx, now.Add(time.Second), now); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if _, err := db.GetSession(ctx, "h1"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("purged session: %v", err)
	}
	if err := db.SetLastLogin(ctx, "usr_1", now); err != nil {
		t.Fatal(err)
	}
	if u, err := db.GetUserByEmail(ctx, "ada@example.com"); err != nil || u.LastLoginAt == nil || u.PasswordHash != "hash" {
		t.Fatalf("user: %+v %v", u, err)
	}
}

func TestOAuthTokenStore(t *testing.T) {
	t.Parallel()
	db := openAuthTestDB(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	tok := func(sig, kind string) *app.OAuthToken {
		return &app.OAuthToken{Signature: sig, Kind: kind, RequestID: "req1", GrantID: "gnt1", ClientID: "oap1", OrganizationID: "org1",
			UserID: "usr1", Active: true, Request: []byte(`{}`), ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	}
	for _, tk := range []*app.OAuthToken{tok("a1", "access"), tok("a2", "access"), tok("r1", "refresh")} {
		if err := db.CreateOAuthToken(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeactivateOAuthToken(ctx, "refresh", "r1"); err != nil {
		t.Fatal(err)
	}
	// Only one of two uses wins.
	if err := db.DeactivateOAuthToken(ctx, "refresh", "r1"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("second deactivation: %v", err)
	}
	if err := db.DeactivateOAuthTokens(ctx, "access", "req1"); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"a1", "a2"} {
		if got, err := db.GetOAuthToken(ctx, "access", sig); err != nil || got.Active {
			t.Fatalf("family not deactivated: %+v %v", got, err)
		}
	}
	if err := db.DeleteOAuthTokensOfGrant(ctx, "gnt1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetOAuthToken(ctx, "refresh", "r1"); !errors.Is(err, app.ErrNotFound) {
		t.Fatalf("deleted token: %v", err)
	}
	if n, err := db.PurgeOAuthTokens(ctx, now.Add(2*time.Hour)); err != nil || n != 0 {
		t.Fatalf("purge: %d %v", n, err)
	}
}
