package entra

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

const (
	tenantID     = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	clientID     = "3f1a2b4c-0000-4000-8000-00000000c0de"
	clientSecret = "Qx8~s3cr3t.Value_ABCdef123456789-zz"
	accessToken  = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.graph-test-token"
)

// fake is the Entra token endpoint and the two Graph lists, serving the
// recorded pages of testdata.
type fake struct {
	t       testing.TB
	srv     *httptest.Server
	mode    atomic.Value // string
	calls   atomic.Int32 // Graph calls
	tokens  atomic.Int32
	users   map[string][]byte // by $skiptoken
	regs    map[string][]byte
	queries chan string
	ext     extra // devices and groups (devices_test.go)
}

func newFake(t testing.TB) *fake {
	f := &fake{t: t, users: map[string][]byte{}, regs: map[string][]byte{}, queries: make(chan string, 100)}
	f.mode.Store("")
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	base := []byte(f.srv.URL)
	load := func(name string) []byte { return bytes.ReplaceAll(fixture(t, name), []byte("{{base}}"), base) }
	f.users[""] = load("users_page1.json")
	f.users["RFNwdAIAAQAAACA6YWRlbGVAY29udG9zby5vbm1pY3Jvc29mdC5jb20"] = load("users_page2.json")
	f.regs[""] = load("registration_page1.json")
	f.regs["MjsxOzE"] = load("registration_page2.json")
	return f
}

func fixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	mode := f.mode.Load().(string)
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/"+tenantID+"/oauth2/v2.0/token" {
		f.tokens.Add(1)
		r.ParseForm()
		if r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("client_id") != clientID ||
			r.Form.Get("scope") != "https://"+r.Host+"/.default" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_request","error_description":"AADSTS900144: The request body must contain the following parameter: 'grant_type'."}`)
			return
		}
		if r.Form.Get("client_secret") != clientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write(fixture(f.t, "token_invalid_client.json"))
			return
		}
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":%q}`, accessToken)
		return
	}
	n := f.calls.Add(1)
	select {
	case f.queries <- r.URL.Path + "?" + unescape(r.URL.RawQuery):
	default:
	}
	if r.Header.Get("Authorization") != "Bearer "+accessToken || mode == "401" {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture(f.t, "error_401.json"))
		return
	}
	skip := r.URL.Query().Get("$skiptoken")
	if f.serveExtra(w, r, mode) {
		return
	}
	switch r.URL.Path {
	case "/v1.0/users":
		switch {
		case mode == "403users":
			w.WriteHeader(http.StatusForbidden)
			w.Write(fixture(f.t, "error_403_users.json"))
		case mode == "429" && skip != "" && n < 5:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write(fixture(f.t, "error_429.json"))
		case mode == "loop":
			fmt.Fprintf(w, `{"value":[],"@odata.nextLink":"%s/v1.0/users?$skiptoken=same"}`, f.srv.URL)
		case mode == "endless":
			fmt.Fprintf(w, `{"value":[],"@odata.nextLink":"%s/v1.0/users?$skiptoken=t%d"}`, f.srv.URL, n)
		case mode == "elsewhere":
			fmt.Fprint(w, `{"value":[],"@odata.nextLink":"https://attacker.example/v1.0/users?$skiptoken=x"}`)
		case mode == "huge":
			w.Write([]byte(`{"value":[`))
			for i := 0; i < 20000; i++ {
				fmt.Fprintf(w, `{"id":"%d","mail":"u%d@contoso.example"},`, i, i)
			}
			w.Write([]byte(`{}]}`))
		case mode == "hang":
			<-r.Context().Done()
		default:
			if page, ok := f.users[skip]; ok {
				w.Write(page)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":"Directory_ExpiredPageToken","message":"The specified page token value has expired and can no longer be included in your request."}}`)
		}
	case registrationPath:
		if mode == "403mfa" {
			w.WriteHeader(http.StatusForbidden)
			w.Write(fixture(f.t, "error_403_mfa.json"))
			return
		}
		if page, ok := f.regs[skip]; ok {
			w.Write(page)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":"BadRequest","message":"Invalid skip token."}}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"code":"Request_ResourceNotFound","message":"Resource not found."}}`)
	}
}

func unescape(q string) string {
	s, _ := url.QueryUnescape(q)
	return s
}

func (f *fake) provider(opts ...Option) *Provider {
	return New(f.srv.Client(), append([]Option{WithLoginURL(f.srv.URL), WithGraphURL(f.srv.URL)}, opts...)...)
}

func target(vars map[string]string) app.ConnectionTarget {
	return app.ConnectionTarget{ConnectionID: "con_1", OrganizationID: "org_1",
		Credentials: map[string]string{"tenantId": tenantID, "clientId": clientID, "clientSecret": clientSecret}, Variables: vars}
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

// TestUsers lists two recorded pages joined to the two-page MFA report:
// disabled accounts are inactive, guests are left out unless asked for,
// the principal name stands in for a missing mail.
func TestUsers(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	users, err := collect(t, f.provider(), target(map[string]string{"includeManager": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 4 {
		t.Fatalf("%d users, want 4 (the guest left out): %+v", len(users), users)
	}
	by := map[string]app.DirectoryUser{}
	for _, u := range users {
		by[u.Login] = u
	}
	adele := by["AdeleV@contoso.example"]
	if adele.ExternalID != "87d349ed-44d7-43e1-9a83-5f2406dee5bd" || adele.Email != "AdeleV@contoso.example" || adele.Name != "Adele Vance" ||
		adele.Department != "Retail" || !adele.Active || adele.Manager != "AlexW@contoso.example" || adele.TwoFactor == nil || !*adele.TwoFactor {
		t.Errorf("adele mapped as %+v", adele)
	}
	if u := by["AlexW@contoso.example"]; u.TwoFactor == nil || *u.TwoFactor || u.Manager != "" {
		t.Errorf("alex (not registered) mapped as %+v", u)
	}
	if u := by["DiegoS@contoso.example"]; u.Active || u.TwoFactor == nil || !*u.TwoFactor {
		t.Errorf("diego (disabled, registered on the report's page 2) mapped as %+v", u)
	}
	if u := by["GradyA@contoso.example"]; u.Email != "GradyA@contoso.example" || u.TwoFactor != nil {
		t.Errorf("grady (no mailbox, not in the report) mapped as %+v", u)
	}
	q := <-f.queries
	if !strings.HasPrefix(q, registrationPath) {
		t.Errorf("first call %q, want the MFA report", q)
	}
	for q = <-f.queries; !strings.HasPrefix(q, "/v1.0/users"); q = <-f.queries {
	}
	for _, want := range []string{"$top=999", "$select=id,userPrincipalName,mail,displayName", "accountEnabled", "$expand=manager"} {
		if !strings.Contains(q, want) {
			t.Errorf("users query %q lacks %s", q, want)
		}
	}
	if f.tokens.Load() != 1 {
		t.Errorf("%d token requests, want 1", f.tokens.Load())
	}

	guests, err := collect(t, f.provider(), target(map[string]string{"includeGuests": "true", "checkMfa": "false"}))
	if err != nil || len(guests) != 5 {
		t.Fatalf("%d users with guests, %v", len(guests), err)
	}
	for _, u := range guests {
		if u.TwoFactor != nil {
			t.Errorf("checkMfa false, yet %s has a two-factor status", u.Login)
		}
		if strings.Contains(u.Login, "#EXT#") && u.Email != "megan@fabrikam.example" {
			t.Errorf("guest mapped as %+v", u)
		}
	}
}

// TestMFARefused: a tenant whose MFA report is refused (no permission, no
// premium licence) still lists its users, with two-factor status unknown;
// Test succeeds and says so; a warning is logged.
func TestMFARefused(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.mode.Store("403mfa")
	var logs bytes.Buffer
	p := f.provider(WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	users, err := collect(t, p, target(nil))
	if err != nil || len(users) != 4 {
		t.Fatalf("%d users, %v", len(users), err)
	}
	for _, u := range users {
		if u.TwoFactor != nil {
			t.Errorf("%s has a two-factor status from a refused report", u.Login)
		}
	}
	if !strings.Contains(logs.String(), "entra mfa report refused") || strings.Contains(logs.String(), clientSecret) {
		t.Errorf("log %q", logs.String())
	}
	r := p.Test(context.Background(), target(nil))
	if !r.Success || !strings.Contains(r.Message, "Warning: the MFA report is refused") || !strings.Contains(r.Message, "Authentication_RequestFromNonPremiumTenantOrB2CTenant") ||
		!strings.Contains(r.Message, PermissionMFA) {
		t.Errorf("Test = %+v", r)
	}
}

// TestClouds: each cloud signs in and reads Graph on its own hosts.
func TestClouds(t *testing.T) {
	p := New(nil)
	for cloud, hosts := range map[string][2]string{
		"":              {"https://login.microsoftonline.com", "https://graph.microsoft.com"},
		"us_government": {"https://login.microsoftonline.us", "https://graph.microsoft.us"},
		"us_dod":        {"https://login.microsoftonline.us", "https://dod-graph.microsoft.us"},
		"china":         {"https://login.chinacloudapi.cn", "https://microsoftgraph.chinacloudapi.cn"},
	} {
		login, graph := hosts[0], hosts[1]
		s, err := parse(target(map[string]string{"cloud": cloud}))
		if err != nil {
			t.Fatal(err)
		}
		ss := p.session(context.Background(), s)
		if want := login + "/" + tenantID + "/oauth2/v2.0/token"; ss.token != want {
			t.Errorf("cloud %q: token from %s, want %s", cloud, ss.token, want)
		}
		if got := ss.url("/v1.0/users", nil); got != graph+"/v1.0/users" {
			t.Errorf("cloud %q: users at %s, want Graph %s", cloud, got, graph)
		}
	}
}

// TestConnect covers Test's answers; no message shows the secret.
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
		{"ok", "", nil, nil, true, "The MFA report is readable"},
		{"wrong secret", "", map[string]string{"clientSecret": "wrong-" + clientSecret}, nil, false, "invalid_client: AADSTS7000215: Invalid client secret provided"},
		{"401", "401", nil, nil, false, "InvalidAuthenticationToken: Access token validation failure"},
		{"403", "403users", nil, nil, false, "Authorization_RequestDenied: Insufficient privileges"},
		{"no tenant", "", map[string]string{"tenantId": ""}, nil, false, "tenantId: is required"},
		{"bad tenant", "", map[string]string{"tenantId": "../common"}, nil, false, "tenantId: must be"},
		{"bad client", "", map[string]string{"clientId": "app"}, nil, false, "clientId: must be"},
		{"no secret", "", map[string]string{"clientSecret": " "}, nil, false, "clientSecret: is required"},
		{"bad cloud", "", nil, map[string]string{"cloud": "mars"}, false, "cloud: must be one of global"},
		{"bad bool", "", nil, map[string]string{"checkMfa": "yes"}, false, "checkMfa: must be true or false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.mode.Store(tc.mode)
			tg := target(tc.vars)
			for k, v := range tc.creds {
				tg.Credentials[k] = v
			}
			r := f.provider().Test(context.Background(), tg)
			if r.Success != tc.success || !strings.Contains(r.Message, tc.message) {
				t.Fatalf("Test = %+v, want success %v and a message containing %q", r, tc.success, tc.message)
			}
			if strings.Contains(r.Message, clientSecret) || strings.Contains(r.Account, clientSecret) {
				t.Fatalf("the message shows the secret: %q", r.Message)
			}
			if !tc.success {
				err := f.provider().Users(context.Background(), tg, func(app.DirectoryUser) error { return nil })
				if err == nil || strings.Contains(err.Error(), clientSecret) {
					t.Fatalf("Users: %v", err)
				}
			}
		})
	}
}

// TestLimits: 429 waits for Retry-After; loops, endless listings, next
// links to another host, huge bodies and cancelled contexts end the
// listing with an error.
func TestLimits(t *testing.T) {
	t.Parallel()
	noMFA := map[string]string{"checkMfa": "false"}
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("429")
		start := time.Now()
		users, err := collect(t, f.provider(), target(noMFA))
		if err != nil || len(users) != 4 {
			t.Fatalf("%d users, %v", len(users), err)
		}
		if time.Since(start) < 2*time.Second {
			t.Error("two Retry-After of 1 s were not waited")
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
			_, err := collect(t, p, target(noMFA))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err %v, want %q", err, want)
			}
			if strings.Contains(err.Error(), clientSecret) {
				t.Fatal("the error shows the secret")
			}
		})
	}
	errCase("loop", "loop", "gave before", nil)
	errCase("endless", "endless", "after 5 pages", func(p *Provider) { p.maxPages = 5 })
	errCase("elsewhere", "elsewhere", "another host", nil)
	errCase("huge", "huge", "larger than the limit", func(p *Provider) { p.maxBody = 256 << 10 })
	errCase("401", "401", "InvalidAuthenticationToken", nil)
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("hang")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := f.provider().Users(ctx, target(noMFA), func(app.DirectoryUser) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
	})
}

// BenchmarkUsers10000 lists 10,000 users (11 pages of up to 999) joined to
// a 10,000-entry MFA report through the fake.
func BenchmarkUsers10000(b *testing.B) {
	f := newFake(b)
	f.users, f.regs = map[string][]byte{}, map[string][]byte{}
	const total = 10000
	for p := 0; p*pageSize < total; p++ {
		var users, regs []map[string]any
		for i := p * pageSize; i < min((p+1)*pageSize, total); i++ {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			users = append(users, map[string]any{"id": id, "userPrincipalName": fmt.Sprintf("user%05d@contoso.example", i),
				"mail": fmt.Sprintf("user%05d@contoso.example", i), "displayName": "User " + strconv.Itoa(i), "givenName": "User",
				"surname": strconv.Itoa(i), "department": "Engineering", "accountEnabled": i%10 != 0, "userType": "Member"})
			regs = append(regs, map[string]any{"id": id, "userPrincipalName": fmt.Sprintf("user%05d@contoso.example", i), "isMfaRegistered": i%3 == 0})
		}
		skip := ""
		if p > 0 {
			skip = "p" + strconv.Itoa(p)
		}
		up := map[string]any{"value": users}
		rp := map[string]any{"value": regs}
		if (p+1)*pageSize < total {
			up["@odata.nextLink"] = f.srv.URL + "/v1.0/users?$top=999&$skiptoken=p" + strconv.Itoa(p+1)
			rp["@odata.nextLink"] = f.srv.URL + registrationPath + "?$top=999&$skiptoken=p" + strconv.Itoa(p+1)
		}
		f.users[skip], _ = json.Marshal(up)
		f.regs[skip], _ = json.Marshal(rp)
	}
	p := f.provider(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	tg := target(nil)
	var heap heapPeak
	defer heap.report(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if err := p.Users(context.Background(), tg, func(u app.DirectoryUser) error {
			if u.TwoFactor == nil {
				return errors.New("no MFA status")
			}
			n++
			heap.sample()
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if n != total {
			b.Fatalf("%d users", n)
		}
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
