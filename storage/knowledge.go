package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.KnowledgeStore = (*DB)(nil)

const kbColumns = `id, question, answer, tags, source_document, owner_id, review_date, created_at, updated_at`

// tagSep joins tags in the index; the tokenizer ignores it.
const tagSep = " ; "

// orgToken is the organization id as a single index token.
func orgToken(orgID string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, orgID))
}

// orgMatch narrows an FTS5 expression to one organization.
func orgMatch(orgID, match string) string {
	m := `org_token : "` + orgToken(orgID) + `"`
	if match != "" {
		m += " AND (" + match + ")"
	}
	return m
}

func scanKBEntry(row interface{ Scan(...any) error }) (*app.KBEntry, error) {
	var e app.KBEntry
	var tags, created, updated string
	var src, owner, review sql.NullString
	if err := row.Scan(&e.ID, &e.Question, &e.Answer, &tags, &src, &owner, &review, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	e.Tags = []string{}
	if err := json.Unmarshal([]byte(tags), &e.Tags); err != nil {
		return nil, fmt.Errorf("decode tags of %s: %w", e.ID, err)
	}
	e.SourceDocument, e.OwnerID, e.ReviewDate = strPtr(src), strPtr(owner), strPtr(review)
	e.CreatedAt, e.UpdatedAt = parseTS(created), parseTS(updated)
	return &e, nil
}

func (db *DB) indexEntry(ctx context.Context, orgID string, e *app.KBEntry) error {
	name := ""
	if e.SourceDocument != nil {
		name = *e.SourceDocument
	}
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO kb_index (rowid, organization_id, org_token, source_type, ref, name, question, answer, tags)
		SELECT rowid, ?, ?, ?, id, ?, ?, ?, ? FROM kb_entries WHERE organization_id = ? AND id = ?`,
		orgID, orgToken(orgID), app.SourceTypeEntry, name, e.Question, e.Answer, strings.Join(e.Tags, tagSep), orgID, e.ID)
	if err != nil {
		return fmt.Errorf("index entry %s: %w", e.ID, err)
	}
	return nil
}

func (db *DB) unindexEntry(ctx context.Context, orgID, id string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM kb_index WHERE rowid = (SELECT rowid FROM kb_entries WHERE organization_id = ? AND id = ?)`, orgID, id)
	if err != nil {
		return fmt.Errorf("unindex entry %s: %w", id, err)
	}
	return nil
}

// CreateKBEntries inserts entries and indexes them.
func (db *DB) CreateKBEntries(ctx context.Context, orgID string, es []*app.KBEntry) error {
	for _, e := range es {
		tags, err := json.Marshal(e.Tags)
		if err != nil {
			return err
		}
		_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO kb_entries (organization_id, `+kbColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			orgID, e.ID, e.Question, e.Answer, string(tags), nullStr(e.SourceDocument), nullStr(e.OwnerID), nullStr(e.ReviewDate),
			ts(e.CreatedAt), ts(e.UpdatedAt))
		if err != nil {
			return mapErr(err)
		}
		if err := db.indexEntry(ctx, orgID, e); err != nil {
			return err
		}
	}
	return nil
}

// UpdateKBEntry writes an entry and re-indexes it.
func (db *DB) UpdateKBEntry(ctx context.Context, orgID string, e *app.KBEntry) error {
	tags, err := json.Marshal(e.Tags)
	if err != nil {
		return err
	}
	if err := db.unindexEntry(ctx, orgID, e.ID); err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE kb_entries SET question = ?, answer = ?, tags = ?, source_document = ?,
		owner_id = ?, review_date = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		e.Question, e.Answer, string(tags), nullStr(e.SourceDocument), nullStr(e.OwnerID), nullStr(e.ReviewDate), ts(e.UpdatedAt), orgID, e.ID)
	if err := affected(res, err); err != nil {
		return err
	}
	return db.indexEntry(ctx, orgID, e)
}

// DeleteKBEntry removes an entry and its index row.
func (db *DB) DeleteKBEntry(ctx context.Context, orgID, id string) error {
	if err := db.unindexEntry(ctx, orgID, id); err != nil {
		return err
	}
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM kb_entries WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// GetKBEntry returns one entry.
func (db *DB) GetKBEntry(ctx context.Context, orgID, id string) (*app.KBEntry, error) {
	return scanKBEntry(db.rd(ctx).QueryRowContext(ctx, `SELECT `+kbColumns+` FROM kb_entries WHERE organization_id = ? AND id = ?`, orgID, id))
}

// ListKBEntries returns a page of entries, newest first.
func (db *DB) ListKBEntries(ctx context.Context, orgID string, f app.KBFilter) (app.List[app.KBEntry], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	if f.Tag != "" {
		where = append(where, "EXISTS (SELECT 1 FROM json_each(kb_entries.tags) WHERE json_each.value = ?)")
		args = append(args, f.Tag)
	}
	if f.OwnerID != "" {
		where = append(where, "owner_id = ?")
		args = append(args, f.OwnerID)
	}
	if f.ReviewDueBefore != "" {
		where = append(where, "review_date IS NOT NULL AND review_date <= ?")
		args = append(args, f.ReviewDueBefore)
	}
	w := strings.Join(where, " AND ")
	out := app.List[app.KBEntry]{Items: []app.KBEntry{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM kb_entries WHERE `+w, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count knowledge-base entries: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+kbColumns+` FROM kb_entries WHERE `+w+` ORDER BY id DESC LIMIT ? OFFSET ?`,
		append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list knowledge-base entries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanKBEntry(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *e)
	}
	return out, rows.Err()
}

// bm25Weights weight the columns of kb_index: organization, its token and
// the three unindexed columns count nothing; then question, answer, tags.
const bm25Weights = `0, 0, 0, 0, 0, 4.0, 1.0, 2.0`

// SearchKB returns the hits of an FTS5 expression, best BM25 first. The
// inner query ranks rowids only, so stored text is read for the page alone.
func (db *DB) SearchKB(ctx context.Context, orgID, match string, limit, offset int) ([]app.KBHit, error) {
	if db.pg {
		return db.pgSearchKB(ctx, orgID, match, limit, offset)
	}
	return scanKBHits(db.rd(ctx).QueryContext(ctx, `SELECT k.source_type, k.ref, k.name, k.question, k.answer, k.tags, top.score
		FROM (SELECT rowid AS id, bm25(kb_index, `+bm25Weights+`) AS score FROM kb_index WHERE kb_index MATCH ?
			ORDER BY score LIMIT ? OFFSET ?) AS top
		JOIN kb_index AS k ON k.rowid = top.id
		WHERE k.organization_id = ? ORDER BY top.score`, orgMatch(orgID, match), limit, offset, orgID))
}

// scanKBHits reads the rows of SearchKB: the text, and a score where
// lower is better.
func scanKBHits(rows *sql.Rows, err error) ([]app.KBHit, error) {
	if err != nil {
		return nil, fmt.Errorf("search knowledge base: %w", err)
	}
	defer rows.Close()
	out := []app.KBHit{}
	for rows.Next() {
		var h app.KBHit
		var tags string
		if err := rows.Scan(&h.SourceType, &h.SourceID, &h.SourceName, &h.Question, &h.Answer, &tags, &h.Score); err != nil {
			return nil, err
		}
		h.Score = -h.Score
		h.Tags = []string{}
		if tags != "" {
			h.Tags = strings.Split(tags, tagSep)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// CountKBMatches counts the organization's indexed documents matching the
// expression; an empty expression counts all of them.
func (db *DB) CountKBMatches(ctx context.Context, orgID, match string) (int, error) {
	if db.pg {
		return db.pgCountKBMatches(ctx, orgID, match)
	}
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM kb_index WHERE kb_index MATCH ?`, orgMatch(orgID, match)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count knowledge-base matches: %w", err)
	}
	return n, nil
}

// ReplaceKBSource replaces every indexed document of a source type. Source
// documents take negative rowids so they never meet an entry's rowid.
func (db *DB) ReplaceKBSource(ctx context.Context, orgID, sourceType string, docs []app.KnowledgeDocument) error {
	if sourceType == app.SourceTypeEntry {
		return fmt.Errorf("source type %q is reserved", sourceType)
	}
	q := db.wr(ctx)
	if _, err := q.ExecContext(ctx, `DELETE FROM kb_index WHERE organization_id = ? AND source_type = ?`, orgID, sourceType); err != nil {
		return fmt.Errorf("clear knowledge source %s: %w", sourceType, err)
	}
	var low int64
	if err := q.QueryRowContext(ctx, `SELECT min(0, coalesce(min(rowid), 0)) FROM kb_index`).Scan(&low); err != nil {
		return err
	}
	for i, d := range docs {
		_, err := q.ExecContext(ctx, `INSERT INTO kb_index (rowid, organization_id, org_token, source_type, ref, name, question, answer, tags)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, low-int64(i)-1, orgID, orgToken(orgID), sourceType, d.ID, d.Name, d.Title, d.Text, strings.Join(d.Tags, tagSep))
		if err != nil {
			return fmt.Errorf("index %s %s: %w", sourceType, d.ID, err)
		}
	}
	return nil
}

// PostgreSQL: kb_index is a table with a generated tsvector column
// (embed/migrations/postgres/0500_questionnaires_trust.sql), written by
// the same statements as SQLite's FTS5 table; the organization narrows
// with a plain condition and the expression becomes a bound tsquery
// (pgTSQuery).

// pgKBWeights weigh kb_index.tsv's classes {D, C, B, A}: answer (C) 1,
// tags (B) 2, question (A) 4, as bm25Weights do.
const pgKBWeights = `'{0, 0.25, 0.5, 1}'`

// pgSearchKB is SearchKB on PostgreSQL, ranked by ts_rank normalized by
// the document's length. The score is negated to read like SQLite's
// BM25 (lower is better) for scanKBHits.
func (db *DB) pgSearchKB(ctx context.Context, orgID, match string, limit, offset int) ([]app.KBHit, error) {
	tsq, err := pgTSQuery(match)
	if err != nil {
		return nil, fmt.Errorf("search knowledge base: %w", err)
	}
	if tsq == "" {
		return []app.KBHit{}, nil
	}
	return scanKBHits(db.rd(ctx).QueryContext(ctx, `SELECT k.source_type, k.ref, k.name, k.question, k.answer, k.tags, top.score
		FROM (SELECT rowid AS id, -ts_rank(`+pgKBWeights+`, tsv, q, 1) AS score FROM kb_index, `+pgTSQueryFrom+`
			WHERE organization_id = ? AND tsv @@ q ORDER BY score, rowid LIMIT ? OFFSET ?) AS top
		JOIN kb_index AS k ON k.rowid = top.id
		WHERE k.organization_id = ? ORDER BY top.score, top.id`, tsq, orgID, limit, offset, orgID))
}

// pgCountKBMatches is CountKBMatches on PostgreSQL.
func (db *DB) pgCountKBMatches(ctx context.Context, orgID, match string) (int, error) {
	tsq, err := pgTSQuery(match)
	if err != nil {
		return 0, fmt.Errorf("count knowledge-base matches: %w", err)
	}
	var n int
	if tsq == "" && strings.TrimSpace(match) == "" {
		err = db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM kb_index WHERE organization_id = ?`, orgID).Scan(&n)
	} else if tsq != "" {
		err = db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM kb_index, `+pgTSQueryFrom+` WHERE organization_id = ? AND tsv @@ q`,
			tsq, orgID).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("count knowledge-base matches: %w", err)
	}
	return n, nil
}
