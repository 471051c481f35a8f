-- PostgreSQL only: the SQLite functions the shared statements use.

CREATE FUNCTION instr(s text, sub text) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $f$ SELECT strpos(s, sub)::bigint $f$;

-- json_extract(doc, '$.a.b') for the paths the statements use.
CREATE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE
AS $f$ SELECT CASE WHEN path = '$' THEN doc ELSE doc::json #>> string_to_array(substr(path, 3), '.') END $f$;

-- json_each over a JSON array: one row per element, strings unquoted.
CREATE FUNCTION json_each(doc text) RETURNS TABLE(value text) LANGUAGE sql IMMUTABLE
AS $f$ SELECT json_array_elements_text(doc::json) $f$;

CREATE FUNCTION group_concat_step(acc text, val text, sep text) RETURNS text LANGUAGE sql IMMUTABLE
AS $f$ SELECT CASE WHEN val IS NULL THEN acc WHEN acc IS NULL THEN val ELSE acc || sep || val END $f$;
CREATE AGGREGATE group_concat(text, text) (SFUNC = group_concat_step, STYPE = text);

CREATE FUNCTION group_concat_step(acc text, val text) RETURNS text LANGUAGE sql IMMUTABLE
AS $f$ SELECT CASE WHEN val IS NULL THEN acc WHEN acc IS NULL THEN val ELSE acc || ',' || val END $f$;
CREATE AGGREGATE group_concat(text) (SFUNC = group_concat_step, STYPE = text);

CREATE FUNCTION json_group_array_final(state text[]) RETURNS text LANGUAGE sql IMMUTABLE
AS $f$ SELECT array_to_json(state)::text $f$;
CREATE AGGREGATE json_group_array(text) (SFUNC = array_append, STYPE = text[], FINALFUNC = json_group_array_final, INITCOND = '{}');
