package storage

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// The read model: the hot lists and gets (vendors, findings, evidence,
// people) served from memory while they are provably current.
//
// Coherence. Every write to a table a resource's reads depend on
// increments that organization's counter in read_versions, by a trigger,
// in the writing transaction itself: whichever process or code path
// writes (the API, the CLI in another process, scheduler jobs, imports,
// SCIM, sync, archive and restore, a migration, the sqlite3 shell), the
// counter moves in the same commit as the rows. A cached read opens one
// read transaction (readtx.go) that starts after the request arrived, so
// it sees every write acknowledged before; its first statement reads the
// counter (one indexed lookup), which fixes the transaction's snapshot,
// and it serves from memory only when the counter equals the one read
// before the cached value was loaded. On a miss the rows are read in the
// same transaction, so from the counter's snapshot: the value stored
// under a counter is exactly the data as of that counter. (Even in
// separate transactions the argument would hold one way: a write
// committing between the counter and the rows would make the value look
// older than it is, never newer, at worst a needless reload.)
//
// This replaces the two signals a per-process design needs (commit hooks
// of our own writer, PRAGMA data_version for other processes): a reader's
// data_version also moves on our own commits, so it cannot tell our writes
// from another process's, and any change would have to drop everything.
// The counter is exact per organization and resource, and costs one row
// update in the writer's transaction.
//
// Memory is bounded by a budget (read_cache_mb, default 64 MiB) with
// least-recently-used eviction; sizes are estimates of the cached values.
// Reads inside a write transaction never use the cache.

// DefaultReadCacheBytes is the read model's memory budget unless set.
const DefaultReadCacheBytes = 64 << 20

// readDeps lists, per cached resource, the tables its reads depend on and
// the columns whose changes matter (empty: all), with the SQL that names
// the organizations a changed row belongs to.
var readDeps = []struct {
	resource, table, columns string
	// orgs selects the affected organization ids for a row R (NEW or OLD).
	orgs string
}{
	{"vendors", "vendors", "", "SELECT R.organization_id"},
	{"findings", "findings", "", "SELECT R.organization_id"},
	{"findings", "finding_controls", "", "SELECT R.organization_id"},
	{"findings", "tasks", "assignee_id, organization_id", "SELECT R.organization_id"},
	{"evidence", "evidence", "", "SELECT R.organization_id"},
	{"evidence", "controls", "owner_id, organization_id", "SELECT R.organization_id"},
	{"people", "memberships", "", "SELECT R.organization_id"},
	{"people", "devices", "", "SELECT R.organization_id"},
	{"people", "person_directory", "", "SELECT R.organization_id"},
	{"people", "users", "name, email, last_login_at", "SELECT organization_id FROM memberships WHERE user_id = R.id"},
}

// readTriggers returns the statements creating the counter triggers.
func readTriggers() []string {
	var out []string
	for _, d := range readDeps {
		// The SELECT lists the organization first: insert its columns in
		// that order.
		bumpSel := func(row string) string {
			sel := strings.ReplaceAll(d.orgs, "R.", row+".")
			// "SELECT x" or "SELECT x FROM ... WHERE ..." + the constant columns.
			head, rest, _ := strings.Cut(sel, " FROM ")
			q := `INSERT INTO read_versions (organization_id, resource, n) ` + head + `, '` + d.resource + `', 1`
			if rest != "" {
				q += ` FROM ` + rest
			} else {
				q += ` WHERE true`
			}
			return q + ` ON CONFLICT (organization_id, resource) DO UPDATE SET n = n + 1;`
		}
		name := "rv_" + d.resource + "_" + d.table
		of := ""
		if d.columns != "" {
			of = " OF " + d.columns
		}
		out = append(out,
			`CREATE TRIGGER IF NOT EXISTS `+name+`_i AFTER INSERT ON `+d.table+` BEGIN `+bumpSel("NEW")+` END`,
			`CREATE TRIGGER IF NOT EXISTS `+name+`_u AFTER UPDATE`+of+` ON `+d.table+` BEGIN `+bumpSel("NEW")+` `+bumpSel("OLD")+` END`,
			`CREATE TRIGGER IF NOT EXISTS `+name+`_d AFTER DELETE ON `+d.table+` BEGIN `+bumpSel("OLD")+` END`,
		)
	}
	return out
}

// ensureReadModel creates the counter triggers (after the migrations, so
// a migration that rebuilds a table cannot leave it without them) and
// turns the read model on.
func (db *DB) ensureReadModel(ctx context.Context) error {
	err := db.InTx(ctx, func(ctx context.Context) error {
		var n int
		if err := db.wr(ctx).QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'read_versions'`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return errNoReadVersions
		}
		for _, q := range readTriggers() {
			if _, err := db.wr(ctx).ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%w: %s", err, q)
			}
		}
		return nil
	})
	if errors.Is(err, errNoReadVersions) {
		return nil // an older schema (MigrateTo): no read model
	}
	if err != nil {
		return fmt.Errorf("read model: %w", err)
	}
	db.rm.enabled.Store(true)
	return nil
}

var errNoReadVersions = errors.New("no read_versions table")

// readModel is the bounded cache of loaded values with their counters.
type readModel struct {
	enabled atomic.Bool
	mu      sync.Mutex
	budget  int64
	used    int64
	lru     list.List // of *rmEntry, most recent first
	m       map[string]*list.Element
	hits    atomic.Int64
	misses  atomic.Int64
}

type rmEntry struct {
	key     string
	version int64
	val     any
	size    int64
}

func newReadModel(budget int64) *readModel {
	return &readModel{budget: budget, m: map[string]*list.Element{}}
}

func (c *readModel) get(key string, version int64) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[key]
	if el == nil {
		return nil, false
	}
	e := el.Value.(*rmEntry)
	if e.version != version {
		c.removeLocked(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.val, true
}

func (c *readModel) put(key string, version int64, val any, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[key]; el != nil {
		c.removeLocked(el)
	}
	if size > c.budget {
		return
	}
	c.m[key] = c.lru.PushFront(&rmEntry{key: key, version: version, val: val, size: size})
	c.used += size
	for c.used > c.budget {
		c.removeLocked(c.lru.Back())
	}
}

func (c *readModel) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*rmEntry)
	delete(c.m, e.key)
	c.used -= e.size
}

func (c *readModel) setBudget(b int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = b
	for c.used > c.budget && c.lru.Len() > 0 {
		c.removeLocked(c.lru.Back())
	}
}

// ReadCacheStats are the read model's counters.
type ReadCacheStats struct {
	Hits, Misses  int64
	Entries       int
	Bytes, Budget int64
}

// ReadCacheStats reports the read model's hits, misses and memory use.
func (db *DB) ReadCacheStats() ReadCacheStats {
	c := db.rm
	c.mu.Lock()
	defer c.mu.Unlock()
	return ReadCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: c.lru.Len(), Bytes: c.used, Budget: c.budget}
}

// SetReadCacheBudget sets the read model's memory budget in bytes; 0
// turns the cache off (every read goes to SQLite).
func (db *DB) SetReadCacheBudget(bytes int64) { db.rm.setBudget(max(bytes, 0)) }

type noReadModelKey struct{}

// WithoutReadModel returns a context whose reads bypass the read model
// (tests compare cached reads with fresh ones).
func WithoutReadModel(ctx context.Context) context.Context {
	return context.WithValue(ctx, noReadModelKey{}, true)
}

// readVersion reads an organization's counter for a resource.
func (db *DB) readVersion(ctx context.Context, orgID, resource string) (int64, error) {
	var n int64
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT n FROM read_versions WHERE organization_id = ? AND resource = ?`, orgID, resource).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// cachedRead serves load's value from the read model while the
// organization's counter for resource is unchanged. clone copies a value
// so neither the caller nor the cache sees the other's changes; size
// estimates its memory. The counter and load's reads run in one read
// transaction (inReadTx).
func cachedRead[T any](ctx context.Context, db *DB, orgID, resource, key string, load func(context.Context) (T, error),
	clone func(T) T, size func(T) int64) (T, error) {
	if _, inTx := ctx.Value(txKey{}).(*txState); inTx {
		return load(ctx)
	}
	var val T
	err := db.inReadTx(ctx, func(ctx context.Context) error {
		var err error
		val, err = cachedReadTx(ctx, db, orgID, resource, key, load, clone, size)
		return err
	})
	return val, err
}

// cachedReadTx is cachedRead inside its read transaction.
func cachedReadTx[T any](ctx context.Context, db *DB, orgID, resource, key string, load func(context.Context) (T, error),
	clone func(T) T, size func(T) int64) (T, error) {
	if !db.rm.enabled.Load() || ctx.Value(noReadModelKey{}) != nil {
		return load(ctx)
	}
	ver, err := db.readVersion(ctx, orgID, resource)
	if err != nil {
		return load(ctx)
	}
	if rt, ok := ctx.Value(readTxKey{}).(*readTx); ok {
		rt.version, rt.versionOf, rt.hasVersion = ver, orgID+"\x00"+resource, true
	}
	k := orgID + "\x00" + resource + "\x00" + key
	if v, ok := db.rm.get(k, ver); ok {
		db.rm.hits.Add(1)
		return clone(v.(T)), nil
	}
	db.rm.misses.Add(1)
	val, err := load(ctx)
	if err != nil {
		return val, err
	}
	c := clone(val)
	db.rm.put(k, ver, c, size(c))
	return val, nil
}
