package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

var _ app.QuestionnaireStore = (*DB)(nil)

const questionnaireColumns = `id, name, direction, status, vendor_id, template_id, file_name, file_type, file_sha256, layout,
	due_date, sent_at, submitted_at, created_at, updated_at,
	(SELECT count(*) FROM questionnaire_questions qq WHERE qq.questionnaire_id = questionnaires.id),
	(SELECT count(*) FROM questionnaire_questions qq WHERE qq.questionnaire_id = questionnaires.id AND qq.answer IS NOT NULL)`

func scanQuestionnaire(row interface{ Scan(...any) error }) (*app.Questionnaire, error) {
	var q app.Questionnaire
	var vendor, tpl, fname, ftype, sha, due, sent, submitted sql.NullString
	var layout, created, updated string
	if err := row.Scan(&q.ID, &q.Name, &q.Direction, &q.Status, &vendor, &tpl, &fname, &ftype, &sha, &layout, &due, &sent,
		&submitted, &created, &updated, &q.TotalQuestions, &q.AnsweredQuestions); err != nil {
		return nil, mapErr(err)
	}
	q.VendorID, q.TemplateID, q.FileName, q.FileType, q.DueDate = strPtr(vendor), strPtr(tpl), strPtr(fname), strPtr(ftype), strPtr(due)
	q.FileSHA256 = sha.String
	if err := json.Unmarshal([]byte(layout), &q.Layout); err != nil {
		return nil, fmt.Errorf("decode layout of %s: %w", q.ID, err)
	}
	q.SentAt, q.SubmittedAt = parseTSPtr(sent), parseTSPtr(submitted)
	q.CreatedAt, q.UpdatedAt = parseTS(created), parseTS(updated)
	return &q, nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateQuestionnaire inserts a questionnaire and its questions.
func (db *DB) CreateQuestionnaire(ctx context.Context, orgID string, q *app.Questionnaire) error {
	layout, err := json.Marshal(q.Layout)
	if err != nil {
		return err
	}
	if q.Layout == nil {
		layout = []byte("[]")
	}
	_, err = db.wr(ctx).ExecContext(ctx, `INSERT INTO questionnaires (organization_id, id, name, direction, status, vendor_id,
		template_id, file_name, file_type, file_sha256, layout, due_date, sent_at, submitted_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		orgID, q.ID, q.Name, q.Direction, q.Status, nullStr(q.VendorID), nullStr(q.TemplateID), nullStr(q.FileName),
		nullStr(q.FileType), nullIfEmpty(q.FileSHA256), string(layout), nullStr(q.DueDate), tsPtr(q.SentAt), tsPtr(q.SubmittedAt),
		ts(q.CreatedAt), ts(q.UpdatedAt))
	if err != nil {
		return mapErr(err)
	}
	for _, qq := range q.Questions {
		var conf any
		if qq.Confidence != nil {
			conf = *qq.Confidence
		}
		var st, sr, sn any
		if qq.Source != nil {
			st, sr, sn = qq.Source.Type, qq.Source.ID, qq.Source.Name
		}
		_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO questionnaire_questions (id, organization_id, questionnaire_id, position,
			section, question, answer, comment, status, confidence, source_type, source_ref, source_name, sheet, row_num,
			answer_col, comment_col, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			qq.ID, orgID, q.ID, qq.Position, qq.Section, qq.Question, nullStr(qq.Answer), nullStr(qq.Comment), qq.Status, conf,
			st, sr, sn, qq.Sheet, qq.Row, qq.AnswerCol, qq.CommentCol, ts(qq.UpdatedAt))
		if err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// GetQuestionnaire returns one questionnaire, with its questions if asked.
func (db *DB) GetQuestionnaire(ctx context.Context, orgID, id string, withQuestions bool) (*app.Questionnaire, error) {
	q, err := scanQuestionnaire(db.rd(ctx).QueryRowContext(ctx, `SELECT `+questionnaireColumns+` FROM questionnaires
		WHERE organization_id = ? AND id = ?`, orgID, id))
	if err != nil || !withQuestions {
		return q, err
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT id, position, section, question, answer, comment, status, confidence,
		source_type, source_ref, source_name, sheet, row_num, answer_col, comment_col, updated_at, draft
		FROM questionnaire_questions WHERE organization_id = ? AND questionnaire_id = ? ORDER BY position`, orgID, id)
	if err != nil {
		return nil, fmt.Errorf("list questions of %s: %w", id, err)
	}
	defer rows.Close()
	q.Questions = []app.Question{}
	for rows.Next() {
		var qq app.Question
		var answer, comment, st, sr, sn, draft sql.NullString
		var conf sql.NullFloat64
		var updated string
		if err := rows.Scan(&qq.ID, &qq.Position, &qq.Section, &qq.Question, &answer, &comment, &qq.Status, &conf, &st, &sr, &sn,
			&qq.Sheet, &qq.Row, &qq.AnswerCol, &qq.CommentCol, &updated, &draft); err != nil {
			return nil, err
		}
		if draft.Valid {
			qq.Draft = &app.AnswerDraft{}
			if err := json.Unmarshal([]byte(draft.String), qq.Draft); err != nil {
				return nil, fmt.Errorf("question %s draft: %w", qq.ID, err)
			}
		}
		qq.Answer, qq.Comment = strPtr(answer), strPtr(comment)
		if conf.Valid {
			qq.Confidence = &conf.Float64
		}
		if st.Valid {
			qq.Source = &app.AnswerSource{Type: st.String, ID: sr.String, Name: sn.String}
		}
		qq.UpdatedAt = parseTS(updated)
		q.Questions = append(q.Questions, qq)
	}
	return q, rows.Err()
}

// ListQuestionnaires returns a page of questionnaires, newest first.
func (db *DB) ListQuestionnaires(ctx context.Context, orgID string, f app.QuestionnaireFilter) (app.List[app.Questionnaire], error) {
	where := []string{"organization_id = ?"}
	args := []any{orgID}
	for col, v := range map[string]string{"status": f.Status, "vendor_id": f.VendorID, "direction": f.Direction} {
		if v != "" {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	w := strings.Join(where, " AND ")
	out := app.List[app.Questionnaire]{Items: []app.Questionnaire{}}
	if err := db.rd(ctx).QueryRowContext(ctx, `SELECT count(*) FROM questionnaires WHERE `+w, args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count questionnaires: %w", err)
	}
	rows, err := db.rd(ctx).QueryContext(ctx, `SELECT `+questionnaireColumns+` FROM questionnaires WHERE `+w+`
		ORDER BY id DESC LIMIT ? OFFSET ?`, append(args, f.Page.PerPage, f.Page.Offset())...)
	if err != nil {
		return out, fmt.Errorf("list questionnaires: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		q, err := scanQuestionnaire(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *q)
	}
	return out, rows.Err()
}

// UpdateQuestionnaire writes the questionnaire's own columns (not its questions).
func (db *DB) UpdateQuestionnaire(ctx context.Context, orgID string, q *app.Questionnaire) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE questionnaires SET name = ?, direction = ?, status = ?, vendor_id = ?,
		due_date = ?, sent_at = ?, submitted_at = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		q.Name, q.Direction, q.Status, nullStr(q.VendorID), nullStr(q.DueDate), tsPtr(q.SentAt), tsPtr(q.SubmittedAt), ts(q.UpdatedAt),
		orgID, q.ID)
	return affected(res, err)
}

// DeleteQuestionnaire removes a questionnaire; questions and links cascade.
func (db *DB) DeleteQuestionnaire(ctx context.Context, orgID, id string) error {
	res, err := db.wr(ctx).ExecContext(ctx, `DELETE FROM questionnaires WHERE organization_id = ? AND id = ?`, orgID, id)
	return affected(res, err)
}

// UpdateQuestions writes the answer columns of questions.
func (db *DB) UpdateQuestions(ctx context.Context, orgID string, qs []app.Question) error {
	for _, qq := range qs {
		var conf any
		if qq.Confidence != nil {
			conf = *qq.Confidence
		}
		var st, sr, sn any
		if qq.Source != nil {
			st, sr, sn = qq.Source.Type, qq.Source.ID, qq.Source.Name
		}
		var draft any
		if qq.Draft != nil {
			b, err := json.Marshal(qq.Draft)
			if err != nil {
				return err
			}
			draft = string(b)
		}
		res, err := db.wr(ctx).ExecContext(ctx, `UPDATE questionnaire_questions SET answer = ?, comment = ?, status = ?,
			confidence = ?, source_type = ?, source_ref = ?, source_name = ?, draft = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
			nullStr(qq.Answer), nullStr(qq.Comment), qq.Status, conf, st, sr, sn, draft, ts(qq.UpdatedAt), orgID, qq.ID)
		if err := affected(res, err); err != nil {
			return fmt.Errorf("update question %s: %w", qq.ID, err)
		}
	}
	return nil
}

// QuestionnaireUsage returns the questionnaires created in a month.
func (db *DB) QuestionnaireUsage(ctx context.Context, orgID, month string) (int, error) {
	var n int
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT used FROM questionnaire_usage WHERE organization_id = ? AND month = ?`, orgID, month).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read questionnaire usage: %w", err)
	}
	return n, nil
}

// AddQuestionnaireUsage counts one more questionnaire in a month.
func (db *DB) AddQuestionnaireUsage(ctx context.Context, orgID, month string) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO questionnaire_usage (organization_id, month, used) VALUES (?, ?, 1)
		ON CONFLICT (organization_id, month) DO UPDATE SET used = questionnaire_usage.used + 1`, orgID, month)
	return mapErr(err)
}

const linkColumns = `id, organization_id, questionnaire_id, vendor_id, token_hash, csrf_secret, expires_at, used_at, revoked_at, created_at`

// CreateQuestionnaireLink inserts a fill link.
func (db *DB) CreateQuestionnaireLink(ctx context.Context, l *app.QuestionnaireLink) error {
	_, err := db.wr(ctx).ExecContext(ctx, `INSERT INTO questionnaire_links (`+linkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.OrganizationID, l.QuestionnaireID, l.VendorID, l.TokenHash, l.CSRFSecret, ts(l.ExpiresAt), tsPtr(l.UsedAt),
		tsPtr(l.RevokedAt), ts(l.CreatedAt))
	return mapErr(err)
}

// GetQuestionnaireLink finds a link by the hash of its token.
func (db *DB) GetQuestionnaireLink(ctx context.Context, tokenHash string) (*app.QuestionnaireLink, error) {
	var l app.QuestionnaireLink
	var expires, created string
	var used, revoked sql.NullString
	err := db.rd(ctx).QueryRowContext(ctx, `SELECT `+linkColumns+` FROM questionnaire_links WHERE token_hash = ?`, tokenHash).Scan(
		&l.ID, &l.OrganizationID, &l.QuestionnaireID, &l.VendorID, &l.TokenHash, &l.CSRFSecret, &expires, &used, &revoked, &created)
	if err != nil {
		return nil, mapErr(err)
	}
	l.ExpiresAt, l.CreatedAt = parseTS(expires), parseTS(created)
	l.UsedAt, l.RevokedAt = parseTSPtr(used), parseTSPtr(revoked)
	return &l, nil
}

// UpdateQuestionnaireLink writes a link's used and revoked times.
func (db *DB) UpdateQuestionnaireLink(ctx context.Context, l *app.QuestionnaireLink) error {
	res, err := db.wr(ctx).ExecContext(ctx, `UPDATE questionnaire_links SET used_at = ?, revoked_at = ? WHERE organization_id = ? AND id = ?`,
		tsPtr(l.UsedAt), tsPtr(l.RevokedAt), l.OrganizationID, l.ID)
	return affected(res, err)
}

// RevokeQuestionnaireLinks revokes every live link of a questionnaire.
func (db *DB) RevokeQuestionnaireLinks(ctx context.Context, orgID, questionnaireID string, at time.Time) error {
	_, err := db.wr(ctx).ExecContext(ctx, `UPDATE questionnaire_links SET revoked_at = ? WHERE organization_id = ?
		AND questionnaire_id = ? AND used_at IS NULL AND revoked_at IS NULL`, ts(at), orgID, questionnaireID)
	return mapErr(err)
}
