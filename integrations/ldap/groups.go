package ldap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goldap "github.com/go-ldap/ldap/v3"
)

// Group search, for servers without the memberOf overlay: the groups under
// groupBaseDn are read once per run (paged), and each user's groups are
// the DNs of the groups naming them, beside any memberOf values.

var defaultGroupFilters = map[string]string{
	TypeOpenLDAP:        "(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames)(objectClass=posixGroup))",
	TypeActiveDirectory: "(objectClass=group)",
}

// memberAttributes are the group attributes naming members: member and
// uniqueMember hold DNs, memberUid login names.
var memberAttributes = []string{"member", "uniqueMember", "memberUid"}

// maxMemberships bounds the memberships a run keeps.
const maxMemberships = 2_000_000

func (s *settings) parseGroups(v map[string]string) error {
	s.groupBase = strings.TrimSpace(v["groupBaseDn"])
	filter, attr := strings.TrimSpace(v["groupFilter"]), strings.TrimSpace(v["memberAttribute"])
	if s.groupBase == "" {
		if filter != "" || attr != "" {
			return &fieldError{"groupBaseDn", "is required when a group filter or member attribute is set"}
		}
		return nil
	}
	if _, err := goldap.ParseDN(s.groupBase); err != nil {
		return &fieldError{"groupBaseDn", "is not a valid DN"}
	}
	s.groupFilter = filter
	if s.groupFilter == "" {
		s.groupFilter = defaultGroupFilters[s.dirType]
	}
	if _, err := goldap.CompileFilter(s.groupFilter); err != nil {
		return &fieldError{"groupFilter", "is not a valid LDAP filter"}
	}
	switch {
	case attr == "":
		s.memberAttrs = memberAttributes
	case strings.EqualFold(attr, "member"), strings.EqualFold(attr, "uniqueMember"), strings.EqualFold(attr, "memberUid"):
		for _, a := range memberAttributes {
			if strings.EqualFold(a, attr) {
				s.memberAttrs = []string{a}
			}
		}
	default:
		return &fieldError{"memberAttribute", "must be member, uniqueMember or memberUid"}
	}
	return nil
}

// memberships maps a member (a normalized DN, or "uid:" and a login name)
// to the DNs of its groups, in the order the server listed them.
type memberships struct {
	by map[string][]string
}

// readGroups searches the groups with the paged-results control.
func (s *settings) readGroups(ctx context.Context, conn *goldap.Conn) (*memberships, error) {
	m := &memberships{by: map[string][]string{}}
	n := 0
	paging := goldap.NewControlPaging(s.pageSize)
	for page := 0; ; page++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		req := goldap.NewSearchRequest(s.groupBase, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, int(opTimeout/time.Second), false,
			s.groupFilter, s.memberAttrs, []goldap.Control{paging})
		res, err := conn.Search(req)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, fmt.Errorf("searching the groups (page %d) failed: %s", page+1, ldapMessage(err))
		}
		for _, e := range res.Entries {
			for _, a := range s.memberAttrs {
				for _, v := range e.GetAttributeValues(a) {
					key := ""
					if a == "memberUid" {
						key = "uid:" + strings.ToLower(strings.TrimSpace(v))
					} else {
						key = normalDN(v)
					}
					if key == "" || key == "uid:" {
						continue
					}
					m.by[key] = append(m.by[key], e.DN)
					if n++; n > maxMemberships {
						return nil, fmt.Errorf("the groups list more than %d memberships", maxMemberships)
					}
				}
			}
		}
		ctl, ok := goldap.FindControl(res.Controls, goldap.ControlTypePaging).(*goldap.ControlPaging)
		if !ok || len(ctl.Cookie) == 0 {
			if page == 0 && !ok && len(res.Entries) >= int(s.pageSize) {
				return nil, errors.New("the directory ignored the paged-results control on the group search: it may have returned only part of the groups")
			}
			return m, nil
		}
		paging.SetCookie(ctl.Cookie)
	}
}

// of adds the groups naming the entry (by DN or uid) to those memberOf
// gave, each once (case-insensitively).
func (m *memberships) of(e *goldap.Entry, have []string) []string {
	out := have
	seen := map[string]bool{}
	for _, g := range have {
		seen[strings.ToLower(g)] = true
	}
	add := func(gs []string) {
		for _, g := range gs {
			if !seen[strings.ToLower(g)] {
				seen[strings.ToLower(g)] = true
				out = append(out, g)
			}
		}
	}
	add(m.by[normalDN(e.DN)])
	for _, uid := range e.GetAttributeValues("uid") {
		add(m.by["uid:"+strings.ToLower(strings.TrimSpace(uid))])
	}
	for _, name := range e.GetAttributeValues("sAMAccountName") {
		add(m.by["uid:"+strings.ToLower(strings.TrimSpace(name))])
	}
	return out
}

// normalDN is the form DNs are matched in: attribute types and values
// lower case, no spaces around separators, without a uniqueMember's
// trailing unique identifier (#'0101'B).
func normalDN(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "#'"); i > 0 && strings.HasSuffix(s, "'B") {
		s = s[:i]
	}
	dn, err := goldap.ParseDN(s)
	if err != nil {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for i, rdn := range dn.RDNs {
		if i > 0 {
			b.WriteByte(',')
		}
		for j, a := range rdn.Attributes {
			if j > 0 {
				b.WriteByte('+')
			}
			b.WriteString(strings.ToLower(a.Type) + "=" + strings.ToLower(a.Value))
		}
	}
	return b.String()
}
