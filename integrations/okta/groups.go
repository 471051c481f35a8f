package okta

import (
	"context"
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
	err := listPages(ctx, ss, "groups", ss.s.org.String()+"/api/v1/groups?"+q.Encode(), func(gs []group) error {
		for _, g := range gs {
			name := strings.TrimSpace(g.Profile.Name)
			if name == "" || g.ID == "" {
				continue
			}
			first := ss.s.org.String() + "/api/v1/groups/" + url.PathEscape(g.ID) + "/users?" + q.Encode()
			err := listPages(ctx, ss, "the users of group "+name, first, func(us []user) error {
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
