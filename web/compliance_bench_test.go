package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// complianceBenchEnv is the real router over a migrated SQLite file, for benchmarks.
func complianceBenchEnv(b *testing.B) (*app.App, *Server) {
	b.Helper()
	a, _, srv := benchEnv(b, 64<<20)
	return a, srv
}

// benchEnv builds the app and router over a migrated SQLite file and a
// file store in a temporary directory, on the harness's fixed clock.
func benchEnv(b *testing.B, maxUpload int64) (*app.App, *storage.DB, *Server) {
	b.Helper()
	dir := b.TempDir()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	files, err := storage.NewFiles(filepath.Join(dir, "files"))
	if err != nil {
		b.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := app.NewWithFiles(db, files, clock.Now, log, app.Config{})
	srv, err := New(a, log, Options{Version: "bench", Now: clock.Now, MaxUploadBytes: maxUpload})
	if err != nil {
		b.Fatal(err)
	}
	return a, db, srv
}

// BenchmarkFrameworkScore computes the score of an enabled custom framework
// of 1,000 requirements, each served by its own control.
func BenchmarkFrameworkScore(b *testing.B) {
	a, _ := complianceBenchEnv(b)
	ctx := context.Background()
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	f, err := a.CreateCustomFramework(sys, app.FrameworkInput{Name: app.Ptr("Thousand")})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.EnableFramework(sys, f.ID); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if _, err := a.AddRequirement(sys, f.ID, app.RequirementInput{Ref: app.Ptr(fmt.Sprintf("R-%04d", i)), Title: app.Ptr("Requirement")}); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		n++
		score, counts, err := a.FrameworkScore(sys, f.ID)
		if err != nil || counts.Requirements.Total != 1000 || score != 0 {
			b.Fatalf("score %d counts %+v err %v", score, counts, err)
		}
	}
	// CPU time per operation is steadier than wall time on a shared machine.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(n), "cpu-ns/op")
}

// processCPU is the process's user plus system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEnableAllFrameworks enables the 16 built-in frameworks for a
// fresh organization per iteration.
func BenchmarkEnableAllFrameworks(b *testing.B) {
	a, _ := complianceBenchEnv(b)
	ctx := context.Background()
	c, err := app.BuiltinCatalog()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
		if err != nil {
			b.Fatal(err)
		}
		sys := app.SystemContext(ctx, o.ID)
		for _, f := range c.Frameworks() {
			if _, err := a.EnableFramework(sys, f.ID); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEvidenceUpload10MiB uploads a 10 MiB evidence file through the
// full HTTP stack (multipart parsing, hashing, fsync, record, status rule).
func BenchmarkEvidenceUpload10MiB(b *testing.B) {
	a, srv := complianceBenchEnv(b)
	ctx := context.Background()
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		b.Fatal(err)
	}
	sys := app.SystemContext(ctx, o.ID)
	k, err := a.CreateAPIKey(sys, app.APIKeyCreate{Name: "bench", Role: "admin"})
	if err != nil {
		b.Fatal(err)
	}
	ctl, err := a.CreateControl(sys, app.ControlInput{Name: app.Ptr("Bench control")})
	if err != nil {
		b.Fatal(err)
	}
	content := make([]byte, 10<<20)
	var body bytes.Buffer
	b.SetBytes(int64(len(content)))
	i := 0
	for b.Loop() {
		i++
		content[0], content[1] = byte(i), byte(i>>8) // distinct content each time
		body.Reset()
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "big.bin")
		fw.Write(content)
		mw.WriteField("description", "bench")
		mw.Close()
		req := httptest.NewRequest("POST", "/v1/controls/"+ctl.ID+"/evidence", bytes.NewReader(body.Bytes()))
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("X-API-Key", k.Key)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}
