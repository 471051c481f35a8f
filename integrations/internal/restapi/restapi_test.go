package restapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestNextPage(t *testing.T) {
	base, _ := url.Parse("https://api.github.com/orgs/acme/repos?per_page=100")
	cases := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"github link", http.Header{"Link": {`<https://api.github.com/organizations/1/repos?per_page=100&page=2>; rel="next", <https://api.github.com/organizations/1/repos?per_page=100&page=9>; rel="last"`}},
			"https://api.github.com/organizations/1/repos?per_page=100&page=2"},
		{"next not first", http.Header{"Link": {`<https://api.github.com/x?page=1>; rel="prev", <https://api.github.com/x?page=3>; rel="next"`}},
			"https://api.github.com/x?page=3"},
		{"gitlab x-next-page", http.Header{"X-Next-Page": {"4"}}, "https://api.github.com/orgs/acme/repos?page=4&per_page=100"},
		{"last page", http.Header{"X-Next-Page": {""}, "Link": {`<https://api.github.com/x?page=1>; rel="first"`}}, ""},
	}
	for _, tc := range cases {
		next, err := nextPage(&Response{Header: tc.header, URL: base})
		got := ""
		if next != nil {
			got = next.String()
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestMessageShapes(t *testing.T) {
	c := &Client{Secret: "s3cret"}
	cases := []struct {
		body, ctype, want string
	}{
		{`{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`, "application/json", "Bad credentials"},
		{`{"message":"404 Project Not Found"}`, "application/json", "404 Project Not Found"},
		{`{"message":{"name":["has already been taken"]}}`, "application/json", `{"name":["has already been taken"]}`},
		{`{"error":"invalid_token","error_description":"Token was revoked."}`, "application/json", "invalid_token: Token was revoked."},
		{"Retry later\n", "text/plain", "Retry later"},
		{`<html>bad gateway</html>`, "text/html", "Bad Gateway"},
		{`{"message":"token s3cret refused"}`, "application/json", "token [redacted] refused"},
	}
	for _, tc := range cases {
		got := c.message(&Response{Status: http.StatusBadGateway, Header: http.Header{"Content-Type": {tc.ctype}}, Body: []byte(tc.body)})
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
	long := c.message(&Response{Status: 500, Header: http.Header{}, Body: []byte(`{"message":"` + strings.Repeat("x", 5000) + `"}`)})
	if len(long) > messageMax+4 {
		t.Errorf("message not shortened: %d bytes", len(long))
	}
}

func TestRateLimitResetForms(t *testing.T) {
	now := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	c := &Client{Now: func() time.Time { return now }}
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   time.Time
		ok     bool
	}{
		{"retry-after seconds", 429, http.Header{"Retry-After": {"30"}}, "", now.Add(30 * time.Second), true},
		{"retry-after date", 429, http.Header{"Retry-After": {"Wed, 25 Nov 2026 03:00:00 GMT"}}, "", now.Add(time.Hour), true},
		{"github primary", 403, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1795575600"}}, "", time.Unix(1795575600, 0), true},
		{"github secondary, no headers", 403, http.Header{}, `{"message":"You have exceeded a secondary rate limit."}`, now.Add(time.Minute), true},
		{"gitlab ratelimit-reset", 429, http.Header{"Ratelimit-Reset": {"1795575600"}}, "", time.Unix(1795575600, 0), true},
		{"plain 403", 403, http.Header{}, `{"message":"Resource not accessible by integration"}`, time.Time{}, false},
		{"404", 404, http.Header{"Retry-After": {"1"}}, "", time.Time{}, false},
	}
	for _, tc := range cases {
		got, ok := c.rateLimited(&Response{Status: tc.status, Header: tc.header, Body: []byte(tc.body)})
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLimitedClientSendsNothingUntilReset(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Retry-After", "600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	c := &Client{HTTP: srv.Client(), Base: base, MaxWait: time.Minute}
	for i := 0; i < 3; i++ {
		_, err := c.Get(context.Background(), "/x")
		var rl *RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if calls != 1 {
		t.Errorf("%d requests sent while limited", calls)
	}
}

func TestItemCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<`+"http://"+r.Host+`/x?page=`+r.URL.Query().Get("page")+`0>; rel="next"`)
		_, _ = w.Write([]byte(`[1,2,3,4,5]`))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	c := &Client{HTTP: srv.Client(), Base: base, MaxItems: 12}
	var got []int
	res, err := List(context.Background(), c, "/x?page=1", func(p []int) error { got = append(got, p...); return nil })
	if err != nil || !res.Truncated || len(got) != 12 || res.Pages != 3 || !strings.Contains(res.Reason, "12 items") {
		t.Errorf("%+v %v %d", res, err, len(got))
	}
}
