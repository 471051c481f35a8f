package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// TestLoadSmoke runs the whole load measurement on a tiny dataset: seeding,
// every operation answering its wanted status, the bare limit and the report.
func TestLoadSmoke(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := Load(context.Background(), LoadConfig{Orgs: 2, Scale: 0.02, Concurrency: 4, Duration: 300 * time.Millisecond,
		DataDir: t.TempDir(), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, o := range Ops {
		if !strings.Contains(report, o.Name) {
			t.Errorf("report lacks %s:\n%s", o.Name, report)
		}
	}
	if strings.Contains(report, "first error of") {
		t.Errorf("operations answered unexpected statuses:\n%s", report)
	}
	if !strings.Contains(report, "fraction of the bare limit") {
		t.Errorf("report lacks the bare limit:\n%s", report)
	}
	// Each operation alone: one row per operation with its server CPU
	// per request and fractions of the bare limit.
	_, each, ok := strings.Cut(report, "each operation alone")
	if !ok || !strings.Contains(each, "server CPU/req") {
		t.Fatalf("report lacks the per-operation section:\n%s", report)
	}
	for _, o := range Ops {
		if !strings.Contains(each, "\n"+o.Name+" ") && !strings.Contains(each, " "+o.Name+" ") {
			t.Errorf("per-operation section lacks %s:\n%s", o.Name, each)
		}
	}
}

// TestVerifyOutboxReportsMissing proves the outbox check finds a write whose
// event is absent and accepts one whose event is present.
func TestVerifyOutboxReportsMissing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dd := storage.DataDir{Root: dir}
	if err := dd.Ensure(); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, dd.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	a := app.New(db, nil, nil, app.Config{})
	o, err := a.CreateOrganization(ctx, "Outbox", app.PlanEnterprise)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.CreateVendor(app.SystemContext(ctx, o.ID), app.VendorInput{Name: app.Ptr("present")})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	missing := Ack{Kind: "vendor", ID: app.NewID(app.PrefixVendor), Name: "missing"}
	lost, err := verifyOutbox(ctx, &CrashEnv{DataDir: dir}, []Ack{{Kind: "vendor", ID: v.ID, Name: "present"}, missing})
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0].ID != missing.ID {
		t.Fatalf("lost = %+v, want only %s", lost, missing.ID)
	}
}

// TestReceiverCountsOnlySignedEvents proves the crash test's delivery check:
// a validly signed vendor.created counts, a wrong signature is refused and
// counted, and a write without a delivered event is reported lost.
func TestReceiverCountsOnlySignedEvents(t *testing.T) {
	t.Parallel()
	r, err := NewReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.setSecret("whsec_test")
	send := func(body, sig string) int {
		req, _ := http.NewRequest("POST", r.URL, strings.NewReader(body))
		req.Header.Set("X-Service-Signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	good := `{"id":"evt_1","event":"vendor.created","data":{"id":"vnd_good"}}`
	forged := `{"id":"evt_2","event":"vendor.created","data":{"id":"vnd_forged"}}`
	if s := send(good, app.SignWebhook("whsec_test", []byte(good))); s != http.StatusNoContent {
		t.Fatalf("signed delivery: %d", s)
	}
	if s := send(forged, app.SignWebhook("other", []byte(forged))); s != http.StatusUnauthorized {
		t.Fatalf("forged delivery: %d", s)
	}
	acked := []Ack{{Kind: "vendor", ID: "vnd_good"}, {Kind: "vendor", ID: "vnd_forged"}}
	lost, err := verifyDelivered(context.Background(), &CrashEnv{Receiver: r, DeliveryWait: 200 * time.Millisecond}, acked)
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0].ID != "vnd_forged" {
		t.Fatalf("lost = %+v, want only vnd_forged", lost)
	}
	if received, bad := r.Stats(); received != 2 || bad != 1 {
		t.Fatalf("stats = %d received, %d bad", received, bad)
	}
}

// TestLoadSmokePostgresReplicas runs the load measurement on PostgreSQL with
// two replicas on one database: seeding through the first, every operation
// answering its wanted status when requests alternate between them, and a
// report that names the store and the replicas.
func TestLoadSmokePostgresReplicas(t *testing.T) {
	if os.Getenv("COMPLIANCE_TEST_POSTGRES") == "" && os.Getenv("CI") != "" {
		t.Fatal("PostgreSQL is required in CI: run the tests through .ci/with-postgres (make test does)")
	}
	t.Parallel()
	var out bytes.Buffer
	err := Load(context.Background(), LoadConfig{Orgs: 2, Scale: 0.02, Concurrency: 4, Duration: 300 * time.Millisecond,
		DataDir: t.TempDir(), DatabaseURL: storagetest.EmptyPostgresURL(t), Replicas: 2, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	if !strings.Contains(report, "store PostgreSQL, 2 replica(s)") {
		t.Errorf("report does not name the store and the replicas:\n%s", report)
	}
	for _, o := range Ops {
		if !strings.Contains(report, o.Name) {
			t.Errorf("report lacks %s:\n%s", o.Name, report)
		}
	}
	if strings.Contains(report, "first error of") {
		t.Errorf("operations answered unexpected statuses:\n%s", report)
	}
}

// TestLoadReplicasNeedPostgres: several replicas on one SQLite file are
// refused before anything is seeded.
func TestLoadReplicasNeedPostgres(t *testing.T) {
	err := Load(context.Background(), LoadConfig{Orgs: 1, Scale: 1, Concurrency: 1, Duration: time.Second, Replicas: 2, Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "database-url") {
		t.Fatalf("replicas on SQLite: %v", err)
	}
}

// TestTargetRoundRobin: a target with several replicas hands out their
// URLs in turn.
func TestTargetRoundRobin(t *testing.T) {
	tg := &target{bases: []string{"a", "b", "c"}}
	var got string
	for i := 0; i < 7; i++ {
		got += tg.base()
	}
	if got != "abcabca" {
		t.Fatalf("order %q, want abcabca", got)
	}
}
