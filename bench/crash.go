package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// CrashConfig bounds a crash test.
type CrashConfig struct {
	Binary      string        // the compliance binary to run and kill
	Kills       int           // SIGKILLs to deliver
	Concurrency int           // writers
	MinUp       time.Duration // a kill lands uniformly between MinUp and MaxUp after the server answers
	MaxUp       time.Duration
	DataDir     string // empty: a temporary directory, removed after
	Out         io.Writer
	Progress    io.Writer
}

// Ack is one write the server acknowledged with a 2xx.
type Ack struct {
	Kind string // vendor, ...
	ID   string
	Name string
	Key  string // Idempotency-Key
}

// doubt is a write whose answer never arrived (the server died first): it
// may or may not have committed, so it is not acknowledged, but a retry
// with the same Idempotency-Key must settle it exactly once.
type doubt struct {
	name, key string
	body      []byte
}

// CrashEnv is what a check may use: the data directory (the server is
// stopped when checks run), and a client for a running server when a check
// needs one.
type CrashEnv struct {
	DataDir string
	BaseURL string
	Key     string
	Client  *http.Client
	// Receiver is the loopback webhook receiver that lives across kills.
	Receiver *Receiver
	// DeliveryWait bounds how long the delivery check waits for the
	// receiver to have every event (retries after a kill wait out the
	// claim lease).
	DeliveryWait time.Duration
}

// CrashCheck verifies the acknowledged writes after the last restart and
// returns those it cannot find.
type CrashCheck struct {
	Name string
	// Online checks run against the restarted server; offline checks read
	// the database after a clean stop.
	Online bool
	// Setup, when set, runs once against the first server, before any
	// write (e.g. a webhook subscription).
	Setup  func(ctx context.Context, env *CrashEnv) error
	Verify func(ctx context.Context, env *CrashEnv, acked []Ack) (lost []Ack, err error)
}

// CrashChecks are run in order; every one must find every acknowledged write.
var CrashChecks = []CrashCheck{
	{Name: "resource readable through the API", Online: true, Verify: verifyReadable},
	{Name: "event delivered to the webhook receiver, signature valid", Online: true, Setup: subscribeReceiver, Verify: verifyDelivered},
	{Name: "event in the outbox (events table)", Verify: verifyOutbox},
}

// Receiver is a loopback webhook endpoint: it checks every delivery's
// X-Service-Signature with the subscription's secret and remembers the
// resource id of every signed vendor.created event it got.
type Receiver struct {
	URL string
	srv *http.Server

	mu       sync.Mutex
	secret   string
	created  map[string]bool // vendor id -> got a validly signed vendor.created
	received int
	badSig   int
}

// NewReceiver listens on a free loopback port.
func NewReceiver() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{URL: "http://" + ln.Addr().String() + "/hook", created: map[string]bool{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }

func (r *Receiver) setSecret(s string) {
	r.mu.Lock()
	r.secret = s
	r.mu.Unlock()
}

// ServeHTTP takes one delivery: 401 when the signature is wrong, else 204.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received++
	if r.secret == "" || !app.VerifyWebhookSignature(r.secret, body, req.Header.Get("X-Service-Signature")) {
		r.badSig++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var env struct {
		Event string
		Data  struct{ ID string }
	}
	if json.Unmarshal(body, &env) == nil && env.Event == "vendor.created" && env.Data.ID != "" {
		r.created[env.Data.ID] = true
	}
	w.WriteHeader(http.StatusNoContent)
}

// missing returns the acknowledged writes the receiver has no signed
// created event for.
func (r *Receiver) missing(acked []Ack) []Ack {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Ack
	for _, a := range acked {
		if !r.created[a.ID] {
			out = append(out, a)
		}
	}
	return out
}

// Stats returns deliveries received and those with a wrong signature.
func (r *Receiver) Stats() (received, badSignature int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received, r.badSig
}

// subscribeReceiver subscribes the receiver to vendor.created through the
// webhook API and keeps the secret the API returned.
func subscribeReceiver(ctx context.Context, env *CrashEnv) error {
	if env.Receiver == nil {
		return errors.New("no webhook receiver")
	}
	body, _ := json.Marshal(map[string]any{"url": env.Receiver.URL, "events": []string{"vendor.created"}, "description": "crash test receiver"})
	status, resp, err := post(env.Client, env.BaseURL+"/v1/webhooks", env.Key, "crash-webhook", body)
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("create webhook: status %d: %s", status, resp)
	}
	var w struct{ Secret string }
	if err := json.Unmarshal(resp, &w); err != nil || w.Secret == "" {
		return fmt.Errorf("create webhook: no secret in %s", resp)
	}
	env.Receiver.setSecret(w.Secret)
	return nil
}

// verifyDelivered waits (up to env.DeliveryWait) for the real delivery
// worker of the restarted server to have brought every acknowledged
// write's event to the receiver, and returns those still missing.
func verifyDelivered(ctx context.Context, env *CrashEnv, acked []Ack) ([]Ack, error) {
	deadline := time.Now().Add(env.DeliveryWait)
	for {
		lost := env.Receiver.missing(acked)
		if len(lost) == 0 || time.Now().After(deadline) {
			return lost, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *CrashConfig) check() error {
	switch {
	case c.Kills < 1 || c.Kills > 10000:
		return errors.New("kills must be 1 to 10000")
	case c.Concurrency < 1 || c.Concurrency > maxConcurrency:
		return fmt.Errorf("concurrency must be 1 to %d", maxConcurrency)
	case c.MinUp < 0 || c.MaxUp <= c.MinUp || c.MaxUp > time.Minute:
		return errors.New("need 0 <= min-up < max-up <= 1m")
	}
	if c.Binary == "" {
		return errors.New("binary is required: the compliance binary to run and kill")
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// serverProc is one run of `compliance serve`.
type serverProc struct {
	cmd  *exec.Cmd
	done chan error
}

func (c *CrashConfig) start(ctx context.Context, dir, addr string, logf *os.File) (*serverProc, error) {
	cmd := exec.Command(c.Binary, "serve", "--addr", addr, "--data-dir", dir)
	// The enterprise rate limit is raised so the writers measure
	// durability, not the plan's ceiling.
	// Webhooks may reach the loopback receiver; short timeouts and retries
	// keep the wait after the last restart (the claim lease, 3 x timeout +
	// 5 s) short.
	cmd.Env = append(os.Environ(), "COMPLIANCE_LOG_LEVEL=warn",
		"COMPLIANCE_ENTERPRISE_RATE_PER_MINUTE=100000000", "COMPLIANCE_ENTERPRISE_BURST=100000000",
		"COMPLIANCE_WEBHOOKS_ALLOW_NETWORKS=127.0.0.1/32", "COMPLIANCE_WEBHOOKS_TIMEOUT=2s",
		"COMPLIANCE_WEBHOOKS_RETRY_BASE=200ms", "COMPLIANCE_WEBHOOKS_RETRY_CAP=2s")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.Binary, err)
	}
	p := &serverProc{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			return nil, fmt.Errorf("server exited before answering: %v", err)
		case <-ctx.Done():
			p.kill()
			return nil, ctx.Err()
		default:
		}
		resp, err := client.Get("http://" + addr + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.kill()
	return nil, errors.New("server did not answer /v1/health within 30s")
}

// kill delivers SIGKILL and waits for the process to be gone.
func (p *serverProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop asks for a clean shutdown (SIGINT, as serve handles it) and waits.
func (p *serverProc) stop() error {
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		p.kill()
		return errors.New("server did not stop within 30s")
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// cliJSON runs a CLI command with --json and decodes its output.
func (c *CrashConfig) cliJSON(dir string, out any, args ...string) error {
	cmd := exec.Command(c.Binary, append(args, "--json", "--data-dir", dir)...)
	cmd.Env = append(os.Environ(), "COMPLIANCE_LOG_LEVEL=warn")
	raw, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.Binary, strings.Join(args, " "), err)
	}
	return json.Unmarshal(raw, out)
}

// Crash runs write load against the binary, kills it with SIGKILL at random
// moments, restarts it, and checks that every acknowledged write survived.
func Crash(ctx context.Context, cfg CrashConfig) error {
	if err := cfg.check(); err != nil {
		return err
	}
	dir := cfg.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "compliance-crash-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	var org struct{ ID string }
	if err := cfg.cliJSON(dir, &org, "org", "create", "--name", "Crash Org", "--plan", "enterprise"); err != nil {
		return err
	}
	var key struct{ Key string }
	if err := cfg.cliJSON(dir, &key, "apikey", "create", "--org", org.ID, "--role", "owner", "--name", "crash"); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	base := "http://" + addr
	client := newClient(cfg.Concurrency)
	client.Timeout = 10 * time.Second
	rcv, err := NewReceiver()
	if err != nil {
		return err
	}
	defer rcv.Close()
	env := &CrashEnv{DataDir: dir, BaseURL: base, Key: key.Key, Client: client, Receiver: rcv, DeliveryWait: 2 * time.Minute}

	var (
		mu      sync.Mutex
		acked   []Ack
		doubts  []doubt
		refused atomic.Int64
		other   []string
	)
	var seq atomic.Uint64
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	survived := 0
	start := time.Now()
	for k := 0; k < cfg.Kills; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := cfg.start(ctx, dir, addr, logf)
		if err != nil {
			return fmt.Errorf("restart after %d kills: %w", k, err)
		}
		if k > 0 {
			survived++
		} else {
			for _, c := range CrashChecks {
				if c.Setup == nil {
					continue
				}
				if err := c.Setup(ctx, env); err != nil {
					p.kill()
					return fmt.Errorf("set up %s: %w", c.Name, err)
				}
			}
		}
		wctx, stopWriters := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for w := 0; w < cfg.Concurrency; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for wctx.Err() == nil {
					n := seq.Add(1)
					name := fmt.Sprintf("crash-%08d", n)
					ikey := fmt.Sprintf("crash-key-%08d", n)
					body, _ := json.Marshal(map[string]any{"name": name, "category": "cloud", "criticality": "important", "country": "DE"})
					status, resp, err := post(client, base+"/v1/vendors", key.Key, ikey, body)
					switch {
					case err != nil && isRefused(err):
						refused.Add(1)
						time.Sleep(5 * time.Millisecond)
					case err != nil:
						mu.Lock()
						doubts = append(doubts, doubt{name: name, key: ikey, body: body})
						mu.Unlock()
					case status == http.StatusCreated:
						var v struct{ ID string }
						if json.Unmarshal(resp, &v) != nil || v.ID == "" {
							mu.Lock()
							other = append(other, "201 without an id: "+string(resp))
							mu.Unlock()
							continue
						}
						mu.Lock()
						acked = append(acked, Ack{Kind: "vendor", ID: v.ID, Name: name, Key: ikey})
						mu.Unlock()
					default:
						mu.Lock()
						// A 5xx is not an acknowledgement; it is still an answer
						// the client can retry with the same key.
						doubts = append(doubts, doubt{name: name, key: ikey, body: body})
						if len(other) < 5 {
							other = append(other, fmt.Sprintf("%d: %s", status, resp))
						}
						mu.Unlock()
					}
				}
			}()
		}
		up := cfg.MinUp + time.Duration(rng.Int64N(int64(cfg.MaxUp-cfg.MinUp)))
		select {
		case <-time.After(up):
		case <-ctx.Done():
		}
		p.kill()
		stopWriters()
		wg.Wait()
		if (k+1)%10 == 0 || k+1 == cfg.Kills {
			mu.Lock()
			progress("%d kills, %d writes acknowledged, %d in doubt", k+1, len(acked), len(doubts))
			mu.Unlock()
		}
	}

	// Restart once more for the checks.
	p, err := cfg.start(ctx, dir, addr, logf)
	if err != nil {
		return fmt.Errorf("final restart: %w", err)
	}
	survived++
	type result struct {
		name string
		lost []Ack
	}
	var results []result
	for _, c := range CrashChecks {
		if !c.Online {
			continue
		}
		lost, err := c.Verify(ctx, env, acked)
		if err != nil {
			p.kill()
			return fmt.Errorf("check %s: %w", c.Name, err)
		}
		results = append(results, result{c.Name, lost})
	}
	// In-doubt writes: a retry with the same key answers 201 and leaves
	// exactly one vendor, whether or not the first attempt committed.
	dupes, unsettled := 0, 0
	for _, d := range doubts {
		status, _, err := post(client, base+"/v1/vendors", key.Key, d.key, d.body)
		if err != nil || status != http.StatusCreated {
			unsettled++
			continue
		}
		n, err := countByName(client, base, key.Key, d.name)
		if err != nil {
			p.kill()
			return err
		}
		if n != 1 {
			dupes++
		}
	}
	if err := p.stop(); err != nil {
		return err
	}
	for _, c := range CrashChecks {
		if c.Online {
			continue
		}
		lost, err := c.Verify(ctx, env, acked)
		if err != nil {
			return fmt.Errorf("check %s: %w", c.Name, err)
		}
		results = append(results, result{c.Name, lost})
	}

	w := cfg.Out
	fmt.Fprintf(w, "crash test: %d SIGKILLs in %s, %d writers, kill %s-%s after the server answered\n",
		cfg.Kills, time.Since(start).Round(time.Second), cfg.Concurrency, cfg.MinUp, cfg.MaxUp)
	fmt.Fprintf(w, "kills survived (restarted and answered): %d of %d\n", survived, cfg.Kills)
	fmt.Fprintf(w, "writes acknowledged (2xx): %d\n", len(acked))
	failed := survived != cfg.Kills
	for _, r := range results {
		fmt.Fprintf(w, "lost, %s: %d\n", r.name, len(r.lost))
		for i, a := range r.lost {
			if i == 5 {
				break
			}
			fmt.Fprintf(w, "  lost %s %s (%s)\n", a.Kind, a.ID, a.Name)
		}
		failed = failed || len(r.lost) > 0
	}
	received, badSig := rcv.Stats()
	fmt.Fprintf(w, "webhook deliveries received: %d (%d with a wrong signature)\n", received, badSig)
	failed = failed || badSig > 0
	fmt.Fprintf(w, "writes in doubt (no answer before the kill): %d; retried with the same Idempotency-Key: %d settled, %d unsettled, %d duplicated\n",
		len(doubts), len(doubts)-unsettled, unsettled, dupes)
	for _, o := range other {
		fmt.Fprintf(w, "unexpected answer: %s\n", o)
	}
	if failed || dupes > 0 || unsettled > 0 {
		return errors.New("crash test failed")
	}
	return nil
}

func post(client *http.Client, u, key, ikey string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest("POST", u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Idempotency-Key", ikey)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, raw, nil
}

// isRefused reports an error where the request surely never reached a
// server (nothing listening yet or any more).
func isRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func countByName(client *http.Client, base, key, name string) (int, error) {
	req, err := http.NewRequest("GET", base+"/v1/vendors?q="+url.QueryEscape(name)+"&perPage=5", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-API-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Meta struct{ Total int }
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("search %s: status %d", name, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	return body.Meta.Total, nil
}

// verifyReadable reads every acknowledged vendor back through the API.
func verifyReadable(ctx context.Context, env *CrashEnv, acked []Ack) ([]Ack, error) {
	var lost []Ack
	for _, a := range acked {
		req, err := http.NewRequestWithContext(ctx, "GET", env.BaseURL+"/v1/vendors/"+a.ID, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-API-Key", env.Key)
		resp, err := env.Client.Do(req)
		if err != nil {
			return nil, err
		}
		var v struct{ ID, Name string }
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil || v.Name != a.Name {
			lost = append(lost, a)
		}
	}
	return lost, nil
}

// verifyOutbox finds the created event of every acknowledged write in the
// events table (the durable outbox delivery reads).
func verifyOutbox(ctx context.Context, env *CrashEnv, acked []Ack) ([]Ack, error) {
	path := storage.DataDir{Root: env.DataDir}.DBPath()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT type, json_extract(payload, '$.id') FROM events WHERE type LIKE '%.created'`)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var typ string
		var id sql.NullString
		if err := rows.Scan(&typ, &id); err != nil {
			return nil, err
		}
		seen[typ+" "+id.String] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var lost []Ack
	for _, a := range acked {
		if !seen[a.Kind+".created "+a.ID] {
			lost = append(lost, a)
		}
	}
	return lost, nil
}
