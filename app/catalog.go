package app

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	assets "github.com/compliance-appliance/compliance/embed"
)

// Framework coverage values: how much of the source a built-in catalog holds.
const (
	CoverageComplete = "complete"
	CoveragePartial  = "partial"
	CoverageOutline  = "outline"
	CoverageCustom   = "custom"
)

// FrameworkSource names where a catalog file comes from.
type FrameworkSource struct {
	Repo            string   `json:"repo"`
	Path            string   `json:"path"`
	Commit          string   `json:"commit"`
	AdditionalPaths []string `json:"additionalPaths,omitempty"`
}

// FrameworkPart is one source file a built-in framework is made of, with its
// source and licence note.
type FrameworkPart struct {
	Slug      string          `json:"slug"`
	Name      string          `json:"name"`
	Version   string          `json:"version"`
	Publisher string          `json:"publisher"`
	Source    FrameworkSource `json:"source"`
	License   string          `json:"license"`
}

// catalogFile is the shape of one embedded framework file.
type catalogFile struct {
	Slug         string          `json:"slug"`
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Publisher    string          `json:"publisher"`
	Source       FrameworkSource `json:"source"`
	License      string          `json:"license"`
	Requirements []struct {
		Ref         string `json:"ref"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Parent      string `json:"parent"`
		Assessable  bool   `json:"assessable"`
	} `json:"requirements"`
}

type catalogIndex struct {
	Frameworks []struct {
		Slug      string   `json:"slug"`
		ShortName string   `json:"shortName"`
		Parts     []string `json:"parts"`
		Coverage  string   `json:"coverage"`
		Notes     string   `json:"notes"`
	} `json:"frameworks"`
	Groups map[string]struct {
		Ref   string `json:"ref"`
		Title string `json:"title"`
	} `json:"groups"`
}

type mappingFile struct {
	From    string `json:"from"`
	To      string `json:"to"`
	License string `json:"license"`
	Pairs   []struct {
		FromRef      string `json:"from_ref"`
		ToRef        string `json:"to_ref"`
		Relationship string `json:"relationship"`
	} `json:"pairs"`
}

// builtinFramework is one compiled-in framework with its requirements.
type builtinFramework struct {
	fw    Framework
	reqs  []Requirement
	byRef map[string]int
	byID  map[string]int
}

// Catalog is the set of built-in frameworks and the cross-framework mapping.
type Catalog struct {
	list    []*builtinFramework
	byID    map[string]*builtinFramework
	bySlug  map[string]*builtinFramework
	reqFW   map[string]*builtinFramework // requirement id -> framework
	related map[string][]string          // requirement id -> mapped requirement ids, in mapping order
	pairs   int
}

var (
	catalogOnce sync.Once
	catalogVal  *Catalog
	catalogErr  error
)

// BuiltinCatalog returns the compiled-in catalog, loading it on first use.
func BuiltinCatalog() (*Catalog, error) {
	catalogOnce.Do(func() { catalogVal, catalogErr = LoadCatalog(assets.Frameworks) })
	return catalogVal, catalogErr
}

// stableID derives a fixed id of the usual shape from a name, so built-in
// frameworks and requirements have the same id in every installation.
func stableID(prefix, name string) string {
	sum := sha256.Sum256([]byte(prefix + "\x00" + name))
	var b [16]byte
	copy(b[:], sum[:16])
	// Keep the 48-bit time field at a fixed early value so stable ids never
	// collide with generated ones and still sort before them.
	binary.BigEndian.PutUint16(b[0:2], 0)
	binary.BigEndian.PutUint32(b[2:6], 1)
	return prefix + "_" + encodeULID(b)
}

// FrameworkIDFor returns the id of a built-in framework slug.
func FrameworkIDFor(slug string) string { return stableID(PrefixFramework, slug) }

// RequirementIDFor returns the id of a built-in requirement.
func RequirementIDFor(frameworkSlug, ref string) string {
	return stableID(PrefixRequirement, frameworkSlug+"\x00"+ref)
}

// LoadCatalog parses the catalog in fsys (frameworks/*.json and
// frameworks/mappings/*.json).
func LoadCatalog(fsys fs.FS) (*Catalog, error) {
	raw, err := fs.ReadFile(fsys, "frameworks/catalog.json")
	if err != nil {
		return nil, fmt.Errorf("read framework catalog: %w", err)
	}
	var idx catalogIndex
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("decode framework catalog: %w", err)
	}
	c := &Catalog{byID: map[string]*builtinFramework{}, bySlug: map[string]*builtinFramework{},
		reqFW: map[string]*builtinFramework{}, related: map[string][]string{}}
	partOf := map[string]*builtinFramework{}
	for _, e := range idx.Frameworks {
		b := &builtinFramework{byRef: map[string]int{}, byID: map[string]int{}}
		b.fw = Framework{ID: FrameworkIDFor(e.Slug), Slug: e.Slug, ShortName: e.ShortName, Coverage: e.Coverage,
			Notes: e.Notes, Sources: []FrameworkPart{}}
		var licences []string
		for i, part := range e.Parts {
			raw, err := fs.ReadFile(fsys, "frameworks/"+part+".json")
			if err != nil {
				return nil, fmt.Errorf("read framework %s: %w", part, err)
			}
			var f catalogFile
			if err := json.Unmarshal(raw, &f); err != nil {
				return nil, fmt.Errorf("decode framework %s: %w", part, err)
			}
			b.fw.Sources = append(b.fw.Sources, FrameworkPart{Slug: f.Slug, Name: f.Name, Version: f.Version,
				Publisher: f.Publisher, Source: f.Source, License: f.License})
			licences = append(licences, f.License)
			parentPrefix := ""
			if i == 0 {
				b.fw.Name, b.fw.Version, b.fw.Publisher = f.Name, f.Version, f.Publisher
			} else if g, ok := idx.Groups[part]; ok {
				// A further part is grouped under one structural node named after its source.
				b.add(Requirement{Ref: g.Ref, Title: g.Title})
				parentPrefix = g.Ref
			}
			for _, r := range f.Requirements {
				if _, dup := b.byRef[r.Ref]; dup {
					continue // the same citation already present from an earlier part
				}
				parent := r.Parent
				if parent == "" {
					parent = parentPrefix
				}
				b.add(Requirement{Ref: r.Ref, Title: r.Title, Description: r.Description, ParentRef: parent, Assessable: r.Assessable})
			}
			partOf[part] = b
		}
		b.fw.License = strings.Join(licences, "\n\n")
		for i := range b.reqs {
			r := &b.reqs[i]
			r.FrameworkID = b.fw.ID
			r.ID = RequirementIDFor(e.Slug, r.Ref)
			b.byID[r.ID] = i
			c.reqFW[r.ID] = b
			if r.Assessable {
				b.fw.AssessableCount++
			}
		}
		for i := range b.reqs {
			r := &b.reqs[i]
			if r.ParentRef != "" {
				if _, ok := b.byRef[r.ParentRef]; ok {
					r.ParentID = Ptr(RequirementIDFor(e.Slug, r.ParentRef))
				}
			}
		}
		b.fw.RequirementCount = len(b.reqs)
		c.list = append(c.list, b)
		c.byID[b.fw.ID] = b
		c.bySlug[e.Slug] = b
	}
	files, err := fs.Glob(fsys, "frameworks/mappings/*.json")
	if err != nil {
		return nil, fmt.Errorf("list mappings: %w", err)
	}
	sort.Strings(files)
	seen := map[[2]string]bool{}
	for _, name := range files {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read mapping %s: %w", name, err)
		}
		var m mappingFile
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("decode mapping %s: %w", name, err)
		}
		from, to := partOf[m.From], partOf[m.To]
		if from == nil || to == nil {
			return nil, fmt.Errorf("mapping %s names an unknown framework", name)
		}
		for _, p := range m.Pairs {
			fi, ok1 := from.byRef[p.FromRef]
			ti, ok2 := to.byRef[p.ToRef]
			if !ok1 || !ok2 {
				continue
			}
			a, b := from.reqs[fi], to.reqs[ti]
			// Only requirements that get a control can share one.
			if !a.Assessable || !b.Assessable || a.FrameworkID == b.FrameworkID {
				continue
			}
			if seen[[2]string{a.ID, b.ID}] {
				continue
			}
			seen[[2]string{a.ID, b.ID}], seen[[2]string{b.ID, a.ID}] = true, true
			c.related[a.ID] = append(c.related[a.ID], b.ID)
			c.related[b.ID] = append(c.related[b.ID], a.ID)
			c.pairs++
		}
	}
	return c, nil
}

func (b *builtinFramework) add(r Requirement) {
	r.Position = len(b.reqs)
	b.byRef[r.Ref] = len(b.reqs)
	b.reqs = append(b.reqs, r)
}

// Frameworks returns the built-in frameworks in catalog order.
func (c *Catalog) Frameworks() []Framework {
	out := make([]Framework, len(c.list))
	for i, b := range c.list {
		out[i] = b.fw
	}
	return out
}

// lookup finds a built-in framework by id or slug.
func (c *Catalog) lookup(idOrSlug string) *builtinFramework {
	if b, ok := c.byID[idOrSlug]; ok {
		return b
	}
	return c.bySlug[idOrSlug]
}

// Requirements returns the requirements of a built-in framework.
func (c *Catalog) Requirements(frameworkID string) []Requirement {
	if b := c.lookup(frameworkID); b != nil {
		return b.reqs
	}
	return nil
}

// requirement returns a built-in requirement by id.
func (c *Catalog) requirement(id string) (*Requirement, *builtinFramework) {
	b, ok := c.reqFW[id]
	if !ok {
		return nil, nil
	}
	r := b.reqs[b.byID[id]]
	return &r, b
}

// MappingPairs is the number of usable requirement pairs across frameworks.
func (c *Catalog) MappingPairs() int { return c.pairs }
