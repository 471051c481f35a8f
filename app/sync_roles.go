package app

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A directory connection's group-to-role mapping decides the role of the
// people it syncs: a joiner gets the role of their first mapped group, else
// the default role (employee); with ApplyToExisting, people already in the
// register follow their groups too, so a person the directory moves out of
// a mapped group is demoted. Sync never makes or changes an owner; only an
// owner may map a group to admin or apply the mapping to existing people.

// SyncGroupRole maps one directory group, as the directory names it (an
// LDAP group DN from memberOf, a Google organizational unit path), to a
// role. Groups match case-insensitively.
type SyncGroupRole struct {
	Group string `json:"group"`
	Role  Role   `json:"role"`
}

// SyncRoleMapping is a directory connection's group-to-role mapping.
type SyncRoleMapping struct {
	ConnectionID    string          `json:"connectionId"`
	DefaultRole     Role            `json:"defaultRole"`
	GroupRoles      []SyncGroupRole `json:"groupRoles"`
	ApplyToExisting bool            `json:"applyToExisting"`
	UpdatedBy       string          `json:"updatedBy"`
	UpdatedAt       *time.Time      `json:"updatedAt"`
}

// SyncRoleMappingInput is the body that replaces a mapping.
type SyncRoleMappingInput struct {
	DefaultRole *string `json:"defaultRole"`
	GroupRoles  []struct {
		Group string `json:"group"`
		Role  string `json:"role"`
	} `json:"groupRoles"`
	ApplyToExisting *bool `json:"applyToExisting"`
}

// SyncRoleStore persists group-to-role mappings.
type SyncRoleStore interface {
	// GetSyncRoleMapping returns nil (no error) when none was saved.
	GetSyncRoleMapping(ctx context.Context, orgID, connectionID string) (*SyncRoleMapping, error)
	SaveSyncRoleMapping(ctx context.Context, orgID string, m *SyncRoleMapping) error
}

const maxSyncGroupRoles = 100

// GetSyncRoleMapping returns a connection's mapping (the default when never
// saved: everyone employee, existing people untouched).
func (a *App) GetSyncRoleMapping(ctx context.Context, connectionID string) (*SyncRoleMapping, error) {
	p, err := a.integrationReader(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	// Any connection answers (the default for one never set); only a
	// directory's is ever used, and only a directory's can be set.
	return a.syncRoleMapping(ctx, p.OrgID, c.ID)
}

func (a *App) syncRoleMapping(ctx context.Context, orgID, connectionID string) (*SyncRoleMapping, error) {
	m, err := a.store.GetSyncRoleMapping(ctx, orgID, connectionID)
	if err != nil || m != nil {
		return m, err
	}
	return &SyncRoleMapping{ConnectionID: connectionID, DefaultRole: RoleEmployee, GroupRoles: []SyncGroupRole{}}, nil
}

// SetSyncRoleMapping replaces a directory connection's mapping (owners and
// admins; a group mapped to admin, or applying the mapping to existing
// people, only by an owner).
func (a *App) SetSyncRoleMapping(ctx context.Context, connectionID string, in SyncRoleMappingInput) (*SyncRoleMapping, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	c, err := a.store.GetConnection(ctx, p.OrgID, connectionID)
	if err != nil {
		return nil, err
	}
	if _, err := a.directoryProvider(c.ProviderSlug, "connectionId"); err != nil {
		return nil, err
	}
	now := a.Now()
	m := &SyncRoleMapping{ConnectionID: c.ID, DefaultRole: RoleEmployee, GroupRoles: []SyncGroupRole{}, UpdatedBy: p.ActorID(), UpdatedAt: &now}
	ve := NewValidationError()
	if in.DefaultRole != nil && *in.DefaultRole != "" {
		r, ok := ParseRole(*in.DefaultRole)
		if !ok || !containsRole(syncableRoles, r) {
			ve.Add("defaultRole", CodeInvalidEnum, *in.DefaultRole, "defaultRole must be one of employee, contractor, auditor")
		}
		m.DefaultRole = r
	}
	if len(in.GroupRoles) > maxSyncGroupRoles {
		ve.Add("groupRoles", CodeInvalid, nil, fmt.Sprintf("groupRoles may map at most %d groups", maxSyncGroupRoles))
	}
	seen := map[string]bool{}
	for i, g := range in.GroupRoles {
		if i >= maxSyncGroupRoles {
			break
		}
		f := fmt.Sprintf("groupRoles[%d]", i)
		name := strings.TrimSpace(g.Group)
		switch {
		case name == "":
			ve.Add(f+".group", CodeRequired, nil, f+".group is required: the directory group's name")
		case len(name) > 500:
			ve.Add(f+".group", CodeTooLong, nil, f+".group must be at most 500 bytes")
		case seen[strings.ToLower(name)]:
			ve.Add(f+".group", CodeInvalid, name, "the group "+name+" is mapped twice")
		}
		seen[strings.ToLower(name)] = true
		r, ok := ParseRole(g.Role)
		switch {
		case !ok || r == RoleOwner:
			ve.Add(f+".role", CodeInvalidEnum, g.Role, f+".role must be one of admin, auditor, employee, contractor (never owner)")
		case r == RoleAdmin && p.Role != RoleOwner:
			ve.Add(f+".role", CodeInvalid, g.Role, "only an owner may map a group to admin")
		}
		m.GroupRoles = append(m.GroupRoles, SyncGroupRole{Group: name, Role: r})
	}
	if in.ApplyToExisting != nil && *in.ApplyToExisting {
		if p.Role != RoleOwner {
			ve.Add("applyToExisting", CodeInvalid, true, "only an owner may apply the mapping to people already in the register: it can demote admins")
		}
		m.ApplyToExisting = true
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetSyncRoleMapping(ctx, p.OrgID, c.ID)
		if err != nil {
			return err
		}
		if err := a.store.SaveSyncRoleMapping(ctx, p.OrgID, m); err != nil {
			return err
		}
		var b any
		if before != nil {
			b = before
		}
		return a.record(ctx, Mutation{Action: "role_mapping_updated", ResourceType: "integration_connection", ResourceID: c.ID, Before: b, After: m})
	})
	if err != nil {
		return nil, fmt.Errorf("set sync role mapping: %w", err)
	}
	return m, nil
}

func containsRole(list []Role, r Role) bool {
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}

// apply sets the planner's role options from the mapping.
func (m *SyncRoleMapping) apply(o *SyncOptions) {
	o.DefaultRole = m.DefaultRole
	o.ApplyToExisting = m.ApplyToExisting
	o.GroupRoles = make(map[string]Role, len(m.GroupRoles))
	for _, g := range m.GroupRoles {
		o.GroupRoles[strings.ToLower(g.Group)] = g.Role
	}
}
