package app

import "strings"

// PersonSources are the values of the people list's source filter.
var PersonSources = []string{PersonSourceManual, PersonSourceDirectory}

// TwoFactorFilterValues are the values of the people list's twoFactor filter
// (PersonTwoFactor.Status).
var TwoFactorFilterValues = []string{"enrolled", "not_enrolled", "unknown"}

// validatePersonSyncFilter checks the source and two-factor filters of the
// people list, naming the field of a value it does not know.
func validatePersonSyncFilter(f PersonFilter) error {
	ve := NewValidationError()
	if f.Source != "" && !containsString(PersonSources, f.Source) {
		ve.Add("source", CodeInvalidEnum, f.Source, "source must be one of "+strings.Join(PersonSources, ", "))
	}
	if f.TwoFactor != "" && !containsString(TwoFactorFilterValues, f.TwoFactor) {
		ve.Add("twoFactor", CodeInvalidEnum, f.TwoFactor, "twoFactor must be one of "+strings.Join(TwoFactorFilterValues, ", "))
	}
	return ve.Err()
}
