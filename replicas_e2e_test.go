package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/storage/storagetest"
)

// The multi-replica test: three `serve` processes on one PostgreSQL
// database, a write load spread over them, one killed with SIGKILL in the
// middle of it.

// replica is one running `compliance serve` of the three.
type replica struct {
	name   string
	dir    string
	url    string
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // its exit, once exited is closed
	addr   chan string
}

// startReplica starts `serve` on dir without waiting for it (the three
// start at the same moment, on an empty database).
func startReplica(t *testing.T, name, dir string, env []string) *replica {
	t.Helper()
	cmd := exec.Command(binary(t), "--data-dir", dir, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, dir: dir, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{}), addr: make(chan string, 1)}
	go func() { r.err = cmd.Wait(); pw.Close(); close(r.exited) }()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(r.stderr, line)
			if m := listeningRe.FindStringSubmatch(line); m != nil {
				select {
				case r.addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() {
			t.Logf("%s's log (last 4 KiB):\n%s", r.name, tail(r.stderr.String(), 4096))
		}
	})
	return r
}

// wait waits until the replica listens.
func (r *replica) wait(t *testing.T) {
	t.Helper()
	select {
	case a := <-r.addr:
		r.url = "http://" + a
	case <-r.exited:
		t.Fatalf("%s exited before listening: %v\n%s", r.name, r.err, r.stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not start:\n%s", r.name, r.stderr.String())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var replicaClient = &http.Client{Timeout: 30 * time.Second}

// apiCall sends one request; it never fails the test, so load goroutines
// can use it.
func apiCall(base, method, path, key, idemKey string, body any) (int, http.Header, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := replicaClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, resp.Header, m, nil
}

// hookReceiver is the webhook endpoint: it checks every request's
// signature and records the events it got.
type hookReceiver struct {
	mu      sync.Mutex
	secret  string
	got     map[string]int    // event id -> valid deliveries
	created map[string]string // vendor id -> id of its vendor.created event
	bad     int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var env struct {
		ID    string `json:"id"`
		Event string `json:"event"`
		Data  struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	h.mu.Lock()
	defer h.mu.Unlock()
	m := hmac.New(sha256.New, []byte(h.secret))
	m.Write(body)
	if h.secret == "" || !hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(r.Header.Get("X-Service-Signature"))) || env.ID == "" {
		h.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h.got[env.ID]++
	if env.Event == "vendor.created" {
		h.created[env.Data.ID] = env.ID
	}
}

// loadCreate is one create of the write load, retried under its
// Idempotency-Key until a replica answers it.
type loadCreate struct {
	name, key string
	status    int
	id        string
	by        int  // the replica that answered
	inDoubt   bool // an attempt got no answer (the killed replica)
	replayed  bool // the answer was a replay of an earlier attempt's
}

var jobCountRe = regexp.MustCompile(`(?m)^compliance_scheduler_job_duration_seconds_count\{job="([^"]+)",status="([^"]+)"\} (\d+)$`)

// jobCounts reads a replica's scheduler runs per job from /metrics.
func jobCounts(base, token string) (map[string]int, error) {
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := replicaClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %d %s", resp.StatusCode, b)
	}
	out := map[string]int{}
	for _, m := range jobCountRe.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[3])
		out[m[1]] += n
	}
	return out, nil
}

// jobRun is a row of job_runs.
type jobRun struct {
	job, slot, status string
	tries             int
}

// jobRunsSnapshot reads every recorded run; key is a canonical form to
// compare two snapshots.
func jobRunsSnapshot(db *sql.DB) (runs []jobRun, key string, err error) {
	rows, err := db.Query(`SELECT job, slot, status, tries FROM job_runs ORDER BY job, slot`)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var r jobRun
		if err := rows.Scan(&r.job, &r.slot, &r.status, &r.tries); err != nil {
			return nil, "", err
		}
		runs = append(runs, r)
		fmt.Fprintf(&b, "%s|%s|%s|%d\n", r.job, r.slot, r.status, r.tries)
	}
	return runs, b.String(), rows.Err()
}

// quietMinute reports whether now is well inside a minute: no job slot
// (every interval is whole minutes, aligned to midnight) starts within
// five seconds of it.
func quietMinute(now time.Time) bool {
	s := now.UTC().Second()
	return s >= 5 && s <= 54
}

// untilQuiet polls until no scheduled run is in progress, the time is
// well inside a minute, and the recorded runs stay the same across fn
// (the metrics scrape): the runs fn sees are exactly the recorded ones.
// ready may demand more of the runs (slots that must have run by now).
func untilQuiet(t *testing.T, db *sql.DB, what string, ready func([]jobRun, time.Time) string, fn func() error) []jobRun {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		now := time.Now()
		if !quietMinute(now) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		runs, before, err := jobRunsSnapshot(db)
		if err != nil {
			t.Fatal(err)
		}
		busy := false
		for _, r := range runs {
			busy = busy || r.status == "running"
		}
		if busy {
			last = "a run is in progress"
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if ready != nil {
			if last = ready(runs, now); last != "" {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		_, after, err := jobRunsSnapshot(db)
		if err != nil {
			t.Fatal(err)
		}
		if after == before && quietMinute(time.Now()) {
			return runs
		}
		last = "runs changed meanwhile"
	}
	t.Fatalf("timed out waiting for a quiet moment to %s (%s)", what, last)
	return nil
}

// TestThreeReplicasSurviveKill runs three `serve` processes on one empty
// PostgreSQL database (started at the same moment: they migrate it
// together), spreads a write load with Idempotency-Keys over them and
// kills one with SIGKILL in the middle of it; a client whose request gets
// no answer retries the same key on the next replica. Then:
//   - no acknowledged write is lost and none is applied twice: every
//     acknowledged vendor is readable on both survivors, the table holds
//     one row per logical create, and a retry of any create on a survivor
//     replays the first answer;
//   - every scheduled job slot ran exactly once across the replicas: each
//     slot has one run, never retried, and the replicas' own run counters
//     (their /metrics, the killed one's read just before the kill) add up
//     to the recorded runs; every minute slot of the window ran;
//   - every vendor.created event reached the webhook receiver, signed,
//     despite the kill (at least once);
//   - a key on the free plan (30 per minute, burst 60) spread over the
//     three replicas gets its burst once in total, then 429, with exact
//     X-RateLimit-* headers from the one shared bucket.
func TestThreeReplicasSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	dbURL := storagetest.EmptyPostgresURL(t) // skipped loudly without a cluster; fails in CI
	binary(t)
	t0 := time.Now()

	rcv := &hookReceiver{got: map[string]int{}, created: map[string]string{}}
	hookSrv := httptest.NewServer(rcv)
	t.Cleanup(hookSrv.Close)

	// Three data directories with the same secrets (as deployed: one
	// replica's secrets/ copied to the others).
	const metricsToken = "replica-metrics-token-0123456789"
	secrets := map[string]int{"session_hash_key": 64, "session_block_key": 32, "oauth_hmac_key": 32, "webhook-secrets.key": 32}
	keys := map[string][]byte{}
	for name, n := range secrets {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		keys[name] = b
	}
	env := append(cleanEnv(),
		"COMPLIANCE_DATABASE_URL="+dbURL,
		"COMPLIANCE_METRICS_TOKEN="+metricsToken,
		"COMPLIANCE_WEBHOOKS_RETRY_BASE=200ms",
		"COMPLIANCE_WEBHOOKS_RETRY_CAP=1s",
		"COMPLIANCE_WEBHOOKS_TIMEOUT=2s",
		"COMPLIANCE_WEBHOOKS_POLL_INTERVAL=20ms",
	)
	var reps []*replica
	for i := 0; i < 3; i++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("replica%d", i+1))
		if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
			t.Fatal(err)
		}
		for name, b := range keys {
			if err := os.WriteFile(filepath.Join(dir, "secrets", name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		reps = append(reps, startReplica(t, fmt.Sprintf("replica %d", i+1), dir, env))
	}
	for _, r := range reps {
		r.wait(t)
	}
	ready := time.Now()
	t.Logf("three replicas migrated the empty database together and listen after %v", ready.Sub(t0).Round(time.Millisecond))

	// The CLI on the same database (through replica 1's data dir).
	postgresDirs.Store(reps[0].dir, dbURL)
	t.Cleanup(func() { postgresDirs.Delete(reps[0].dir) })
	orgID, _, key := setup(t, reps[0].dir, "enterprise")
	small := jsonObject(t, cli(t, reps[0].dir, "org", "create", "--name", "Small", "--plan", "free", "--json"))["id"].(string)
	smallKey := jsonObject(t, cli(t, reps[0].dir, "apikey", "create", "--org", small, "--role", "owner", "--name", "rate", "--json"))["key"].(string)

	raw, err := sql.Open("compliance-postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })

	code, _, hook, err := apiCall(reps[1].url, "POST", "/v1/webhooks", key, "", map[string]any{"url": hookSrv.URL + "/in", "events": []string{"vendor.*"}})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create webhook: %d %v %v", code, hook, err)
	}
	rcv.mu.Lock()
	rcv.secret = hook["secret"].(string)
	rcv.mu.Unlock()

	// The shared rate limit, beside the write load.
	var rateWG sync.WaitGroup
	rateWG.Add(1)
	go func() {
		defer rateWG.Done()
		checkSharedRateLimit(t, reps, smallKey)
	}()

	// The write load: workers round-robin over the replicas; each create
	// is retried under its key on the next replica until one answers.
	const (
		workers   = 6
		minCreate = 25  // per worker
		afterKill = 8   // creates per worker begun after the kill
		maxCreate = 400 // per worker: the kill must come before
	)
	// Start the load well inside a minute, so that the kill, a few
	// seconds later, finds no scheduled run in progress (slots begin on
	// whole minutes).
	for sec := time.Now().UTC().Second(); sec < 5 || sec > 44; sec = time.Now().UTC().Second() {
		time.Sleep(200 * time.Millisecond)
	}
	victim := 1 // replica 2
	var (
		killed    atomic.Bool
		acked     atomic.Int64
		serverErr atomic.Int64
		refused   atomic.Int64 // attempts the dead replica refused
		cutOff    atomic.Int64 // attempts cut off without an answer
		mu        sync.Mutex
		creates   []*loadCreate
		wg        sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := 0
			for i := 0; ; i++ {
				if i >= minCreate && after >= afterKill {
					return
				}
				if i >= maxCreate {
					t.Errorf("worker %d: %d creates and the kill has not happened", w, i)
					return
				}
				begunAfterKill := killed.Load()
				c := &loadCreate{name: fmt.Sprintf("Vendor %d-%03d", w, i), key: fmt.Sprintf("replica-load-%d-%d", w, i)}
				for attempt := 0; c.status == 0; attempt++ {
					if attempt == 30 {
						t.Errorf("%s: no replica answered in %d attempts", c.name, attempt)
						return
					}
					n := (w + i + attempt) % len(reps)
					code, hdr, m, err := apiCall(reps[n].url, "POST", "/v1/vendors", key, c.key, map[string]any{"name": c.name})
					switch {
					case err != nil:
						// No answer: the request may or may not have
						// been carried out. Retry the same key elsewhere.
						c.inDoubt = true
						if errors.Is(err, syscall.ECONNREFUSED) {
							refused.Add(1)
						} else {
							cutOff.Add(1)
						}
						if n != victim || !killed.Load() {
							time.Sleep(50 * time.Millisecond) // only the victim may stop answering; tolerate a hiccup
						}
					case code >= 500:
						serverErr.Add(1)
						time.Sleep(50 * time.Millisecond)
					case code >= 300:
						t.Errorf("%s on %s: %d %v", c.name, reps[n].name, code, m)
						return
					default:
						id, _ := m["id"].(string)
						if id == "" || m["name"] != c.name {
							t.Errorf("%s on %s: answered %v", c.name, reps[n].name, m)
							return
						}
						c.status, c.id, c.by, c.replayed = code, id, n, hdr.Get("Idempotent-Replayed") == "true"
					}
				}
				acked.Add(1)
				mu.Lock()
				creates = append(creates, c)
				mu.Unlock()
				if begunAfterKill {
					after++
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	// The kill: once a part of the load is acknowledged, at a moment no
	// scheduled run is in progress on any replica (so the victim's run
	// counters, read just before, are final).
	waitFor(t, "a part of the load acknowledged", func() bool { return acked.Load() >= 60 || t.Failed() })
	// Two requests to the victim are left in doubt on purpose: one it
	// carried out whose answer the client never reads, one whose body it
	// never got in full. Both are retried on a survivor after the kill.
	doubts := []*inDoubtCreate{
		sendUnread(t, reps[victim].url, key, "Vendor unread answer", "replica-doubt-committed", false),
		sendUnread(t, reps[victim].url, key, "Vendor cut body", "replica-doubt-cut", true),
	}
	waitFor(t, "the unread create carried out", func() bool {
		var n int
		_ = raw.QueryRow(`SELECT count(*) FROM vendors WHERE organization_id = ? AND name = ?`, orgID, doubts[0].name).Scan(&n)
		return n == 1
	})
	var victimJobs map[string]int
	untilQuiet(t, raw, "kill a replica", nil, func() error {
		var err error
		victimJobs, err = jobCounts(reps[victim].url, metricsToken)
		return err
	})
	ackedAtKill := acked.Load()
	if err := reps[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-reps[victim].exited
	killed.Store(true)
	t.Logf("killed %s with SIGKILL at %v, %d creates acknowledged", reps[victim].name, time.Since(t0).Round(time.Millisecond), ackedAtKill)
	survivors := []*replica{reps[0], reps[2]}

	wg.Wait()
	rateWG.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// The requests left in doubt, retried on a survivor under their keys:
	// the one carried out answers with its original (a replay), the other
	// is carried out now.
	survivorIndex := []int{0, 2}
	for i, d := range doubts {
		d.conn.Close()
		s := reps[survivorIndex[i%2]]
		code, hdr, m, err := apiCall(s.url, "POST", "/v1/vendors", key, d.key, map[string]any{"name": d.name})
		if err != nil || code != http.StatusCreated || m["name"] != d.name {
			t.Fatalf("retry of %q on %s: %d %v %v", d.name, s.name, code, m, err)
		}
		replayed := hdr.Get("Idempotent-Replayed") == "true"
		if replayed == d.cut {
			t.Errorf("retry of %q on %s: replayed=%v, want %v", d.name, s.name, replayed, !d.cut)
		}
		creates = append(creates, &loadCreate{name: d.name, key: d.key, status: code, id: m["id"].(string), by: survivorIndex[i%2], inDoubt: true, replayed: replayed})
	}

	// No acknowledged write lost, none applied twice.
	inDoubt, replayedDoubt, byVictim := 0, 0, 0
	want := map[string]*loadCreate{}
	for _, c := range creates {
		want[c.id] = c
		if c.inDoubt {
			inDoubt++
			if c.replayed {
				replayedDoubt++
			}
		}
		if c.by == victim {
			byVictim++
		}
	}
	if len(want) != len(creates) {
		t.Fatalf("%d creates answered with %d distinct ids", len(creates), len(want))
	}
	rows, err := raw.Query(`SELECT id, name FROM vendors WHERE organization_id = ?`, orgID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	names := map[string]int{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		stored[id] = name
		names[name]++
	}
	rows.Close()
	if len(stored) != len(creates) {
		t.Errorf("%d vendor rows for %d creates", len(stored), len(creates))
	}
	for name, n := range names {
		if n != 1 {
			t.Errorf("%s stored %d times", name, n)
		}
	}
	for id, c := range want {
		if stored[id] != c.name {
			t.Errorf("acknowledged %s (%s, answered by %s) is not stored", id, c.name, reps[c.by].name)
		}
	}
	if byVictim == 0 || inDoubt == 0 {
		t.Errorf("the kill did not land mid-load: %d creates answered by the victim, %d in doubt", byVictim, inDoubt)
	}
	t.Logf("%d creates: %d answered by the victim before the kill; %d retried after attempts without an answer (%d refused, %d cut off), "+
		"of which %d had been carried out and were replayed; %d 5xx retried",
		len(creates), byVictim, inDoubt, refused.Load(), cutOff.Load(), replayedDoubt, serverErr.Load())
	for i, c := range creates {
		s := survivors[i%2]
		code, _, m, err := apiCall(s.url, "GET", "/v1/vendors/"+c.id, key, "", nil)
		if err != nil || code != http.StatusOK || m["name"] != c.name {
			t.Errorf("GET %s (%s) on %s: %d %v %v", c.id, c.name, s.name, code, m, err)
		}
		// A retry of the same create on a survivor returns the original.
		s = survivors[(i+1)%2]
		code, hdr, m, err := apiCall(s.url, "POST", "/v1/vendors", key, c.key, map[string]any{"name": c.name})
		if err != nil || code != c.status || m["id"] != c.id || hdr.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry of %s on %s: %d %v replayed=%q %v", c.name, s.name, code, m["id"], hdr.Get("Idempotent-Replayed"), err)
		}
	}
	var vendorRows int
	if err := raw.QueryRow(`SELECT count(*) FROM vendors WHERE organization_id = ?`, orgID).Scan(&vendorRows); err != nil || vendorRows != len(creates) {
		t.Errorf("after the retries: %d vendor rows for %d creates (%v)", vendorRows, len(creates), err)
	}

	// Every event delivered at least once, signed.
	var events []string
	erows, err := raw.Query(`SELECT e.id FROM events e JOIN webhooks w ON w.organization_id = e.organization_id
		WHERE w.id = ? AND e.seq > w.start_seq AND e.type LIKE 'vendor.%'`, hook["id"])
	if err != nil {
		t.Fatal(err)
	}
	for erows.Next() {
		var id string
		_ = erows.Scan(&id)
		events = append(events, id)
	}
	erows.Close()
	if len(events) != len(creates) {
		t.Errorf("%d vendor events for %d creates", len(events), len(creates))
	}
	missing := func() (string, int) {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		for id := range stored {
			if rcv.created[id] == "" {
				return "vendor.created of " + id, len(rcv.created)
			}
		}
		for _, id := range events {
			if rcv.got[id] == 0 {
				return "event " + id, len(rcv.created)
			}
		}
		return "", len(rcv.created)
	}
	deliveryDeadline := time.Now().Add(90 * time.Second)
	for {
		what, n := missing()
		if what == "" {
			break
		}
		if time.Now().After(deliveryDeadline) {
			t.Fatalf("%s never delivered (%d of %d vendors' created events arrived)", what, n, len(stored))
		}
		time.Sleep(100 * time.Millisecond)
	}
	rcv.mu.Lock()
	dup := 0
	for _, n := range rcv.got {
		if n > 1 {
			dup++
		}
	}
	if rcv.bad != 0 {
		t.Errorf("%d deliveries with a bad signature", rcv.bad)
	}
	rcv.mu.Unlock()
	t.Logf("all %d events delivered at %v (%d more than once: sent by the victim, not recorded before the kill)", len(events), time.Since(t0).Round(time.Millisecond), dup)

	// Every job slot ran exactly once across the replicas.
	intervals := map[string]time.Duration{}
	code, _, jl, err := apiCall(reps[0].url, "GET", "/v1/scheduler/jobs?perPage=100", key, "", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("scheduler jobs: %d %v", code, err)
	}
	for _, x := range jl["data"].([]any) {
		j := x.(map[string]any)
		intervals[j["name"].(string)] = time.Duration(j["intervalSeconds"].(float64)) * time.Second
	}
	// Slots that began after the replicas were up and five seconds
	// before now must have run.
	due := func(runs []jobRun, now time.Time) string {
		have := map[string]bool{}
		recorded := map[string]bool{}
		for _, r := range runs {
			have[r.job+"|"+r.slot] = true
			recorded[r.job] = true
		}
		for job := range recorded {
			every := intervals[job]
			if every <= 0 {
				return "no interval known for " + job
			}
			for s := ready.UTC().Truncate(every); !s.After(now.Add(-5 * time.Second)); s = s.Add(every) {
				if !have[job+"|"+s.Format("2006-01-02T15:04:05.000Z")] {
					return fmt.Sprintf("slot %s of %s has not run", s.Format(time.RFC3339), job)
				}
			}
		}
		return ""
	}
	counts := []map[string]int{victimJobs}
	runs := untilQuiet(t, raw, "read the survivors' run counters", due, func() error {
		counts = counts[:1]
		for _, s := range survivors {
			c, err := jobCounts(s.url, metricsToken)
			if err != nil {
				return err
			}
			counts = append(counts, c)
		}
		return nil
	})
	perJob := map[string]int{}
	for _, r := range runs {
		perJob[r.job]++
		if r.tries != 1 || (r.status != "succeeded" && r.status != "failed") {
			t.Errorf("job %s slot %s: %s after %d tries", r.job, r.slot, r.status, r.tries)
		}
		if r.status == "failed" {
			t.Logf("job %s slot %s failed (it ran once)", r.job, r.slot)
		}
	}
	if len(perJob) < 10 {
		t.Errorf("only %d jobs recorded runs: %v", len(perJob), perJob)
	}
	var jobNames []string
	for job := range perJob {
		jobNames = append(jobNames, job)
	}
	sort.Strings(jobNames)
	for _, job := range jobNames {
		ran := counts[0][job] + counts[1][job] + counts[2][job]
		if ran != perJob[job] {
			t.Errorf("job %s: %d slots recorded, the replicas ran it %d times (%d, %d, %d)", job, perJob[job], ran, counts[1][job], counts[0][job], counts[2][job])
		}
	}
	t.Logf("%d job slots of %d jobs each ran once (victim ran %d before the kill)", len(runs), len(perJob), victimRuns(counts[0], perJob))

	// The audit chain the three appended to verifies.
	res := jsonObject(t, cli(t, reps[0].dir, "audit", "verify", "--json"))
	if res["ok"] != true || res["checked"].(float64) < float64(len(creates)) {
		t.Errorf("audit verify: %v", res)
	}
	t.Logf("done in %v", time.Since(t0).Round(time.Millisecond))
}

// inDoubtCreate is a create sent on a raw connection whose answer is
// never read.
type inDoubtCreate struct {
	name, key string
	cut       bool // only half of the body was sent
	conn      net.Conn
}

// sendUnread sends a create to base on a connection of its own and does
// not read the answer; with cut, it sends only half of the body.
func sendUnread(t *testing.T, base, apiKey, name, idemKey string, cut bool) *inDoubtCreate {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := fmt.Sprintf("POST /v1/vendors HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nIdempotency-Key: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", strings.TrimPrefix(base, "http://"), apiKey, idemKey, len(body))
	if cut {
		body = body[:len(body)/2]
	}
	if _, err := conn.Write(append([]byte(req), body...)); err != nil {
		t.Fatal(err)
	}
	return &inDoubtCreate{name: name, key: idemKey, cut: cut, conn: conn}
}

func victimRuns(counts map[string]int, only map[string]int) int {
	n := 0
	for job, c := range counts {
		if _, ok := only[job]; ok {
			n += c
		}
	}
	return n
}

// checkSharedRateLimit spends a free-plan key's bucket (30 per minute,
// burst 60) round-robin over the replicas, one request at a time: the
// burst is granted once in total, not once per replica, then 429; every
// response's X-RateLimit-* headers are the shared bucket's.
func checkSharedRateLimit(t *testing.T, reps []*replica, key string) {
	const perMinute, burst = 30, 60
	perSec := float64(perMinute) / 60
	start := time.Now()
	ok := 0
	for i := 0; i < 3*burst; i++ {
		r := reps[i%len(reps)]
		code, hdr, m, err := apiCall(r.url, "GET", "/v1/vendors?limit=1", key, "", nil)
		elapsed := time.Since(start).Seconds()
		if err != nil {
			t.Errorf("rate limit: %v", err)
			return
		}
		if hdr.Get("X-RateLimit-Limit") != strconv.Itoa(perMinute) {
			t.Errorf("rate limit: X-RateLimit-Limit %q, want %d", hdr.Get("X-RateLimit-Limit"), perMinute)
			return
		}
		remaining, err1 := strconv.Atoi(hdr.Get("X-RateLimit-Remaining"))
		reset, err2 := strconv.ParseInt(hdr.Get("X-RateLimit-Reset"), 10, 64)
		if err1 != nil || err2 != nil {
			t.Errorf("rate limit: headers %v", hdr)
			return
		}
		refill := int(math.Floor(perSec*elapsed)) + 1
		if code == http.StatusOK {
			ok++
			// One shared bucket: the n-th request leaves burst-n tokens
			// plus what refilled meanwhile. Per-replica buckets would
			// leave about burst-n/3.
			if remaining < burst-ok || remaining > burst-ok+refill {
				t.Errorf("rate limit: request %d on %s left X-RateLimit-Remaining %d, want %d..%d", i+1, r.name, remaining, burst-ok, burst-ok+refill)
				return
			}
			if now := time.Now().Unix(); reset < now || reset > now+int64(float64(burst)/perSec)+1 {
				t.Errorf("rate limit: X-RateLimit-Reset %d at %d", reset, now)
				return
			}
			continue
		}
		if code != http.StatusTooManyRequests {
			t.Errorf("rate limit: request %d on %s: %d %v", i+1, r.name, code, m)
			return
		}
		// The first refusal: the plan's burst once, plus the refill of
		// the time spent, across all three replicas.
		if ok < burst || ok > burst+refill {
			t.Errorf("rate limit: %d requests granted before the first 429 after %.1fs, want %d..%d", ok, elapsed, burst, burst+refill)
		}
		retry, _ := strconv.Atoi(hdr.Get("Retry-After"))
		now := time.Now().Unix()
		full := int64(float64(burst) / perSec) // seconds from empty to full
		if remaining != 0 || retry < 1 || retry > int(math.Ceil(1/perSec)) || reset < now+full-3 || reset > now+full+1 {
			t.Errorf("rate limit: the 429's headers: Remaining %d, Retry-After %q, Reset %d at %d", remaining, hdr.Get("Retry-After"), reset, now)
		}
		t.Logf("shared rate limit: %d granted over three replicas in %.1fs, then 429 on %s (Retry-After %ds)", ok, elapsed, r.name, retry)
		// The other replicas refuse too (at most one token can have
		// refilled meanwhile).
		granted := 0
		for j := 1; j < len(reps); j++ {
			o := reps[(i+j)%len(reps)]
			code, hdr, _, err := apiCall(o.url, "GET", "/v1/vendors?limit=1", key, "", nil)
			if err != nil {
				t.Errorf("rate limit: %v", err)
				return
			}
			if code == http.StatusOK {
				granted++
			} else if code != http.StatusTooManyRequests || hdr.Get("X-RateLimit-Remaining") != "0" {
				t.Errorf("rate limit: after the 429, %s answered %d with Remaining %q", o.name, code, hdr.Get("X-RateLimit-Remaining"))
			}
		}
		if granted > 1 {
			t.Errorf("rate limit: %d more requests granted right after the 429", granted)
		}
		return
	}
	t.Errorf("rate limit: %d requests and no 429", 3*burst)
}
