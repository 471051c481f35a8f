package okta

import (
	"context"
	"encoding/json"
	"fmt"
)

// listPages reads a listing from first, following rel="next" links, and
// hands each page's entries (a JSON array of T) to page. Errors of page
// are returned as they are; a repeated link or too many pages is an error.
func listPages[T any](ctx context.Context, ss *session, what, first string, page func([]T) error) error {
	seen := map[string]bool{}
	next := first
	for n := 0; next != ""; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n >= ss.p.maxPages {
			return fmt.Errorf("Okta kept answering %s with a next page after %d pages: the listing is stopped as a loop", what, ss.p.maxPages)
		}
		res, err := ss.get(ctx, next)
		if err != nil {
			return fmt.Errorf("reading %s (page %d): %w", what, n+1, err)
		}
		var items []T
		if err := json.Unmarshal(res.Body, &items); err != nil {
			return fmt.Errorf("Okta answered page %d of %s with something that is not a list: %v", n+1, what, err)
		}
		if err := page(items); err != nil {
			return err
		}
		next = nextLink(res.Header)
		if next != "" && seen[next] {
			return fmt.Errorf("Okta answered %s with a next-page link it gave before: the listing is stopped as a loop", what)
		}
		seen[next] = true
	}
	return nil
}
