package entra

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// maxMemberships bounds the user-to-group map a run keeps (about 60 bytes
// a membership).
const maxMemberships = 2_000_000

type group struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
}

type groupPage struct {
	Value    []group `json:"value"`
	NextLink string  `json:"@odata.nextLink"`
}

type member struct {
	ID string `json:"id"`
}

type memberPage struct {
	Value    []member `json:"value"`
	NextLink string   `json:"@odata.nextLink"`
}

// memberships reads every group and its user members, once per run, into
// a map from user id to the groups' display names, in the order Graph
// lists the groups. It is one call per page of groups plus one per page of
// each group's members: fewer than one memberOf call per user whenever the
// tenant has fewer groups than users, and complete, where $expand=members
// stops at 20 members a group. A refusal (no GroupMember.Read.All) fails
// the listing: role mapping must not run on missing groups.
func (ss *session) memberships(ctx context.Context) (map[string][]string, error) {
	prev := ss.perm
	ss.perm = PermissionGroups
	defer func() { ss.perm = prev }()
	out := map[string][]string{}
	n := 0
	err := ss.each(ctx, "groups", ss.url("/v1.0/groups", url.Values{"$select": {"id,displayName"}, "$top": {strconv.Itoa(pageSize)}}),
		func(next string) (string, error) {
			var gp groupPage
			if err := ss.get(ctx, next, &gp); err != nil {
				return "", err
			}
			for _, g := range gp.Value {
				name := strings.TrimSpace(g.DisplayName)
				if name == "" || g.ID == "" {
					continue
				}
				first := ss.url("/v1.0/groups/"+url.PathEscape(g.ID)+"/members/microsoft.graph.user",
					url.Values{"$select": {"id"}, "$top": {strconv.Itoa(pageSize)}})
				err := ss.each(ctx, "the members of group "+name, first, func(next string) (string, error) {
					var mp memberPage
					if err := ss.get(ctx, next, &mp); err != nil {
						return "", err
					}
					for _, m := range mp.Value {
						out[m.ID] = append(out[m.ID], name)
						if n++; n > maxMemberships {
							return "", fmt.Errorf("the tenant has more than %d group memberships", maxMemberships)
						}
					}
					return mp.NextLink, nil
				})
				if err != nil {
					return "", err
				}
			}
			return gp.NextLink, nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// each follows a listing's next links from first until there is none; a
// repeated link or too many pages is an error.
func (ss *session) each(ctx context.Context, what, first string, page func(string) (string, error)) error {
	seen := map[string]bool{}
	next := first
	for n := 0; next != ""; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n >= ss.p.maxPages {
			return fmt.Errorf("Microsoft Graph kept answering %s with a next page after %d pages: the listing is stopped as a loop", what, ss.p.maxPages)
		}
		nx, err := page(next)
		if err != nil {
			return fmt.Errorf("reading %s (page %d): %w", what, n+1, err)
		}
		if nx != "" && seen[nx] {
			return fmt.Errorf("Microsoft Graph answered %s with a next-page link it gave before: the listing is stopped as a loop", what)
		}
		seen[nx] = true
		next = nx
	}
	return nil
}
