package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/web"
)

// Op is one operation of the workload. Build returns the request for one
// call by an organization; seq is unique per call (idempotency keys).
type Op struct {
	Name   string
	Weight int // share of the mixed workload, in percent
	Write  bool
	Want   int // the status a correct answer has
	// ContentType of the body; empty means application/json.
	ContentType string
	Build       func(rng *rand.Rand, org *Org, seq uint64) (method, path string, body []byte)
}

// Ops is the mixed workload: 80% reads with filters and pagination, 20%
// creates with Idempotency-Key. A resource that lands adds its list, get
// and create operations here (and shifts weights so they still sum to 100).
var Ops = []Op{
	{Name: "list_vendors", Weight: 25, Want: 200, Build: buildListVendors},
	{Name: "get_vendor", Weight: 12, Want: 200, Build: func(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
		return "GET", "/v1/vendors/" + pick(rng, org.IDs["vendor"]), nil
	}},
	{Name: "list_people", Weight: 5, Want: 200, Build: func(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
		q := url.Values{}
		q.Set("perPage", "25")
		if rng.IntN(3) == 0 {
			q.Set("role", "employee")
		}
		return "GET", "/v1/people?" + q.Encode(), nil
	}},
	{Name: "get_person", Weight: 3, Want: 200, Build: func(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
		return "GET", "/v1/people/" + pick(rng, org.IDs["person"]), nil
	}},
	{Name: "list_findings", Weight: 12, Want: 200, Build: buildListFindings},
	{Name: "get_finding", Weight: 6, Want: 200, Build: func(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
		return "GET", "/v1/findings/" + pick(rng, org.IDs["finding"]), nil
	}},
	{Name: "list_evidence", Weight: 11, Want: 200, Build: func(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
		q := url.Values{}
		q.Set("perPage", pick(rng, []string{"25", "50"}))
		q.Set("page", strconv.Itoa(1+rng.IntN(3)))
		return "GET", "/v1/controls/" + pick(rng, org.IDs["control"]) + "/evidence?" + q.Encode(), nil
	}},
	{Name: "get_evidence", Weight: 6, Want: 200, Build: func(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
		return "GET", "/v1/evidence/" + pick(rng, org.IDs["evidence"]), nil
	}},
	{Name: "create_vendor", Weight: 8, Write: true, Want: 201, Build: func(rng *rand.Rand, org *Org, seq uint64) (string, string, []byte) {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("Load vendor %d", seq), "category": pick(rng, app.VendorCategories),
			"criticality": pick(rng, app.Criticalities), "country": pick(rng, vendorCountries), "processesPersonalData": false,
			"inherentProbability": pick(rng, app.Probabilities), "inherentImpact": pick(rng, app.Impacts), "website": "https://load.example.com"})
		return "POST", "/v1/vendors", body
	}},
	{Name: "create_person", Weight: 3, Write: true, Want: 201, Build: func(rng *rand.Rand, org *Org, seq uint64) (string, string, []byte) {
		body, _ := json.Marshal(map[string]any{"name": pick(rng, firstNames) + " " + pick(rng, lastNames),
			"email": fmt.Sprintf("load-%d-%d@example.com", seq, rng.Uint32()), "role": "employee", "department": pick(rng, departments)})
		return "POST", "/v1/people", body
	}},
	{Name: "create_finding", Weight: 5, Write: true, Want: 201, Build: func(rng *rand.Rand, org *Org, seq uint64) (string, string, []byte) {
		body, _ := json.Marshal(map[string]any{"title": fmt.Sprintf("%s %s (load %d)", pick(rng, findingTopics), pick(rng, findingSystems), seq),
			"description": "Found during the load measurement.", "severity": pick(rng, app.FindingSeverities), "type": pick(rng, app.FindingTypes),
			"linkedControlIds": []string{pick(rng, org.IDs["control"])}})
		return "POST", "/v1/findings", body
	}},
	{Name: "create_evidence", Weight: 4, Write: true, Want: 201, ContentType: "multipart/form-data; boundary=" + evidenceBoundary,
		Build: func(rng *rand.Rand, org *Org, seq uint64) (string, string, []byte) {
			return "POST", "/v1/controls/" + pick(rng, org.IDs["control"]) + "/evidence", evidenceBody(seq)
		}},
}

// evidenceBoundary is the multipart boundary of create_evidence's body.
const evidenceBoundary = "load-evidence-boundary"

// evidenceBody is a multipart upload of a small text file and a description.
func evidenceBody(seq uint64) []byte {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.SetBoundary(evidenceBoundary)
	_ = w.WriteField("description", "Load evidence "+strconv.FormatUint(seq, 10))
	fw, _ := w.CreateFormFile("file", "load-"+strconv.FormatUint(seq, 10)+".txt")
	_, _ = fw.Write(bytes.Repeat([]byte("evidence line for the load measurement\n"), 50))
	_ = w.Close()
	return b.Bytes()
}

func buildListFindings(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
	q := url.Values{}
	q.Set("perPage", pick(rng, []string{"25", "50"}))
	q.Set("page", strconv.Itoa(1+rng.IntN(3)))
	switch rng.IntN(5) {
	case 0:
		q.Set("status", pick(rng, app.FindingStatuses))
	case 1:
		q.Set("severity", pick(rng, app.FindingSeverities))
	case 2:
		q.Set("controlId", pick(rng, org.IDs["control"]))
	case 3:
		q.Set("type", pick(rng, app.FindingTypes))
	}
	return "GET", "/v1/findings?" + q.Encode(), nil
}

// searchTerms are what people type into the search box on the seeded
// data: vendor name stems, people's names, finding words, a control topic
// word and a few words that match nothing.
var searchTerms = append(append(append([]string{}, vendorWords...), firstNames...),
	"backup", "MFA", "TLS", "password", "access review", "encryption", "Systems", "nothing-matches-this")

// buildSearch is one global search (GET /v1/search) of an organization.
func buildSearch(rng *rand.Rand, _ *Org, _ uint64) (string, string, []byte) {
	return "GET", "/v1/search?q=" + url.QueryEscape(pick(rng, searchTerms)), nil
}

func buildListVendors(rng *rand.Rand, org *Org, _ uint64) (string, string, []byte) {
	q := url.Values{}
	q.Set("perPage", pick(rng, []string{"25", "50"}))
	q.Set("page", strconv.Itoa(1+rng.IntN(3)))
	switch rng.IntN(6) {
	case 0:
		q.Set("criticality", pick(rng, app.Criticalities))
	case 1:
		q.Set("processesPersonalData", "true")
		q.Set("country", pick(rng, vendorCountries))
	case 2:
		q.Set("category", pick(rng, app.VendorCategories))
		q.Set("sort", "-riskScore")
	case 3:
		q.Set("status", pick(rng, app.VendorStatuses))
		q.Set("sort", "name")
	case 4:
		q.Set("assigneeId", pick(rng, org.IDs["person"]))
	}
	return "GET", "/v1/vendors?" + q.Encode(), nil
}

// LoadConfig bounds a load run.
type LoadConfig struct {
	Orgs        int
	Scale       float64       // multiplies every Seeder's PerOrg
	Concurrency int           // client workers
	Duration    time.Duration // per measured phase
	DataDir     string        // empty: a temporary directory, removed after
	// DatabaseURL, when set (postgres://...), runs the same phases on
	// PostgreSQL; the data dir keeps the files and secrets.
	DatabaseURL string
	// Replicas is the number of servers, each with its own database
	// pool, App, router and listener on one database, the client
	// spreading requests round-robin across them. Above 1 only with
	// DatabaseURL; 0 means 1.
	Replicas int
	Out      io.Writer // the report
	Progress io.Writer // progress lines
	// Profile, when set, is a directory that receives CPU, mutex and block
	// profiles of the mixed phase (go tool pprof).
	Profile string
}

// Limits keep the tool a measurement, never a flood.
const (
	maxConcurrency = 256
	maxDuration    = 10 * time.Minute
	maxOrgs        = 10000
	maxReplicas    = 16
)

func (c *LoadConfig) check() error {
	switch {
	case c.Orgs < 1 || c.Orgs > maxOrgs:
		return fmt.Errorf("orgs must be 1 to %d", maxOrgs)
	case c.Scale <= 0 || c.Scale > 100:
		return errors.New("scale must be above 0 and at most 100")
	case c.Concurrency < 1 || c.Concurrency > maxConcurrency:
		return fmt.Errorf("concurrency must be 1 to %d", maxConcurrency)
	case c.Duration <= 0 || c.Duration > maxDuration:
		return fmt.Errorf("duration must be above 0 and at most %s", maxDuration)
	case c.Replicas < 0 || c.Replicas > maxReplicas:
		return fmt.Errorf("replicas must be 1 to %d", maxReplicas)
	case c.Replicas > 1 && c.DatabaseURL == "":
		return errors.New("replicas above 1 need a PostgreSQL database (database-url): SQLite is one process's file")
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// opStats collects one operation's results in one phase.
type opStats struct {
	lat    []time.Duration
	errors int
	bytes  int64
	sample string
}

func (s *opStats) merge(o *opStats) {
	s.lat = append(s.lat, o.lat...)
	s.errors += o.errors
	s.bytes += o.bytes
	if s.sample == "" {
		s.sample = o.sample
	}
}

func (s *opStats) pct(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[int(q*float64(len(s.lat)-1))]
}

// phase is the result of one measured run.
type phase struct {
	ops     map[string]*opStats
	elapsed time.Duration
	cpu     time.Duration // process CPU time (client and server) during the phase
}

// cpuPerOp is the process CPU time per completed call: unlike ops/s it does
// not depend on how much of the machine other processes take.
func (p *phase) cpuPerOp() time.Duration {
	n := len(p.total().lat)
	if n == 0 {
		return 0
	}
	return p.cpu / time.Duration(n)
}

func (p *phase) total() *opStats {
	t := &opStats{}
	for _, s := range p.ops {
		t.merge(s)
	}
	sort.Slice(t.lat, func(i, j int) bool { return t.lat[i] < t.lat[j] })
	return t
}

func (p *phase) rate(s *opStats) float64 { return float64(len(s.lat)) / p.elapsed.Seconds() }

// callSeq numbers calls across phases, so idempotency keys never repeat.
var callSeq atomic.Uint64

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// target says where a phase sends its requests: our API (one base URL per
// replica, taken round-robin), or the bare server answering n bytes per
// operation.
type target struct {
	bases []string
	next  atomic.Uint64  // round-robin position over bases
	bare  map[string]int // op name -> response size; nil for our API
	ops   []Op
	total int
}

// base is the URL of the server that takes the next request.
func (t *target) base() string {
	if len(t.bases) == 1 {
		return t.bases[0]
	}
	return t.bases[(t.next.Add(1)-1)%uint64(len(t.bases))]
}

// drive runs conc workers against t for d and returns per-op statistics.
func drive(ctx context.Context, client *http.Client, t *target, ds *Dataset, conc int, d time.Duration, record bool) (*phase, error) {
	for _, o := range t.ops {
		t.total += o.Weight
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	results := make([]map[string]*opStats, conc)
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), processCPU()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			mine := map[string]*opStats{}
			results[w] = mine
			buf := make([]byte, 32<<10)
			for ctx.Err() == nil {
				op := t.pickOp(rng)
				org := pick(rng, ds.Orgs)
				seq := callSeq.Add(1)
				method, path, body := op.Build(rng, org, seq)
				base := t.base()
				u := base + path
				if t.bare != nil {
					u = base + "/bare?n=" + strconv.Itoa(t.bare[op.Name]) + "&s=" + strconv.Itoa(op.Want)
				}
				req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
				if err != nil {
					continue
				}
				req.Header.Set("X-API-Key", org.Key)
				if body != nil {
					ct := op.ContentType
					if ct == "" {
						ct = "application/json"
					}
					req.Header.Set("Content-Type", ct)
				}
				if op.Write {
					req.Header.Set("Idempotency-Key", "load-"+strconv.FormatUint(seq, 10))
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					s := stat(mine, op.Name)
					s.errors++
					s.sample = err.Error()
					continue
				}
				n, _ := readAll(resp.Body, buf)
				resp.Body.Close()
				lat := time.Since(t0)
				if ctx.Err() != nil {
					break // a call cut by the end of the phase is not counted
				}
				s := stat(mine, op.Name)
				if resp.StatusCode != op.Want {
					s.errors++
					if s.sample == "" {
						s.sample = fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, buf[:min(n, 300)])
					}
					continue
				}
				if record {
					s.lat = append(s.lat, lat)
					s.bytes += int64(n)
				}
			}
		}(w)
	}
	wg.Wait()
	p := &phase{ops: map[string]*opStats{}, elapsed: time.Since(start), cpu: processCPU() - cpu0}
	for _, m := range results {
		for name, s := range m {
			stat(p.ops, name).merge(s)
		}
	}
	for _, s := range p.ops {
		sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	}
	return p, nil
}

func stat(m map[string]*opStats, name string) *opStats {
	s := m[name]
	if s == nil {
		s = &opStats{}
		m[name] = s
	}
	return s
}

// readAll drains r, keeping the first len(buf) bytes, and returns the size.
func readAll(r io.Reader, buf []byte) (int, error) {
	n := 0
	for {
		k, err := r.Read(buf[min(n, len(buf)):])
		n += k
		if n >= len(buf) {
			m, err := io.Copy(io.Discard, r)
			return n + int(m), err
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (t *target) pickOp(rng *rand.Rand) Op {
	x := rng.IntN(t.total)
	for _, o := range t.ops {
		if x < o.Weight {
			return o
		}
		x -= o.Weight
	}
	return t.ops[len(t.ops)-1]
}

// bareServer answers every request with n bytes of JSON and status s (from
// the query), after reading the body: the limit of net/http on this
// machine for responses of our sizes.
func bareServer() (*http.Server, net.Listener, error) {
	payload := bytes.Repeat([]byte(`{"k":"0123456789abcdef0123456789abcdef"},`), 1<<13)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		q := r.URL.Query()
		n, _ := strconv.Atoi(q.Get("n"))
		s, _ := strconv.Atoi(q.Get("s"))
		if s == 0 {
			s = http.StatusOK
		}
		n = max(0, min(n, len(payload)))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.WriteHeader(s)
		_, _ = w.Write(payload[:n])
	})}
	go func() { _ = hs.Serve(ln) }()
	return hs, ln, nil
}

// Server is the appliance served in process on a loopback port over a data
// directory, wired as `serve` wires it (logs in JSON to a file, as a
// service's redirected stderr would be).
type Server struct {
	DB     *storage.DB
	App    *app.App
	URL    string
	hs     *http.Server
	runner *app.Runner
	stop   context.CancelFunc
	logf   *os.File
}

// StartServer opens and migrates the database in dir and serves the API on
// 127.0.0.1 on a free port.
func StartServer(ctx context.Context, dir string, cfg app.Config) (*Server, error) {
	return StartServerURL(ctx, dir, "", cfg)
}

// StartServerURL is StartServer on the database at databaseURL
// (postgres://...; empty: the SQLite file in dir).
func StartServerURL(ctx context.Context, dir, databaseURL string, cfg app.Config) (*Server, error) {
	dd := storage.DataDir{Root: dir}
	if err := dd.Ensure(); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(logf, nil))
	location := dd.DBPath()
	if databaseURL != "" {
		location = databaseURL
	}
	db, err := storage.OpenURL(ctx, location)
	if err != nil {
		logf.Close()
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		logf.Close()
		return nil, err
	}
	files, err := storage.NewFiles(dd.FilesPath())
	if err != nil {
		db.Close()
		logf.Close()
		return nil, err
	}
	a := app.NewWithFiles(db, files, nil, log, cfg)
	h, err := web.New(a, log, web.Options{Version: "loadtest", Health: db.Ping})
	if err != nil {
		db.Close()
		logf.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		logf.Close()
		return nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	jobCtx, stop := context.WithCancel(context.Background())
	runner := app.NewRunner(log, app.Job{Name: "flush_key_usage", Interval: 5 * time.Second, Run: a.FlushKeyUsage})
	runner.Start(jobCtx)
	go func() { _ = hs.Serve(ln) }()
	return &Server{DB: db, App: a, URL: "http://" + ln.Addr().String(), hs: hs, runner: runner, stop: stop, logf: logf}, nil
}

// Close stops the server and closes the database.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.hs.Shutdown(ctx)
	s.stop()
	s.runner.Wait()
	return errors.Join(err, s.DB.Close(), s.logf.Close())
}

func newClient(conc int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: time.Minute, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}}
}

// Load seeds the dataset, serves it, drives the mixed workload and a
// list-only workload at fixed concurrency, measures the bare net/http
// limit for responses of the same sizes, and prints the report.
func Load(ctx context.Context, cfg LoadConfig) error {
	if err := cfg.check(); err != nil {
		return err
	}
	dir := cfg.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "compliance-load-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	progress := func(s string) { fmt.Fprintf(cfg.Progress, "%s %s\n", time.Now().Format("15:04:05"), s) }
	// The limiter runs on every request, but with a ceiling far above what
	// one machine serves, so the run measures the server, not the plan.
	limits := app.Config{EnterpriseRate: 1 << 30, EnterpriseBurst: 1 << 30}
	srv, err := StartServerURL(ctx, dir, cfg.DatabaseURL, limits)
	if err != nil {
		return err
	}
	defer srv.Close()
	start := time.Now()
	ds, err := Seed(ctx, srv.DB, srv.App, cfg.Orgs, cfg.Scale, progress)
	if err != nil {
		return err
	}
	if err := srv.DB.Optimize(ctx); err != nil {
		return err
	}
	progress(fmt.Sprintf("dataset ready in %s: %d organizations", time.Since(start).Round(time.Millisecond), len(ds.Orgs)))
	// The other replicas start on the seeded database (the first one
	// migrated it): each its own pool, App, router and listener, as
	// separate `serve` processes would be, in this process so that its
	// CPU time still covers every server.
	urls := []string{srv.URL}
	for i := 1; i < cfg.Replicas; i++ {
		r, err := StartServerURL(ctx, dir, cfg.DatabaseURL, limits)
		if err != nil {
			return fmt.Errorf("replica %d: %w", i+1, err)
		}
		defer r.Close()
		urls = append(urls, r.URL)
	}
	if cfg.Replicas > 1 {
		progress(fmt.Sprintf("%d replicas serving", cfg.Replicas))
	}

	client := newClient(cfg.Concurrency)
	var lists []Op
	for _, o := range Ops {
		if o.Name == "list_vendors" {
			lists = append(lists, Op{Name: o.Name, Weight: 100, Want: o.Want, Build: o.Build})
		}
	}
	warm := min(2*time.Second, cfg.Duration)
	progress("warming up")
	if _, err := drive(ctx, client, &target{bases: urls, ops: Ops}, ds, cfg.Concurrency, warm, false); err != nil {
		return err
	}
	progress(fmt.Sprintf("mixed workload: %d workers for %s", cfg.Concurrency, cfg.Duration))
	stopProfile, err := startProfile(cfg.Profile)
	if err != nil {
		return err
	}
	mixed, err := drive(ctx, client, &target{bases: urls, ops: Ops}, ds, cfg.Concurrency, cfg.Duration, true)
	if err := errors.Join(err, stopProfile()); err != nil {
		return err
	}
	progress("list-only workload")
	listOnly, err := drive(ctx, client, &target{bases: urls, ops: lists}, ds, cfg.Concurrency, cfg.Duration, true)
	if err != nil {
		return err
	}

	progress("search-only workload")
	search := []Op{{Name: "search", Weight: 100, Want: 200, Build: buildSearch}}
	if _, err := drive(ctx, client, &target{bases: urls, ops: search}, ds, cfg.Concurrency, warm, false); err != nil {
		return err
	}
	searchOnly, err := drive(ctx, client, &target{bases: urls, ops: search}, ds, cfg.Concurrency, cfg.Duration, true)
	if err != nil {
		return err
	}
	progress("search, one client at a time")
	searchOne, err := drive(ctx, client, &target{bases: urls, ops: search}, ds, 1, cfg.Duration, true)
	if err != nil {
		return err
	}

	sizes := map[string]int{}
	for name, s := range mixed.ops {
		if len(s.lat) > 0 {
			sizes[name] = int(s.bytes / int64(len(s.lat)))
		}
	}
	bare, ln, err := bareServer()
	if err != nil {
		return err
	}
	defer bare.Close()
	bareURL := "http://" + ln.Addr().String()
	bareClient := newClient(cfg.Concurrency)
	progress("bare net/http limit: mixed sizes")
	bareMixed, err := drive(ctx, bareClient, &target{bases: []string{bareURL}, ops: Ops, bare: sizes}, ds, cfg.Concurrency, cfg.Duration, true)
	if err != nil {
		return err
	}
	progress("bare net/http limit: list response size")
	bareList, err := drive(ctx, bareClient, &target{bases: []string{bareURL}, ops: lists, bare: sizes}, ds, cfg.Concurrency, cfg.Duration, true)
	if err != nil {
		return err
	}
	progress("each operation alone, against ours and the bare server")
	solo, err := driveEach(ctx, client, bareClient, urls, bareURL, ds, cfg, sizes)
	if err != nil {
		return err
	}
	report(cfg, ds, mixed, listOnly, bareMixed, bareList, sizes)
	reportEach(cfg, solo)
	reportSearch(cfg, searchOnly, searchOne)
	return nil
}

// soloRun is one operation driven alone against our server and against the
// bare server answering the same size.
type soloRun struct {
	op         Op
	ours, bare *phase
}

// soloDuration is the length of each operation's solo phases.
func soloDuration(d time.Duration) time.Duration { return max(d/4, 500*time.Millisecond) }

// driveEach drives every operation alone, then the bare server with that
// operation's response size: the CPU per call of the two (the same client
// in the same process) differ by what our server spends on a request
// beyond bare net/http.
func driveEach(ctx context.Context, client, bareClient *http.Client, bases []string, bareBase string, ds *Dataset, cfg LoadConfig,
	sizes map[string]int) ([]soloRun, error) {
	d := soloDuration(cfg.Duration)
	var out []soloRun
	for _, o := range Ops {
		one := o
		one.Weight = 100
		ours, err := drive(ctx, client, &target{bases: bases, ops: []Op{one}}, ds, cfg.Concurrency, d, true)
		if err != nil {
			return nil, err
		}
		bare, err := drive(ctx, bareClient, &target{bases: []string{bareBase}, ops: []Op{one}, bare: sizes}, ds, cfg.Concurrency, d, true)
		if err != nil {
			return nil, err
		}
		out = append(out, soloRun{op: o, ours: ours, bare: bare})
	}
	return out, nil
}

// reportEach prints each operation driven alone: ops/s and latencies, CPU
// per call (client and server in this process) for ours and for bare
// net/http, the server's CPU per request beyond bare net/http (their
// difference) and the fraction of the bare limit, by ops/s and by CPU.
func reportEach(cfg LoadConfig, runs []soloRun) {
	w := cfg.Out
	fmt.Fprintf(w, "\neach operation alone (%s each, %d workers):\n", soloDuration(cfg.Duration), cfg.Concurrency)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tops/s\tp50 ms\tp95 ms\tp99 ms\tCPU/call\tbare CPU/call\tserver CPU/req\tof bare (ops/s)\tof bare (CPU)\terrors\t")
	for _, r := range runs {
		s, b := r.ours.total(), r.bare.total()
		ours, bare := r.ours.cpuPerOp(), r.bare.cpuPerOp()
		fracOps, fracCPU := 0.0, 0.0
		if br := r.bare.rate(b); br > 0 {
			fracOps = 100 * r.ours.rate(s) / br
		}
		if ours > 0 {
			fracCPU = 100 * float64(bare) / float64(ours)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.1f%%\t%d\t\n", r.op.Name, r.ours.rate(s), ms(s.pct(.5)), ms(s.pct(.95)), ms(s.pct(.99)),
			us(ours), us(bare), us(max(0, ours-bare)), fracOps, fracCPU, s.errors)
	}
	tw.Flush()
	for _, r := range runs {
		if s := r.ours.ops[r.op.Name]; s != nil && s.sample != "" {
			fmt.Fprintf(w, "first error of %s alone: %s\n", r.op.Name, s.sample)
		}
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%dµs", d.Microseconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func report(cfg LoadConfig, ds *Dataset, mixed, listOnly, bareMixed, bareList *phase, sizes map[string]int) {
	w := cfg.Out
	seeded := map[string]int{}
	for _, o := range ds.Orgs {
		for k, ids := range o.IDs {
			seeded[k] += len(ids)
		}
	}
	fmt.Fprintf(w, "dataset: %d organizations", len(ds.Orgs))
	for _, s := range Seeders {
		fmt.Fprintf(w, ", %d %s", seeded[s.Kind], s.Kind)
	}
	fmt.Fprintf(w, "\nconcurrency %d, %s per phase, loopback, GOMAXPROCS=%d\n", cfg.Concurrency, cfg.Duration, runtimeProcs())
	store := "SQLite"
	if cfg.DatabaseURL != "" {
		store = "PostgreSQL"
	}
	fmt.Fprintf(w, "store %s, %d replica(s) in this process, requests round-robin across them (CPU figures cover every replica and the client)\n\n",
		store, cfg.Replicas)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tshare\tops/s\tp50 ms\tp95 ms\tp99 ms\tbytes\terrors\t")
	for _, o := range Ops {
		s := mixed.ops[o.Name]
		if s == nil {
			s = &opStats{}
		}
		fmt.Fprintf(tw, "%s\t%d%%\t%.0f\t%s\t%s\t%s\t%d\t%d\t\n", o.Name, o.Weight, mixed.rate(s), ms(s.pct(.5)), ms(s.pct(.95)), ms(s.pct(.99)), sizes[o.Name], s.errors)
	}
	t := mixed.total()
	fmt.Fprintf(tw, "mixed total\t100%%\t%.0f\t%s\t%s\t%s\t\t%d\t\n", mixed.rate(t), ms(t.pct(.5)), ms(t.pct(.95)), ms(t.pct(.99)), t.errors)
	lt := listOnly.total()
	fmt.Fprintf(tw, "list_vendors only\t\t%.0f\t%s\t%s\t%s\t\t%d\t\n", listOnly.rate(lt), ms(lt.pct(.5)), ms(lt.pct(.95)), ms(lt.pct(.99)), lt.errors)
	tw.Flush()
	bm, bl := bareMixed.total(), bareList.total()
	fmt.Fprintf(w, "\nbare net/http, same sizes: mixed %.0f ops/s, list-size %.0f ops/s\n", bareMixed.rate(bm), bareList.rate(bl))
	fmt.Fprintf(w, "fraction of the bare limit (ops/s): mixed %.1f%%, list_vendors %.1f%%\n",
		100*mixed.rate(t)/bareMixed.rate(bm), 100*listOnly.rate(lt)/bareList.rate(bl))
	// CPU per call (client and server in this process, for ours and for the
	// bare server alike) does not depend on what else the machine runs: its
	// ratio is the fraction an otherwise idle machine would show.
	fmt.Fprintf(w, "CPU per call: mixed %s (bare %s), list_vendors %s (bare %s)\n",
		us(mixed.cpuPerOp()), us(bareMixed.cpuPerOp()), us(listOnly.cpuPerOp()), us(bareList.cpuPerOp()))
	fmt.Fprintf(w, "fraction of the bare limit (CPU per call): mixed %.1f%%, list_vendors %.1f%%\n",
		100*float64(bareMixed.cpuPerOp())/float64(max(1, mixed.cpuPerOp())), 100*float64(bareList.cpuPerOp())/float64(max(1, listOnly.cpuPerOp())))
	fmt.Fprintf(w, "ops/s an idle machine would allow at this CPU cost: mixed %.0f, list_vendors %.0f\n",
		float64(runtime.GOMAXPROCS(0))*float64(time.Second)/float64(max(1, mixed.cpuPerOp())),
		float64(runtime.GOMAXPROCS(0))*float64(time.Second)/float64(max(1, listOnly.cpuPerOp())))
	for _, o := range Ops {
		if s := mixed.ops[o.Name]; s != nil && s.sample != "" {
			fmt.Fprintf(w, "first error of %s: %s\n", o.Name, s.sample)
		}
	}
}

// reportSearch prints global search's figures: under the phase's
// concurrency and with one client (the latency a person typing sees).
func reportSearch(cfg LoadConfig, all, one *phase) {
	tw := tabwriter.NewWriter(cfg.Out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nsearch (GET /v1/search)\tclients\tops/s\tp50 ms\tp95 ms\tp99 ms\terrors\t")
	for _, r := range []struct {
		p *phase
		n int
	}{{all, cfg.Concurrency}, {one, 1}} {
		s := r.p.total()
		fmt.Fprintf(tw, "search\t%d\t%.0f\t%s\t%s\t%s\t%d\t\n", r.n, r.p.rate(s), ms(s.pct(.5)), ms(s.pct(.95)), ms(s.pct(.99)), s.errors)
	}
	tw.Flush()
	if s := all.ops["search"]; s != nil && s.sample != "" {
		fmt.Fprintf(cfg.Out, "first error of search: %s\n", s.sample)
	}
}

// startProfile starts CPU, block and mutex profiling into dir; the returned
// function stops it and writes the files. An empty dir profiles nothing.
func startProfile(dir string) (func() error, error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	runtime.SetBlockProfileRate(int(time.Millisecond))
	runtime.SetMutexProfileFraction(10)
	return func() error {
		pprof.StopCPUProfile()
		errs := []error{f.Close()}
		for _, name := range []string{"block", "mutex"} {
			out, err := os.Create(filepath.Join(dir, name+".pprof"))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, pprof.Lookup(name).WriteTo(out, 0), out.Close())
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		return errors.Join(errs...)
	}, nil
}
