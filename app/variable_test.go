package app

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"company_name": "Acme", "a": "{{b}}", "b": "x", "empty": ""}
	for _, tc := range []struct {
		in, out    string
		unresolved string
	}{
		{"{{company_name}} and {{ company_name }}", "Acme and Acme", ""},
		{"{{a}} {{b}}", "{{b}} x", ""}, // values are never expanded again
		{"[{{empty}}]", "[]", ""},
		{"{{missing}} {{Bad-Name}} {{missing}}", "{{missing}} {{Bad-Name}} {{missing}}", "Bad-Name,missing"},
		{"{single} {{ }} {{with space}} {{{company_name}}}", "{single} {{ }} {{with space}} {Acme}", ""},
		{"no placeholders", "no placeholders", ""},
	} {
		r := Render(tc.in, vars)
		if r.Content != tc.out || strings.Join(r.Unresolved, ",") != tc.unresolved {
			t.Errorf("Render(%q) = %q, unresolved %v; want %q, %s", tc.in, r.Content, r.Unresolved, tc.out, tc.unresolved)
		}
	}
}

func TestVariableNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"{{dpo}}": "dpo", " {{ dpo }} ": "dpo", "dpo": "dpo", "{{": "{{"} {
		if got := NormalizeVariableName(in); got != want {
			t.Errorf("NormalizeVariableName(%q) = %q, want %q", in, got, want)
		}
	}
	for name, ok := range map[string]bool{"a": true, "company_name": true, "x9_": true, "9x": false, "A": false, "a-b": false,
		"": false, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false} {
		if variableName.MatchString(name) != ok {
			t.Errorf("name %q valid = %v, want %v", name, !ok, ok)
		}
	}
}

func TestPolicyStatus(t *testing.T) {
	t.Parallel()
	past, future := "2026-01-01", "2027-01-01"
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, PolicyDraft},
		{Policy{HasUnpublishedChanges: true}, PolicyDraft},
		{Policy{Version: 1}, PolicyPublished},
		{Policy{Version: 1, HasUnpublishedChanges: true}, PolicyNeedsReview},
		{Policy{Version: 2, ReviewDate: &past}, PolicyNeedsReview},
		{Policy{Version: 2, ReviewDate: &future}, PolicyPublished},
	} {
		tc.p.derive("2026-06-01")
		if tc.p.Status != tc.want {
			t.Errorf("%+v: status %s, want %s", tc.p, tc.p.Status, tc.want)
		}
	}
}
