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
	err := ss.pages(ctx, "groups", 200, func(q url.Values) (string, error) {
		q.Del("projection")
		if ss.s.domain != "" {
			q.Set("domain", ss.s.domain)
		} else {
			q.Set("customer", ss.s.customer)
		}
		var gp groupPage
		if err := ss.get(ctx, "/admin/directory/v1/groups", q, &gp); err != nil {
			return "", err
		}
		for _, g := range gp.Groups {
			name := strings.ToLower(strings.TrimSpace(g.Email))
			if name == "" || g.ID == "" {
				continue
			}
			path := "/admin/directory/v1/groups/" + url.PathEscape(g.ID) + "/members"
			err := ss.pages(ctx, "the members of group "+name, 200, func(q url.Values) (string, error) {
				q.Del("projection")
				var mp memberPage
				if err := ss.get(ctx, path, q, &mp); err != nil {
					return "", err
				}
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
