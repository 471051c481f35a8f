package app

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func sampleRecord(rng *rand.Rand) *AuditRecord {
	words := []string{"Acme", `quote " and \ back`, "<b>&amp;</b>", "Zürich ☃", "line\nbreak", "", "\u2028sep"}
	pick := func() string { return words[rng.IntN(len(words))] }
	changes := map[string]Change{}
	for i := range rng.IntN(6) {
		changes[fmt.Sprintf("field%d%s", i, pick())] = Change{Old: nil, New: pick()}
	}
	if rng.IntN(2) == 0 {
		changes["score"] = Change{Old: 3, New: []any{1.5, true, nil, map[string]any{"k": pick()}}}
	}
	r := &AuditRecord{ID: NewID(PrefixAudit), OrganizationID: "org_" + pick(), OccurredAt: time.Unix(rng.Int64N(2e9), rng.Int64N(1e9)).UTC(),
		ActorType: "api_key", ActorID: "key_" + pick(), Action: "created", ResourceType: "vendor", ResourceID: "vnd_" + pick(),
		Changes: changes}
	if rng.IntN(2) == 0 {
		r.RequestID = "req_" + pick()
	}
	return r
}

// TestAuditHashInputMatchesAuditHash: the hash of the form rendered ahead
// of the transaction equals AuditHash for any record and previous hash, so
// VerifyAuditChain accepts the chains it builds.
func TestAuditHashInputMatchesAuditHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		r := sampleRecord(rng)
		prev := ""
		if i%5 != 0 {
			prev = fmt.Sprintf("%064x", rng.Uint64())
		}
		in, err := NewAuditHashInput(r)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got, want := in.Hash(prev), AuditHash(prev, r); got != want {
			t.Fatalf("record %d: hash %s, AuditHash %s", i, got, want)
		}
		// Fields set for the store do not enter the canonical form.
		r.ChangesJSON, r.HashInput = []byte(`{"x":1}`), in
		if got, want := in.Hash(prev), AuditHash(prev, r); got != want {
			t.Fatalf("record %d with rendered fields: hash %s, AuditHash %s", i, got, want)
		}
	}
}

// TestAuditHashInputRefusesPlaceholder: a value holding the placeholder
// text is not split wrongly; prepare then leaves the hash to the store.
func TestAuditHashInputRefusesPlaceholder(t *testing.T) {
	r := sampleRecord(rand.New(rand.NewPCG(3, 4)))
	r.Changes = map[string]Change{"name": {New: "x" + hashPlaceholder + "y"}}
	if in, err := NewAuditHashInput(r); err == nil {
		t.Fatalf("split a record holding the placeholder: %+v", in)
	}
}

// TestPrepareRendersJournal: prepare renders the changes and the event
// payloads as record would have at write time.
func TestPrepareRendersJournal(t *testing.T) {
	a := &App{now: func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }}
	ctx := WithPrincipal(t.Context(), &Principal{OrgID: "org_1", KeyID: "key_1", Role: RoleAdmin})
	v := &Vendor{ID: "vnd_1", Name: `Acme "Cloud" <EU>`, SubProcessors: []SubProcessor{}}
	pm, err := a.prepare(ctx, Mutation{Action: "created", ResourceType: "vendor", ResourceID: v.ID, After: v,
		Events: []Event{ResourceEvent("vendor", "created", v)}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(Diff(nil, v))
	if string(pm.rec.ChangesJSON) != string(want) {
		t.Fatalf("changes %s, want %s", pm.rec.ChangesJSON, want)
	}
	payload, _ := json.Marshal(v)
	if len(pm.events) != 1 || string(pm.events[0].Data.(json.RawMessage)) != string(payload) || pm.events[0].OrganizationID != "org_1" ||
		pm.events[0].ID == "" || !pm.events[0].OccurredAt.Equal(a.Now()) {
		t.Fatalf("event %+v", pm.events)
	}
	if pm.rec.HashInput == nil || pm.rec.HashInput.Hash("ab") != AuditHash("ab", pm.rec) || !strings.HasPrefix(pm.rec.ID, PrefixAudit) {
		t.Fatalf("record %+v", pm.rec)
	}
}

// BenchmarkJournalInWriter is the journal's CPU work left inside the write
// transaction for one vendor create: "record" as record did it (diff,
// changes, chain hash and event payload encoded there), "prepared" with
// prepare done before (the chain hash over the rendered form only).
func BenchmarkJournalInWriter(b *testing.B) {
	a := &App{now: time.Now}
	ctx := WithPrincipal(b.Context(), &Principal{OrgID: "org_1", KeyID: "key_1", Role: RoleAdmin})
	v := &Vendor{ID: "vnd_1", Name: "Acme Cloud", Category: "cloud", Status: "active", Criticality: "high",
		InherentProbability: "likely", InherentImpact: "major", DPAStatus: "signed", SubProcessors: []SubProcessor{{Name: "Sub", Country: "DE"}}}
	m := Mutation{Action: "created", ResourceType: "vendor", ResourceID: v.ID, After: v, Events: []Event{ResourceEvent("vendor", "created", v)}}
	prev := fmt.Sprintf("%064x", 12345)
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := &AuditRecord{ID: "aud_1", OrganizationID: "org_1", ActorType: "api_key", ActorID: "key_1", Action: m.Action,
				ResourceType: m.ResourceType, ResourceID: m.ResourceID, Changes: Diff(m.Before, m.After)}
			r.Hash = AuditHash(prev, r)
			_, _ = json.Marshal(r.Changes)
			_, _ = json.Marshal(m.Events[0].Data)
		}
	})
	b.Run("prepared", func(b *testing.B) {
		pm, err := a.prepare(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = pm.rec.HashInput.Hash(prev)
		}
	})
}
