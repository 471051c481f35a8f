package googleworkspace

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// ScopeGroups reads groups and their members, delegated beside Scope when
// readGroups is on.
const ScopeGroups = "https://www.googleapis.com/auth/admin.directory.group.readonly"

// maxMemberships bounds the user-to-group map a run keeps.
const maxMemberships = 2_000_000

type groupPage struct {
	Groups []struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"groups"`
	NextPageToken string `json:"nextPageToken"`
}

type memberPage struct {
	Members []struct {
		ID     string `json:"id"`
		Email  string `json:"email"`
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"members"`
	NextPageToken string `json:"nextPageToken"`
}

// memberships reads the account's groups (GET groups) and each group's
// members (GET groups/{key}/members), paging with pageToken, into a map
// from user id to the groups' e-mail addresses (lower case), in the order
// Google lists the groups. Only direct members of type USER count. A
// refusal fails the listing: role mapping must not run on missing groups.
func (ss *session) memberships(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	n := 0
	groups := func(token string) url.Values {
		if ss.s.domain != "" {
			return paged(200, token, "domain", ss.s.domain)
		}
		return paged(200, token, "customer", ss.s.customer)
	}
	err := listPages(ctx, ss, "groups", "/admin/directory/v1/groups", groups, func(gp *groupPage) (string, error) {
		for _, g := range gp.Groups {
			name := strings.ToLower(strings.TrimSpace(g.Email))
			if name == "" || g.ID == "" {
				continue
			}
			path := "/admin/directory/v1/groups/" + url.PathEscape(g.ID) + "/members"
			members := func(token string) url.Values { return paged(200, token) }
			err := listPages(ctx, ss, "the members of group "+name, path, members, func(mp *memberPage) (string, error) {
				for _, m := range mp.Members {
					if m.Type != "USER" || m.ID == "" {
						continue
					}
					out[m.ID] = append(out[m.ID], name)
					if n++; n > maxMemberships {
						return "", fmt.Errorf("the account has more than %d group memberships", maxMemberships)
					}
				}
				return mp.NextPageToken, nil
			})
			if err != nil {
				return "", err
			}
		}
		return gp.NextPageToken, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
