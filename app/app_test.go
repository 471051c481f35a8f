package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newApp(t *testing.T) (*app.App, *storage.DB, *clock) {
	a, db, c, _ := newAppAt(t)
	return a, db, c
}

func newAppAt(t *testing.T) (*app.App, *storage.DB, *clock, string) {
	t.Helper()
	ctx := context.Background()
	path := storagetest.Location(t, t.TempDir())
	db, err := storage.OpenURL(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)}
	return app.New(db, c.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{}), db, c, path
}

// countEvents counts outbox events of a type through a separate connection.
func countEvents(t *testing.T, path, orgID, typ string) int {
	t.Helper()
	driver, dsn := "sqlite", "file:"+path+"?_pragma=busy_timeout(5000)"
	if storagetest.Postgres() {
		driver, dsn = "compliance-postgres", path
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM events WHERE organization_id = ? AND type = ?`, orgID, typ).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	caps := map[string]app.Capability{"read": app.CapRead, "manage": app.CapManage, "keys": app.CapManageKeys,
		"transfer": app.CapTransferOwnership, "review": app.CapReview, "self": app.CapSelfService, "audit": app.CapReadAudit}
	want := map[string]string{
		"owner/api-key":      "audit keys manage read review self transfer",
		"admin/api-key":      "audit keys manage read review self",
		"auditor/api-key":    "audit read",
		"auditor/session":    "audit read review",
		"employee/api-key":   "read self",
		"contractor/session": "read self",
	}
	for who, w := range want {
		role, auth, _ := strings.Cut(who, "/")
		p := &app.Principal{Role: app.Role(role), AuthType: auth}
		var got []string
		for name, c := range caps {
			if p.Can(c) {
				got = append(got, name)
			}
		}
		sort.Strings(got)
		if strings.Join(got, " ") != w {
			t.Errorf("%s: %v, want %s", who, got, w)
		}
	}
	if err := (&app.Principal{Role: app.RoleAuditor}).Require(app.CapManage); !errors.Is(err, app.ErrForbidden) {
		t.Fatalf("Require returns ErrForbidden: %v", err)
	}
}

func TestRiskScoreAndCategory(t *testing.T) {
	t.Parallel()
	if app.RiskScoreOf("very_likely", "severe") != 25 || app.RiskScoreOf("very_unlikely", "insignificant") != 1 || app.RiskScoreOf("possible", "moderate") != 9 {
		t.Fatal("risk score is probability (1-5) times impact (1-5)")
	}
	for in, want := range map[string]string{"Cloud": "cloud", " HR ": "hr", "Software as a Service": "software_as_a_service", "software-as-a-service": "software_as_a_service"} {
		if got := app.NormalizeCategory(in); got != want {
			t.Errorf("NormalizeCategory(%q) = %q, want %q", in, got, want)
		}
	}
	if !app.InEEA("NO") || !app.InEEA("DE") || app.InEEA("CH") || app.InEEA("GB") || app.InEEA("US") {
		t.Fatal("EU/EEA membership")
	}
	if !app.ValidCountry("CH") || app.ValidCountry("ch") || app.ValidCountry("UK") {
		t.Fatal("ISO 3166-1 alpha-2, upper case")
	}
}

func TestOptDistinguishesAbsentNullAndValue(t *testing.T) {
	t.Parallel()
	var in struct {
		A app.Opt[string] `json:"a"`
		B app.Opt[string] `json:"b"`
		C app.Opt[string] `json:"c"`
	}
	if err := json.Unmarshal([]byte(`{"a": null, "b": "x"}`), &in); err != nil {
		t.Fatal(err)
	}
	if !in.A.Set || !in.A.Null || !in.B.Set || in.B.Null || in.B.Value != "x" || in.C.Set {
		t.Fatalf("%+v", in)
	}
	var bad struct {
		Website app.Opt[string] `json:"website"`
	}
	err := json.Unmarshal([]byte(`{"website": 3}`), &bad)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "website" {
		t.Fatalf("a type error inside Opt names the field: %#v", err)
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	prev := ""
	for range 1000 {
		id := app.NewID(app.PrefixVendor)
		if !app.HasPrefix(id, app.PrefixVendor) || strings.ContainsAny(id[4:], "ILOU") {
			t.Fatalf("id %s is not vnd_ + Crockford ULID", id)
		}
		if id <= prev {
			t.Fatalf("ids sort by creation: %s after %s", id, prev)
		}
		prev = id
	}
}

func TestLifetimesAndPasswords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "720h": 720 * time.Hour, "1h30m": 90 * time.Minute} {
		if got, err := app.ParseLifetime(in); err != nil || got != want {
			t.Errorf("ParseLifetime(%s) = %v, %v", in, got, err)
		}
	}
	if _, err := app.ParseLifetime("xd"); err == nil {
		t.Error("xd is not a lifetime")
	}
	h, err := app.HashPassword("correct horse battery")
	if err != nil || !strings.HasPrefix(h, "$argon2id$") {
		t.Fatalf("hash %s %v", h, err)
	}
	if !app.VerifyPassword(h, "correct horse battery") || app.VerifyPassword(h, "correct horse battery!") {
		t.Fatal("verify")
	}
	if _, err := app.HashPassword("short"); err == nil {
		t.Fatal("short passwords are refused")
	}
}

func TestPlanLimits(t *testing.T) {
	t.Parallel()
	a, _, _ := newApp(t)
	cases := []struct {
		plan, limit string
		used        int
		ok          bool
	}{
		{app.PlanFree, "members", 2, true}, {app.PlanFree, "members", 3, false},
		{app.PlanFree, "frameworks", 1, false}, {app.PlanFree, "integrations", 0, false},
		{app.PlanStarter, "members", 9, true}, {app.PlanStarter, "members", 10, false},
		{app.PlanProfessional, "frameworks", 2, true}, {app.PlanProfessional, "frameworks", 3, false},
		{app.PlanProfessional, "members", 50, false}, {app.PlanProfessional, "integrations", 99, true},
		{app.PlanEnterprise, "members", 1_000_000, true},
	}
	for _, c := range cases {
		err := a.CheckLimit(c.plan, c.limit, c.used)
		var le *app.LimitError
		if c.ok != (err == nil) || (!c.ok && (!errors.As(err, &le) || !errors.Is(err, app.ErrForbidden) || le.Limit != c.limit)) {
			t.Errorf("%s %s used %d: %v", c.plan, c.limit, c.used, err)
		}
	}
	for plan, rate := range map[string]int{app.PlanFree: 30, app.PlanStarter: 60, app.PlanProfessional: 300, app.PlanEnterprise: 3000} {
		if l := a.Limits(plan); l.RatePerMinute != rate || l.Burst != 2*rate {
			t.Errorf("%s rate %d/%d", plan, l.RatePerMinute, l.Burst)
		}
	}
}

func TestKeyRevokedElsewhereStopsWithinTheCacheWindow(t *testing.T) {
	t.Parallel()
	server, db, c := newApp(t)
	ctx := context.Background()
	org, err := server.CreateOrganization(ctx, "Acme", "")
	if err != nil {
		t.Fatal(err)
	}
	if org.Plan != app.PlanProfessional {
		t.Fatalf("default plan is professional, got %s", org.Plan)
	}
	k, err := server.CreateAPIKey(app.SystemContext(ctx, org.ID), app.APIKeyCreate{Name: "ci", Role: "auditor"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := server.AuthenticateKey(ctx, k.Key)
	if err != nil || p.OrgID != org.ID || p.Role != app.RoleAuditor || p.Plan != app.PlanProfessional || p.AuthType != app.AuthAPIKey {
		t.Fatalf("principal %+v %v", p, err)
	}
	// Another process (the CLI) revokes the key in the same database.
	cli := app.New(db, c.Now, nil, app.Config{})
	if err := cli.RevokeAPIKeyByID(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	c.Advance(1100 * time.Millisecond)
	if _, err := server.AuthenticateKey(ctx, k.Key); !errors.Is(err, app.ErrUnauthenticated) {
		t.Fatalf("a key revoked elsewhere stops working within 2 s: %v", err)
	}
	if _, err := server.AuthenticateKey(ctx, "cmp_short"); !errors.Is(err, app.ErrUnauthenticated) {
		t.Fatal("malformed keys are unauthenticated")
	}
}

func TestJournalRecordsEveryWrite(t *testing.T) {
	t.Parallel()
	a, _, _, path := newAppAt(t)
	ctx := context.Background()
	org, err := a.CreateOrganization(ctx, "Acme", app.PlanProfessional)
	if err != nil {
		t.Fatal(err)
	}
	sys := app.SystemContext(ctx, org.ID)
	v, err := a.CreateVendor(sys, app.VendorInput{Name: app.Ptr("Cloudy")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateVendor(sys, v.ID, app.VendorInput{Criticality: app.Ptr("critical")}); err != nil {
		t.Fatal(err)
	}
	// A failed write leaves no journal entry.
	if _, err := a.UpdateVendor(sys, v.ID, app.VendorInput{Criticality: app.Ptr("bogus")}); err == nil {
		t.Fatal("invalid criticality")
	}
	got := map[string]int{}
	for _, typ := range []string{"vendor.created", "vendor.updated"} {
		got[typ] = countEvents(t, path, org.ID, typ)
	}
	if got["vendor.created"] != 1 || got["vendor.updated"] != 1 {
		t.Fatalf("one event per successful write: %v", got)
	}
	d := app.Diff(map[string]any{"a": 1, "b": 2, "updatedAt": "x"}, map[string]any{"a": 1, "b": 3, "c": 4, "updatedAt": "y"})
	if len(d) != 2 || d["b"].New != float64(3) || d["c"].Old != nil {
		t.Fatalf("Diff: %v", d)
	}
}

func TestIdempotencyAppliesOncePerOrganization(t *testing.T) {
	t.Parallel()
	a, _, c := newApp(t)
	ctx := context.Background()
	o1, _ := a.CreateOrganization(ctx, "One", "")
	o2, _ := a.CreateOrganization(ctx, "Two", "")
	runs := 0
	run := func(ctx context.Context) *app.StoredResponse {
		runs++
		return &app.StoredResponse{Status: 201, ContentType: "application/json", Body: []byte(`{"n":1}`)}
	}
	for range 2 {
		if _, _, err := a.Idempotent(app.SystemContext(ctx, o1.ID), "k", "h1", run); err != nil {
			t.Fatal(err)
		}
	}
	if _, replayed, _ := a.Idempotent(app.SystemContext(ctx, o2.ID), "k", "h1", run); replayed {
		t.Fatal("keys are per organization")
	}
	if runs != 2 {
		t.Fatalf("ran %d times, want 2", runs)
	}
	if _, _, err := a.Idempotent(app.SystemContext(ctx, o1.ID), "k", "h2", run); !errors.Is(err, app.ErrConflict) {
		t.Fatalf("a different request under the same key is ErrConflict: %v", err)
	}
	// With another data-directory key the stored answer cannot be read:
	// the retry is refused (409), never run a second time.
	if err := a.SetWebhookKey(bytes.Repeat([]byte{7}, 32)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Idempotent(app.SystemContext(ctx, o1.ID), "k", "h1", run); !errors.Is(err, app.ErrConflict) || runs != 2 {
		t.Fatalf("unreadable stored response: %v, ran %d times", err, runs)
	}
	c.Advance(25 * time.Hour)
	if n, err := a.PurgeIdempotency(ctx); err != nil || n != 2 {
		t.Fatalf("purge after 24 h removed %d: %v", n, err)
	}
}
