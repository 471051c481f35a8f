package bench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	_ "modernc.org/sqlite"
)

// shapeOf is what the clustering migration must keep of one table: its
// columns, indexes (name: columns, unique), triggers (name: SQL) and the
// foreign keys pointing at it from other tables.
type shapeOf struct {
	columns  []string
	indexes  map[string]string
	triggers map[string]string
	children []string
}

func readShape(t *testing.T, raw *sql.DB, table string) shapeOf {
	t.Helper()
	s := shapeOf{indexes: map[string]string{}, triggers: map[string]string{}}
	s.columns = queryStrings(t, raw, `SELECT name || ' ' || type || ' ' || "notnull" || ' ' || coalesce(dflt_value, '') FROM pragma_table_info(?) ORDER BY cid`, table)
	for _, ix := range queryStrings(t, raw, `SELECT name || ' ' || "unique" || ' ' || origin FROM pragma_index_list(?)`, table) {
		f := strings.Fields(ix)
		if f[2] == "pk" {
			continue // the primary key: compared on its own
		}
		name := f[0]
		if f[2] == "u" {
			name = "unique"
		}
		s.indexes[name] = strings.Join(queryStrings(t, raw, `SELECT coalesce(name, '?') FROM pragma_index_info(?) ORDER BY seqno`, f[0]), ",") + " unique=" + f[1]
	}
	rows, err := raw.Query(`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?`, table)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n, q string
		if err := rows.Scan(&n, &q); err != nil {
			t.Fatal(err)
		}
		s.triggers[n] = q
	}
	rows.Close()
	s.children = queryStrings(t, raw, `SELECT m.name || '.' || f."from" || ' -> ' || f."table" || '(' || f."to" || ') ' || f.on_delete || ' ' || f.on_update
		FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND f."table" = ? ORDER BY 1`, table)
	return s
}

func queryStrings(t *testing.T, raw *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := raw.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tableContents is every row of a table as text, in key order.
func tableContents(t *testing.T, raw *sql.DB, table, order string) []string {
	t.Helper()
	cols := queryStrings(t, raw, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	return queryStrings(t, raw, `SELECT json_array(`+strings.Join(cols, ", ")+`) FROM `+table+` ORDER BY `+order)
}

// TestClusteredMigration migrates a database the load seeder filled under
// the rowid schema to vendors and findings clustered by organization
// (migration 1190) and checks that nothing changed but the shape: every
// row and every child row, the columns, indexes (less the two the new
// primary key replaces), triggers, the foreign keys pointing at the tables
// (still enforced, cascades included), the full-text index and the read
// model's counters.
func TestClusteredMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MigrateTo(ctx, rowidSchema); err != nil {
		t.Fatal(err)
	}
	a := app.New(db, nil, nil, app.Config{})
	ds, err := Seed(ctx, db, a, 3, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	// Children through each foreign key pointing at the two tables.
	org := ds.Orgs[0]
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i, v := range org.IDs["vendor"][:5] {
		if _, err := raw.Exec(`INSERT INTO vendor_assessments (id, organization_id, vendor_id, status, website, requested_by, created_at)
			VALUES (?, ?, ?, 'completed', 'https://example.com', 'test', ?)`, fmt.Sprintf("vas_%d", i), org.ID, v, now); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range org.IDs["finding"][:5] {
		if _, err := raw.Exec(`INSERT INTO corrective_actions (id, organization_id, finding_id, title, status, priority, created_at, updated_at)
			VALUES (?, ?, ?, 'Fix it', 'open', 'high', ?, ?)`, fmt.Sprintf("cac_%d", i), org.ID, f, now, now); err != nil {
			t.Fatal(err)
		}
	}

	type snapshot struct {
		shapes   map[string]shapeOf
		contents map[string][]string
	}
	tables := map[string]string{ // table: order of its rows
		"vendors": "id", "findings": "id", "vendor_assessments": "id", "corrective_actions": "id",
		"finding_controls": "finding_id, control_id", "search_docs": "id", "read_versions": "organization_id, resource",
	}
	take := func() snapshot {
		s := snapshot{shapes: map[string]shapeOf{}, contents: map[string][]string{}}
		for _, tb := range []string{"vendors", "findings"} {
			s.shapes[tb] = readShape(t, raw, tb)
		}
		for tb, order := range tables {
			s.contents[tb] = tableContents(t, raw, tb, order)
		}
		return s
	}
	before := take()
	if n := len(before.contents["finding_controls"]); n == 0 {
		t.Fatal("the seeder linked no finding to a control")
	}
	if n := len(before.contents["vendors"]); n != 3*50 {
		t.Fatalf("%d vendors seeded, want 150", n)
	}

	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(applied, "1190_clustered_vendors_findings.sql") {
		t.Fatalf("applied %v", applied)
	}
	after := take()
	for _, tb := range []string{"vendors", "findings"} {
		t.Logf("%s: %d rows, indexes %v, triggers %v, referenced by %v", tb, len(after.contents[tb]),
			keys(after.shapes[tb].indexes), keys(after.shapes[tb].triggers), after.shapes[tb].children)
	}

	for tb := range tables {
		if !slices.Equal(before.contents[tb], after.contents[tb]) {
			t.Errorf("%s: contents changed (%d rows before, %d after)", tb, len(before.contents[tb]), len(after.contents[tb]))
		}
	}
	for _, tb := range []string{"vendors", "findings"} {
		b, a := before.shapes[tb], after.shapes[tb]
		if !slices.Equal(b.columns, a.columns) {
			t.Errorf("%s: columns %v, were %v", tb, a.columns, b.columns)
		}
		// The index on (organization_id, id) is the table itself now; the
		// old primary key on id is a unique index.
		want := map[string]string{}
		for k, v := range b.indexes {
			if k != tb+"_org" {
				want[k] = v
			}
		}
		if b.indexes[tb+"_org"] != "organization_id,id unique=0" {
			t.Errorf("%s: before, %s_org is %q", tb, tb, b.indexes[tb+"_org"])
		}
		want["unique"] = "id unique=1"
		if !reflect.DeepEqual(a.indexes, want) {
			t.Errorf("%s: indexes\n %v, want\n %v", tb, a.indexes, want)
		}
		if !reflect.DeepEqual(a.triggers, b.triggers) {
			t.Errorf("%s: triggers\n %v, were\n %v", tb, keys(a.triggers), keys(b.triggers))
		}
		if len(b.triggers) < 6 {
			t.Errorf("%s: only triggers %v", tb, keys(b.triggers))
		}
		if !slices.Equal(a.children, b.children) || len(b.children) == 0 {
			t.Errorf("%s: foreign keys pointing at it %v, were %v", tb, a.children, b.children)
		}
		pk := queryStrings(t, raw, `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, tb)
		if !slices.Equal(pk, []string{"organization_id", "id"}) {
			t.Errorf("%s: primary key %v", tb, pk)
		}
		if _, err := raw.Exec(`SELECT rowid FROM ` + tb + ` LIMIT 1`); err == nil {
			t.Errorf("%s still has a rowid", tb)
		}
	}
	if broken := queryStrings(t, raw, `SELECT "table" || ' ' || parent FROM pragma_foreign_key_check`); len(broken) > 0 {
		t.Errorf("foreign key check: %v", broken)
	}
	for _, leftover := range queryStrings(t, raw, `SELECT name FROM sqlite_schema WHERE name LIKE '%rowid%'`) {
		t.Errorf("left behind: %s", leftover)
	}

	// The foreign keys still act: a vendor with assessments deleted takes
	// them along; a finding with a corrective action cannot go.
	if _, err := raw.Exec(`DELETE FROM vendors WHERE organization_id = ? AND id = ?`, org.ID, org.IDs["vendor"][0]); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM vendor_assessments WHERE vendor_id = ?`, org.IDs["vendor"][0]).Scan(&n); err != nil || n != 0 {
		t.Errorf("assessments of a deleted vendor: %d, %v", n, err)
	}
	if _, err := raw.Exec(`DELETE FROM findings WHERE organization_id = ? AND id = ?`, org.ID, org.IDs["finding"][0]); err == nil {
		t.Error("a finding with a corrective action was deleted")
	}
	if _, err := raw.Exec(`INSERT INTO vendor_assessments (id, organization_id, vendor_id, status, website, requested_by, created_at)
		VALUES ('vas_x', ?, 'vnd_missing', 'completed', 'https://example.com', 'test', ?)`, org.ID, now); err == nil {
		t.Error("an assessment of a missing vendor was inserted")
	}

	// The application works on the new shape: create, search, the read
	// model invalidated by its counter triggers.
	sctx := app.SystemContext(ctx, org.ID)
	listed, err := a.ListVendors(sctx, app.VendorFilter{Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.CreateVendor(sctx, app.VendorInput{Name: app.Ptr("Clustered Analytics")})
	if err != nil {
		t.Fatal(err)
	}
	relisted, err := a.ListVendors(sctx, app.VendorFilter{Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if relisted.Total != listed.Total+1 {
		t.Errorf("total %d after a create, was %d (read model not invalidated?)", relisted.Total, listed.Total)
	}
	fresh, err := db.ListVendors(storage.WithoutReadModel(ctx), org.ID, app.VendorFilter{Page: app.Page{Page: 1, PerPage: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fresh, relisted) {
		t.Error("the cached list differs from a fresh read")
	}
	if err := raw.QueryRow(`SELECT count(*) FROM search_index WHERE search_index MATCH 'clustered' AND record_id = ?`, v.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("the new vendor in the search index: %d, %v", n, err)
	}
	got, err := a.GetVendor(sctx, v.ID)
	if err != nil || got.Name != v.Name {
		t.Errorf("get: %v, %v", got, err)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
