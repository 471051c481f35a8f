package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// checkPersonRef adds an unknown_reference error on field unless id names a
// person of the organization.
func (a *App) checkPersonRef(ctx context.Context, orgID, field string, id *string, ve *ValidationError) error {
	if id == nil {
		return nil
	}
	_, err := a.store.GetPerson(ctx, orgID, *id)
	if errors.Is(err, ErrNotFound) {
		ve.Add(field, CodeUnknownReference, *id, field+" must be a person of this organization")
		return nil
	}
	return err
}

// maxLinkedControls bounds the controls one risk or finding may name.
const maxLinkedControls = 200

// cleanIDs trims, drops empty entries and removes duplicates, keeping order.
func cleanIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

// checkControlRefs adds an unknown_reference error on field unless every id
// names a control of the organization.
func (a *App) checkControlRefs(ctx context.Context, orgID, field string, ids []string, ve *ValidationError) error {
	if len(ids) > maxLinkedControls {
		ve.Add(field, CodeTooLong, len(ids), fmt.Sprintf("%s may list at most %d controls", field, maxLinkedControls))
		return nil
	}
	missing, err := a.store.MissingControls(ctx, orgID, ids)
	if err != nil {
		return fmt.Errorf("check controls: %w", err)
	}
	if len(missing) > 0 {
		ve.Add(field, CodeUnknownReference, missing, field+" must name controls of this organization; unknown: "+strings.Join(missing, ", "))
	}
	return nil
}

// trimmed returns the trimmed string of p, or "" for nil.
func trimmed(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// optText applies a nullable text field of a patch: absent keeps dst, null
// or blank clears it.
func optText(ve *ValidationError, dst **string, src Opt[string], field string, max int) {
	if !src.Set {
		return
	}
	*dst = nil
	if src.Null {
		return
	}
	s := strings.TrimSpace(src.Value)
	if s == "" {
		return
	}
	maxLen(ve, field, s, max)
	*dst = &s
}

// optDate applies a nullable calendar date (YYYY-MM-DD; an RFC 3339 time is
// cut to its UTC date).
func optDate(ve *ValidationError, dst **string, src Opt[string], field string) {
	if !src.Set {
		return
	}
	*dst = nil
	if src.Null || strings.TrimSpace(src.Value) == "" {
		return
	}
	t, ok := ParseDate(strings.TrimSpace(src.Value))
	if !ok {
		ve.Add(field, CodeInvalid, src.Value, field+" must be a date (YYYY-MM-DD)")
		return
	}
	*dst = Ptr(t.Format("2006-01-02"))
}

// enumIn checks a required enum value.
func enumIn(ve *ValidationError, field, s string, allowed []string) {
	if s == "" {
		ve.Add(field, CodeInvalidEnum, s, field+" must be one of "+strings.Join(allowed, ", "))
		return
	}
	oneOf(ve, field, s, allowed)
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
