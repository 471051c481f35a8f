package app

import (
	"reflect"
	"sort"
	"testing"
)

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{
		" Alice@Example.COM ":      "alice@example.com",
		"jose\u0301@example.com":   "jos\u00e9@example.com", // decomposed é matches the composed form
		"JOS\u00c9@EXAMPLE.COM":    "jos\u00e9@example.com",
		"":                         "",
		"bob.smith+ci@example.org": "bob.smith+ci@example.org",
	} {
		if got := NormalizeEmail(in); got != want {
			t.Errorf("NormalizeEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSyncPlanner(t *testing.T) {
	yes := true
	register := []SyncMember{
		{PersonID: "usr_owner", Email: "owner@acme.test", Name: "Olga Owner", Role: RoleOwner, Active: true, Source: PersonSourceDirectory},
		{PersonID: "usr_same", Email: "Same@Acme.test", Name: "Sam Same", Department: "IT", Role: RoleEmployee, Active: true, Source: PersonSourceDirectory},
		{PersonID: "usr_moved", Email: "moved@acme.test", Name: "Mo Ved", Department: "IT", Role: RoleEmployee, Active: true, Source: PersonSourceDirectory},
		{PersonID: "usr_manual", Email: "manual@acme.test", Name: "Manny Manual", Role: RoleContractor, Active: true, Source: PersonSourceManual},
		{PersonID: "usr_adopt", Email: "adopt@acme.test", Name: "Ada Opt", Role: RoleEmployee, Active: true, Source: PersonSourceManual},
		{PersonID: "usr_gone", Email: "gone@acme.test", Name: "Gon E", Role: RoleEmployee, Active: true, Source: PersonSourceDirectory},
		{PersonID: "usr_disabled", Email: "disabled@acme.test", Name: "Dis Abled", Role: RoleEmployee, Active: true, Source: PersonSourceDirectory},
		{PersonID: "usr_back", Email: "back@acme.test", Name: "Bac K", Role: RoleEmployee, Active: false, Source: PersonSourceDirectory},
		{PersonID: "usr_stilloff", Email: "stilloff@acme.test", Name: "Still Off", Role: RoleEmployee, Active: false, Source: PersonSourceDirectory},
	}
	users := []struct {
		u    DirectoryUser
		want SyncChange
	}{
		{DirectoryUser{Email: "SAME@acme.test", Name: "Sam Same", Department: "IT", Active: true},
			SyncChange{Action: SyncUnchanged, PersonID: "usr_same", Email: "same@acme.test", Name: "Sam Same"}},
		{DirectoryUser{Email: "moved@acme.test", Name: "Mo Ved", Department: "Finance", Active: true, TwoFactor: &yes},
			SyncChange{Action: SyncUpdate, PersonID: "usr_moved", Email: "moved@acme.test", Name: "Mo Ved", Fields: map[string]string{"department": "Finance"}}},
		{DirectoryUser{Email: "adopt@acme.test", Name: "Ada Opt-Renamed", Active: true},
			SyncChange{Action: SyncUpdate, PersonID: "usr_adopt", Email: "adopt@acme.test", Name: "Ada Opt-Renamed", Fields: map[string]string{"name": "Ada Opt-Renamed", "source": "directory"}}},
		{DirectoryUser{Email: "new@acme.test", Name: "New Joiner", Department: "Sales", Active: true},
			SyncChange{Action: SyncCreate, Email: "new@acme.test", Name: "New Joiner", Role: RoleEmployee, Fields: map[string]string{"department": "Sales"}}},
		{DirectoryUser{Email: "auditor@acme.test", Name: "Aud Itor", Active: true, Groups: []string{"staff", "cn=auditors,ou=groups"}},
			SyncChange{Action: SyncCreate, Email: "auditor@acme.test", Name: "Aud Itor", Role: RoleAuditor, Fields: map[string]string{"department": ""}}},
		{DirectoryUser{Email: "disabled@acme.test", Name: "Dis Abled", Active: false},
			SyncChange{Action: SyncDeactivate, PersonID: "usr_disabled", Email: "disabled@acme.test", Name: "Dis Abled", Reason: "disabled in the directory"}},
		{DirectoryUser{Email: "back@acme.test", Name: "Bac K", Active: true},
			SyncChange{Action: SyncReactivate, PersonID: "usr_back", Email: "back@acme.test", Name: "Bac K", Fields: map[string]string{}}},
		{DirectoryUser{Email: "stilloff@acme.test", Name: "Still Off", Active: false},
			SyncChange{Action: SyncUnchanged, PersonID: "usr_stilloff", Email: "stilloff@acme.test", Name: "Still Off"}},
		{DirectoryUser{Email: "ghost@acme.test", Name: "Ghost", Active: false},
			SyncChange{Action: SyncSkipped, Email: "ghost@acme.test", Name: "Ghost", Reason: "disabled in the directory and not in the register"}},
		{DirectoryUser{Login: "svc-backup", Name: "Backup service", Active: true},
			SyncChange{Action: SyncSkipped, Email: "svc-backup", Name: "Backup service", Reason: "no e-mail address in the directory"}},
		{DirectoryUser{Email: "not an address", Name: "Broken", Active: true},
			SyncChange{Action: SyncError, Email: "not an address", Name: "Broken", Reason: "the directory's e-mail address is not valid"}},
		{DirectoryUser{Email: "New@Acme.test", Name: "Duplicate", Active: true},
			SyncChange{Action: SyncError, Email: "new@acme.test", Name: "Duplicate", Reason: "another directory user has the same e-mail address"}},
		{DirectoryUser{Email: "owner@acme.test", Name: "Olga Owner", Active: false},
			SyncChange{Action: SyncSkipped, PersonID: "usr_owner", Email: "owner@acme.test", Name: "Olga Owner",
				Reason: "disabled in the directory; owners are never deactivated by sync: transfer ownership and deactivate by hand"}},
	}
	p := NewSyncPlanner(register, SyncOptions{MemberLimit: Unlimited, Members: 7, GroupRoles: map[string]Role{"cn=auditors,ou=groups": RoleAuditor}})
	for _, tc := range users {
		got := p.Add(tc.u)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Add(%s):\n got %+v\nwant %+v", tc.u.Email, got, tc.want)
		}
	}
	leavers := p.Leavers()
	want := []SyncChange{{Action: SyncDeactivate, PersonID: "usr_gone", Email: "gone@acme.test", Name: "Gon E", Reason: "no longer in the directory"}}
	if !reflect.DeepEqual(leavers, want) {
		t.Errorf("leavers:\n got %+v\nwant %+v (manual people stay, inactive ones are not deactivated twice)", leavers, want)
	}
	wantCounts := SyncCounts{Found: 13, Created: 2, Updated: 2, Deactivated: 2, Reactivated: 1, Unchanged: 2, Skipped: 3, Errors: 2}
	if got := p.Counts(); got != wantCounts {
		t.Errorf("counts %+v, want %+v", got, wantCounts)
	}
}

// A run that would pass the plan's member limit adds none beyond it and
// says so per person, joiners and returners alike.
func TestSyncPlannerMemberLimit(t *testing.T) {
	register := []SyncMember{
		{PersonID: "usr_a", Email: "a@x.test", Name: "A", Role: RoleOwner, Active: true, Source: PersonSourceManual},
		{PersonID: "usr_b", Email: "b@x.test", Name: "B", Role: RoleEmployee, Active: false, Source: PersonSourceDirectory},
	}
	p := NewSyncPlanner(register, SyncOptions{MemberLimit: 2, Members: 1})
	actions := []string{}
	for _, e := range []string{"c@x.test", "d@x.test", "b@x.test"} {
		actions = append(actions, p.Add(DirectoryUser{Email: e, Name: e, Active: true}).Action)
	}
	if want := []string{SyncCreate, SyncSkipped, SyncSkipped}; !reflect.DeepEqual(actions, want) {
		t.Fatalf("actions %v, want %v", actions, want)
	}
	if c := p.Counts(); c.Created != 1 || c.Skipped != 2 || c.Reactivated != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestValidateSyncRoles(t *testing.T) {
	cases := []struct {
		def    Role
		groups map[string]Role
		fields []string
	}{
		{"", nil, nil},
		{RoleEmployee, map[string]Role{"auditors": RoleAuditor, "vendors": RoleContractor}, nil},
		{RoleAdmin, nil, []string{"defaultRole"}},
		{RoleOwner, map[string]Role{"admins": RoleAdmin}, []string{"defaultRole", "groupRoles"}},
		{RoleEmployee, map[string]Role{"x": "superuser"}, []string{"groupRoles"}},
	}
	for _, tc := range cases {
		v := NewValidationError()
		ValidateSyncRoles(tc.def, tc.groups, v)
		var got []string
		if err := v.Err(); err != nil {
			for f := range v.Fields {
				got = append(got, f)
			}
			sort.Strings(got)
		}
		if !reflect.DeepEqual(got, tc.fields) {
			t.Errorf("ValidateSyncRoles(%q, %v): fields %v, want %v", tc.def, tc.groups, got, tc.fields)
		}
	}
}
