package googleworkspace

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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

const (
	adminEmail  = "admin@acme.example"
	accessToken = "ya29.a0AfB_byC-test-access-token"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
	keyPEM  string
)

func key(t testing.TB) (*rsa.PrivateKey, string) {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		testKey, keyPEM = k, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	})
	return testKey, keyPEM
}

// fake is a Directory API and Google token endpoint, serving the recorded
// pages of testdata by page token.
type fake struct {
	t       testing.TB
	srv     *httptest.Server
	pub     *rsa.PublicKey
	mode    atomic.Value // string: "", "401", "403", "429", "loop", "endless", "huge", "hang", "echo"
	pages   map[string][]byte
	calls   atomic.Int32
	tokens  atomic.Int32
	queries chan string
	ext     extra // devices and groups (devices_test.go)
}

func newFake(t testing.TB) *fake {
	k, _ := key(t)
	f := &fake{t: t, pub: &k.PublicKey, pages: map[string][]byte{}, queries: make(chan string, 100)}
	f.mode.Store("")
	for token, file := range map[string]string{"": "users_page1.json", "Cg8KDWJvYkBhY21lLmV4YW1wbGU": "users_page2.json", "Cg8KDWRhbkBhY21lLmV4YW1wbGU": "users_page3.json"} {
		f.pages[token] = fixture(t, file)
	}
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

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	mode := f.mode.Load().(string)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	switch r.URL.Path {
	case "/token":
		f.tokens.Add(1)
		f.token(w, r)
	default:
		if !f.serveExtra(w, r, mode) {
			http.NotFound(w, r)
		}
	case "/admin/directory/v1/users":
		n := f.calls.Add(1)
		select {
		case f.queries <- r.URL.RawQuery:
		default:
		}
		if r.Header.Get("Authorization") != "Bearer "+accessToken || mode == "401" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write(fixture(f.t, "error_401.json"))
			return
		}
		pageToken := r.URL.Query().Get("pageToken")
		switch {
		case mode == "403":
			w.WriteHeader(http.StatusForbidden)
			w.Write(fixture(f.t, "error_403.json"))
		case mode == "echo":
			_, pk := key(f.t)
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 403, "message": "bad key " + pk}})
		case mode == "429" && n == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write(fixture(f.t, "error_429.json"))
		case mode == "loop":
			fmt.Fprint(w, `{"kind":"admin#directory#users","users":[],"nextPageToken":"same"}`)
		case mode == "endless":
			fmt.Fprintf(w, `{"kind":"admin#directory#users","users":[],"nextPageToken":"t%d"}`, n)
		case mode == "huge":
			fmt.Fprint(w, `{"users":[`)
			for i := 0; i < 20000; i++ {
				fmt.Fprintf(w, `{"id":"%d","primaryEmail":"u%d@acme.example"},`, i, i)
			}
			fmt.Fprint(w, `{}]}`)
		case mode == "hang":
			<-r.Context().Done()
		default:
			page, ok := f.pages[pageToken]
			if !ok {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":{"code":400,"message":"Invalid Input","status":"INVALID_ARGUMENT"}}`)
				return
			}
			w.Write(page)
		}
	}
}

// token checks the signed JWT assertion the library sends (RS256 by the
// key file's key, for the right subject and scope) and issues a token.
func (f *fake) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"unsupported_grant_type","error_description":"Invalid grant_type"}`)
		return
	}
	parts := strings.Split(r.Form.Get("assertion"), ".")
	if len(parts) != 3 {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Invalid JWT"}`)
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(f.pub, crypto.SHA256, sum[:], sig) != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
		return
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss, Sub, Scope, Aud string
	}
	json.Unmarshal(raw, &claims)
	if claims.Sub != adminEmail || !knownScope(claims.Scope) || claims.Aud != f.srv.URL+"/token" || claims.Iss != "sync@acme-prj.iam.gserviceaccount.com" {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture(f.t, "token_unauthorized_client.json"))
		return
	}
	fmt.Fprintf(w, `{"access_token":%q,"expires_in":3599,"token_type":"Bearer"}`, accessToken)
}

func (f *fake) provider() *Provider {
	return New(f.srv.Client(), WithBaseURL(f.srv.URL))
}

func (f *fake) target(vars map[string]string) app.ConnectionTarget {
	_, pk := key(f.t)
	keyFile, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "acme-prj", "private_key_id": "0123456789abcdef",
		"private_key": pk, "client_email": "sync@acme-prj.iam.gserviceaccount.com", "client_id": "112233445566778899",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": f.srv.URL + "/token",
	})
	v := map[string]string{"adminEmail": adminEmail}
	for k, x := range vars {
		v[k] = x
	}
	return app.ConnectionTarget{ConnectionID: "con_1", OrganizationID: "org_1",
		Credentials: map[string]string{"serviceAccountJson": string(keyFile)}, Variables: v}
}

func collect(t *testing.T, p *Provider, target app.ConnectionTarget) ([]app.DirectoryUser, error) {
	t.Helper()
	return drain(target, p.Users)
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

// TestUsers lists three recorded pages: suspended and archived users are
// inactive, 2-Step Verification enrolment is the two-factor status, and
// fields map to the register's.
func TestUsers(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	users, err := collect(t, f.provider(), f.target(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 5 {
		t.Fatalf("%d users, want 5", len(users))
	}
	by := map[string]app.DirectoryUser{}
	for _, u := range users {
		by[u.Email] = u
	}
	ada := by["ada@acme.example"]
	if ada.ExternalID != "104315437895031217301" || ada.Name != "Ada Lovelace" || ada.Department != "Engineering" ||
		ada.Manager != "grace@acme.example" || !ada.Active || ada.TwoFactor == nil || !*ada.TwoFactor ||
		len(ada.Groups) != 1 || ada.Groups[0] != "/Engineering" || ada.Login != "ada@acme.example" {
		t.Errorf("ada mapped as %+v", ada)
	}
	if u := by["bob@acme.example"]; u.Active || u.TwoFactor == nil || !*u.TwoFactor {
		t.Errorf("bob (suspended, enrolled) mapped as %+v", u)
	}
	if u := by["carol@acme.example"]; u.Active || u.TwoFactor == nil || *u.TwoFactor || u.Department != "Finance" {
		t.Errorf("carol (archived, not enrolled) mapped as %+v", u)
	}
	if u := by["dan@acme.example"]; !u.Active || u.Manager != "ada@acme.example" || *u.TwoFactor {
		t.Errorf("dan mapped as %+v", u)
	}
	if u := by["erin@acme.example"]; u.Name != "Erin Echo" {
		t.Errorf("erin's name from given and family names: %+v", u)
	}
	q := <-f.queries
	for _, want := range []string{"customer=my_customer", "maxResults=500", "projection=full"} {
		if !strings.Contains(q, want) {
			t.Errorf("query %q lacks %s", q, want)
		}
	}
	if n := f.tokens.Load(); n != 1 {
		t.Errorf("%d token requests for one listing, want 1 (the token is reused)", n)
	}

	// A domain replaces the customer.
	f2 := newFake(t)
	if _, err := collect(t, f2.provider(), f2.target(map[string]string{"domain": "Acme.Example"})); err != nil {
		t.Fatal(err)
	}
	if q := <-f2.queries; !strings.Contains(q, "domain=acme.example") || strings.Contains(q, "customer=") {
		t.Errorf("domain query %q", q)
	}

	planner := app.NewSyncPlanner(nil, app.SyncOptions{MemberLimit: app.Unlimited})
	for _, u := range users {
		planner.Add(u)
	}
	if c := planner.Counts(); c.Created != 3 || c.Skipped != 2 {
		t.Errorf("planned %+v: want 3 created, 2 skipped (suspended, archived)", c)
	}
}

// TestConnect covers Test's answers: success, Google's refusals with its
// own message, bad fields named, and no message ever shows the key.
func TestConnect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mode    string
		vars    map[string]string
		creds   string
		success bool
		message string
	}{
		{"ok", "", nil, "", true, "impersonating admin@acme.example"},
		{"401", "401", nil, "", false, "Request had invalid authentication credentials"},
		{"403", "403", nil, "", false, "Not Authorized to access this resource/api"},
		{"no delegation", "", map[string]string{"adminEmail": "other@acme.example"}, "", false, "unauthorized_client"},
		{"echoed key", "echo", nil, "", false, "[redacted]"},
		{"no admin", "", map[string]string{"adminEmail": ""}, "", false, "adminEmail: is required"},
		{"bad admin", "", map[string]string{"adminEmail": "not an address"}, "", false, "adminEmail: is not an e-mail"},
		{"bad customer", "", map[string]string{"customer": "a/b"}, "", false, "customer:"},
		{"bad domain", "", map[string]string{"domain": "-x"}, "", false, "domain:"},
		{"no key", "", nil, " ", false, "serviceAccountJson: is required"},
		{"not json", "", nil, "-----BEGIN PRIVATE KEY-----", false, "serviceAccountJson: is not a JSON key file"},
		{"damaged key", "", nil, `{"type":"service_account","client_email":"a@b.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n","token_uri":"https://oauth2.googleapis.com/token"}`, false, "private_key is not a PEM RSA private key"},
		{"http token uri", "", nil, "http", false, "token_uri must be an https URL"},
		{"not a service account", "", nil, `{"type":"authorized_user","client_id":"x","client_secret":"y"}`, false, "must be a service account"},
	}
	_, pk := key(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.mode.Store(tc.mode)
			target := f.target(tc.vars)
			if tc.creds == "http" {
				target.Credentials["serviceAccountJson"] = strings.Replace(target.Credentials["serviceAccountJson"], `"token_uri":"https://`, `"token_uri":"http://`, 1)
			} else if tc.creds != "" {
				target.Credentials["serviceAccountJson"] = tc.creds
			}
			r := f.provider().Test(context.Background(), target)
			if r.Success != tc.success || !strings.Contains(r.Message, tc.message) {
				t.Fatalf("Test = %+v, want success %v and a message containing %q", r, tc.success, tc.message)
			}
			body := strings.Split(pk, "\n")[3]
			if strings.Contains(r.Message, body) || strings.Contains(r.Account, body) || strings.Contains(r.Message, "PRIVATE KEY") {
				t.Fatalf("the message shows the key: %q", r.Message)
			}
			if !tc.success {
				err := f.provider().Users(context.Background(), target, func(app.DirectoryUser) error { return nil })
				if err == nil || strings.Contains(err.Error(), body) || strings.Contains(err.Error(), "PRIVATE KEY") {
					t.Fatalf("Users: %v", err)
				}
			}
		})
	}
}

// TestLimits: a rate limit is waited out as Retry-After says; a page
// token loop, an endless listing, a huge body and a cancelled context end
// the listing with an error.
func TestLimits(t *testing.T) {
	t.Parallel()
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("429")
		start := time.Now()
		users, err := collect(t, f.provider(), f.target(nil))
		if err != nil || len(users) != 5 {
			t.Fatalf("%d users, %v", len(users), err)
		}
		if time.Since(start) < time.Second {
			t.Errorf("the Retry-After of 1 s was not waited")
		}
	})
	t.Run("loop", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("loop")
		if _, err := collect(t, f.provider(), f.target(nil)); err == nil || !strings.Contains(err.Error(), "loop") || f.calls.Load() != 2 {
			t.Fatalf("err %v after %d calls", err, f.calls.Load())
		}
	})
	t.Run("endless", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("endless")
		p := f.provider()
		p.maxPages = 7
		if _, err := collect(t, p, f.target(nil)); err == nil || !strings.Contains(err.Error(), "after 7 pages") || f.calls.Load() != 7 {
			t.Fatalf("err %v after %d calls", err, f.calls.Load())
		}
	})
	t.Run("huge", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("huge")
		p := f.provider()
		p.maxBody = 256 << 10
		if _, err := collect(t, p, f.target(nil)); err == nil || !strings.Contains(err.Error(), "larger than the limit") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		f.mode.Store("hang")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		err := f.provider().Users(ctx, f.target(nil), func(app.DirectoryUser) error { return nil })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("stop", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		stop := errors.New("enough")
		n := 0
		err := f.provider().Users(context.Background(), f.target(nil), func(app.DirectoryUser) error {
			if n++; n == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || f.calls.Load() != 2 {
			t.Fatalf("err %v after %d calls", err, f.calls.Load())
		}
	})
}

// BenchmarkUsers10000 lists 10,000 users in 20 pages of 500 through the
// fake.
func BenchmarkUsers10000(b *testing.B) {
	f := newFake(b)
	f.pages = map[string][]byte{}
	for p := 0; p < 20; p++ {
		var page userPageFixture
		for i := 0; i < 500; i++ {
			n := p*500 + i
			page.Users = append(page.Users, map[string]any{
				"kind": "admin#directory#user", "id": strconv.Itoa(100000000 + n), "primaryEmail": fmt.Sprintf("user%05d@acme.example", n),
				"name":      map[string]string{"givenName": "User", "familyName": strconv.Itoa(n), "fullName": "User " + strconv.Itoa(n)},
				"suspended": n%10 == 0, "archived": false, "isEnrolledIn2Sv": n%3 == 0, "isEnforcedIn2Sv": false,
				"organizations": []map[string]any{{"department": "Engineering", "primary": true}},
				"relations":     []map[string]string{{"type": "manager", "value": "boss@acme.example"}},
				"orgUnitPath":   "/Engineering",
			})
		}
		if p < 19 {
			page.NextPageToken = "p" + strconv.Itoa(p+1)
		}
		token := ""
		if p > 0 {
			token = "p" + strconv.Itoa(p)
		}
		f.pages[token], _ = json.Marshal(page)
	}
	p, target := f.provider(), f.target(nil)
	var heap heapPeak
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if err := p.Users(context.Background(), target, func(app.DirectoryUser) error { n++; heap.sample(); return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 10000 {
			b.Fatalf("%d users", n)
		}
	}
	heap.report(b)
}

type userPageFixture struct {
	Users         []map[string]any `json:"users"`
	NextPageToken string           `json:"nextPageToken,omitempty"`
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
