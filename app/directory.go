package app

import (
	"context"
	"net/mail"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// A directory is an integration provider that also lists the
// organization's people (LDAP or Active Directory on-premises; Google
// Workspace, Microsoft Entra ID or Okta where the network allows). Sync
// matches them to the people register by e-mail, creates joiners,
// deactivates leavers and reactivates returners; it never deletes a person.

// DirectoryProvider is an integration provider with CapabilityEmployeeSync.
type DirectoryProvider interface {
	IntegrationProvider
	// Users calls yield once per user of the directory, page by page as
	// the directory answers, so memory stays bounded however large the
	// directory is. An error from yield stops the listing and is returned.
	Users(ctx context.Context, c ConnectionTarget, yield func(DirectoryUser) error) error
}

// DirectoryUser is one person as the directory knows them.
type DirectoryUser struct {
	// ExternalID is the directory's stable id (entryUUID, objectGUID, the
	// provider's user id); the DN or login name when there is none.
	ExternalID string   `json:"externalId"`
	Login      string   `json:"login,omitempty"` // uid, sAMAccountName, userPrincipalName
	Email      string   `json:"email"`
	Name       string   `json:"name"`
	Department string   `json:"department,omitempty"`
	Manager    string   `json:"manager,omitempty"` // the manager's DN, id or e-mail, as the directory gives it
	Active     bool     `json:"active"`
	Groups     []string `json:"groups,omitempty"`
	// TwoFactor is whether a second factor is enrolled; nil when the
	// directory does not say (LDAP).
	TwoFactor *bool `json:"twoFactor,omitempty"`
}

// NormalizeEmail is the form e-mail addresses are matched in: Unicode NFC,
// trimmed, lower case.
func NormalizeEmail(s string) string {
	return strings.ToLower(norm.NFC.String(strings.TrimSpace(s)))
}

// Sources of a person in the register.
const (
	PersonSourceManual    = "manual"
	PersonSourceDirectory = "directory"
)

// SyncMember is what sync knows of a person already in the register.
type SyncMember struct {
	PersonID   string
	Email      string
	Name       string
	Department string
	Role       Role
	Active     bool
	Source     string // PersonSourceManual or PersonSourceDirectory
}

// Sync actions, one per person a run looked at.
const (
	SyncCreate     = "create"
	SyncUpdate     = "update"
	SyncDeactivate = "deactivate"
	SyncReactivate = "reactivate"
	SyncUnchanged  = "unchanged"
	SyncSkipped    = "skipped"
	SyncError      = "error"
)

// SyncChange is what a run does (or, in a dry run, would do) to one person.
type SyncChange struct {
	Action   string            `json:"action"`
	PersonID string            `json:"personId,omitempty"`
	Email    string            `json:"email"`
	Name     string            `json:"name,omitempty"`
	Role     Role              `json:"role,omitempty"` // of a person created
	Fields   map[string]string `json:"fields,omitempty"`
	Reason   string            `json:"reason,omitempty"`
}

// SyncCounts sums a run's changes.
type SyncCounts struct {
	Found       int `json:"found"`
	Created     int `json:"created"`
	Updated     int `json:"updated"`
	Deactivated int `json:"deactivated"`
	Reactivated int `json:"reactivated"`
	Unchanged   int `json:"unchanged"`
	Skipped     int `json:"skipped"`
	Errors      int `json:"errors"`
}

// SyncOptions are the rules of one organization's sync.
type SyncOptions struct {
	// MemberLimit is the plan's member limit (Unlimited for none) and
	// Members the active members counted against it now.
	MemberLimit int
	Members     int
	// DefaultRole is the role of joiners no group maps; employee when
	// empty. Never owner or admin: ValidateSyncRoles refuses them.
	DefaultRole Role
	// GroupRoles maps a directory group (as the directory names it) to the
	// role of joiners in it; the first match in Groups order wins. Keys
	// are lower case: groups match case-insensitively.
	GroupRoles map[string]Role
	// ApplyToExisting changes the role of people found (never an owner)
	// to what their groups map, or the default role.
	ApplyToExisting bool
}

// syncableRoles are the roles sync may give a joiner.
var syncableRoles = []Role{RoleEmployee, RoleContractor, RoleAuditor}

// ValidateSyncRoles checks a default role and group mapping: sync never
// creates an owner or an admin; people are promoted by hand.
func ValidateSyncRoles(def Role, groups map[string]Role, v *ValidationError) {
	ok := func(r Role) bool {
		for _, s := range syncableRoles {
			if r == s {
				return true
			}
		}
		return false
	}
	names := make([]string, len(syncableRoles))
	for i, r := range syncableRoles {
		names[i] = string(r)
	}
	if def != "" && !ok(def) {
		v.Add("defaultRole", CodeInvalidEnum, string(def), "defaultRole must be one of "+strings.Join(names, ", ")+": sync never creates owners or admins")
	}
	for g, r := range groups {
		if !ok(r) {
			v.Add("groupRoles", CodeInvalidEnum, g+"="+string(r), "groupRoles may map groups to "+strings.Join(names, ", ")+" only: sync never creates owners or admins")
		}
	}
}

// SyncPlanner decides, user by user as a directory streams them, what a
// sync run changes. It holds the register's members (bounded by the plan's
// member limit), never the whole directory.
type SyncPlanner struct {
	opts    SyncOptions
	byEmail map[string]*SyncMember
	seen    map[string]bool // normalized e-mails seen in the directory
	members int
	counts  SyncCounts
}

// NewSyncPlanner starts a plan over the register's current members.
func NewSyncPlanner(members []SyncMember, opts SyncOptions) *SyncPlanner {
	if opts.DefaultRole == "" {
		opts.DefaultRole = RoleEmployee
	}
	p := &SyncPlanner{opts: opts, byEmail: make(map[string]*SyncMember, len(members)), seen: map[string]bool{}, members: opts.Members}
	for i := range members {
		m := members[i]
		p.byEmail[NormalizeEmail(m.Email)] = &m
	}
	return p
}

// Add plans the change for one directory user.
func (p *SyncPlanner) Add(u DirectoryUser) SyncChange {
	p.counts.Found++
	email := NormalizeEmail(u.Email)
	c := SyncChange{Email: email, Name: strings.TrimSpace(u.Name)}
	if email == "" {
		return p.count(SyncChange{Action: SyncSkipped, Email: u.Login, Name: c.Name, Reason: "no e-mail address in the directory"})
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		c.Action, c.Reason = SyncError, "the directory's e-mail address is not valid"
		return p.count(c)
	}
	if p.seen[email] {
		c.Action, c.Reason = SyncError, "another directory user has the same e-mail address"
		return p.count(c)
	}
	p.seen[email] = true
	if c.Name == "" {
		c.Name = email
	}
	m := p.byEmail[email]
	if m == nil {
		if !u.Active {
			c.Action, c.Reason = SyncSkipped, "disabled in the directory and not in the register"
			return p.count(c)
		}
		if p.opts.MemberLimit != Unlimited && p.members >= p.opts.MemberLimit {
			c.Action, c.Reason = SyncSkipped, "the plan's member limit is reached"
			return p.count(c)
		}
		p.members++
		c.Action, c.Role = SyncCreate, p.roleFor(u.Groups)
		c.Fields = map[string]string{"department": strings.TrimSpace(u.Department)}
		return p.count(c)
	}
	c.PersonID = m.PersonID
	if !u.Active {
		if !m.Active {
			c.Action = SyncUnchanged
			return p.count(c)
		}
		return p.count(p.leave(m, "disabled in the directory"))
	}
	fields := map[string]string{}
	if c.Name != m.Name && strings.TrimSpace(u.Name) != "" {
		fields["name"] = c.Name
	}
	if d := strings.TrimSpace(u.Department); d != "" && d != m.Department {
		fields["department"] = d
	}
	if m.Source != PersonSourceDirectory {
		fields["source"] = PersonSourceDirectory
	}
	if r := p.roleFor(u.Groups); p.opts.ApplyToExisting && m.Role != RoleOwner && r != m.Role {
		// The directory's groups decide the role (never an owner's).
		fields["role"] = string(r)
	}
	if !m.Active {
		if p.opts.MemberLimit != Unlimited && p.members >= p.opts.MemberLimit {
			c.Action, c.Reason = SyncSkipped, "returned in the directory, but the plan's member limit is reached"
			return p.count(c)
		}
		p.members++
		c.Action, c.Fields = SyncReactivate, fields
		return p.count(c)
	}
	if len(fields) == 0 {
		c.Action = SyncUnchanged
		return p.count(c)
	}
	c.Action, c.Fields = SyncUpdate, fields
	return p.count(c)
}

// Leavers plans the deactivation of every active person the directory
// manages that the listing did not contain. Call it once, after the last
// Add, and only when the listing was complete: a failed or partial listing
// must never deactivate anyone.
func (p *SyncPlanner) Leavers() []SyncChange {
	var out []SyncChange
	for email, m := range p.byEmail {
		if m.Source != PersonSourceDirectory || !m.Active || p.seen[email] {
			continue
		}
		out = append(out, p.count(p.leave(m, "no longer in the directory")))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Email < out[j].Email })
	return out
}

// Counts sums the changes planned so far.
func (p *SyncPlanner) Counts() SyncCounts { return p.counts }

func (p *SyncPlanner) leave(m *SyncMember, why string) SyncChange {
	c := SyncChange{PersonID: m.PersonID, Email: NormalizeEmail(m.Email), Name: m.Name}
	if m.Role == RoleOwner {
		c.Action, c.Reason = SyncSkipped, why+"; owners are never deactivated by sync: transfer ownership and deactivate by hand"
		return c
	}
	p.members--
	c.Action, c.Reason = SyncDeactivate, why
	return c
}

func (p *SyncPlanner) roleFor(groups []string) Role {
	for _, g := range groups {
		if r, ok := p.opts.GroupRoles[strings.ToLower(g)]; ok {
			return r
		}
	}
	return p.opts.DefaultRole
}

func (p *SyncPlanner) count(c SyncChange) SyncChange {
	switch c.Action {
	case SyncCreate:
		p.counts.Created++
	case SyncUpdate:
		p.counts.Updated++
	case SyncDeactivate:
		p.counts.Deactivated++
	case SyncReactivate:
		p.counts.Reactivated++
	case SyncUnchanged:
		p.counts.Unchanged++
	case SyncSkipped:
		p.counts.Skipped++
	case SyncError:
		p.counts.Errors++
	}
	return c
}
