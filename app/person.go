package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DeviceSummary is the short form of a device shown on a person.
type DeviceSummary struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Hostname string `json:"hostname"`
	Platform string `json:"platform"`
}

// Person is a member of an organization: a login identity plus a role.
type Person struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Email       string          `json:"email"`
	Role        Role            `json:"role"`
	Department  *string         `json:"department"`
	JobTitle    *string         `json:"jobTitle"`
	IsActive    bool            `json:"isActive"`
	LastLoginAt *time.Time      `json:"lastLoginAt"`
	Devices     []DeviceSummary `json:"devices"`
	Source      PersonSource    `json:"source"`
	TwoFactor   PersonTwoFactor `json:"twoFactor"`
	CreatedAt   time.Time       `json:"createdAt"`
	UpdatedAt   time.Time       `json:"updatedAt"`
}

// PersonCreate is the body of POST /v1/people.
type PersonCreate struct {
	Name       string  `json:"name"`
	Email      string  `json:"email"`
	Role       string  `json:"role"`
	Department *string `json:"department"`
	JobTitle   *string `json:"jobTitle"`
}

// PersonPatch is the body of PATCH /v1/people/{id}.
type PersonPatch struct {
	Name       *string     `json:"name"`
	Email      *string     `json:"email"`
	Role       *string     `json:"role"`
	Department Opt[string] `json:"department"`
	JobTitle   Opt[string] `json:"jobTitle"`
	IsActive   *bool       `json:"isActive"`
}

// PersonFilter narrows the people list.
type PersonFilter struct {
	Role     string
	IDs      []string // when set, only these (employees see themselves)
	Page     Page
	Inactive bool // include deactivated people
	// Source (manual, directory) and TwoFactor (enrolled, not_enrolled,
	// unknown) narrow the list to people of that source or status.
	Source    string
	TwoFactor string
}

// PersonStore persists people (a user identity and an org membership).
type PersonStore interface {
	// FindUserByEmail returns the user id of a login identity or ErrNotFound.
	FindUserByEmail(ctx context.Context, email string) (string, error)
	CreateUser(ctx context.Context, id, email, name, passwordHash string, at time.Time) error
	UpdateUser(ctx context.Context, id, email, name string, at time.Time) error
	SetPasswordHash(ctx context.Context, userID, hash string) error
	CreateMembership(ctx context.Context, orgID, userID string, p *Person) error
	UpdateMembership(ctx context.Context, orgID string, p *Person) error
	GetPerson(ctx context.Context, orgID, id string) (*Person, error)
	ListPeople(ctx context.Context, orgID string, f PersonFilter) (List[Person], error)
	CountMembers(ctx context.Context, orgID string) (int, error)
	CountOwners(ctx context.Context, orgID string) (int, error)
	// CountMemberships counts the organizations a user belongs to.
	CountMemberships(ctx context.Context, userID string) (int, error)
}

// sharedIdentity refuses a change to a login identity (name, email,
// password) that also belongs to other organizations: one organization's
// administrators must not take over a person's access to another.
func (a *App) sharedIdentity(ctx context.Context, p *Principal, userID string) error {
	if p.AuthType == AuthSystem || p.UserID == userID {
		return nil
	}
	n, err := a.store.CountMemberships(ctx, userID)
	if err != nil {
		return err
	}
	if n > 1 {
		return Errorf(ErrForbidden, "this person also belongs to other organizations; only they can change their name, email or password")
	}
	return nil
}

func (in *PersonCreate) normalize() {
	in.Name = strings.TrimSpace(in.Name)
	in.Email = strings.ToLower(strings.TrimSpace(in.Email))
	if in.Role == "" {
		in.Role = string(RoleEmployee)
	}
}

func (in *PersonCreate) validate(prefix string, v *ValidationError) {
	if in.Name == "" {
		v.Add(prefix+"name", CodeRequired, nil, prefix+"name is required")
	}
	maxLen(v, prefix+"name", in.Name, 200)
	if in.Email == "" {
		v.Add(prefix+"email", CodeRequired, nil, prefix+"email is required")
	} else if !validEmail(in.Email) {
		v.Add(prefix+"email", CodeInvalid, in.Email, prefix+"email must be an email address")
	}
	if _, ok := ParseRole(in.Role); !ok {
		v.Add(prefix+"role", CodeInvalidEnum, in.Role, prefix+"role must be one of owner, admin, auditor, employee, contractor")
	}
	if in.Department != nil {
		maxLen(v, prefix+"department", *in.Department, 64)
	}
	if in.JobTitle != nil {
		maxLen(v, prefix+"jobTitle", *in.JobTitle, 200)
	}
}

// ListPeople lists the organization's people; employees and contractors see
// only themselves.
func (a *App) ListPeople(ctx context.Context, f PersonFilter) (List[Person], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[Person]{}, err
	}
	if f.Role != "" {
		if _, ok := ParseRole(f.Role); !ok {
			return List[Person]{}, Invalid("role", CodeInvalidEnum, f.Role, "role must be one of owner, admin, auditor, employee, contractor")
		}
	}
	if err := validatePersonSyncFilter(f); err != nil {
		return List[Person]{}, err
	}
	if p.SeesOnlyAssigned() {
		f.IDs = []string{p.UserID}
	}
	l, err := a.store.ListPeople(ctx, p.OrgID, f)
	if err != nil {
		return l, err
	}
	return l, a.attachSyncInfo(ctx, p.OrgID, l.Items)
}

// GetPerson returns one person of the organization.
func (a *App) GetPerson(ctx context.Context, id string) (*Person, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && id != p.UserID {
		return nil, ErrNotFound
	}
	per, err := a.store.GetPerson(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	one := []Person{*per}
	if err := a.attachSyncInfo(ctx, p.OrgID, one); err != nil {
		return nil, err
	}
	return &one[0], nil
}

// CreatePerson adds a person to the organization.
func (a *App) CreatePerson(ctx context.Context, in PersonCreate) (*Person, error) {
	out, err := a.createPeople(ctx, []PersonCreate{in}, "")
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// BulkCreatePeople adds several people atomically: either all are created
// or none, with every entry's validation errors reported at once as
// members[i].field.
func (a *App) BulkCreatePeople(ctx context.Context, in []PersonCreate) ([]Person, error) {
	if len(in) == 0 {
		return nil, Invalid("members", CodeRequired, nil, "members must list at least one person")
	}
	if len(in) > 500 {
		return nil, Invalid("members", CodeTooLong, len(in), "members may list at most 500 people")
	}
	return a.createPeople(ctx, in, "members")
}

func (a *App) createPeople(ctx context.Context, in []PersonCreate, list string) ([]Person, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	v := NewValidationError()
	seen := map[string]int{}
	for i := range in {
		prefix := ""
		if list != "" {
			prefix = fmt.Sprintf("%s[%d].", list, i)
		}
		in[i].normalize()
		in[i].validate(prefix, v)
		if in[i].Role == string(RoleOwner) && p.Role != RoleOwner {
			v.Add(prefix+"role", CodeInvalid, in[i].Role, "only an owner may add another owner")
		}
		if j, dup := seen[in[i].Email]; dup && in[i].Email != "" {
			v.Add(prefix+"email", CodeInvalid, in[i].Email, fmt.Sprintf("%semail repeats entry %d", prefix, j))
		}
		seen[in[i].Email] = i
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	out := make([]Person, 0, len(in))
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		org, err := a.store.GetOrganization(ctx, p.OrgID)
		if err != nil {
			return err
		}
		members, err := a.store.CountMembers(ctx, p.OrgID)
		if err != nil {
			return err
		}
		for i, c := range in {
			if err := a.CheckLimit(org.Plan, "members", members+i); err != nil {
				return err
			}
			now := a.Now()
			userID, err := a.store.FindUserByEmail(ctx, c.Email)
			switch {
			case errors.Is(err, ErrNotFound):
				userID = NewID(PrefixPerson)
				if err := a.store.CreateUser(ctx, userID, c.Email, c.Name, "", now); err != nil {
					return err
				}
			case err != nil:
				return err
			}
			person := &Person{ID: userID, Name: c.Name, Email: c.Email, Role: Role(c.Role), Department: c.Department,
				JobTitle: c.JobTitle, IsActive: true, Devices: []DeviceSummary{}, CreatedAt: now, UpdatedAt: now}
			if err := a.store.CreateMembership(ctx, p.OrgID, userID, person); err != nil {
				if errors.Is(err, ErrConflict) {
					field := "email"
					if list != "" {
						field = fmt.Sprintf("%s[%d].email", list, i)
					}
					return Errorf(ErrConflict, "%s %s is already a member of this organization", field, c.Email)
				}
				return err
			}
			got, err := a.store.GetPerson(ctx, p.OrgID, userID)
			if err != nil {
				return err
			}
			out = append(out, *got)
			if err := a.record(ctx, Mutation{Action: "created", ResourceType: "person", ResourceID: got.ID, After: got,
				Events: []Event{ResourceEvent("person", "created", got)}}); err != nil {
				return err
			}
			if err := a.assignRequiredTraining(ctx, p.OrgID, got); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create people: %w", err)
	}
	return out, nil
}

// UpdatePerson applies a patch to a person.
func (a *App) UpdatePerson(ctx context.Context, id string, in PersonPatch) (*Person, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *Person
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetPerson(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		next := *before
		v := NewValidationError()
		if in.Name != nil {
			next.Name = strings.TrimSpace(*in.Name)
			if next.Name == "" {
				v.Add("name", CodeRequired, nil, "name must not be empty")
			}
			maxLen(v, "name", next.Name, 200)
		}
		if in.Email != nil {
			next.Email = strings.ToLower(strings.TrimSpace(*in.Email))
			if !validEmail(next.Email) {
				v.Add("email", CodeInvalid, *in.Email, "email must be an email address")
			}
		}
		if in.Role != nil {
			r, ok := ParseRole(*in.Role)
			if !ok {
				v.Add("role", CodeInvalidEnum, *in.Role, "role must be one of owner, admin, auditor, employee, contractor")
			} else if (r == RoleOwner || before.Role == RoleOwner) && r != before.Role {
				v.Add("role", CodeInvalid, *in.Role, "ownership changes through POST /v1/organization/transfer-ownership")
			}
			next.Role = r
		}
		if in.Department.Set {
			next.Department = nil
			if !in.Department.Null {
				maxLen(v, "department", in.Department.Value, 64)
				next.Department = Ptr(in.Department.Value)
			}
		}
		if in.JobTitle.Set {
			next.JobTitle = nil
			if !in.JobTitle.Null {
				maxLen(v, "jobTitle", in.JobTitle.Value, 200)
				next.JobTitle = Ptr(in.JobTitle.Value)
			}
		}
		if in.IsActive != nil {
			if !*in.IsActive && before.Role == RoleOwner {
				v.Add("isActive", CodeInvalid, false, "the owner cannot be deactivated; transfer ownership first")
			}
			next.IsActive = *in.IsActive
		}
		if err := v.Err(); err != nil {
			return err
		}
		if next.IsActive && !before.IsActive {
			// Reactivation counts against the plan's member limit like a create.
			org, err := a.store.GetOrganization(ctx, p.OrgID)
			if err != nil {
				return err
			}
			members, err := a.store.CountMembers(ctx, p.OrgID)
			if err != nil {
				return err
			}
			if err := a.CheckLimit(org.Plan, "members", members); err != nil {
				return err
			}
		}
		now := a.Now()
		next.UpdatedAt = now
		if next.Name != before.Name || next.Email != before.Email {
			if err := a.sharedIdentity(ctx, p, id); err != nil {
				return err
			}
			if err := a.store.UpdateUser(ctx, id, next.Email, next.Name, now); err != nil {
				if errors.Is(err, ErrConflict) {
					return Errorf(ErrConflict, "another person already uses the email %s", next.Email)
				}
				return err
			}
		}
		if err := a.store.UpdateMembership(ctx, p.OrgID, &next); err != nil {
			return err
		}
		got, err := a.store.GetPerson(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		out = got
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "person", ResourceID: id, Before: before, After: got,
			Events: []Event{ResourceEvent("person", "updated", got)}})
	})
	if err != nil {
		return nil, fmt.Errorf("update person %s: %w", id, err)
	}
	one := []Person{*out}
	if err := a.attachSyncInfo(ctx, p.OrgID, one); err != nil {
		return nil, err
	}
	return &one[0], nil
}

// TransferOwnership makes newOwnerID the owner; the previous owners become admins.
func (a *App) TransferOwnership(ctx context.Context, newOwnerID string) (*Person, error) {
	p, err := authorize(ctx, CapTransferOwnership)
	if err != nil {
		return nil, err
	}
	if newOwnerID == "" {
		return nil, Invalid("newOwnerId", CodeRequired, nil, "newOwnerId is required")
	}
	var out *Person
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		target, err := a.store.GetPerson(ctx, p.OrgID, newOwnerID)
		if errors.Is(err, ErrNotFound) {
			return Invalid("newOwnerId", CodeUnknownReference, newOwnerID, "newOwnerId must be a person of this organization")
		}
		if err != nil {
			return err
		}
		if !target.IsActive {
			return Invalid("newOwnerId", CodeInvalid, newOwnerID, "the new owner must be active")
		}
		if target.Role == RoleOwner {
			return Errorf(ErrConflict, "%s is already the owner", newOwnerID)
		}
		owners, err := a.store.ListPeople(ctx, p.OrgID, PersonFilter{Role: string(RoleOwner), Page: Page{Page: 1, PerPage: MaxPerPage}, Inactive: true})
		if err != nil {
			return err
		}
		now := a.Now()
		for _, o := range owners.Items {
			before := o
			o.Role, o.UpdatedAt = RoleAdmin, now
			if err := a.store.UpdateMembership(ctx, p.OrgID, &o); err != nil {
				return err
			}
			if err := a.record(ctx, Mutation{Action: "updated", ResourceType: "person", ResourceID: o.ID, Before: &before, After: &o}); err != nil {
				return err
			}
		}
		target.Role, target.UpdatedAt = RoleOwner, now
		if err := a.store.UpdateMembership(ctx, p.OrgID, target); err != nil {
			return err
		}
		out = target
		return a.record(ctx, Mutation{Action: "ownership_transferred", ResourceType: "organization", ResourceID: p.OrgID,
			Before: map[string]any{"ownerId": ownerIDs(owners.Items)}, After: map[string]any{"ownerId": target.ID},
			Events: []Event{{Type: "organization.ownership.transferred", Data: map[string]any{"organizationId": p.OrgID, "newOwnerId": target.ID, "previousOwnerIds": ownerIDs(owners.Items)}}}})
	})
	if err != nil {
		return nil, fmt.Errorf("transfer ownership: %w", err)
	}
	return out, nil
}

func ownerIDs(ps []Person) []string {
	ids := make([]string, 0, len(ps))
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	return ids
}

// SetPassword sets the login password of a person of the organization.
func (a *App) SetPassword(ctx context.Context, personID, password string) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if p.UserID != personID {
		if err := p.Require(CapManage); err != nil {
			return err
		}
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	return a.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := a.store.GetPerson(ctx, p.OrgID, personID); err != nil {
			return err
		}
		if err := a.sharedIdentity(ctx, p, personID); err != nil {
			return err
		}
		if err := a.store.SetPasswordHash(ctx, personID, hash); err != nil {
			return err
		}
		return a.record(ctx, Mutation{Action: "password_set", ResourceType: "person", ResourceID: personID})
	})
}
