package storage

import "github.com/compliance-appliance/compliance/app"

// personSyncConditions are the people list's conditions on what directory
// sync recorded (person_directory): a person without a row is manual and
// of unknown two-factor status.
func personSyncConditions(f app.PersonFilter) []string {
	var out []string
	switch f.Source {
	case app.PersonSourceDirectory:
		out = append(out, `EXISTS (SELECT 1 FROM person_directory d WHERE d.organization_id = m.organization_id
			AND d.user_id = m.user_id AND d.source = 'directory')`)
	case app.PersonSourceManual:
		out = append(out, `NOT EXISTS (SELECT 1 FROM person_directory d WHERE d.organization_id = m.organization_id
			AND d.user_id = m.user_id AND d.source = 'directory')`)
	}
	switch f.TwoFactor {
	case "enrolled":
		out = append(out, `EXISTS (SELECT 1 FROM person_directory d WHERE d.organization_id = m.organization_id
			AND d.user_id = m.user_id AND d.two_factor = 1)`)
	case "not_enrolled":
		out = append(out, `EXISTS (SELECT 1 FROM person_directory d WHERE d.organization_id = m.organization_id
			AND d.user_id = m.user_id AND d.two_factor = 0)`)
	case "unknown":
		out = append(out, `NOT EXISTS (SELECT 1 FROM person_directory d WHERE d.organization_id = m.organization_id
			AND d.user_id = m.user_id AND d.two_factor IS NOT NULL)`)
	}
	return out
}
