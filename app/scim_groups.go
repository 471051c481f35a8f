package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// SCIM group writes. Groups are the appliance's five fixed roles, so a
// group is never created or deleted through SCIM; changing a group's
// members changes people's roles:
//
//   - adding a person to a group gives them that role;
//   - removing a person from a group (other than employee) makes them an
//     employee, the role of people provisioned without a group; a person
//     always has exactly one role, so removing from employee is refused;
//   - the owner group is never written (ownership moves only by a transfer
//     in the appliance), and owners are never moved to another group, so
//     the organization keeps its owners;
//   - the admin group takes new members only when the SCIM token was made by
//     an owner (the rule of single sign-on's group mapping: only an owner may
//     map a group to admin); a token made by an admin or an API key may
//     remove admins but not add them.

// SCIMTokenCreatorStore tells who created the organization's SCIM token.
type SCIMTokenCreatorStore interface {
	// SCIMTokenCreator returns the created_by of the organization's token
	// (a login id or an API key id), ErrNotFound without a token.
	SCIMTokenCreator(ctx context.Context, orgID string) (string, error)
}

// SCIMGroupChange is a change of a role group's members.
type SCIMGroupChange struct {
	Add    []string // person ids given the role
	Remove []string // person ids taken out of it (to employee)
	// Replace, when not nil, is the whole member list: the others leave.
	Replace *[]string
}

// scimMayGrantAdmin reports whether the organization's SCIM token was
// created by one of its owners (a person or an owner's API key).
func (a *App) scimMayGrantAdmin(ctx context.Context, orgID string) (bool, error) {
	creator, err := a.store.SCIMTokenCreator(ctx, orgID)
	if errors.Is(err, ErrNotFound) || creator == "" {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if k, err := a.store.GetAPIKey(ctx, orgID, creator); err == nil {
		return k.Role == RoleOwner, nil
	}
	ms, err := a.store.ListMemberships(ctx, creator)
	if err != nil {
		return false, nil
	}
	for _, m := range ms {
		if m.OrganizationID == orgID {
			return m.Role == RoleOwner, nil
		}
	}
	return false, nil
}

// SCIMChangeGroup applies a change of a role group's members (SCIM only)
// and returns the number of people whose role changed.
func (a *App) SCIMChangeGroup(ctx context.Context, role Role, ch SCIMGroupChange) (int, error) {
	p, err := principal(ctx)
	if err != nil {
		return 0, err
	}
	if p.AuthType != AuthSCIM {
		return 0, ErrForbidden
	}
	if role == RoleOwner {
		return 0, Errorf(ErrForbidden, "the owner group is read-only: ownership moves only by a transfer in the appliance")
	}
	people, err := a.ListAllPeople(ctx)
	if err != nil {
		return 0, err
	}
	byID := make(map[string]*Person, len(people))
	for i := range people {
		byID[people[i].ID] = &people[i]
	}
	target := map[string]Role{} // person id -> new role
	var order []string
	set := func(id string, r Role) error {
		pp, ok := byID[strings.TrimSpace(id)]
		if !ok {
			return Invalid("members", CodeUnknownReference, id, fmt.Sprintf("no user %q in this organization", id))
		}
		if pp.Role == RoleOwner {
			return Errorf(ErrForbidden, "%s is an owner: owners are not moved between groups by provisioning", pp.Email)
		}
		if _, seen := target[pp.ID]; !seen {
			order = append(order, pp.ID)
		}
		target[pp.ID] = r
		return nil
	}
	leave := func(id string) error {
		pp, ok := byID[strings.TrimSpace(id)]
		if !ok {
			return Invalid("members", CodeUnknownReference, id, fmt.Sprintf("no user %q in this organization", id))
		}
		if pp.Role != role {
			return nil // not a member: nothing to remove
		}
		if role == RoleEmployee {
			return Invalid("members", CodeInvalid, id, "a person always has one role: add them to another group instead of removing them from employee")
		}
		return set(pp.ID, RoleEmployee)
	}
	if ch.Replace != nil {
		keep := map[string]bool{}
		for _, id := range *ch.Replace {
			keep[strings.TrimSpace(id)] = true
		}
		for _, pp := range people {
			if pp.Role == role && pp.IsActive && !keep[pp.ID] {
				if err := leave(pp.ID); err != nil {
					return 0, err
				}
			}
		}
		for _, id := range *ch.Replace {
			if err := set(id, role); err != nil {
				return 0, err
			}
		}
	}
	for _, id := range ch.Remove {
		if err := leave(id); err != nil {
			return 0, err
		}
	}
	for _, id := range ch.Add {
		if err := set(id, role); err != nil {
			return 0, err
		}
	}
	changed := 0
	for _, id := range order {
		if target[id] == RoleAdmin && byID[id].Role != RoleAdmin {
			ok, err := a.scimMayGrantAdmin(ctx, p.OrgID)
			if err != nil {
				return 0, err
			}
			if !ok {
				return 0, Errorf(ErrForbidden, "only a SCIM token created by an owner may add people to the admin group (as only an owner may map a group to admin)")
			}
			break
		}
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		for _, id := range order {
			if byID[id].Role == target[id] {
				continue
			}
			r := string(target[id])
			if _, err := a.UpdatePerson(ctx, id, PersonPatch{Role: &r}); err != nil {
				return err
			}
			changed++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("change scim group %s: %w", role, err)
	}
	return changed, nil
}
