package web

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/ui"
)

// newJobServer is a test server whose jobs write under the test's
// directory and are stopped when the test ends.
func newJobServer(t *testing.T, configure ...func(*Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	e := newTestServerWith(t, func(o *Options) {
		o.WorkDir = dir
		for _, c := range configure {
			c(o)
		}
	})
	t.Cleanup(func() { _ = e.srv.Close() })
	return e
}

// waitJob waits until a job has finished and returns its state.
func waitJob(t *testing.T, e *testEnv, id string) ui.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, ok := e.srv.UI.JobState(id)
		if !ok {
			t.Fatalf("job %s is gone", id)
		}
		if c.Status == ui.JobDone || c.Status == ui.JobFailed {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", id, c.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zipNames lists the files of a zip.
func zipNames(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var out []string
	for _, f := range zr.File {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}

// TestUIExportJob: preparing an export from the frameworks page runs it as
// a job whose page shows its progress and then the download; the zip has
// the same files as the API's export; only the person who started it, in
// that organization, sees it; it expires; closing the server removes the
// files; roles are checked as for the direct downloads.
func TestUIExportJob(t *testing.T) {
	t.Parallel()
	e := newJobServer(t)
	f := e.uiFixture("Acme")
	other := e.uiFixture("Globex")
	admin, owner, aud, emp, globex := e.browser(), e.browser(), e.browser(), e.browser(), e.browser()
	admin.signIn(f.admin)
	owner.signIn(f.owner)
	aud.signIn(f.auditor)
	emp.signIn(f.employee)
	globex.signIn(other.owner)
	wantRedirect(t, admin.upload("/controls/"+f.control+"/evidence", "policy.pdf", "%PDF-1.4 quality policy", nil), "/controls/")

	rec := admin.get("/frameworks")
	wantBody(t, rec, `action="/evidence/export"`, `action="/evidence/export/auditor"`, "Prepare the full export", `href="/evidence/export"`)
	wantBody(t, admin.get("/jobs"), "No jobs.")
	loc := wantRedirect(t, admin.post("/evidence/export", nil), "/jobs/job_")
	id := strings.TrimPrefix(loc, "/jobs/")
	j := waitJob(t, e, id)
	if j.Status != ui.JobDone || j.Total == 0 || j.Done != j.Total {
		t.Fatalf("job: %+v", j)
	}
	rec = admin.get(loc)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Evidence export", "Done", strconv.Itoa(j.Total)+" of "+strconv.Itoa(j.Total)+" controls done", `<progress max="`+strconv.Itoa(j.Total)+`"`,
		`href="/jobs/`+id+`/download"`, "Kept until 2026-01-15 11:00 UTC")
	wantNoBody(t, rec, `http-equiv="refresh"`)
	wantBody(t, admin.get("/jobs"), `href="/jobs/`+id+`"`, "Evidence export")

	rec = admin.get(loc + "/download")
	wantStatus(t, rec, http.StatusOK)
	if ct := rec.Header().Get("Content-Type"); ct != "application/zip" || !strings.Contains(rec.Header().Get("Content-Disposition"), `attachment; filename=evidence-export-`) {
		t.Fatalf("download headers: %v", rec.Header())
	}
	got := zipNames(t, rec.Body.Bytes())
	api := e.do("GET", "/v1/evidence-export", e.key(f.org, app.RoleOwner), nil)
	wantStatus(t, api, http.StatusOK)
	want := zipNames(t, api.Body.Bytes())
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) < 3 {
		t.Fatalf("job zip %v, API zip %v", got, want)
	}
	// Downloading again works until the job expires.
	wantStatus(t, admin.get(loc+"/download"), http.StatusOK)

	// Nobody else sees the job or its file: another person of the same
	// organization, or anyone of another one.
	for _, b := range []*uiBrowser{owner, globex} {
		for _, p := range []string{loc, loc + "/download"} {
			rec := b.get(p)
			wantStatus(t, rec, http.StatusNotFound)
			wantBody(t, rec, "Page not found")
		}
		wantNoBody(t, b.get("/jobs"), id)
	}

	// The auditor prepares the auditor package only; employees neither.
	wantStatus(t, aud.post("/evidence/export", nil), http.StatusForbidden)
	aloc := wantRedirect(t, aud.post("/evidence/export/auditor", nil), "/jobs/job_")
	if j := waitJob(t, e, strings.TrimPrefix(aloc, "/jobs/")); j.Status != ui.JobDone {
		t.Fatalf("auditor job: %+v", j)
	}
	wantStatus(t, aud.get(aloc+"/download"), http.StatusOK)
	wantStatus(t, emp.post("/evidence/export", nil), http.StatusForbidden)
	wantStatus(t, emp.post("/evidence/export/auditor", nil), http.StatusForbidden)
	wantStatus(t, admin.post("/evidence/export", url.Values{ui.CSRFField: {"forged"}}), http.StatusForbidden)
	rec = admin.post("/evidence/export", url.Values{"frameworkId": {"frk_nope"}})
	wantStatus(t, rec, http.StatusBadRequest)
	// The direct downloads stay as they were.
	wantStatus(t, admin.get("/evidence/export"), http.StatusOK)

	// An hour after it finished the job and its file are gone.
	path := j.Path
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("job file: %v", err)
	}
	e.clock.Advance(ui.JobTTL + time.Minute)
	wantStatus(t, admin.get(loc), http.StatusNotFound)
	wantStatus(t, admin.get(loc+"/download"), http.StatusNotFound)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("expired job file still there: %v", err)
	}

	// Closing the server removes every file of its jobs.
	loc = wantRedirect(t, admin.post("/evidence/export", nil), "/jobs/job_")
	j = waitJob(t, e, strings.TrimPrefix(loc, "/jobs/"))
	dir := e.srv.UI.JobsDir()
	if dir == "" || !strings.HasPrefix(j.Path, dir) {
		t.Fatalf("job file %q outside the job directory %q", j.Path, dir)
	}
	_ = e.srv.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("job directory left after close: %v", err)
	}
}

// TestUIJobProgressAndLimits: a running job's page shows the items done
// and reloads itself; at most two jobs run at once (a third waits,
// queued); a person has at most two under way.
func TestUIJobProgressAndLimits(t *testing.T) {
	t.Parallel()
	e := newJobServer(t)
	f := e.uiFixture("Acme")
	admin, owner := e.browser(), e.browser()
	admin.signIn(f.admin)
	owner.signIn(f.owner)
	// The principals of the two people, as their sessions make them.
	pa := principalOf(t, e, f.org, f.admin)
	po := principalOf(t, e, f.org, f.owner)

	release := make(chan struct{})
	started := make(chan struct{}, 3)
	block := func(ctx context.Context, c *ui.JobControl) error {
		c.Progress(3, 10)
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		c.Progress(10, 10)
		w, err := c.File("result.txt", "text/plain")
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, "the result")
		return err
	}
	id1, err := e.srv.UI.StartJob(pa, "", "test", "Long work", "items", block)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := e.srv.UI.StartJob(pa, "", "test", "More long work", "items", block)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	<-started
	rec := admin.get("/jobs/" + id1)
	wantStatus(t, rec, http.StatusOK)
	wantBody(t, rec, "Long work", "Running", "3 of 10 items done", `<progress max="10" value="3"`, `<meta http-equiv="refresh" content="2">`)
	wantNoBody(t, rec, "/download")
	wantBody(t, admin.get("/jobs"), `<meta http-equiv="refresh" content="2">`, "3 of 10 items")

	// A third job of the same person is refused, with the page saying why.
	rec = admin.post("/evidence/export", nil)
	wantStatus(t, rec, http.StatusTooManyRequests)
	wantBody(t, rec, "You already have 2 jobs under way")
	// Another person's job waits for a free slot.
	id3, err := e.srv.UI.StartJob(po, "", "test", "Waiting work", "items", block)
	if err != nil {
		t.Fatal(err)
	}
	rec = owner.get("/jobs/" + id3)
	wantBody(t, rec, "Queued", "Waiting for a free slot", `http-equiv="refresh"`)
	close(release)
	for _, id := range []string{id1, id2, id3} {
		if j := waitJob(t, e, id); j.Status != ui.JobDone {
			t.Fatalf("job %s: %+v", id, j)
		}
	}
	rec = admin.get("/jobs/" + id1)
	wantBody(t, rec, "10 of 10 items done", "Download result.txt")
	wantNoBody(t, rec, `http-equiv="refresh"`)
	rec = admin.get("/jobs/" + id1 + "/download")
	wantStatus(t, rec, http.StatusOK)
	if rec.Body.String() != "the result" || rec.Header().Get("Content-Type") != "text/plain" {
		t.Fatalf("download: %q %s", rec.Body.String(), rec.Header().Get("Content-Type"))
	}

	// A failing job says so, without internals.
	id4, err := e.srv.UI.StartJob(pa, "", "test", "Broken work", "items", func(ctx context.Context, c *ui.JobControl) error {
		if _, err := c.File("x.zip", "application/zip"); err != nil {
			return err
		}
		return os.ErrPermission
	})
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, e, id4)
	if j.Path != "" {
		t.Fatalf("a failed job keeps its file: %+v", j)
	}
	rec = admin.get("/jobs/" + id4)
	wantBody(t, rec, "Failed", "The job failed: Something went wrong on our side")
	wantNoBody(t, rec, "permission denied", "/download")
	wantStatus(t, admin.get("/jobs/"+id4+"/download"), http.StatusNotFound)

	// A person keeps at most jobsKept jobs: starting more removes the
	// oldest finished one.
	quick := func(ctx context.Context, c *ui.JobControl) error { return nil }
	for range ui.JobsKept {
		id, err := e.srv.UI.StartJob(pa, "", "test", "Quick work", "items", quick)
		if err != nil {
			t.Fatal(err)
		}
		waitJob(t, e, id)
	}
	kept := e.srv.UI.JobCount(pa.UserID)
	_, oldest := e.srv.UI.JobState(id1)
	if kept != ui.JobsKept || oldest {
		t.Fatalf("kept %d jobs (oldest kept: %v), want %d", kept, oldest, ui.JobsKept)
	}
	wantStatus(t, admin.get("/jobs/"+id1), http.StatusNotFound)
}

// principalOf returns the principal of a person signed in with a session.
func principalOf(t *testing.T, e *testEnv, org, email string) *app.Principal {
	t.Helper()
	l, err := e.app.ListPeople(e.ctx(org), app.PersonFilter{Page: app.Page{Page: 1, PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Items {
		if p.Email == email {
			return &app.Principal{OrgID: org, Plan: app.PlanEnterprise, Role: p.Role, AuthType: app.AuthSession, UserID: p.ID, Email: email}
		}
	}
	t.Fatalf("no person %s", email)
	return nil
}

// TestUIAutoAnswerJob: a questionnaire larger than what is answered within
// the request is answered in a job that counts the questions and links
// back to the questionnaire; small ones stay answered at once.
func TestUIAutoAnswerJob(t *testing.T) {
	t.Parallel()
	e := newJobServer(t, func(o *Options) { o.AutoAnswerInline = 2 })
	f := e.uiFixture("Acme")
	if _, err := e.app.CreateKBEntry(e.ctx(f.org), app.KBEntryInput{Question: app.Ptr("Do you encrypt backups?"),
		Answer: app.Ptr("Yes, every backup is encrypted with AES-256.")}); err != nil {
		t.Fatal(err)
	}
	owner := e.browser()
	owner.signIn(f.owner)
	loc := wantRedirect(t, owner.upload("/questionnaires", "review.csv",
		"Question\nDo you encrypt backups?\nWhat is your favourite colour?\nDo you have an office?\n", map[string]string{"name": "Big review"}), "/questionnaires/qst_")
	qid := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/questionnaires/")
	jloc := wantRedirect(t, owner.post("/questionnaires/"+qid+"/auto-answer", nil), "/jobs/job_")
	j := waitJob(t, e, strings.TrimPrefix(jloc, "/jobs/"))
	if j.Status != ui.JobDone || j.Total != 3 || j.Done != 3 {
		t.Fatalf("auto-answer job: %+v", j)
	}
	rec := owner.get(jloc)
	wantBody(t, rec, "Auto-answer: Big review", "3 of 3 questions done", "Done: 1 answered, 2 left for a person", `href="/questionnaires/`+qid+`"`)
	wantNoBody(t, rec, "/download")
	q, err := e.app.GetQuestionnaire(e.ctx(f.org), qid)
	if err != nil || q.AnsweredQuestions != 1 {
		t.Fatalf("questionnaire after the job: %+v %v", q, err)
	}
	// The auditor may not start it, in a job or not.
	aud := e.browser()
	aud.signIn(f.auditor)
	wantStatus(t, aud.post("/questionnaires/"+qid+"/auto-answer", nil), http.StatusForbidden)
}
