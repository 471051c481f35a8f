package app_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// subject is a security topic with its usual name, another name people
// use for it, and a detail for answers.
type subject struct{ name, alias, detail string }

var subjects = []subject{
	{"encryption of data at rest", "storage encryption", "AES-256 with keys in a managed KMS"},
	{"encryption of data in transit", "transport encryption", "TLS 1.2 or later everywhere, HSTS on web endpoints"},
	{"multi-factor authentication", "two-factor login", "hardware security keys or TOTP"},
	{"password policy", "password rules", "at least 14 characters, checked against breached-password lists"},
	{"backup procedure", "data backups", "daily encrypted snapshots kept for 35 days in a second region"},
	{"disaster recovery plan", "DR plan", "RTO of 4 hours and RPO of 1 hour"},
	{"incident response plan", "security incident handling", "a 24/7 on-call rotation and written playbooks"},
	{"security logging", "audit logs", "central log collection kept for one year"},
	{"vulnerability scanning", "vulnerability assessment", "weekly authenticated scans of all hosts"},
	{"penetration testing", "pen tests", "an external firm tests the product every year"},
	{"secure development lifecycle", "secure coding process", "threat modelling, peer review and dependency scanning"},
	{"code review", "peer review of code changes", "two approvals before merge to main"},
	{"vendor risk management", "third-party risk", "a yearly review of every critical supplier"},
	{"data retention", "record keeping periods", "a retention schedule per data category"},
	{"data deletion", "secure disposal of data", "deletion within 30 days of contract end with a certificate"},
	{"access reviews", "user access recertification", "quarterly reviews signed off by system owners"},
	{"employee onboarding", "new hire process", "accounts provisioned from the HR system on day one"},
	{"employee offboarding", "leaver process", "access removed within 24 hours of departure"},
	{"background checks", "pre-employment screening", "identity, employment and criminal checks where legal"},
	{"security awareness training", "security education", "at onboarding and every year, with phishing simulations"},
	{"physical security", "office access control", "badge access and visitor logs at every office"},
	{"network segmentation", "network zoning", "separate VPCs for production, staging and corporate"},
	{"firewall configuration", "perimeter filtering", "default-deny rules reviewed every quarter"},
	{"DDoS protection", "denial-of-service mitigation", "a cloud scrubbing service in front of public endpoints"},
	{"key management", "cryptographic key handling", "keys rotated yearly and never leave the KMS"},
	{"privacy program", "data protection program", "a privacy office reporting to the general counsel"},
	{"data protection officer", "DPO", "an appointed DPO reachable at dpo@example.test"},
	{"sub-processors", "subcontractors handling personal data", "a public list updated 30 days before changes"},
	{"data residency", "data location", "customer data stays in the EU (Frankfurt and Dublin)"},
	{"change management", "change control", "tickets, approvals and automated deployment"},
	{"asset inventory", "hardware and software inventory", "an automatically updated CMDB"},
	{"endpoint protection", "antivirus", "EDR on every laptop and server"},
	{"mobile device management", "MDM", "enrolled devices with remote wipe"},
	{"cloud hosting provider", "infrastructure provider", "AWS in eu-central-1"},
	{"SOC 2 report", "SOC 2 Type II attestation", "a Type II report renewed every year"},
	{"ISO 27001 certification", "ISMS certification", "certified since 2021, surveillance audits yearly"},
	{"cyber insurance", "insurance coverage for cyber incidents", "coverage of 10 million EUR"},
	{"business continuity plan", "BCP", "tested every year in a tabletop exercise"},
	{"patch management", "security updates", "critical patches within 7 days"},
	{"secrets management", "credential storage", "a vault with short-lived credentials"},
}

// aspect is a kind of question asked about any subject: the knowledge-base
// wording and the wording customers use.
type aspect struct{ kb, asked, answer string }

var aspects = []aspect{
	{"Do you have a documented %s?", "Is there a written %s in place?", "Yes. Our %s is documented: %s."},
	{"How often is the %s reviewed?", "What is the review frequency of the %s?", "The %s is reviewed at least yearly; %s."},
	{"Who is responsible for the %s?", "Which role owns the %s?", "The security team owns the %s; %s."},
	{"Which tools support the %s?", "What tooling do you use for the %s?", "We use industry-standard tooling for the %s: %s."},
	{"What evidence can you provide for the %s?", "Can you share evidence of the %s?", "We can share records of the %s under NDA: %s."},
	{"How are exceptions to the %s handled?", "How do you manage exceptions from the %s?", "Exceptions to the %s need CISO approval; %s."},
	{"What is the scope of the %s?", "Which systems are covered by the %s?", "The %s covers all production systems; %s."},
	{"How is the %s audited?", "Is the %s independently audited?", "The %s is part of our yearly external audit; %s."},
	{"When was the %s last tested?", "Date of the last test of the %s?", "The %s was last tested this year; %s."},
	{"How is compliance with the %s monitored?", "How do you monitor adherence to the %s?", "Adherence to the %s is monitored continuously; %s."},
}

var scopes = []struct{ kb, asked string }{
	{"", ""},
	{" for production systems", " in the production environment"},
	{" for customer data", " covering client data"},
	{" for corporate laptops", " on employee workstations"},
	{" for contractors", " applied to external contractors"},
}

// unrelated questions have no answer in the knowledge base.
var unrelated = []string{
	"What is your company's annual revenue?", "How many offices do you have worldwide?", "Do you sponsor local sports clubs?",
	"What is the name of your CEO?", "Which accounting software do you use?", "Do you offer volume discounts?",
	"What is your employee turnover rate?", "Do you have a carbon reduction target?", "Which trade fairs do you attend?",
	"Is your cafeteria vegetarian friendly?", "What programming languages do your developers prefer?", "Do you have a parental leave policy?",
}

type kbFixture struct {
	a     *app.App
	ctx   context.Context
	qs    []string
	truth []int // index of the entry that answers each question, -1 for none
	ids   []string
	keys  map[string][3]int // entry id -> subject, aspect, scope
	alias []bool            // the question names its subject by another name
}

// newKBFixture builds a 2,000-entry knowledge base (40 subjects x 10
// aspects x 5 scopes) and a 300-question questionnaire: 240 questions
// reworded from entries (half of them naming the subject by another name)
// and 60 questions the knowledge base cannot answer.
func newKBFixture(tb testing.TB) *kbFixture {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	db, err := storage.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	files, err := storage.NewFiles(filepath.Join(dir, "files"))
	if err != nil {
		tb.Fatal(err)
	}
	a := app.NewWithFiles(db, files, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	o, err := a.CreateOrganization(ctx, "Bench", app.PlanEnterprise)
	if err != nil {
		tb.Fatal(err)
	}
	ctx = app.SystemContext(ctx, o.ID)

	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"question", "answer", "tags", "source"})
	type key struct{ s, a, c int }
	index := map[key]int{}
	n := 0
	for si, s := range subjects {
		for ai, asp := range aspects {
			for ci, sc := range scopes {
				q := fmt.Sprintf(asp.kb, s.name+sc.kb)
				ans := fmt.Sprintf(asp.answer, s.name+sc.kb, s.detail)
				w.Write([]string{q, ans, strings.ReplaceAll(s.name, " ", "-"), "Security FAQ"})
				index[key{si, ai, ci}] = n
				n++
			}
		}
	}
	w.Flush()
	entries, err := a.ImportKBEntriesCSV(ctx, &buf)
	if err != nil {
		tb.Fatal(err)
	}
	f := &kbFixture{a: a, ctx: ctx, keys: map[string][3]int{}}
	for _, e := range entries {
		f.ids = append(f.ids, e.ID)
	}
	for k, i := range index {
		f.keys[f.ids[i]] = [3]int{k.s, k.a, k.c}
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 240; i++ {
		si, ai, ci := rng.Intn(len(subjects)), rng.Intn(len(aspects)), rng.Intn(len(scopes))
		name := subjects[si].name
		if i%2 == 1 {
			name = subjects[si].alias
		}
		f.qs = append(f.qs, fmt.Sprintf(aspects[ai].asked, name+scopes[ci].asked))
		f.truth = append(f.truth, index[key{si, ai, ci}])
		f.alias = append(f.alias, i%2 == 1)
	}
	for i := 0; i < 60; i++ {
		f.qs = append(f.qs, unrelated[i%len(unrelated)])
		f.truth = append(f.truth, -1)
		f.alias = append(f.alias, false)
	}
	return f
}

func (f *kbFixture) questionnaire(tb testing.TB) string {
	tb.Helper()
	in := app.QuestionnaireCreate{Name: "Customer questionnaire"}
	for _, q := range f.qs {
		in.Questions = append(in.Questions, app.QuestionInput{Question: q})
	}
	q, err := f.a.CreateQuestionnaire(f.ctx, in)
	if err != nil {
		tb.Fatal(err)
	}
	return q.ID
}

// quality measures an auto-answered questionnaire against the fixture's
// ground truth.
type quality struct {
	answerRate   float64 // answered / all questions
	directRate   float64 // answered / questions worded with the entry's subject name
	aliasRate    float64 // answered / questions naming the subject differently
	exact        float64 // answers citing the very entry the question was made from
	topic        float64 // answers citing an entry of the same subject and aspect (scope may differ)
	falseAnswers int     // unanswerable questions that got an answer
}

func (f *kbFixture) quality(q *app.Questionnaire) quality {
	var r quality
	answered, exact, topic, direct, directN, alias, aliasN := 0, 0, 0, 0, 0, 0, 0
	for i, qq := range q.Questions {
		if f.truth[i] >= 0 {
			if f.alias[i] {
				aliasN++
			} else {
				directN++
			}
		}
		if qq.Answer == nil {
			continue
		}
		answered++
		if f.truth[i] < 0 {
			r.falseAnswers++
			continue
		}
		if f.alias[i] {
			alias++
		} else {
			direct++
		}
		want := f.keys[f.ids[f.truth[i]]]
		got := f.keys[qq.Source.ID]
		if qq.Source.ID == f.ids[f.truth[i]] {
			exact++
		}
		if got[0] == want[0] && got[1] == want[1] {
			topic++
		}
	}
	n := float64(max(answered-r.falseAnswers, 1))
	r.answerRate = float64(answered) / float64(len(q.Questions))
	r.directRate = float64(direct) / float64(max(directN, 1))
	r.aliasRate = float64(alias) / float64(max(aliasN, 1))
	r.exact, r.topic = float64(exact)/n, float64(topic)/n
	return r
}

// BenchmarkAutoAnswer300x2000 auto-answers a 300-question questionnaire
// from a 2,000-entry knowledge base.
func BenchmarkAutoAnswer300x2000(b *testing.B) {
	f := newKBFixture(b)
	id := f.questionnaire(b)
	b.ResetTimer()
	var res *app.AutoAnswerResult
	for i := 0; i < b.N; i++ {
		var err error
		res, err = f.a.AutoAnswer(f.ctx, id, app.AutoAnswerInput{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	r := f.quality(res.Questionnaire)
	b.ReportMetric(r.answerRate*100, "%answered")
	b.ReportMetric(r.directRate*100, "%direct-answered")
	b.ReportMetric(r.aliasRate*100, "%alias-answered")
	b.ReportMetric(r.exact*100, "%exact-source")
	b.ReportMetric(r.topic*100, "%right-topic")
	b.ReportMetric(float64(r.falseAnswers), "unanswerable-answered")
}

// BenchmarkKBSearch measures one ranked search over 2,000 entries.
func BenchmarkKBSearch(b *testing.B) {
	f := newKBFixture(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.a.SearchKB(f.ctx, f.qs[i%len(f.qs)], app.Page{Page: 1, PerPage: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAutoAnswerQuality holds the auto-answer to a floor on the benchmark
// data: most reworded questions answered from the right entry, none of the
// unanswerable ones answered.
func TestAutoAnswerQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2,000-entry knowledge base")
	}
	t.Parallel()
	f := newKBFixture(t)
	id := f.questionnaire(t)
	res, err := f.a.AutoAnswer(f.ctx, id, app.AutoAnswerInput{})
	if err != nil {
		t.Fatal(err)
	}
	r := f.quality(res.Questionnaire)
	t.Logf("%+v, %d ms", r, res.DurationMs)
	if r.directRate < 0.8 || r.topic < 0.85 || r.falseAnswers > 3 {
		t.Fatalf("quality below the floor: %+v", r)
	}
	for _, q := range res.Questionnaire.Questions {
		if q.Answer != nil && (q.Source == nil || q.Confidence == nil || *q.Confidence < app.DefaultMinConfidence) {
			t.Fatalf("an answer without its source or confidence: %+v", q)
		}
	}
}
