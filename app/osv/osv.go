// Package osv reads vulnerability records in the OSV format (osv.dev, the
// Open Source Vulnerability schema) as the operator imports them offline,
// decides whether a package version is affected by one, and recognises the
// products and versions a scanner sees in banners and headers.
package osv

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Vuln is one OSV record as the appliance keeps it.
type Vuln struct {
	ID         string     `json:"id"`
	Modified   time.Time  `json:"modified"`
	Published  *time.Time `json:"published,omitempty"`
	Withdrawn  *time.Time `json:"withdrawn,omitempty"`
	Aliases    []string   `json:"aliases"`
	Summary    string     `json:"summary"`
	CVSSVector string     `json:"cvssVector"`
	// CVSS is the base score computed from a CVSS 3 vector; 0 when the
	// record has none (or only a CVSS 4.0 or 2.0 vector).
	CVSS       float64    `json:"cvss"`
	References []string   `json:"references"`
	Affected   []Affected `json:"affected"`
}

// Affected is one package a record affects, with its ranges and versions.
type Affected struct {
	Ecosystem string   `json:"ecosystem"`
	Name      string   `json:"name"`
	Ranges    []Range  `json:"ranges"`
	Versions  []string `json:"versions"`
}

// Range is an OSV range: SEMVER, ECOSYSTEM or GIT, and its events.
type Range struct {
	Type   string  `json:"type"`
	Events []Event `json:"events"`
}

// Event is one range event; exactly one field is set.
type Event struct {
	Introduced   string `json:"introduced,omitempty"`
	Fixed        string `json:"fixed,omitempty"`
	LastAffected string `json:"last_affected,omitempty"`
	Limit        string `json:"limit,omitempty"`
}

// BaseEcosystem is the ecosystem without its release suffix: "Debian:12"
// is "Debian", "Ubuntu:22.04:LTS" is "Ubuntu".
func BaseEcosystem(e string) string {
	b, _, _ := strings.Cut(e, ":")
	return b
}

// NameKey is the name a package is looked up by: PyPI names are
// case-insensitive with -, _ and . equivalent (PEP 503); other ecosystems
// compare names as they are.
func NameKey(ecosystem, name string) string {
	if BaseEcosystem(ecosystem) == "PyPI" {
		return strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(name))
	}
	return name
}

// record is the OSV JSON schema, the parts the appliance keeps.
type record struct {
	ID        string   `json:"id"`
	Modified  string   `json:"modified"`
	Published string   `json:"published"`
	Withdrawn string   `json:"withdrawn"`
	Aliases   []string `json:"aliases"`
	Summary   string   `json:"summary"`
	Details   string   `json:"details"`
	Severity  []struct {
		Type  string `json:"type"`
		Score string `json:"score"`
	} `json:"severity"`
	Affected []struct {
		Package struct {
			Ecosystem string `json:"ecosystem"`
			Name      string `json:"name"`
		} `json:"package"`
		Severity []struct {
			Type  string `json:"type"`
			Score string `json:"score"`
		} `json:"severity"`
		Ranges   []Range  `json:"ranges"`
		Versions []string `json:"versions"`
	} `json:"affected"`
	References []struct {
		URL string `json:"url"`
	} `json:"references"`
}

// Parse reads one OSV record. It needs an id and a modified time; an
// affected entry without a package name or ecosystem is left out.
func Parse(data []byte) (*Vuln, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not an OSV record: %w", err)
	}
	if r.ID == "" {
		return nil, errors.New("not an OSV record: no id")
	}
	mod, err := parseTime(r.Modified)
	if err != nil || mod == nil {
		return nil, fmt.Errorf("%s: modified %q is not an RFC 3339 time", r.ID, r.Modified)
	}
	v := &Vuln{ID: r.ID, Modified: *mod, Aliases: r.Aliases, Summary: r.Summary, References: []string{}, Affected: []Affected{}}
	if v.Aliases == nil {
		v.Aliases = []string{}
	}
	if v.Summary == "" {
		v.Summary = firstLine(r.Details, 300)
	}
	v.Published, _ = parseTime(r.Published)
	v.Withdrawn, _ = parseTime(r.Withdrawn)
	vectors := []string{}
	for _, s := range r.Severity {
		vectors = append(vectors, s.Score)
	}
	for _, a := range r.Affected {
		for _, s := range a.Severity {
			vectors = append(vectors, s.Score)
		}
		if a.Package.Name == "" || a.Package.Ecosystem == "" {
			continue
		}
		af := Affected{Ecosystem: a.Package.Ecosystem, Name: a.Package.Name, Ranges: a.Ranges, Versions: a.Versions}
		if af.Ranges == nil {
			af.Ranges = []Range{}
		}
		if af.Versions == nil {
			af.Versions = []string{}
		}
		v.Affected = append(v.Affected, af)
	}
	// The highest CVSS 3 score wins; a vector that has no 3.x score is
	// kept when nothing better is there.
	for _, vec := range vectors {
		if sc, err := BaseScore(vec); err == nil {
			if sc > v.CVSS || v.CVSSVector == "" || !strings.HasPrefix(v.CVSSVector, "CVSS:3") {
				v.CVSS, v.CVSSVector = sc, vec
			}
		} else if v.CVSSVector == "" && strings.HasPrefix(vec, "CVSS:") {
			v.CVSSVector = vec
		}
	}
	for _, ref := range r.References {
		if ref.URL != "" && len(v.References) < 20 {
			v.References = append(v.References, ref.URL)
		}
	}
	return v, nil
}

func parseTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, err
	}
	t = t.UTC()
	return &t, nil
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// MaxRecordSize bounds one OSV record (a JSON file or a zip member).
const MaxRecordSize = 8 << 20

// Walk reads every OSV record under path: a JSON file, a zip of JSON files
// (osv.dev's per-ecosystem all.zip), or a directory holding either (not
// followed into hidden directories). fn gets each record; a record that
// does not parse goes to bad with its name and the reason, and the walk
// goes on.
func Walk(path string, fn func(*Vuln) error, bad func(name string, err error)) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return walkFile(path, fn, bad)
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".json" || ext == ".zip" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		if err := walkFile(f, fn, bad); err != nil {
			return err
		}
	}
	return nil
}

func walkFile(path string, fn func(*Vuln) error, bad func(string, error)) error {
	if strings.EqualFold(filepath.Ext(path), ".zip") {
		return walkZip(path, fn, bad)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return readOne(path, f, fn, bad)
}

func walkZip(path string, fn func(*Vuln) error, bad func(string, error)) error {
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer z.Close()
	for _, zf := range z.File {
		if zf.FileInfo().IsDir() || !strings.EqualFold(filepath.Ext(zf.Name), ".json") {
			continue
		}
		name := path + ":" + zf.Name
		if zf.UncompressedSize64 > MaxRecordSize {
			bad(name, fmt.Errorf("larger than %d bytes", MaxRecordSize))
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			bad(name, err)
			continue
		}
		err = readOne(name, rc, fn, bad)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readOne parses one record; only fn's error stops the walk.
func readOne(name string, r io.Reader, fn func(*Vuln) error, bad func(string, error)) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxRecordSize+1))
	if err != nil {
		bad(name, err)
		return nil
	}
	if len(data) > MaxRecordSize {
		bad(name, fmt.Errorf("larger than %d bytes", MaxRecordSize))
		return nil
	}
	v, err := Parse(data)
	if err != nil {
		bad(name, err)
		return nil
	}
	return fn(v)
}
