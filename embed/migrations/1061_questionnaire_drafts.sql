-- A model-drafted answer beside a question the lexical auto-answer left
-- open: JSON {text, sources, status: needs_review, model, draftedAt}. The
-- question's own status and answer are not touched: a draft is never an
-- answer until a person saves it.
ALTER TABLE questionnaire_questions ADD COLUMN draft TEXT;
