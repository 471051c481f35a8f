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

type member struct {
	ID string `json:"id"`
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
	err := listPages(ctx, ss, "groups", ss.url("/v1.0/groups", url.Values{"$select": {"id,displayName"}, "$top": {strconv.Itoa(pageSize)}}),
		func(gs []group) error {
			for _, g := range gs {
				name := strings.TrimSpace(g.DisplayName)
				if name == "" || g.ID == "" {
					continue
				}
				first := ss.url("/v1.0/groups/"+url.PathEscape(g.ID)+"/members/microsoft.graph.user",
					url.Values{"$select": {"id"}, "$top": {strconv.Itoa(pageSize)}})
				err := listPages(ctx, ss, "the members of group "+name, first, func(ms []member) error {
					for _, m := range ms {
						out[m.ID] = append(out[m.ID], name)
						if n++; n > maxMemberships {
							return fmt.Errorf("the tenant has more than %d group memberships", maxMemberships)
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
