package entra

import (
	"context"
	"fmt"
)

// collection is one page of a Graph collection.
type collection[T any] struct {
	Value    []T    `json:"value"`
	NextLink string `json:"@odata.nextLink"`
}

// listPages reads a Graph collection from first, following
// @odata.nextLink, and hands each page's entries to each. Errors of each
// are returned as they are; a repeated link or too many pages is an error.
func listPages[T any](ctx context.Context, ss *session, what, first string, each func([]T) error) error {
	seen := map[string]bool{}
	next := first
	for n := 0; next != ""; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n >= ss.p.maxPages {
			return fmt.Errorf("Microsoft Graph kept answering %s with a next page after %d pages: the listing is stopped as a loop", what, ss.p.maxPages)
		}
		var res collection[T]
		if err := ss.get(ctx, next, &res); err != nil {
			return fmt.Errorf("reading %s (page %d): %w", what, n+1, err)
		}
		if err := each(res.Value); err != nil {
			return err
		}
		if res.NextLink != "" && seen[res.NextLink] {
			return fmt.Errorf("Microsoft Graph answered %s with a next-page link it gave before: the listing is stopped as a loop", what)
		}
		seen[res.NextLink] = true
		next = res.NextLink
	}
	return nil
}
