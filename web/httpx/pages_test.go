package httpx

import (
	"net/http/httptest"
	"testing"
)

func TestCrossSite(t *testing.T) {
	t.Parallel()
	s := &Server{opts: Options{PublicURL: "https://trust.acme.test"}}
	cases := []struct {
		name, host, fetchSite, origin string
		cross                         bool
	}{
		{"browser same origin behind a Host-rewriting proxy", "127.0.0.1:3333", "same-origin", "https://trust.acme.test", false},
		{"typed in the address bar", "a.test", "none", "", false},
		{"browser cross site", "a.test", "cross-site", "https://a.test", true},
		{"browser same site, other origin", "a.test", "same-site", "https://b.a.test", true},
		{"old browser, same host", "a.test", "", "http://a.test", false},
		{"old browser, public URL host", "127.0.0.1:3333", "", "https://trust.acme.test", false},
		{"old browser, other site", "a.test", "", "https://evil.test", true},
		{"opaque origin", "a.test", "", "null", true},
		{"no browser headers (scripts)", "a.test", "", "", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "http://"+c.host+"/trust/acme/request", nil)
		r.Host = c.host
		if c.fetchSite != "" {
			r.Header.Set("Sec-Fetch-Site", c.fetchSite)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := s.CrossSite(r); got != c.cross {
			t.Errorf("%s: crossSite = %v, want %v", c.name, got, c.cross)
		}
	}
}
