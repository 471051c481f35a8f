package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.OperatorStore = (*DB)(nil)

// SetOperator flags or unflags a login as the appliance operator.
func (db *DB) SetOperator(ctx context.Context, userID string, on bool, at time.Time) (bool, error) {
	var q string
	args := []any{userID}
	if on {
		q = `INSERT INTO operators (user_id, granted_at) VALUES (?, ?) ON CONFLICT (user_id) DO NOTHING`
		args = append(args, ts(at))
	} else {
		q = `DELETE FROM operators WHERE user_id = ?`
	}
	res, err := db.wr(ctx).ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("set operator: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// IsOperator reports whether the login is flagged as operator.
func (db *DB) IsOperator(ctx context.Context, userID string) (bool, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT COUNT(*) FROM operators WHERE user_id = ?`, userID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("is operator: %w", err)
	}
	return n > 0, nil
}

// ListOperators lists the operators by e-mail.
func (db *DB) ListOperators(ctx context.Context) ([]app.Operator, error) {
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT u.id, u.email, u.name, o.granted_at FROM operators o
		JOIN users u ON u.id = o.user_id ORDER BY u.email`)
	if err != nil {
		return nil, fmt.Errorf("list operators: %w", err)
	}
	defer rows.Close()
	out := []app.Operator{}
	for rows.Next() {
		var o app.Operator
		var at string
		if err := rows.Scan(&o.UserID, &o.Email, &o.Name, &at); err != nil {
			return nil, fmt.Errorf("list operators: %w", err)
		}
		o.GrantedAt = parseTS(at)
		out = append(out, o)
	}
	return out, rows.Err()
}
