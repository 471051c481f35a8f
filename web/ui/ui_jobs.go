package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/web/httpx"
)

// Long work started from the web application (evidence exports, auto-answer
// of large questionnaires) runs as a job in the server process: the person
// is sent to /jobs/{id}, which shows its progress and refreshes itself
// until it is done, then offers its file. Jobs live in memory: a restart
// ends them (their files are removed) and the person starts again. Only
// the person who started a job, in the organization they started it in,
// sees it or its file.

// Job states.
const (
	jobQueued  = "queued"
	jobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Limits of the job runner.
const (
	jobSlots      = 2                // jobs running at once; more wait queued
	jobsPerPerson = 2                // queued or running jobs one person may have
	JobsKept      = 5                // jobs of one person kept; the oldest finished one goes first
	JobTTL        = time.Hour        // a finished job and its file are kept this long
	jobTimeout    = 30 * time.Minute // a job running longer is stopped
	jobRefresh    = 2                // seconds between refreshes of a running job's page
	jobDirPrefix  = "jobs-"
)

// uiJob is one job. Its fields change under the runner's lock.
type Job struct {
	id, orgID, UserID string
	reqID             string // of the request that started it, for the log
	seq               uint64 // order of starting
	kind, title, unit string
	Status            string
	Done, Total       int
	errMsg            string
	Path              string // the file written, if any
	filename, ctype   string
	link, linkText    string // where the result is seen, if not in a file
	summary           string
	created, started  time.Time
	finished          time.Time
	timer             *time.Timer
}

// jobView is a job as a page shows it.
type jobView struct {
	seq                           uint64
	ID, Kind, Title, Unit, Status string
	Done, Total                   int
	Error                         string
	Filename, ContentType         string
	HasFile                       bool
	Link, LinkText, Summary       string
	Created, Started, Finished    time.Time
	Expires                       time.Time
}

// Active reports whether the job is queued or running.
func (j jobView) Active() bool { return j.Status == jobQueued || j.Status == jobRunning }

// jobControl is what a job's work uses to report and to write its file.
type JobControl struct {
	r *jobRunner
	j *Job
	f *os.File
}

// Progress records how much of the work is done.
func (c *JobControl) Progress(done, total int) {
	c.r.mu.Lock()
	c.j.Done, c.j.Total = done, total
	c.r.mu.Unlock()
}

// File creates the job's file in the runner's directory; the download
// serves it under name.
func (c *JobControl) File(name, contentType string) (*os.File, error) {
	dir, err := c.r.workDir()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "job-*")
	if err != nil {
		return nil, fmt.Errorf("create job file: %w", err)
	}
	c.f = f
	c.r.mu.Lock()
	c.j.Path, c.j.filename, c.j.ctype = f.Name(), name, contentType
	c.r.mu.Unlock()
	return f, nil
}

// Result says where the outcome is seen, with a short summary.
func (c *JobControl) Result(link, linkText, summary string) {
	c.r.mu.Lock()
	c.j.link, c.j.linkText, c.j.summary = link, linkText, summary
	c.r.mu.Unlock()
}

// jobFunc is the work of a job; ctx carries the principal who started it.
type jobFunc func(ctx context.Context, c *JobControl) error

// jobRunner runs jobs with bounded concurrency and keeps their state and
// files until they expire.
type jobRunner struct {
	mu       sync.Mutex
	jobs     map[string]*Job
	slots    chan struct{}
	base     string // configured parent directory, or "" for the system's
	Dir      string // this process's directory, made on first use
	now      func() time.Time
	describe func(err error, reqID string) string // client-safe message of a failure
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	closed   bool
	seq      uint64
}

func newJobRunner(base string, now func() time.Time, describe func(error, string) string) *jobRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &jobRunner{jobs: map[string]*Job{}, slots: make(chan struct{}, jobSlots), base: base, now: now, describe: describe, ctx: ctx, cancel: cancel}
}

// workDir makes this process's job directory on first use. Under a
// configured directory, the directories a previous process left behind
// (after a crash) are removed first.
func (r *jobRunner) workDir() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Dir != "" {
		return r.Dir, nil
	}
	base := r.base
	if base == "" {
		base = os.TempDir()
	} else {
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", fmt.Errorf("create job directory: %w", err)
		}
		old, _ := filepath.Glob(filepath.Join(base, jobDirPrefix+"*"))
		for _, o := range old {
			_ = os.RemoveAll(o)
		}
	}
	dir, err := os.MkdirTemp(base, jobDirPrefix)
	if err != nil {
		return "", fmt.Errorf("create job directory: %w", err)
	}
	r.Dir = dir
	return dir, nil
}

// start queues a job for the person of p. A person has at most
// jobsPerPerson jobs queued or running.
func (r *jobRunner) Start(p *app.Principal, reqID, kind, title, unit string, fn jobFunc) (string, error) {
	if p.UserID == "" {
		return "", app.Errorf(app.ErrForbidden, "jobs are started by people signed in")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", &httpx.HTTPError{Status: http.StatusServiceUnavailable, Code: "unavailable", Msg: "The server is shutting down; start this again in a moment."}
	}
	r.sweepLocked()
	active := 0
	var mine []*Job
	for _, j := range r.jobs {
		if j.orgID == p.OrgID && j.UserID == p.UserID {
			mine = append(mine, j)
			if j.Status == jobQueued || j.Status == jobRunning {
				active++
			}
		}
	}
	if active >= jobsPerPerson {
		return "", &httpx.HTTPError{Status: http.StatusTooManyRequests, Code: "rate_limited",
			Msg: fmt.Sprintf("You already have %d jobs under way. Wait for one to finish, then start this again.", active)}
	}
	// Finished jobs beyond what is kept go, oldest first, with their files.
	sort.Slice(mine, func(a, b int) bool { return mine[a].seq < mine[b].seq })
	n := len(mine)
	for _, old := range mine {
		if n < JobsKept {
			break
		}
		if old.Status == JobDone || old.Status == JobFailed {
			r.removeLocked(old)
			n--
		}
	}
	j := &Job{id: app.NewID("job"), orgID: p.OrgID, UserID: p.UserID, kind: kind, title: title, unit: unit,
		reqID: reqID, Status: jobQueued, created: r.now()}
	r.seq++
	j.seq = r.seq
	r.jobs[j.id] = j
	pc := *p
	r.wg.Add(1)
	go r.run(j, &pc, reqID, fn)
	return j.id, nil
}

func (r *jobRunner) run(j *Job, p *app.Principal, reqID string, fn jobFunc) {
	defer r.wg.Done()
	select {
	case r.slots <- struct{}{}:
	case <-r.ctx.Done():
		r.finish(j, nil, errors.New("the server stopped before the job started"))
		return
	}
	defer func() { <-r.slots }()
	r.mu.Lock()
	j.Status, j.started = jobRunning, r.now()
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(app.WithRequestID(app.WithPrincipal(r.ctx, p), reqID), jobTimeout)
	defer cancel()
	c := &JobControl{r: r, j: j}
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("job panicked: %v", v)
			}
		}()
		err = fn(ctx, c)
	}()
	if c.f != nil {
		if cerr := c.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write job file: %w", cerr)
		}
	}
	r.finish(j, c, err)
}

func (r *jobRunner) finish(j *Job, c *JobControl, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j.finished = r.now()
	if err != nil {
		j.Status = JobFailed
		j.errMsg = r.describe(fmt.Errorf("job %s (%s): %w", j.id, j.kind, err), j.reqID)
		if r.ctx.Err() != nil {
			j.errMsg = "The server stopped while the job ran. Start it again."
		}
		if j.Path != "" {
			_ = os.Remove(j.Path)
			j.Path = ""
		}
	} else {
		j.Status = JobDone
	}
	// The real clock removes the job an hour later even if nobody looks;
	// every look also removes what has expired on the app's clock.
	id := j.id
	j.timer = time.AfterFunc(JobTTL, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if jj, ok := r.jobs[id]; ok {
			r.removeLocked(jj)
		}
	})
}

func (r *jobRunner) removeLocked(j *Job) {
	if j.Path != "" {
		_ = os.Remove(j.Path)
	}
	if j.timer != nil {
		j.timer.Stop()
	}
	delete(r.jobs, j.id)
}

// sweepLocked removes finished jobs older than jobTTL and their files.
func (r *jobRunner) sweepLocked() {
	now := r.now()
	for _, j := range r.jobs {
		if (j.Status == JobDone || j.Status == JobFailed) && now.Sub(j.finished) >= JobTTL {
			r.removeLocked(j)
		}
	}
}

func (r *jobRunner) viewLocked(j *Job) jobView {
	v := jobView{seq: j.seq, ID: j.id, Kind: j.kind, Title: j.title, Unit: j.unit, Status: j.Status, Done: j.Done, Total: j.Total,
		Error: j.errMsg, Filename: j.filename, ContentType: j.ctype, HasFile: j.Status == JobDone && j.Path != "", Link: j.link, LinkText: j.linkText,
		Summary: j.summary, Created: j.created, Started: j.started, Finished: j.finished}
	if !j.finished.IsZero() {
		v.Expires = j.finished.Add(JobTTL)
	}
	return v
}

// find returns a job of the person of p; any other job, or one that
// expired, is not found.
func (r *jobRunner) find(p *app.Principal, id string) (*Job, error) {
	r.sweepLocked()
	j, ok := r.jobs[id]
	if !ok || j.orgID != p.OrgID || j.UserID != p.UserID || p.UserID == "" {
		return nil, app.ErrNotFound
	}
	return j, nil
}

func (r *jobRunner) get(p *app.Principal, id string) (jobView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.find(p, id)
	if err != nil {
		return jobView{}, err
	}
	return r.viewLocked(j), nil
}

// list returns the person's jobs, newest first.
func (r *jobRunner) list(p *app.Principal) []jobView {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	out := []jobView{}
	for _, j := range r.jobs {
		if j.orgID == p.OrgID && j.UserID == p.UserID && p.UserID != "" {
			out = append(out, r.viewLocked(j))
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].seq > out[b].seq })
	return out
}

// open returns the file of a finished job of the person of p.
func (r *jobRunner) open(p *app.Principal, id string) (*os.File, jobView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, err := r.find(p, id)
	if err != nil {
		return nil, jobView{}, err
	}
	if j.Status != JobDone || j.Path == "" {
		return nil, jobView{}, app.ErrNotFound
	}
	f, err := os.Open(j.Path)
	if err != nil {
		return nil, jobView{}, fmt.Errorf("open job file: %w", err)
	}
	return f, r.viewLocked(j), nil
}

// close stops the running jobs, waits for them and removes every file.
func (r *jobRunner) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.jobs {
		r.removeLocked(j)
	}
	if r.Dir != "" {
		_ = os.RemoveAll(r.Dir)
		r.Dir = ""
	}
}

// Close stops the web application's jobs and removes their files; call it
// after the HTTP server has shut down.
func (s *Server) Close() error {
	if s.jobs != nil {
		s.jobs.close()
	}
	return nil
}

// jobMessage is the message a failed job shows: the error's own when it is
// meant for people, else a pointer to the log.
func (s *Server) jobMessage(err error, reqID string) string {
	status, _, msg, _ := s.Classify(err)
	if status >= 500 {
		s.log.Error("job failed", slog.String("request_id", reqID), slog.Any("error", err))
		return "Something went wrong on our side. The error was logged with request id " + reqID + "."
	}
	return msg
}

// uiJobRoutes registers the job pages and the evidence exports run as jobs.
func (s *Server) uiJobRoutes(page func(method, path string, acc uiAccess, h uiHandler)) {
	s.jobs = newJobRunner(s.opts.WorkDir, s.app.Now, s.jobMessage)
	page("GET", "/jobs", uiSignedIn, s.uiJobs)
	page("GET", "/jobs/{id}", uiSignedIn, s.uiJob)
	page("GET", "/jobs/{id}/download", uiSignedIn, s.uiJobDownload)
	page("POST", "/evidence/export", uiManage, s.uiStartExport(false))
	page("POST", "/evidence/export/auditor", uiAudit, s.uiStartExport(true))
}

// uiStartExport starts an evidence export as a job; the GET routes of the
// same paths keep streaming it at once.
func (s *Server) uiStartExport(auditor bool) uiHandler {
	return func(w http.ResponseWriter, r *http.Request, v *view) error {
		opts := app.ExportOptions{FrameworkID: strings.TrimSpace(r.PostFormValue("frameworkId")), Auditor: auditor}
		if err := s.app.CheckExport(r.Context(), opts); err != nil {
			return err
		}
		title, name := "Evidence export", "evidence-export"
		if auditor {
			title, name = "Evidence export for auditors", "evidence-export-auditor"
		}
		name += "-" + s.app.Now().Format("20060102T150405Z") + ".zip"
		jid, err := s.jobs.Start(v.P, httpx.RequestID(r), "export", title, "controls", func(ctx context.Context, c *JobControl) error {
			f, err := c.File(name, "application/zip")
			if err != nil {
				return err
			}
			opts.Progress = c.Progress
			return s.app.WriteEvidenceExport(ctx, f, opts)
		})
		if err != nil {
			return err
		}
		return redirect(w, r, "/jobs/"+url.PathEscape(jid))
	}
}

func (s *Server) uiJobs(w http.ResponseWriter, r *http.Request, v *view) error {
	lv, jobs, done, err := runList(w, r, v, jobList(sliceFetch(func() ([]jobView, error) { return s.jobs.list(v.P), nil })))
	if done || err != nil {
		return err
	}
	v.Title, v.Section = "Jobs", ""
	lv.EmptyText = "No jobs. Prepare an evidence export on the frameworks page."
	lv.EmptyHref, lv.EmptyAction = "/frameworks", "Go to the frameworks"
	for _, j := range jobs {
		if j.Active() {
			v.Refresh = jobRefresh
		}
	}
	v.Data = map[string]any{"Jobs": jobs, "List": lv, "TTL": int(JobTTL / time.Minute)}
	return s.page(w, r, "jobs", v)
}

func (s *Server) uiJob(w http.ResponseWriter, r *http.Request, v *view) error {
	j, err := s.jobs.get(v.P, id(r))
	if err != nil {
		return err
	}
	v.Title, v.Section = j.Title, ""
	if j.Active() {
		v.Refresh = jobRefresh
	}
	v.Data = map[string]any{"J": j, "TTL": int(JobTTL / time.Minute)}
	return s.page(w, r, "job", v)
}

func (s *Server) uiJobDownload(w http.ResponseWriter, r *http.Request, v *view) error {
	f, j, err := s.jobs.open(v.P, id(r))
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", j.ContentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": j.Filename}))
	w.Header().Set("Cache-Control", "no-store")
	http.ServeContent(w, r, j.Filename, j.Finished, f)
	return nil
}

// JobState is a copy of a job's state, if the job is kept.
func (s *Server) JobState(id string) (Job, bool) {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	j, ok := s.jobs.jobs[id]
	if !ok {
		return Job{}, false
	}
	return *j, true
}

// JobCount is how many jobs of a person are kept.
func (s *Server) JobCount(userID string) int {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	n := 0
	for _, j := range s.jobs.jobs {
		if j.UserID == userID {
			n++
		}
	}
	return n
}

// StartJob runs fn as a job of p, shown at /jobs/{id} (see jobRunner.Start).
func (s *Server) StartJob(p *app.Principal, reqID, kind, title, unit string, fn func(ctx context.Context, c *JobControl) error) (string, error) {
	return s.jobs.Start(p, reqID, kind, title, unit, fn)
}

// JobsDir is the directory of this process's job files ("" before the
// first job and after Close).
func (s *Server) JobsDir() string {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	return s.jobs.Dir
}
