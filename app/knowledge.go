package app

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode"
)

// PrefixKBEntry is the id prefix of knowledge-base entries.
const PrefixKBEntry = "kbe"

// Knowledge-base limits.
const (
	kbQuestionMax   = 2000
	kbAnswerMax     = 20000
	kbTagMax        = 64
	kbTagsMax       = 30
	kbImportMaxRows = 5000
	// SourceTypeEntry marks search hits that are knowledge-base entries.
	SourceTypeEntry = "entry"
)

// KBEntry is one reusable answer of the knowledge base.
type KBEntry struct {
	ID             string    `json:"id"`
	Question       string    `json:"question"`
	Answer         string    `json:"answer"`
	Tags           []string  `json:"tags"`
	SourceDocument *string   `json:"sourceDocument"`
	OwnerID        *string   `json:"ownerId"`
	ReviewDate     *string   `json:"reviewDate"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// KBEntryInput is the body of POST and PATCH /v1/knowledge-base/entries.
type KBEntryInput struct {
	Question       *string       `json:"question"`
	Answer         *string       `json:"answer"`
	Tags           Opt[[]string] `json:"tags"`
	SourceDocument Opt[string]   `json:"sourceDocument"`
	OwnerID        Opt[string]   `json:"ownerId"`
	ReviewDate     Opt[string]   `json:"reviewDate"`
}

// KBFilter narrows the entry list.
type KBFilter struct {
	Tag     string
	OwnerID string
	// ReviewDueBefore lists entries whose review date is on or before it (YYYY-MM-DD).
	ReviewDueBefore string
	Page            Page
}

// KBHit is one search result: an entry or a document of another knowledge
// source, with its BM25 relevance and a confidence from 0 to 1.
type KBHit struct {
	SourceType string   `json:"sourceType"`
	SourceID   string   `json:"sourceId"`
	SourceName string   `json:"sourceName"`
	Question   string   `json:"question"`
	Answer     string   `json:"answer"`
	Tags       []string `json:"tags"`
	// Score is the BM25 relevance (higher is better; SQLite reports it negated).
	Score      float64 `json:"score"`
	Confidence float64 `json:"confidence"`
}

// KnowledgeDocument is a text another part of the appliance contributes to
// the knowledge base, e.g. a published policy.
type KnowledgeDocument struct {
	ID    string   // stable id within its source, e.g. the policy id
	Name  string   // what answers cite, e.g. the policy title
	Title string   // matched like an entry's question
	Text  string   // the answer text offered
	Tags  []string // optional
}

// KnowledgeSource yields documents that are indexed beside the entries.
// Name is the sourceType reported on hits ("policy"). Documents returns
// every current document of the organization; the index of that source is
// replaced with them before each search and auto-fill.
type KnowledgeSource interface {
	Name() string
	Documents(ctx context.Context, orgID string) ([]KnowledgeDocument, error)
}

// KnowledgeStore persists entries and the full-text index.
type KnowledgeStore interface {
	CreateKBEntries(ctx context.Context, orgID string, es []*KBEntry) error
	UpdateKBEntry(ctx context.Context, orgID string, e *KBEntry) error
	DeleteKBEntry(ctx context.Context, orgID, id string) error
	GetKBEntry(ctx context.Context, orgID, id string) (*KBEntry, error)
	ListKBEntries(ctx context.Context, orgID string, f KBFilter) (List[KBEntry], error)
	// SearchKB runs an FTS5 MATCH expression and returns the best hits by BM25.
	SearchKB(ctx context.Context, orgID, match string, limit, offset int) ([]KBHit, error)
	// CountKBMatches counts the indexed documents matching an FTS5 expression.
	CountKBMatches(ctx context.Context, orgID, match string) (int, error)
	// ReplaceKBSource replaces every indexed document of a source type.
	ReplaceKBSource(ctx context.Context, orgID, sourceType string, docs []KnowledgeDocument) error
}

// extensions are the pluggable sources other parts of the appliance wire
// in, plus the knowledge base's caches.
type extensions struct {
	mu        sync.RWMutex
	knowledge []KnowledgeSource
	trust     TrustComplianceSource
	// kbGen counts knowledge-base writes; a cached document frequency is
	// good while the generation it was read in is current.
	kbGen   uint64
	dfCache map[string]*dfCache // by organization
	// srcHash remembers the last indexed content of each source, by
	// organization and source name, so unchanged sources are not rewritten.
	srcHash map[string]string
}

// dfCache holds document frequencies of one organization's index.
type dfCache struct {
	gen uint64
	n   int
	df  map[string]int
}

// kbChanged invalidates the cached document frequencies.
func (a *App) kbChanged() {
	a.ext.mu.Lock()
	a.ext.kbGen++
	a.ext.mu.Unlock()
}

// AddKnowledgeSource registers a source (e.g. published policies) whose
// documents are searched and used by auto-fill beside the entries.
func (a *App) AddKnowledgeSource(s KnowledgeSource) {
	a.ext.mu.Lock()
	defer a.ext.mu.Unlock()
	a.ext.knowledge = append(a.ext.knowledge, s)
}

// syncKnowledgeSources re-indexes the documents of every registered source.
func (a *App) syncKnowledgeSources(ctx context.Context, orgID string) error {
	a.ext.mu.RLock()
	srcs := append([]KnowledgeSource(nil), a.ext.knowledge...)
	a.ext.mu.RUnlock()
	for _, s := range srcs {
		docs, err := s.Documents(ctx, orgID)
		if err != nil {
			return fmt.Errorf("read knowledge source %s: %w", s.Name(), err)
		}
		h := sha256.New()
		for _, d := range docs {
			fmt.Fprintf(h, "%q %q %q %q %q\n", d.ID, d.Name, d.Title, d.Text, d.Tags)
		}
		key, sum := orgID+"\x00"+s.Name(), hex.EncodeToString(h.Sum(nil))
		a.ext.mu.RLock()
		same := a.ext.srcHash[key] == sum
		a.ext.mu.RUnlock()
		if same {
			continue
		}
		if err := a.store.InTx(ctx, func(ctx context.Context) error {
			return a.store.ReplaceKBSource(ctx, orgID, s.Name(), docs)
		}); err != nil {
			return fmt.Errorf("index knowledge source %s: %w", s.Name(), err)
		}
		a.ext.mu.Lock()
		if a.ext.srcHash == nil {
			a.ext.srcHash = map[string]string{}
		}
		a.ext.srcHash[key] = sum
		a.ext.kbGen++
		a.ext.mu.Unlock()
	}
	return nil
}

func normalizeTags(ve *ValidationError, field string, in []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		if len([]rune(t)) > kbTagMax {
			ve.Add(field, CodeTooLong, t, fmt.Sprintf("each tag must be at most %d characters", kbTagMax))
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) > kbTagsMax {
		ve.Add(field, CodeTooLong, len(out), fmt.Sprintf("at most %d tags", kbTagsMax))
	}
	return out
}

// apply copies set fields onto e and validates them; prefix names fields of
// import rows ("rows[3].").
func (in *KBEntryInput) apply(e *KBEntry, ve *ValidationError, prefix string) {
	if in.Question != nil {
		e.Question = strings.TrimSpace(*in.Question)
		if e.Question == "" {
			ve.Add(prefix+"question", CodeRequired, nil, prefix+"question must not be empty")
		}
		maxLen(ve, prefix+"question", e.Question, kbQuestionMax)
	}
	if in.Answer != nil {
		e.Answer = strings.TrimSpace(*in.Answer)
		if e.Answer == "" {
			ve.Add(prefix+"answer", CodeRequired, nil, prefix+"answer must not be empty")
		}
		maxLen(ve, prefix+"answer", e.Answer, kbAnswerMax)
	}
	if in.Tags.Set {
		e.Tags = normalizeTags(ve, prefix+"tags", in.Tags.Value)
	}
	if in.SourceDocument.Set {
		e.SourceDocument = nil
		if s := strings.TrimSpace(in.SourceDocument.Value); !in.SourceDocument.Null && s != "" {
			maxLen(ve, prefix+"sourceDocument", s, 500)
			e.SourceDocument = &s
		}
	}
	if in.OwnerID.Set {
		e.OwnerID = nil
		if s := strings.TrimSpace(in.OwnerID.Value); !in.OwnerID.Null && s != "" {
			e.OwnerID = &s
		}
	}
	if in.ReviewDate.Set {
		e.ReviewDate = nil
		if s := strings.TrimSpace(in.ReviewDate.Value); !in.ReviewDate.Null && s != "" {
			if t, ok := ParseDate(s); ok {
				e.ReviewDate = Ptr(t.Format("2006-01-02"))
			} else {
				ve.Add(prefix+"reviewDate", CodeInvalid, s, prefix+"reviewDate must be a date (YYYY-MM-DD)")
			}
		}
	}
}

func (a *App) checkOwner(ctx context.Context, orgID string, id *string, ve *ValidationError, field string) error {
	if id == nil {
		return nil
	}
	_, err := a.store.GetPerson(ctx, orgID, *id)
	if errors.Is(err, ErrNotFound) {
		ve.Add(field, CodeUnknownReference, *id, field+" must be a person of this organization")
		return nil
	}
	return err
}

// CreateKBEntry adds an entry to the knowledge base.
func (a *App) CreateKBEntry(ctx context.Context, in KBEntryInput) (*KBEntry, error) {
	out, err := a.createKBEntries(ctx, []KBEntryInput{in}, "")
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (a *App) createKBEntries(ctx context.Context, ins []KBEntryInput, list string) ([]*KBEntry, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	now := a.Now()
	ve := NewValidationError()
	es := make([]*KBEntry, 0, len(ins))
	for i, in := range ins {
		prefix := ""
		if list != "" {
			prefix = fmt.Sprintf("%s[%d].", list, i)
		}
		e := &KBEntry{ID: NewID(PrefixKBEntry), Tags: []string{}, CreatedAt: now, UpdatedAt: now}
		if in.Question == nil {
			ve.Add(prefix+"question", CodeRequired, nil, prefix+"question is required")
		}
		if in.Answer == nil {
			ve.Add(prefix+"answer", CodeRequired, nil, prefix+"answer is required")
		}
		in.apply(e, ve, prefix)
		es = append(es, e)
	}
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		for i, e := range es {
			prefix := ""
			if list != "" {
				prefix = fmt.Sprintf("%s[%d].", list, i)
			}
			if err := a.checkOwner(ctx, p.OrgID, e.OwnerID, ve, prefix+"ownerId"); err != nil {
				return err
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		if err := a.store.CreateKBEntries(ctx, p.OrgID, es); err != nil {
			return err
		}
		for _, e := range es {
			if err := a.record(ctx, Mutation{Action: "created", ResourceType: "knowledge_base_entry", ResourceID: e.ID, After: e}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create knowledge-base entries: %w", err)
	}
	a.kbChanged()
	return es, nil
}

// UpdateKBEntry patches an entry.
func (a *App) UpdateKBEntry(ctx context.Context, id string, in KBEntryInput) (*KBEntry, error) {
	p, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	var out *KBEntry
	err = a.store.InTx(ctx, func(ctx context.Context) error {
		before, err := a.store.GetKBEntry(ctx, p.OrgID, id)
		if err != nil {
			return err
		}
		e := *before
		ve := NewValidationError()
		in.apply(&e, ve, "")
		if in.OwnerID.Set {
			if err := a.checkOwner(ctx, p.OrgID, e.OwnerID, ve, "ownerId"); err != nil {
				return err
			}
		}
		if err := ve.Err(); err != nil {
			return err
		}
		e.UpdatedAt = a.Now()
		if err := a.store.UpdateKBEntry(ctx, p.OrgID, &e); err != nil {
			return err
		}
		out = &e
		return a.record(ctx, Mutation{Action: "updated", ResourceType: "knowledge_base_entry", ResourceID: id, Before: before, After: &e})
	})
	if err != nil {
		return nil, fmt.Errorf("update knowledge-base entry %s: %w", id, err)
	}
	a.kbChanged()
	return out, nil
}

// DeleteKBEntry removes an entry and its index row.
func (a *App) DeleteKBEntry(ctx context.Context, id string) error {
	if err := deleteRecorded(ctx, a, "knowledge_base_entry", id, a.store.GetKBEntry, a.store.DeleteKBEntry); err != nil {
		return err
	}
	a.kbChanged()
	return nil
}

// staffRead refuses employees and contractors, who read only what is
// assigned to them, the questionnaire, knowledge-base search and trust
// administration reads.
func staffRead(p *Principal) error {
	if p.SeesOnlyAssigned() {
		return Errorf(ErrForbidden, "the %s role may not read this", p.Role)
	}
	return nil
}

// GetKBEntry returns one entry; employees and contractors see only the
// entries they own.
func (a *App) GetKBEntry(ctx context.Context, id string) (*KBEntry, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	e, err := a.store.GetKBEntry(ctx, p.OrgID, id)
	if err != nil {
		return nil, err
	}
	if p.SeesOnlyAssigned() && (e.OwnerID == nil || *e.OwnerID != p.UserID) {
		return nil, ErrNotFound
	}
	return e, nil
}

// ListKBEntries lists entries, newest first.
func (a *App) ListKBEntries(ctx context.Context, f KBFilter) (List[KBEntry], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[KBEntry]{}, err
	}
	if f.ReviewDueBefore != "" {
		t, ok := ParseDate(f.ReviewDueBefore)
		if !ok {
			return List[KBEntry]{}, Invalid("reviewDueBefore", CodeInvalid, f.ReviewDueBefore, "reviewDueBefore must be a date (YYYY-MM-DD)")
		}
		f.ReviewDueBefore = t.Format("2006-01-02")
	}
	f.Tag = strings.ToLower(strings.TrimSpace(f.Tag))
	if p.SeesOnlyAssigned() {
		if p.UserID == "" || (f.OwnerID != "" && f.OwnerID != p.UserID) {
			return List[KBEntry]{Items: []KBEntry{}}, nil
		}
		f.OwnerID = p.UserID
	}
	return a.store.ListKBEntries(ctx, p.OrgID, f)
}

// SearchKB ranks entries and source documents by relevance to the query
// (FTS5 BM25, question weighted above tags above answer) and attaches a
// confidence to each hit.
func (a *App) SearchKB(ctx context.Context, query string, page Page) (List[KBHit], error) {
	p, err := principal(ctx)
	if err != nil {
		return List[KBHit]{}, err
	}
	if err := staffRead(p); err != nil {
		return List[KBHit]{}, err
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return List[KBHit]{}, Invalid("q", CodeRequired, nil, "q is required")
	}
	if len([]rune(query)) > kbQuestionMax {
		return List[KBHit]{}, Invalid("q", CodeTooLong, nil, fmt.Sprintf("q must be at most %d characters", kbQuestionMax))
	}
	if err := a.syncKnowledgeSources(ctx, p.OrgID); err != nil {
		return List[KBHit]{}, err
	}
	terms := analyze(query)
	if len(terms) == 0 {
		return List[KBHit]{Items: []KBHit{}}, nil
	}
	sc := a.newScorer(p.OrgID)
	defer sc.save()
	match, err := sc.matchFor(ctx, terms)
	if err != nil {
		return List[KBHit]{}, fmt.Errorf("search knowledge base: %w", err)
	}
	total, err := a.store.CountKBMatches(ctx, p.OrgID, match)
	if err != nil {
		return List[KBHit]{}, fmt.Errorf("search knowledge base: %w", err)
	}
	hits, err := a.store.SearchKB(ctx, p.OrgID, match, page.PerPage, page.Offset())
	if err != nil {
		return List[KBHit]{}, fmt.Errorf("search knowledge base: %w", err)
	}
	for i := range hits {
		hits[i].Confidence, err = sc.confidence(ctx, terms, &hits[i])
		if err != nil {
			return List[KBHit]{}, err
		}
	}
	return List[KBHit]{Items: hits, Total: total}, nil
}

// ImportKBEntriesCSV reads entries from CSV with a header row naming the
// columns question and answer, and optionally tags (separated by ; or |),
// sourceDocument (or source), owner (a person id or email) and reviewDate.
// Every row is created or none.
func (a *App) ImportKBEntriesCSV(ctx context.Context, r io.Reader) ([]*KBEntry, error) {
	_, err := authorize(ctx, CapManage)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(stripBOM(r))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return nil, Invalid("file", CodeInvalid, nil, "the file must be CSV with a header row")
	}
	col := map[string]int{}
	for i, h := range header {
		k := strings.ToLower(strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.TrimSpace(h)))
		switch k {
		case "source":
			k = "sourcedocument"
		case "ownerid", "owneremail":
			k = "owner"
		}
		if _, dup := col[k]; !dup {
			col[k] = i
		}
	}
	if _, ok := col["question"]; !ok {
		return nil, Invalid("file", CodeInvalid, nil, "the header row must name a question column")
	}
	if _, ok := col["answer"]; !ok {
		return nil, Invalid("file", CodeInvalid, nil, "the header row must name an answer column")
	}
	cell := func(rec []string, name string) (string, bool) {
		i, ok := col[name]
		if !ok || i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	var ins []KBEntryInput
	ve := NewValidationError()
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, Invalid("file", CodeInvalid, nil, fmt.Sprintf("line %d is not valid CSV: %v", line, err))
		}
		blank := true
		for _, c := range rec {
			blank = blank && strings.TrimSpace(c) == ""
		}
		if blank {
			continue
		}
		if len(ins) >= kbImportMaxRows {
			return nil, Invalid("file", CodeTooLong, nil, fmt.Sprintf("at most %d rows per import", kbImportMaxRows))
		}
		q, _ := cell(rec, "question")
		ans, _ := cell(rec, "answer")
		in := KBEntryInput{Question: &q, Answer: &ans}
		if t, ok := cell(rec, "tags"); ok && t != "" {
			in.Tags = Some(strings.FieldsFunc(t, func(r rune) bool { return r == ';' || r == '|' || r == ',' }))
		}
		if s, ok := cell(rec, "sourcedocument"); ok && s != "" {
			in.SourceDocument = Some(s)
		}
		if s, ok := cell(rec, "reviewdate"); ok && s != "" {
			in.ReviewDate = Some(s)
		}
		if s, ok := cell(rec, "owner"); ok && s != "" {
			if strings.Contains(s, "@") {
				id, err := a.store.FindUserByEmail(ctx, strings.ToLower(s))
				if errors.Is(err, ErrNotFound) {
					ve.Add(fmt.Sprintf("rows[%d].owner", len(ins)), CodeUnknownReference, s, fmt.Sprintf("rows[%d].owner: no person with that email", len(ins)))
				} else if err != nil {
					return nil, err
				}
				s = id
			}
			if s != "" {
				in.OwnerID = Some(s)
			}
		}
		ins = append(ins, in)
	}
	if err := ve.Err(); err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, Invalid("file", CodeRequired, nil, "the file holds no rows")
	}
	return a.createKBEntries(ctx, ins, "rows")
}

func stripBOM(r io.Reader) io.Reader {
	br := &bomReader{r: r}
	return br
}

type bomReader struct {
	r     io.Reader
	start bool
}

// Read drops a UTF-8 byte-order mark at the start of the stream.
func (b *bomReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if !b.start && n > 0 {
		b.start = true
		if n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF {
			copy(p, p[3:n])
			n -= 3
		}
	}
	return n, err
}

// ---- text analysis and confidence ----

// stopwords are left out of queries: they carry no meaning for matching.
var stopwords = set(`a an and are as at be been being by can could describe detail details do does did for from has have
how i if in include includes including is it its may must of on or our please provide should so such that the their them
there these this those to us was we were what when where whether which who will with within would you your yes no any all
e.g eg etc explain list state confirm`)

// term is one query word: its light stem for comparisons and the word as
// written for the FTS query (FTS5's porter tokenizer stems it itself).
type term struct {
	stem string
	word string
}

// tokenize splits text into lower-case words of letters and digits.
func tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stem strips common English suffixes so that encrypt, encrypted,
// encrypting and encryption compare equal.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	for _, suf := range []string{"ational", "ization", "ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "ies", "ied", "ness", "edly", "ed", "ers", "er", "ly", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" || suf == "ied" {
				w += "y"
			}
			break
		}
	}
	w = strings.TrimSuffix(w, "e")
	if n := len(w); n > 3 && w[n-1] == w[n-2] && w[n-1] != 's' && w[n-1] != 'l' {
		w = w[:n-1]
	}
	return w
}

// analyze returns the distinct meaningful terms of a question.
func analyze(s string) []term {
	var out []term
	seen := map[string]bool{}
	for _, w := range tokenize(s) {
		if stopwords[w] || len(w) < 2 {
			continue
		}
		st := stem(w)
		if seen[st] {
			continue
		}
		seen[st] = true
		out = append(out, term{stem: st, word: w})
	}
	return out
}

// matchExpr builds an FTS5 query that matches any of the terms, each quoted
// so that no user input is read as FTS5 syntax.
func matchExpr(terms []term) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t.word, `"`, `""`) + `"`
	}
	return strings.Join(parts, " OR ")
}

// scorer computes confidences. It reads document frequencies through a
// cache shared by requests and dropped on every knowledge-base write.
type scorer struct {
	a     *App
	store KnowledgeStore
	orgID string
	gen   uint64
	n     int
	df    map[string]int
	fresh bool // df holds counts not yet in the shared cache
}

func (a *App) newScorer(orgID string) *scorer {
	s := &scorer{a: a, store: a.store, orgID: orgID, n: -1, df: map[string]int{}}
	a.ext.mu.RLock()
	defer a.ext.mu.RUnlock()
	s.gen = a.ext.kbGen
	if c := a.ext.dfCache[orgID]; c != nil && c.gen == s.gen {
		s.n = c.n
		for k, v := range c.df {
			s.df[k] = v
		}
	}
	return s
}

// save shares the counts read, unless the index changed meanwhile.
func (s *scorer) save() {
	if !s.fresh {
		return
	}
	s.a.ext.mu.Lock()
	defer s.a.ext.mu.Unlock()
	if s.a.ext.kbGen != s.gen {
		return
	}
	if s.a.ext.dfCache == nil {
		s.a.ext.dfCache = map[string]*dfCache{}
	}
	s.a.ext.dfCache[s.orgID] = &dfCache{gen: s.gen, n: s.n, df: s.df}
}

// idf is the inverse document frequency of a term in the organization's index.
func (s *scorer) idf(ctx context.Context, t term) (float64, error) {
	if s.n < 0 {
		n, err := s.store.CountKBMatches(ctx, s.orgID, "")
		if err != nil {
			return 0, err
		}
		s.n, s.fresh = n, true
	}
	df, ok := s.df[t.stem]
	if !ok {
		var err error
		df, err = s.store.CountKBMatches(ctx, s.orgID, matchExpr([]term{t}))
		if err != nil {
			return 0, err
		}
		s.fresh = true
		s.df[t.stem] = df
	}
	if df == 0 {
		// A word the knowledge base never uses is no evidence for or
		// against any hit: it counts like a moderately common word, so a
		// question worded with it can still be answered.
		return logIDF(s.n, max(1, s.n/20)), nil
	}
	return logIDF(s.n, df), nil
}

func logIDF(n, df int) float64 {
	// BM25's idf, floored so a term found everywhere still counts a little.
	v := math.Log((float64(n)-float64(df)+0.5)/(float64(df)+0.5) + 1)
	if v < 0.05 {
		v = 0.05
	}
	return v
}

// confidence is how well a hit answers the question, from 0 to 1. Recall
// is the idf-weighted share of the question's terms found in the hit's
// question or tags (half credit for its answer); precision is the
// idf-weighted share of the hit question's terms found in the question.
// They combine as an F-score that counts recall twice as much, so a hit
// worded differently but naming the same distinctive things scores well,
// and one that shares only common words scores low.
func (s *scorer) confidence(ctx context.Context, terms []term, h *KBHit) (float64, error) {
	hq := stemWords(h.Question + " " + strings.Join(h.Tags, " "))
	ha := stemWords(h.Answer)
	qs := map[string]bool{}
	var want, got float64
	for _, t := range terms {
		qs[t.stem] = true
		w, err := s.idf(ctx, t)
		if err != nil {
			return 0, err
		}
		want += w
		if _, ok := hq[t.stem]; ok {
			got += w
		} else if _, ok := ha[t.stem]; ok {
			got += w * 0.5
		}
	}
	if want == 0 {
		return 0, nil
	}
	recall := got / want
	var own, shared float64
	for st, word := range stemWords(h.Question) {
		w, err := s.idf(ctx, term{stem: st, word: word})
		if err != nil {
			return 0, err
		}
		own += w
		if qs[st] {
			shared += w
		}
	}
	precision := recall
	if own > 0 {
		precision = shared / own
	}
	const beta2 = 2.0
	if recall == 0 || precision == 0 {
		return 0, nil
	}
	f := (1 + beta2) * recall * precision / (beta2*precision + recall)
	return float64(int(f*100+0.5)) / 100, nil
}

// stemWords maps the stems of the meaningful words of s to a word as written.
func stemWords(s string) map[string]string {
	m := map[string]string{}
	for _, w := range tokenize(s) {
		if !stopwords[w] && len(w) >= 2 {
			if st := stem(w); m[st] == "" {
				m[st] = w
			}
		}
	}
	return m
}

// commonShare is the share of documents above which a term is left out of
// the candidate query (when rarer terms remain): such words barely change
// BM25's order but make every query touch most of the index.
const commonShare = 0.1

// matchFor builds the candidate query of a question from its distinctive
// terms: those found in the index but not in most of it. Without any, it
// falls back to every term found, then to every term.
func (s *scorer) matchFor(ctx context.Context, terms []term) (string, error) {
	var rare, found []term
	for _, t := range terms {
		if _, err := s.idf(ctx, t); err != nil {
			return "", err
		}
		df := s.df[t.stem]
		if df == 0 {
			continue
		}
		found = append(found, t)
		if float64(df) <= commonShare*float64(s.n) {
			rare = append(rare, t)
		}
	}
	switch {
	case len(rare) > 0:
		return matchExpr(rare), nil
	case len(found) > 0:
		return matchExpr(found), nil
	}
	return matchExpr(terms), nil
}

// bestAnswers returns the best hit for each question (nil when nothing
// matches), scoring the top candidates of BM25 by confidence.
func (a *App) bestAnswers(ctx context.Context, orgID string, questions []string, progress func(done, total int)) ([]*KBHit, error) {
	sc := a.newScorer(orgID)
	defer sc.save()
	out := make([]*KBHit, len(questions))
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, len(questions))
	for i, q := range questions {
		if i > 0 {
			progress(i, len(questions))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		terms := analyze(q)
		if len(terms) == 0 {
			continue
		}
		match, err := sc.matchFor(ctx, terms)
		if err != nil {
			return nil, err
		}
		hits, err := a.store.SearchKB(ctx, orgID, match, 8, 0)
		if err != nil {
			return nil, err
		}
		var best *KBHit
		for j := range hits {
			c, err := sc.confidence(ctx, terms, &hits[j])
			if err != nil {
				return nil, err
			}
			hits[j].Confidence = c
			if best == nil || c > best.Confidence {
				best = &hits[j]
			}
		}
		out[i] = best
	}
	progress(len(questions), len(questions))
	return out, nil
}
