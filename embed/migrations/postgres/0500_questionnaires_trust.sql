-- PostgreSQL only: full-text search of the knowledge base (kb_index is an
-- FTS5 table in SQLite) and what every full-text index of this store
-- shares.
--
-- compliance_search is the text search configuration of both indexes:
-- PostgreSQL's English Snowball stemmer (SQLite's indexes stem with
-- Porter) without a stop-word list (FTS5 has none: every word typed is
-- searched for). Text is folded before it is parsed, by search_text():
-- Latin letters with diacritics become the plain lower-case letter (é, É
-- and e match alike, as FTS5's remove_diacritics does; the unaccent
-- extension is not relied on, it is not always installed), and
-- punctuation and symbols become spaces, so that words split where
-- FTS5's unicode61 tokenizer splits them (an e-mail address is three
-- words, not one token). Both functions map one character to one
-- character, so a headline computed over the folded text marks the same
-- positions in the original.

CREATE TEXT SEARCH DICTIONARY compliance_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION compliance_search (COPY = english);
ALTER TEXT SEARCH CONFIGURATION compliance_search
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH compliance_stem;

-- search_unaccent folds the Latin letters with diacritics (of Latin-1,
-- Latin Extended-A and B and Latin Extended Additional) to plain
-- lower-case letters; queries go through it.
CREATE FUNCTION search_unaccent(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN translate(t,
    'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹ',
    'aaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyyaaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzoouuaaiioouuuuuuuuuuaaaaggkkoooojggnnaaaaaaeeeeiiiioooorrrruuuusstthhaaeeooooooooyyaabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmmmmmmnnnnnnnnoooooooopppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvvwwwwwwwwwwxxxxyyzzzzzzhtwyaaaaaaaaaaaaaaaaaaaaaaaaeeeeeeeeeeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyy');

-- search_text is what the indexes parse: search_unaccent, and
-- punctuation and symbols as spaces.
CREATE FUNCTION search_text(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN translate(search_unaccent(t),
    '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~ ¡¢£¤¥¦§¨©«¬®¯°±´¶·¸»¿           ‐‑‒–—―‖‗‘’‚‛“”„‟†‡•‣․‥…‧   ‰‱′″‴‵‶‷‸‹›※‼‽‾‿⁀⁁⁂⁃⁄⁅⁆⁇⁈⁉⁊⁋⁌⁍⁎⁏⁐⁑⁒⁓⁔⁕⁖⁗⁘⁙⁚⁛⁜⁝⁞ 　、。〃〄〈〉《》「」『』【】〒〓〔〕〖〗〘〙〚〛〜〝〞〟〠〰〶〷〽〾〿',
    '                                                                                                                                                                                ');

-- kb_index: one row per indexed document, written by the storage code as
-- in SQLite (rowid: the entry's rowid, negative for source documents).
-- tsv weighs the question A, the tags B and the answer C (SQLite's BM25
-- weights 4, 2 and 1).
CREATE TABLE kb_index (
    rowid BIGINT PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL,
    org_token TEXT COLLATE "C" NOT NULL,
    source_type TEXT COLLATE "C" NOT NULL,
    ref TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL DEFAULT '',
    question TEXT COLLATE "C" NOT NULL DEFAULT '',
    answer TEXT COLLATE "C" NOT NULL DEFAULT '',
    tags TEXT COLLATE "C" NOT NULL DEFAULT '',
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('compliance_search'::regconfig, search_text(coalesce(question, ''))), 'A') ||
        setweight(to_tsvector('compliance_search'::regconfig, search_text(coalesce(tags, ''))), 'B') ||
        setweight(to_tsvector('compliance_search'::regconfig, search_text(coalesce(answer, ''))), 'C')) STORED
);
CREATE INDEX kb_index_tsv ON kb_index USING gin (tsv);
CREATE INDEX kb_index_org_source ON kb_index (organization_id, source_type);
