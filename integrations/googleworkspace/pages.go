package googleworkspace

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

// listPages reads path page by page: query makes each page's query from
// its page token ("" for the first), the answer is decoded into a P, and
// each takes the page and returns the next page token ("" at the end).
// Errors of each are returned as they are; a repeated token or too many
// pages is an error.
func listPages[P any](ctx context.Context, ss *session, what, path string, query func(token string) url.Values, each func(*P) (string, error)) error {
	token := ""
	seen := map[string]bool{}
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n >= ss.p.maxPages {
			return fmt.Errorf("Google kept answering with a next page of %s after %d pages: the listing is stopped as a loop", what, ss.p.maxPages)
		}
		var res P
		if err := ss.get(ctx, path, query(token), &res); err != nil {
			return fmt.Errorf("listing %s (page %d): %w", what, n+1, err)
		}
		next, err := each(&res)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("Google answered page %d of %s with a page token it gave before: the listing is stopped as a loop", n+1, what)
		}
		seen[next] = true
		token = next
	}
}

// paged is the query of one page of size entries: maxResults, the page
// token when there is one, and the pairs of extra (key, value, ...).
func paged(size int, token string, extra ...string) url.Values {
	q := url.Values{"maxResults": {strconv.Itoa(size)}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	if token != "" {
		q.Set("pageToken", token)
	}
	return q
}
