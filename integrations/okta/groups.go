package okta

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// maxMemberships bounds the user-to-group map a run keeps.
const maxMemberships = 2_000_000

type group struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
}

// memberships reads every group (GET /api/v1/groups) and its users (GET
// /api/v1/groups/{id}/users), paging with the Link header, into a map from
// user id to group names in the order Okta lists the groups. A refusal
// fails the listing: role mapping must not run on missing groups.
func (ss *session) memberships(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	n := 0
	q := url.Values{"limit": {strconv.Itoa(pageSize)}}
	err := ss.each(ctx, "groups", ss.s.org.String()+"/api/v1/groups?"+q.Encode(), func(body []byte) error {
		var gs []group
		if err := json.Unmarshal(body, &gs); err != nil {
			return fmt.Errorf("Okta answered with something that is not a group list: %v", err)
		}
		for _, g := range gs {
			name := strings.TrimSpace(g.Profile.Name)
			if name == "" || g.ID == "" {
				continue
			}
			first := ss.s.org.String() + "/api/v1/groups/" + url.PathEscape(g.ID) + "/users?" + q.Encode()
			err := ss.each(ctx, "the users of group "+name, first, func(body []byte) error {
				var us []user
				if err := json.Unmarshal(body, &us); err != nil {
					return fmt.Errorf("Okta answered with something that is not a user list: %v", err)
				}
				for _, u := range us {
					out[u.ID] = append(out[u.ID], name)
					if n++; n > maxMemberships {
						return fmt.Errorf("the org has more than %d group memberships", maxMemberships)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// each reads a listing from first, following rel="next" links; a
// repeated link or too many pages is an error.
func (ss *session) each(ctx context.Context, what, first string, page func([]byte) error) error {
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
		if err := page(res.Body); err != nil {
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
