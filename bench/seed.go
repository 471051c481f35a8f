// Package bench holds the appliance's measurement tools: the load
// generator behind `compliance loadtest` (make load) and the crash test
// behind `compliance crashtest` (make crashtest). Both run on loopback
// only, bounded in time and size, and wire storage, app and web the way
// main does.
package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
)

// Org is one seeded organization: its id, an owner key and the ids of its
// seeded resources by kind ("vendor", "person", ...).
type Org struct {
	ID  string
	Key string
	IDs map[string][]string
}

// Dataset is what the seeders produced.
type Dataset struct {
	Orgs []*Org
}

// Seeder fills one resource kind for one organization directly through
// storage (bulk, in one transaction per organization). Kinds that later
// land (findings, evidence, risks, ...) add one Seeder to Seeders and, for
// the workload, their operations to Ops; nothing else changes.
type Seeder struct {
	Kind string
	// PerOrg is the default count per organization; the --scale flag
	// multiplies it.
	PerOrg int
	// After names kinds that must be seeded first (their ids are in org.IDs).
	After []string
	Seed  func(ctx context.Context, db *storage.DB, org *Org, n int, rng *rand.Rand, now time.Time) error
}

// Seeders are run in order for every organization. 100 organizations times
// these counts give the dataset: 100,000 vendors, 50,000 findings
// and 200,000 evidence records (over 2,000 controls).
var Seeders = []Seeder{
	{Kind: "person", PerOrg: 20, Seed: seedPeople},
	{Kind: "vendor", PerOrg: 1000, After: []string{"person"}, Seed: seedVendors},
	{Kind: "control", PerOrg: 20, After: []string{"person"}, Seed: seedControls},
	{Kind: "finding", PerOrg: 500, After: []string{"person", "control"}, Seed: seedFindings},
	{Kind: "evidence", PerOrg: 2000, After: []string{"person", "control"}, Seed: seedEvidence},
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

var firstNames = []string{"Anna", "Ben", "Carla", "Deniz", "Emil", "Fatima", "Georg", "Hana", "Ivo", "Jana", "Karl", "Lea"}
var lastNames = []string{"Schmidt", "Meyer", "Novak", "Jansen", "Rossi", "Kowalski", "Berg", "Larsen", "Costa", "Weber"}
var departments = []string{"IT", "Security", "Finance", "Legal", "HR", "Operations"}

func seedPeople(ctx context.Context, db *storage.DB, org *Org, n int, rng *rand.Rand, now time.Time) error {
	roles := []app.Role{app.RoleAdmin, app.RoleAuditor, app.RoleEmployee, app.RoleEmployee, app.RoleEmployee, app.RoleContractor}
	for i := 0; i < n; i++ {
		id := app.NewID(app.PrefixPerson)
		name := pick(rng, firstNames) + " " + pick(rng, lastNames)
		email := fmt.Sprintf("%s.%d@%s.example.com", strings.ToLower(strings.ReplaceAll(name, " ", ".")), i, strings.ToLower(org.ID[len(org.ID)-8:]))
		if err := db.CreateUser(ctx, id, email, name, "", now); err != nil {
			return err
		}
		p := &app.Person{ID: id, Role: pick(rng, roles), Department: app.Ptr(pick(rng, departments)), IsActive: rng.IntN(20) != 0,
			CreatedAt: now, UpdatedAt: now}
		if err := db.CreateMembership(ctx, org.ID, id, p); err != nil {
			return err
		}
		org.IDs["person"] = append(org.IDs["person"], id)
	}
	return nil
}

var vendorWords = []string{"Cloud", "Data", "Secure", "Pay", "Mail", "Net", "Logi", "Sales", "People", "Signal", "Ledger", "Host"}
var vendorSuffixes = []string{"works", "ly", " GmbH", " Inc", " AG", " Systems", " Labs", " BV", " Oy", " SAS"}
var vendorCountries = []string{"DE", "DE", "NL", "FR", "IE", "US", "US", "GB", "CH", "IN", "SE", "PL"}

func seedVendors(ctx context.Context, db *storage.DB, org *Org, n int, rng *rand.Rand, now time.Time) error {
	people := org.IDs["person"]
	for i := 0; i < n; i++ {
		created := now.Add(-time.Duration(n-i) * time.Minute)
		v := &app.Vendor{ID: app.NewID(app.PrefixVendor), Name: fmt.Sprintf("%s%s %d", pick(rng, vendorWords), pick(rng, vendorSuffixes), i),
			Description: "Seeded vendor for load measurement.", Category: pick(rng, app.VendorCategories), Status: pick(rng, app.VendorStatuses),
			InherentProbability: pick(rng, app.Probabilities), InherentImpact: pick(rng, app.Impacts), Criticality: pick(rng, app.Criticalities),
			ICTService: rng.IntN(3) == 0, ProcessesPersonalData: rng.IntN(2) == 0, Country: app.Ptr(pick(rng, vendorCountries)),
			Website: app.Ptr("https://vendor-" + fmt.Sprint(i) + ".example.com"), SubProcessors: []app.SubProcessor{},
			CreatedAt: created, UpdatedAt: created}
		v.DPAStatus = "not_required"
		if v.ProcessesPersonalData {
			v.DPAStatus = pick(rng, []string{"signed", "pending"})
			if !app.InEEA(*v.Country) {
				v.TransferMechanism = app.Ptr("Standard contractual clauses")
			}
		}
		if len(people) > 0 && rng.IntN(2) == 0 {
			v.AssigneeID = app.Ptr(pick(rng, people))
		}
		if rng.IntN(4) == 0 {
			v.NextReviewDue = app.Ptr(now.AddDate(0, 0, rng.IntN(365)).Format("2006-01-02"))
		}
		if rng.IntN(50) == 0 {
			v.ArchivedAt = &created
		}
		v.RiskScore = app.Ptr(app.RiskScoreOf(v.InherentProbability, v.InherentImpact))
		if err := db.CreateVendor(ctx, org.ID, v); err != nil {
			return err
		}
		org.IDs["vendor"] = append(org.IDs["vendor"], v.ID)
	}
	return nil
}

var controlTopics = []string{"Access review", "Backup", "Encryption at rest", "Incident response", "Logging", "Patch management",
	"Supplier review", "Awareness training", "Change management", "Asset inventory"}

func seedControls(ctx context.Context, db *storage.DB, org *Org, n int, rng *rand.Rand, now time.Time) error {
	people := org.IDs["person"]
	statuses := []string{app.ControlNotStarted, app.ControlNotStarted, app.ControlInProgress, app.ControlImplemented}
	for i := 0; i < n; i++ {
		c := &app.Control{ID: app.NewID(app.PrefixControl), Code: fmt.Sprintf("LD-%03d", i+1),
			Name: fmt.Sprintf("%s %d", pick(rng, controlTopics), i+1), Description: "Seeded control for load measurement.",
			Status: pick(rng, statuses), CreatedAt: now, UpdatedAt: now}
		if len(people) > 0 && rng.IntN(2) == 0 {
			c.OwnerID = app.Ptr(pick(rng, people))
		}
		if err := db.CreateControl(ctx, org.ID, c); err != nil {
			return err
		}
		org.IDs["control"] = append(org.IDs["control"], c.ID)
	}
	return nil
}

var findingTopics = []string{"Missing MFA on", "Outdated TLS on", "Unreviewed access to", "No backup test for", "Weak password policy on",
	"Unpatched host in", "Unencrypted export from", "Stale account in"}
var findingSystems = []string{"payroll", "CRM", "build server", "VPN", "HR portal", "data warehouse", "mail gateway", "wiki"}

func seedFindings(ctx context.Context, db *storage.DB, org *Org, n int, rng *rand.Rand, now time.Time) error {
	controls, people := org.IDs["control"], org.IDs["person"]
	for i := 0; i < n; i++ {
		created := now.Add(-time.Duration(n-i) * time.Minute)
		title := fmt.Sprintf("%s %s (%d)", pick(rng, findingTopics), pick(rng, findingSystems), i)
		f := &app.Finding{ID: app.NewID(app.PrefixFinding), Type: pick(rng, app.FindingTypes), Status: pick(rng, app.FindingStatuses),
			Severity: pick(rng, app.FindingSeverities), Content: title, Title: app.Ptr(title), Scope: app.Ptr(pick(rng, app.FindingScopes)),
			LinkedControlIDs: []string{}, CreatedByType: "system", CreatedByID: "cli", CreatedAt: created, UpdatedAt: created}
		if len(people) > 0 {
			f.CreatedByType, f.CreatedByID = "person", pick(rng, people)
		}
		if rng.IntN(3) == 0 {
			f.FindingClass = app.Ptr(pick(rng, app.FindingClasses))
		}
		if len(controls) > 0 && rng.IntN(2) == 0 {
			f.LinkedControlIDs = []string{pick(rng, controls)}
		}
		if f.Status == app.FindingClosed {
			f.ClosedAt = &created
		}
		if rng.IntN(3) == 0 {
			due := now.AddDate(0, 0, rng.IntN(120))
			f.DueDate = &due
		}
		if err := db.CreateFinding(ctx, org.ID, f); err != nil {
			return err
		}
		org.IDs["finding"] = append(org.IDs["finding"], f.ID)
	}
	return nil
}

var evidenceFiles = []string{"access-review.pdf", "backup-restore-test.png", "training-records.csv", "firewall-rules.txt", "pentest-summary.pdf"}

// seedEvidence inserts evidence records only (the files are not written:
// the workload reads records and uploads new evidence, it does not
// download seeded files).
func seedEvidence(ctx context.Context, db *storage.DB, org *Org, n int, rng *rand.Rand, now time.Time) error {
	controls, people := org.IDs["control"], org.IDs["person"]
	if len(controls) == 0 {
		return nil
	}
	sum := make([]byte, 32)
	for i := 0; i < n; i++ {
		uploaded := now.Add(-time.Duration(n-i) * time.Minute)
		for j := range sum {
			sum[j] = byte(rng.Uint32())
		}
		ev := &app.Evidence{ID: app.NewID(app.PrefixEvidence), ControlID: controls[i%len(controls)], Filename: pick(rng, evidenceFiles),
			ContentType: "application/octet-stream", Size: int64(1024 + rng.IntN(1<<20)), SHA256: fmt.Sprintf("%x", sum),
			Description: "Seeded evidence for load measurement.", UploadedAt: uploaded}
		if len(people) > 0 {
			ev.UploadedBy = pick(rng, people)
		}
		if rng.IntN(5) == 0 {
			exp := now.AddDate(0, 0, rng.IntN(400)-30)
			ev.ExpiresAt = &exp
		}
		if err := db.CreateEvidence(ctx, org.ID, ev); err != nil {
			return err
		}
		org.IDs["evidence"] = append(org.IDs["evidence"], ev.ID)
	}
	return nil
}

// Seed creates orgs organizations (enterprise plan, one owner key each)
// through the services, then runs every seeder for each of them in one
// transaction per organization and kind. scale multiplies PerOrg.
func Seed(ctx context.Context, db *storage.DB, a *app.App, orgs int, scale float64, progress func(string)) (*Dataset, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	now := a.Now()
	ds := &Dataset{}
	for i := 0; i < orgs; i++ {
		o, err := a.CreateOrganization(ctx, fmt.Sprintf("Load Org %03d", i), app.PlanEnterprise)
		if err != nil {
			return nil, err
		}
		k, err := a.CreateAPIKey(app.SystemContext(ctx, o.ID), app.APIKeyCreate{Name: "load", Role: string(app.RoleOwner)})
		if err != nil {
			return nil, err
		}
		ds.Orgs = append(ds.Orgs, &Org{ID: o.ID, Key: k.Key, IDs: map[string][]string{}})
	}
	for _, s := range Seeders {
		n := max(1, int(float64(s.PerOrg)*scale))
		start := time.Now()
		for _, org := range ds.Orgs {
			err := db.InTx(ctx, func(ctx context.Context) error { return s.Seed(ctx, db, org, n, rng, now) })
			if err != nil {
				return nil, fmt.Errorf("seed %s: %w", s.Kind, err)
			}
		}
		if progress != nil {
			progress(fmt.Sprintf("seeded %d %s records in %s", n*len(ds.Orgs), s.Kind, time.Since(start).Round(time.Millisecond)))
		}
	}
	return ds, nil
}
