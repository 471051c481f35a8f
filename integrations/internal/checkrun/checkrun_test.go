package checkrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/internal/restapi"
)

type sink struct {
	outcomes []app.CheckOutcome
	logs     []string
}

func (s *sink) Outcome(o app.CheckOutcome) { s.outcomes = append(s.outcomes, o) }
func (s *sink) Log(level, msg string)      { s.logs = append(s.logs, level+": "+msg) }

func TestRunSelectsEndsAndCounts(t *testing.T) {
	defs := []app.CheckDefinition{{ID: "x.a"}, {ID: "x.b"}}
	s := &sink{}
	scope := Resource{Type: "organization", ID: "1", Name: "acme"}
	r := New(s, defs, []string{"x.a", "x.zzz"}, scope)
	if !r.Selected("x.a") || r.Selected("x.b") || !strings.Contains(strings.Join(s.logs, ""), "x.zzz") {
		t.Fatalf("selection: %v", s.logs)
	}
	repo := Resource{Type: "repository", ID: "7", Name: "acme/api"}
	r.Pass("x.a", repo, "ok", nil)
	r.Fail("x.b", repo, "not selected", nil)
	r.Error("x.a", repo, errors.New("boom"))
	reset := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	r.Error("x.a", repo, &restapi.RateLimitError{Path: "/x", Status: 429, Reset: reset, Message: "slow down"})
	r.End("x.a", errors.New("again"))
	r.Pass("x.a", repo, "after the end", nil)
	if len(s.outcomes) != 3 {
		t.Fatalf("outcomes: %+v", s.outcomes)
	}
	end := s.outcomes[2]
	if end.ResourceName != "acme" || end.Status != app.CheckError || end.Details["rateLimitResetAt"] != "2026-11-25T03:00:00Z" || !r.Ended("x.a") {
		t.Errorf("end: %+v", end)
	}
	if got := r.Summary(); got != "1 passed, 0 failed, 2 errors" {
		t.Errorf("summary %q", got)
	}
	if all := New(&sink{}, defs, nil, scope); !all.Selected("x.a") || !all.Selected("x.b") {
		t.Error("no ids should select every check")
	}
}

func TestEachAndSplitList(t *testing.T) {
	var got [100]bool
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	Each(4, items, func(i int) { got[i] = true })
	for i, ok := range got {
		if !ok {
			t.Fatalf("item %d not visited", i)
		}
	}
	if l := SplitList(" a, b;c\nd\te  "); strings.Join(l, "|") != "a|b|c|d|e" {
		t.Errorf("%q", l)
	}
}
