package oauth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// newTestApp is the app over a migrated SQLite file in t.TempDir().
func newTestApp(t *testing.T) *app.App {
	t.Helper()
	db := storagetest.Open(t)
	return app.New(db, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
}

// TestOAuthTokenWritesAreAtomic: between fosite's BeginTX and Commit the
// token endpoint's writes are held and applied in one transaction, so a
// failed write leaves the used refresh token as it was (usable again)
// instead of rotated without a replacement; a committed rotation applies
// every write; outside a transaction writes apply at once.
func TestOAuthTokenWritesAreAtomic(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	s := &fositeStore{app: a}
	ctx := context.Background()
	token := func(kind, sig string) *app.OAuthToken {
		t.Helper()
		tok := &app.OAuthToken{Signature: sig, Kind: kind, RequestID: "req_1", GrantID: "grant_1", ClientID: "client_1",
			OrganizationID: "org_1", UserID: "usr_1", Active: true, Request: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour)}
		if err := a.SaveOAuthToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	active := func(kind, sig string) bool {
		t.Helper()
		tok, err := a.LoadOAuthToken(ctx, kind, sig)
		if err != nil {
			t.Fatal(err)
		}
		return tok.Active
	}
	token(kindRefresh, "refresh-1")
	token(kindAccess, "access-1")

	// A rotation whose later write fails: nothing of it lands.
	tx, err := s.BeginTX(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if !active(kindRefresh, "refresh-1") {
		t.Fatal("a write inside the transaction applied before Commit")
	}
	failure := errors.New("disk full")
	if err := s.Write(tx, func(context.Context) error { return failure }); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); !errors.Is(err, failure) {
		t.Fatalf("commit: %v", err)
	}
	if !active(kindRefresh, "refresh-1") || !active(kindAccess, "access-1") {
		t.Fatal("a failed rotation left the refresh token or its access token ended")
	}

	// Rolled back: nothing lands either.
	tx, _ = s.BeginTX(ctx)
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Rollback(tx); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); err != nil {
		t.Fatal(err)
	}
	if !active(kindRefresh, "refresh-1") {
		t.Fatal("a rolled-back rotation applied")
	}

	// Committed: the old refresh and access tokens end, the new ones exist.
	tx, _ = s.BeginTX(ctx)
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(tx, func(ctx context.Context) error {
		return a.SaveOAuthToken(ctx, &app.OAuthToken{Signature: "refresh-2", Kind: kindRefresh, RequestID: "req_1", GrantID: "grant_1",
			ClientID: "client_1", OrganizationID: "org_1", UserID: "usr_1", Active: true, Request: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); err != nil {
		t.Fatal(err)
	}
	if active(kindRefresh, "refresh-1") || active(kindAccess, "access-1") || !active(kindRefresh, "refresh-2") {
		t.Fatal("a committed rotation did not apply every write")
	}

	// A second rotation of the same token (a concurrent refresh that lost)
	// fails at Commit and changes nothing.
	tx, _ = s.BeginTX(ctx)
	if err := s.RotateRefreshToken(tx, "req_1", "refresh-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(tx); err == nil {
		t.Fatal("rotating a used refresh token must fail")
	}
	if !active(kindRefresh, "refresh-2") {
		t.Fatal("the failed rotation changed the current token")
	}

	// Without BeginTX, writes apply at once.
	if err := s.RevokeRefreshToken(ctx, "req_1"); err != nil {
		t.Fatal(err)
	}
	if active(kindRefresh, "refresh-2") {
		t.Fatal("a write outside a transaction did not apply")
	}
}
