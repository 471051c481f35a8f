// Package webfetch reads public web pages (a vendor's security.txt, home
// page and trust page) through the outbound client, so the network policy,
// timeouts and proxy apply. It implements app.WebFetcher.
package webfetch

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.WebFetcher = (*Fetcher)(nil)

// Fetcher GETs pages with the outbound client.
type Fetcher struct{ client *http.Client }

// New returns a fetcher over the outbound client.
func New(c *http.Client) *Fetcher { return &Fetcher{client: c} }

// Fetch GETs url and reads at most max bytes of the body (a longer body is
// cut, not an error). Redirects are followed by the client.
func (f *Fetcher) Fetch(ctx context.Context, url string, max int64) (*app.WebPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	req.Header.Set("User-Agent", "compliance-appliance vendor assessment")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	return &app.WebPage{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body}, nil
}
