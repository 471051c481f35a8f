package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
)

func TestRiskBands(t *testing.T) {
	t.Parallel()
	for score, want := range map[int]string{1: "low", 4: "low", 5: "medium", 9: "medium", 10: "high", 14: "high", 15: "critical", 25: "critical"} {
		if got := app.RiskBand(score); got != want {
			t.Errorf("RiskBand(%d) = %s, want %s", score, got, want)
		}
	}
	for _, c := range []struct {
		prev, next int
		want       bool
	}{
		{4, 5, true},  // band change by one point
		{5, 9, false}, // same band, +4
		{10, 14, false},
		{1, 4, false},
		{16, 20, false},
		{15, 20, true}, // +5 in the same band
		{20, 15, true},
		{12, 8, true}, // band change
		{12, 12, false},
	} {
		if got := app.ScoreChangeSignificant(c.prev, c.next); got != c.want {
			t.Errorf("ScoreChangeSignificant(%d, %d) = %v, want %v", c.prev, c.next, got, c.want)
		}
	}
}

func TestRiskCreateAndValidate(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	other := e.org("Other", "professional")
	key := e.key(org, app.RoleAdmin)
	owner := e.person(org, "owner@example.com", app.RoleEmployee)
	stranger := e.person(other, "x@example.com", app.RoleAdmin)
	ctl := e.control(org)

	r := e.create("/v1/risks", key, map[string]any{"title": "Ransomware", "category": "Technology", "inherentProbability": "likely",
		"inherentImpact": "severe", "residualProbability": "unlikely", "residualImpact": "major", "treatment": "mitigate",
		"ownerId": owner, "linkedControlIds": []string{ctl}})
	for k, want := range map[string]any{"category": "technology", "status": "open", "inherentScore": float64(20),
		"residualScore": float64(8), "score": float64(8), "band": "medium", "treatment": "mitigate", "ownerId": owner} {
		if r[k] != want {
			t.Errorf("risk %s = %v, want %v", k, r[k], want)
		}
	}
	if !strings.HasPrefix(r["id"].(string), "rsk_") || len(r["linkedControlIds"].([]any)) != 1 {
		t.Errorf("risk: %v", r)
	}
	d := e.create("/v1/risks", key, map[string]any{"title": "Defaults"})
	if d["score"] != float64(9) || d["band"] != "medium" || d["category"] != "other" || d["residualScore"] != nil {
		t.Errorf("defaults: %v", d)
	}
	alias := e.create("/v1/risks", key, map[string]any{"title": "Alias", "likelihood": "very_likely", "impact": "severe",
		"treatmentStrategy": "accept", "assigneeId": owner})
	if alias["score"] != float64(25) || alias["band"] != "critical" || alias["treatment"] != "accept" || alias["ownerId"] != owner {
		t.Errorf("aliases: %v", alias)
	}

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "title"},
		{map[string]any{"title": strings.Repeat("t", 256)}, "title"},
		{map[string]any{"title": "t", "category": "weather"}, "category"},
		{map[string]any{"title": "t", "status": "archived"}, "status"},
		{map[string]any{"title": "t", "inherentProbability": "often"}, "inherentProbability"},
		{map[string]any{"title": "t", "inherentImpact": "huge"}, "inherentImpact"},
		{map[string]any{"title": "t", "residualProbability": "likely"}, "residualImpact"},
		{map[string]any{"title": "t", "residualImpact": "minor"}, "residualProbability"},
		{map[string]any{"title": "t", "treatment": "ignore"}, "treatment"},
		{map[string]any{"title": "t", "ownerId": stranger}, "ownerId"},
		{map[string]any{"title": "t", "linkedControlIds": []string{"ctl_nope"}}, "linkedControlIds"},
		{map[string]any{"title": "t", "inherentImpact": 3}, "inherentImpact"},
	} {
		wantField(t, e.do("POST", "/v1/risks", key, c.body), c.field)
	}
}

func TestRiskScoreChangedEvent(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	// possible x moderate = 9 (medium)
	r := e.create("/v1/risks", key, map[string]any{"title": "R"})
	path := "/v1/risks/" + r["id"].(string)
	steps := []struct {
		body      map[string]any
		score     float64
		wantEvent bool
	}{
		{map[string]any{"inherentImpact": "major"}, 12, true},                                        // 9 -> 12: medium -> high
		{map[string]any{"inherentProbability": "likely", "inherentImpact": "moderate"}, 12, false},   // same score
		{map[string]any{"inherentImpact": "major", "inherentProbability": "possible"}, 12, false},    // still 12
		{map[string]any{"inherentProbability": "likely"}, 16, true},                                  // 12 -> 16: high -> critical
		{map[string]any{"inherentImpact": "severe"}, 20, false},                                      // 16 -> 20: +4, same band
		{map[string]any{"residualProbability": "very_likely", "residualImpact": "severe"}, 25, true}, // 20 -> 25: +5
		{map[string]any{"description": "no score change"}, 25, false},
		{map[string]any{"residualProbability": nil, "residualImpact": nil}, 20, true}, // 25 -> 20: -5
	}
	want := 0
	for i, s := range steps {
		got := obj(t, e.do("PATCH", path, key, s.body))
		if got["score"] != s.score {
			t.Fatalf("step %d: score %v, want %v", i, got["score"], s.score)
		}
		if s.wantEvent {
			want++
		}
		ev := e.events(org, "risk.score.changed")
		if len(ev) != want {
			t.Fatalf("step %d: %d risk.score.changed events, want %d", i, len(ev), want)
		}
	}
	ev := e.events(org, "risk.score.changed")
	if ev[0]["riskId"] != r["id"] || ev[0]["previousScore"] != float64(9) || ev[0]["score"] != float64(12) {
		t.Errorf("first event data = %v", ev[0])
	}
}

func TestRiskListAndArchive(t *testing.T) {
	t.Parallel()
	e := newTestServer(t)
	org := e.org("Acme", "professional")
	key := e.key(org, app.RoleAdmin)
	owner := e.person(org, "o@example.com", app.RoleEmployee)
	r1 := e.create("/v1/risks", key, map[string]any{"title": "low", "inherentProbability": "unlikely", "inherentImpact": "minor"})["id"].(string)                           // 4
	r2 := e.create("/v1/risks", key, map[string]any{"title": "high", "inherentProbability": "likely", "inherentImpact": "moderate", "ownerId": owner})["id"].(string)       // 12
	r3 := e.create("/v1/risks", key, map[string]any{"title": "crit", "inherentProbability": "very_likely", "inherentImpact": "severe", "status": "pending"})["id"].(string) // 25

	for q, want := range map[string][]string{
		"":                         {r1, r2, r3},
		"?status=pending":          {r3},
		"?ownerId=" + owner:        {r2},
		"?owner=" + owner:          {r2},
		"?minScore=10":             {r2, r3},
		"?maxScore=12":             {r1, r2},
		"?minScore=5&maxScore=20":  {r2},
		"?band=critical":           {r3},
		"?band=low&minScore=3":     {r1},
		"?status=open&minScore=10": {r2},
	} {
		ids, _ := listIDs(t, e, "/v1/risks"+q, key)
		if !sameIDs(ids, want...) {
			t.Errorf("GET /v1/risks%s = %v, want %v", q, ids, want)
		}
	}
	for _, q := range []string{"minScore=0x", "minScore=26", "maxScore=0", "minScore=20&maxScore=10", "status=archived", "band=extreme"} {
		wantError(t, e.do("GET", "/v1/risks?"+q, key, nil), http.StatusBadRequest, "validation_error")
	}
	a := obj(t, e.do("POST", "/v1/risks/"+r1+"/archive", key, nil))
	if a["archivedAt"] == nil {
		t.Fatalf("archive: %v", a)
	}
	if ids, _ := listIDs(t, e, "/v1/risks", key); !sameIDs(ids, r2, r3) {
		t.Errorf("archived risk still listed: %v", ids)
	}
	if ids, _ := listIDs(t, e, "/v1/risks?archived=true", key); !sameIDs(ids, r1) {
		t.Errorf("archived list = %v", ids)
	}
	wantStatus(t, e.do("GET", "/v1/risks/"+r1, key, nil), http.StatusOK)
	if got := obj(t, e.do("POST", "/v1/risks/"+r1+"/restore", key, nil)); got["archivedAt"] != nil {
		t.Errorf("restore: %v", got)
	}

	// Employees see only risks they own.
	e.sessions()
	emp := session(org, app.RoleEmployee, owner)
	rec := e.do("GET", "/v1/risks", "", nil, emp...)
	wantStatus(t, rec, http.StatusOK)
	if d := obj(t, rec)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != r2 {
		t.Errorf("employee risks = %v", d)
	}
	wantError(t, e.do("GET", "/v1/risks/"+r3, "", nil, emp...), http.StatusNotFound, "not_found")
	wantError(t, e.do("PATCH", "/v1/risks/"+r2, "", map[string]any{"title": "x"}, emp...), http.StatusForbidden, "forbidden")
	auditor := e.key(org, app.RoleAuditor)
	wantError(t, e.do("POST", "/v1/risks", auditor, map[string]any{"title": "x"}), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/v1/risks/"+r2+"/archive", auditor, nil), http.StatusForbidden, "forbidden")
}
