package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL store is this package's code over pgx's database/sql
// driver, wrapped so that:
//   - each statement's text is rewritten from SQLite's dialect (pgSQL);
//   - statements go by the simple query protocol, with values as
//     literals the server types by their context, as SQLite's columns
//     accept them (a prepared, typed statement would refuse an integer
//     bound where text is compared, which SQLite allows);
//   - booleans come back as 0 and 1 (a comparison in SQLite is an
//     integer) and go in as 0 and 1 (columns are integers in both).

const pgDriverName = "compliance-postgres"

func init() { sql.Register(pgDriverName, pgDriver{}) }

type pgDriver struct{}

func (d pgDriver) Open(name string) (driver.Conn, error) {
	c, err := d.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

func (pgDriver) OpenConnector(name string) (driver.Connector, error) {
	cfg, err := pgx.ParseConfig(name)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return &pgConnector{inner: stdlib.GetConnector(*cfg)}, nil
}

type pgConnector struct{ inner driver.Connector }

func (c *pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{c: conn.(*stdlib.Conn)}, nil
}

func (c *pgConnector) Driver() driver.Driver { return pgDriver{} }

type pgConn struct{ c *stdlib.Conn }

var (
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.Validator          = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
)

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return &pgStmt{c: c, q: query}, nil
}

// PrepareContext prepares nothing on the server: the statement is sent
// whole each time by the simple protocol.
func (c *pgConn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	return &pgStmt{c: c, q: query}, nil
}

func (c *pgConn) Close() error { return c.c.Close() }

func (c *pgConn) Begin() (driver.Tx, error) {
	return c.c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.c.ExecContext(ctx, pgSQL(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.c.QueryContext(ctx, pgSQL(query), args)
	if err != nil {
		return nil, err
	}
	return &pgRows{Rows: r}, nil
}

func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case bool:
		nv.Value = int64(boolInt(v))
		return nil
	case time.Time:
		nv.Value = ts(v)
		return nil
	}
	return c.c.CheckNamedValue(nv)
}

func (c *pgConn) ResetSession(ctx context.Context) error { return c.c.ResetSession(ctx) }
func (c *pgConn) IsValid() bool                          { return !c.c.Conn().IsClosed() }
func (c *pgConn) Ping(ctx context.Context) error         { return c.c.Ping(ctx) }

type pgStmt struct {
	c *pgConn
	q string
}

func (s *pgStmt) Close() error  { return nil }
func (s *pgStmt) NumInput() int { return -1 }

func (s *pgStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *pgStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.q, args)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.q, args)
}

func (s *pgStmt) CheckNamedValue(nv *driver.NamedValue) error { return s.c.CheckNamedValue(nv) }

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// pgRows turns booleans into integers, as SQLite returns them.
type pgRows struct{ driver.Rows }

func (r *pgRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i, v := range dest {
		if b, ok := v.(bool); ok {
			dest[i] = int64(boolInt(b))
		}
	}
	return nil
}
