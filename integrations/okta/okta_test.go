package okta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const apiToken = "00QCjAl4MlV-WPXM-ABCDEFGHIJKLMNOPQRSTUVWXyz"

// fake is an Okta org's Users and Factors API, serving the recorded
// pages of testdata.
type fake struct {
	t        testing.TB
	srv      *httptest.Server
	mode     atomic.Value      // string
	pages    map[string][]byte // by after cursor
	next     map[string]string // after cursor → the next page's cursor
	factors  map[string][]byte
	calls    atomic.Int32
	asked    sync.Map // user ids whose factors were read
	inFlight atomic.Int32
	peak     atomic.Int32
	delay    time.Duration
	search   atomic.Value // string
	ext      extra        // devices and groups (devices_test.go)
}

func newFake(t testing.TB) *fake {
	f := &fake{t: t, pages: map[string][]byte{}, next: map[string]string{}, factors: map[string][]byte{}}
	f.mode.Store("")
	f.search.Store("")
	f.pages[""] = fixture(t, "users_page1.json")
	f.pages["00ub0oNGTSWTBKOLOCKD"] = fixture(t, "users_page2.json")
	f.next[""] = "00ub0oNGTSWTBKOLOCKD"
	f.factors["00ub0oNGTSWTBKOLGLNR"] = fixture(t, "factors_enrolled.json")
	f.factors["00ub0oNGTSWTBKOLOCKD"] = fixture(t, "factors_pending.json")
	f.factors["00ub0oNGTSWTBKOPROVI"] = []byte("[]")
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func fixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fake) fail(w http.ResponseWriter, status int, file string) {
	w.WriteHeader(status)
	w.Write(fixture(f.t, file))
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	mode := f.mode.Load().(string)
	n := f.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Rate-Limit-Limit", "600")
	if r.Header.Get("Authorization") != "SSWS "+apiToken || mode == "401" {
		f.fail(w, http.StatusUnauthorized, "error_401.json")
		return
	}
	if mode == "echo" {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"errorCode": "E0000001", "errorSummary": "Api validation failed: token " + apiToken})
		return
	}
	path := r.URL.Path
	if f.serveExtra(w, r, mode) {
		return
	}
	switch {
	case path == "/api/v1/users/me":
		w.Write(fixture(f.t, "me.json"))
	case path == "/api/v1/users":
		f.search.Store(r.URL.Query().Get("search") + "|limit=" + r.URL.Query().Get("limit"))
		after := r.URL.Query().Get("after")
		self := fmt.Sprintf("<%s/api/v1/users?limit=200>; rel=\"self\"", f.srv.URL)
		switch mode {
		case "403list":
			f.fail(w, http.StatusForbidden, "error_403.json")
			return
		case "loop":
			w.Header().Add("Link", self)
			w.Header().Add("Link", fmt.Sprintf("<%s/api/v1/users?after=same&limit=200>; rel=\"next\"", f.srv.URL))
			w.Write([]byte("[]"))
			return
		case "endless":
			w.Header().Add("Link", fmt.Sprintf("<%s/api/v1/users?after=c%d&limit=200>; rel=\"next\"", f.srv.URL, n))
			w.Write([]byte("[]"))
			return
		case "elsewhere":
			w.Header().Add("Link", "<https://attacker.example/api/v1/users?after=x>; rel=\"next\"")
			w.Write([]byte("[]"))
			return
		case "huge":
			w.Write([]byte("["))
			for i := 0; i < 20000; i++ {
				fmt.Fprintf(w, `{"id":"00u%d","status":"ACTIVE","profile":{"login":"u%d@acme.example"}},`, i, i)
			}
			w.Write([]byte("{}]"))
			return
		case "hang":
			<-r.Context().Done()
			return
		}
		page, ok := f.pages[after]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"errorCode":"E0000031","errorSummary":"Invalid search criteria."}`)
			return
		}
		w.Header().Add("Link", self)
		if nx := f.next[after]; nx != "" {
			q := url.Values{"after": {nx}, "limit": {"200"}, "search": {r.URL.Query().Get("search")}}
			w.Header().Add("Link", fmt.Sprintf("<%s/api/v1/users?%s>; rel=\"next\"", f.srv.URL, q.Encode()))
		}
		w.Write(page)
	case strings.HasPrefix(path, "/api/v1/users/") && strings.HasSuffix(path, "/factors"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/users/"), "/factors")
		f.asked.Store(id, true)
		cur := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			p := f.peak.Load()
			if cur <= p || f.peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if f.delay > 0 {
			time.Sleep(f.delay)
		}
		switch {
		case mode == "429" && id == "00ub0oNGTSWTBKOLGLNR" && !f.limited():
			w.Header().Set("X-Rate-Limit-Remaining", "0")
			w.Header().Set("X-Rate-Limit-Reset", strconv.FormatInt(time.Now().Unix()+1, 10))
			f.fail(w, http.StatusTooManyRequests, "error_429.json")
		case mode == "429far":
			w.Header().Set("X-Rate-Limit-Remaining", "0")
			w.Header().Set("X-Rate-Limit-Reset", strconv.FormatInt(time.Now().Unix()+3600, 10))
			f.fail(w, http.StatusTooManyRequests, "error_429.json")
		case mode == "403factors" && id == "00ub0oNGTSWTBKOLOCKD":
			f.fail(w, http.StatusForbidden, "error_403.json")
		default:
			if b, ok := f.factors[id]; ok {
				w.Write(b)
				return
			}
			w.Write([]byte("[]"))
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"errorCode":"E0000022","errorSummary":"The endpoint does not support the provided HTTP method"}`)
	}
}

func (f *fake) limited() bool {
	_, loaded := f.asked.LoadOrStore("429-sent", true)
	return loaded
}

func (f *fake) target(vars map[string]string) app.ConnectionTarget {
	return app.ConnectionTarget{ConnectionID: "con_1", OrganizationID: "org_1",
		Credentials: map[string]string{"orgUrl": f.srv.URL, "apiToken": apiToken}, Variables: vars}
}

func (f *fake) provider() *Provider {
	return New(f.srv.Client(), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
}

func collect(t *testing.T, p *Provider, tg app.ConnectionTarget) ([]app.DirectoryUser, error) {
	t.Helper()
	return drain(tg, p.Users)
}

// drain gathers every item a streaming listing yields.
func drain[T any](tg app.ConnectionTarget, list func(context.Context, app.ConnectionTarget, func(T) error) error) ([]T, error) {
	var out []T
	err := list(context.Background(), tg, func(v T) error {
		out = append(out, v)
		return nil
	})
	return out, err
}

// TestUsers lists two recorded pages through the Link header, with every
// status searched for so deprovisioned users are seen; statuses map to
// active or not; factors are read for active users only.
func TestUsers(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	users, err := collect(t, f.provider(), f.target(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 6 {
		t.Fatalf("%d users, want 6", len(users))
	}
	by := map[string]app.DirectoryUser{}
	for _, u := range users {
		by[u.ExternalID] = u
	}
	isaac := by["00ub0oNGTSWTBKOLGLNR"]
	if isaac.Login != "isaac.brock@acme.example" || isaac.Email != "isaac.brock@acme.example" || isaac.Name != "Isaac Brock" ||
		isaac.Department != "Engineering" || isaac.Manager != "00ub0oNGTSWTBKOMANAG" || !isaac.Active || isaac.TwoFactor == nil || !*isaac.TwoFactor {
		t.Errorf("isaac mapped as %+v", isaac)
	}
	want := map[string]bool{"00ub0oNGTSWTBKOSUSPD": false, "00ub0oNGTSWTBKOLOCKD": true, "00ub0oNGTSWTBKODEPRO": false,
		"00ub0oNGTSWTBKOPROVI": true, "00ub0oNGTSWTBKOSTAGE": false}
	for id, active := range want {
		if by[id].Active != active {
			t.Errorf("%s active %v, want %v", id, by[id].Active, active)
		}
		if _, asked := f.asked.Load(id); asked != active {
			t.Errorf("%s factors read %v, want %v (active users only)", id, asked, active)
		}
	}
	if u := by["00ub0oNGTSWTBKOLOCKD"]; u.TwoFactor == nil || *u.TwoFactor {
		t.Errorf("lena (factor pending activation) mapped as %+v", u)
	}
	if u := by["00ub0oNGTSWTBKOPROVI"]; u.TwoFactor == nil || *u.TwoFactor || u.Name != "Paul Provisioned" {
		t.Errorf("paul (no factors) mapped as %+v", u)
	}
	if u := by["00ub0oNGTSWTBKODEPRO"]; u.TwoFactor != nil {
		t.Errorf("dora (deprovisioned) has a two-factor status: %+v", u)
	}
	if s := f.search.Load().(string); !strings.Contains(s, `status eq "DEPROVISIONED"`) || !strings.Contains(s, `status eq "SUSPENDED"`) || !strings.HasSuffix(s, "limit=200") {
		t.Errorf("search %q", s)
	}

	f2 := newFake(t)
	users, err = collect(t, f2.provider(), f2.target(map[string]string{"checkFactors": "false"}))
	if err != nil || len(users) != 6 || f2.calls.Load() != 2 {
		t.Fatalf("without factors: %d users, %d calls, %v", len(users), f2.calls.Load(), err)
	}
	for _, u := range users {
		if u.TwoFactor != nil {
			t.Errorf("checkFactors false, yet %s has a two-factor status", u.Login)
		}
	}

	// A user whose factors are refused keeps an unknown status; the rest go on.
	f3 := newFake(t)
	f3.mode.Store("403factors")
	users, err = collect(t, f3.provider(), f3.target(nil))
	if err != nil || len(users) != 6 {
		t.Fatalf("403 on one user's factors: %d users, %v", len(users), err)
	}
	for _, u := range users {
		if u.ExternalID == "00ub0oNGTSWTBKOLOCKD" && u.TwoFactor != nil || u.ExternalID == "00ub0oNGTSWTBKOLGLNR" && u.TwoFactor == nil {
			t.Errorf("%+v", u)
		}
	}
}

// TestConcurrency: factors are read at most four at a time.
func TestConcurrency(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.delay = 20 * time.Millisecond
	f.pages[""] = generated(0, 40)
	delete(f.next, "")
	users, err := collect(t, f.provider(), f.target(nil))
	if err != nil || len(users) != 40 {
		t.Fatalf("%d users, %v", len(users), err)
	}
	if p := f.peak.Load(); p > concurrency || p < 2 {
		t.Errorf("peak of %d factor requests in flight, want 2 to %d", p, concurrency)
	}
	for i, u := range users {
		if u.ExternalID != fmt.Sprintf("00u%07d", i) {
			t.Fatalf("user %d is %s: the page's order is kept", i, u.ExternalID)
		}
	}
}

// TestConnect covers Test's answers with Okta's messages; none shows the
// token.
func TestConnect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mode    string
		creds   map[string]string
		vars    map[string]string
		success bool
		message string
	}{
		{"ok", "", nil, nil, true, "as readonly-admin@acme.example"},
		{"401", "401", nil, nil, false, "E0000011: Invalid token provided"},
		{"wrong token", "", map[string]string{"apiToken": "00wrong"}, nil, false, "E0000011"},
		{"403", "403list", nil, nil, false, "E0000006: You do not have permission"},
		{"echo", "echo", nil, nil, false, "[redacted]"},
		{"no url", "", map[string]string{"orgUrl": ""}, nil, false, "orgUrl: is required"},
		{"http", "", map[string]string{"orgUrl": "http://acme.okta.com"}, nil, false, "orgUrl: must be"},
		{"path", "", map[string]string{"orgUrl": "https://acme.okta.com/app/x"}, nil, false, "orgUrl: must be"},
		{"admin", "", map[string]string{"orgUrl": "https://acme-admin.okta.com"}, nil, false, "without -admin"},
		{"no token", "", map[string]string{"apiToken": ""}, nil, false, "apiToken: is required"},
		{"ssws", "", map[string]string{"apiToken": "SSWS " + apiToken}, nil, false, "apiToken: must be the token alone"},
		{"bad bool", "", nil, map[string]string{"checkFactors": "1"}, false, "checkFactors"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.mode.Store(tc.mode)
			tg := f.target(tc.vars)
			for k, v := range tc.creds {
				tg.Credentials[k] = v
			}
			r := f.provider().Test(context.Background(), tg)
			if r.Success != tc.success || !strings.Contains(r.Message, tc.message) {
				t.Fatalf("Test = %+v, want success %v and a message containing %q", r, tc.success, tc.message)
			}
			if strings.Contains(r.Message, apiToken) || strings.Contains(r.Account, apiToken) {
				t.Fatalf("the message shows the token: %q", r.Message)
			}
			if !tc.success {
				err := f.provider().Users(context.Background(), tg, func(app.DirectoryUser) error { return nil })
				if err == nil || strings.Contains(err.Error(), apiToken) {
					t.Fatalf("Users: %v", err)
				}
			}
		})
	}
}

// TestLimits: a 429 waits for X-Rate-Limit-Reset when it is near and is
// reported when it is far; loops, endless listings, links to another host,
// huge bodies and cancelled contexts end the listing with an error.
func TestLimits(t *testing.T) {
	t.Parallel()
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("429")
		start := time.Now()
		users, err := collect(t, f.provider(), f.target(nil))
		if err != nil || len(users) != 6 {
			t.Fatalf("%d users, %v", len(users), err)
		}
		if time.Since(start) < time.Second {
			t.Error("the rate-limit reset was not waited for")
		}
		for _, u := range users {
			if u.ExternalID == "00ub0oNGTSWTBKOLGLNR" && (u.TwoFactor == nil || !*u.TwoFactor) {
				t.Errorf("isaac's factors after the wait: %+v", u)
			}
		}
	})
	errCase := func(name, mode, want string, tune func(*Provider)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.mode.Store(mode)
			p := f.provider()
			if tune != nil {
				tune(p)
			}
			start := time.Now()
			_, err := collect(t, p, f.target(nil))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err %v, want %q", err, want)
			}
			if strings.Contains(err.Error(), apiToken) {
				t.Fatal("the error shows the token")
			}
			if time.Since(start) > 30*time.Second {
				t.Fatal("the listing did not stop")
			}
		})
	}
	errCase("429 far", "429far", "beyond what a run waits", nil)
	errCase("loop", "loop", "gave before", nil)
	errCase("endless", "endless", "after 6 pages", func(p *Provider) { p.maxPages = 6 })
	errCase("elsewhere", "elsewhere", "another host", nil)
	errCase("huge", "huge", "larger than the limit", func(p *Provider) { p.maxBody = 256 << 10 })
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("hang")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := f.provider().Users(ctx, f.target(nil), func(app.DirectoryUser) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
	})
}

// generated is a page of n active users from id from.
func generated(from, n int) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	for i := from; i < from+n; i++ {
		if i > from {
			b.WriteString(",")
		}
		status := "ACTIVE"
		if i%10 == 0 {
			status = "SUSPENDED"
		}
		fmt.Fprintf(&b, `{"id":"00u%07d","status":%q,"created":"2024-01-01T00:00:00.000Z","type":{"id":"oty1"},`+
			`"profile":{"firstName":"User","lastName":"%d","email":"user%05d@acme.example","login":"user%05d@acme.example","department":"Engineering"},`+
			`"credentials":{"provider":{"type":"OKTA","name":"OKTA"}}}`, i, status, i, i, i)
	}
	b.WriteString("]")
	return b.Bytes()
}

// BenchmarkUsers10000 lists 10,000 users in 50 pages of 200 through the
// fake, with and without reading the factors of the 9,000 active ones.
func BenchmarkUsers10000(b *testing.B) {
	f := newFake(b)
	f.pages, f.next = map[string][]byte{}, map[string]string{}
	for p := 0; p < 50; p++ {
		cursor := ""
		if p > 0 {
			cursor = "c" + strconv.Itoa(p)
		}
		f.pages[cursor] = generated(p*200, 200)
		if p < 49 {
			f.next[cursor] = "c" + strconv.Itoa(p+1)
		}
	}
	p := f.provider()
	for _, factors := range []string{"true", "false"} {
		b.Run("checkFactors="+factors, func(b *testing.B) {
			tg := f.target(map[string]string{"checkFactors": factors})
			var heap heapPeak
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				n := 0
				if err := p.Users(context.Background(), tg, func(app.DirectoryUser) error { n++; heap.sample(); return nil }); err != nil {
					b.Fatal(err)
				}
				if n != 10000 {
					b.Fatalf("%d users", n)
				}
			}
			heap.report(b)
		})
	}
}

// heapPeak samples the heap in use every 500 users of a listing.
type heapPeak struct {
	n    int
	peak uint64
}

func (h *heapPeak) sample() {
	if h.n++; h.n%500 == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapInuse)
	}
}

func (h *heapPeak) report(b *testing.B) { b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB") }
