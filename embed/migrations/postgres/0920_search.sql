-- PostgreSQL only: the global search index. SQLite's search_index is an
-- external-content FTS5 table over search_docs fed by triggers on it; here
-- the index is search_docs' own generated column tsv (the title weighted
-- A, the body B), which PostgreSQL keeps current on every insert, update
-- and delete of a row, the events SQLite's triggers search_docs_ai,
-- search_docs_au and search_docs_ad handle. The triggers on the source
-- tables are translated from the SQLite migration and write search_docs
-- as there. The text goes through search_text() and the configuration
-- compliance_search (migration 0500's addendum).
ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('compliance_search'::regconfig, search_text(title)), 'A') ||
    setweight(to_tsvector('compliance_search'::regconfig, search_text(body)), 'B')) STORED;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
