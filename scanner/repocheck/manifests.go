package repocheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/compliance-appliance/compliance/app"
)

// manifestParsers read the dependency versions a manifest or lock file
// pins, keyed by the file's base name. The ecosystems are spelled as OSV
// spells them.
var manifestParsers = map[string]func(data []byte) []app.RepoPackage{
	"go.mod":            parseGoMod,
	"package-lock.json": parsePackageLock,
	"requirements.txt":  parseRequirements,
	"Pipfile.lock":      parsePipfileLock,
	"poetry.lock":       func(b []byte) []app.RepoPackage { return parseTOMLPackages(b, "PyPI") },
	"Cargo.lock":        func(b []byte) []app.RepoPackage { return parseTOMLPackages(b, "crates.io") },
	"composer.lock":     parseComposerLock,
	"Gemfile.lock":      parseGemfileLock,
	"pom.xml":           parsePom,
}

// IsManifest reports whether a file (a path in the repository) is one the
// dependency check reads.
func IsManifest(p string) bool {
	_, ok := manifestParsers[path.Base(p)]
	return ok
}

// lineOf returns the 1-based line of the first occurrence of needle, or 0.
func lineOf(data []byte, needle string) int {
	i := bytes.Index(data, []byte(needle))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

func lines(data []byte, fn func(n int, line string)) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fn(n, sc.Text())
	}
}

// parseGoMod reads the require directives (direct and indirect). go.sum is
// not read for versions: it lists every version the module graph named,
// most of them not built.
func parseGoMod(data []byte) []app.RepoPackage {
	var out []app.RepoPackage
	inBlock := false
	lines(data, func(n int, l string) {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, "//"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		switch {
		case l == "require (":
			inBlock = true
			return
		case inBlock && l == ")":
			inBlock = false
			return
		case strings.HasPrefix(l, "require "):
			l = strings.TrimSpace(strings.TrimPrefix(l, "require "))
		case !inBlock:
			return
		}
		f := strings.Fields(l)
		if len(f) != 2 || !strings.HasPrefix(f[1], "v") {
			return
		}
		v := strings.TrimSuffix(strings.TrimPrefix(f[1], "v"), "+incompatible")
		out = append(out, app.RepoPackage{Ecosystem: "Go", Name: f[0], Version: v, Line: n})
	})
	return out
}

// parsePackageLock reads npm's lock file: lockfileVersion 2 and 3 list
// "packages" by install path; version 1 nests "dependencies".
func parsePackageLock(data []byte) []app.RepoPackage {
	var lf struct {
		Packages map[string]struct {
			Version string `json:"version"`
			Link    bool   `json:"link"`
		} `json:"packages"`
		Dependencies map[string]json.RawMessage `json:"dependencies"`
	}
	if json.Unmarshal(data, &lf) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []app.RepoPackage
	add := func(name, version, needle string) {
		if name == "" || version == "" || seen[name+"@"+version] {
			return
		}
		seen[name+"@"+version] = true
		out = append(out, app.RepoPackage{Ecosystem: "npm", Name: name, Version: version, Line: lineOf(data, needle)})
	}
	if len(lf.Packages) > 0 {
		for p, v := range lf.Packages {
			i := strings.LastIndex(p, "node_modules/")
			if i < 0 || v.Link {
				continue
			}
			add(p[i+len("node_modules/"):], v.Version, `"`+p+`"`)
		}
	} else {
		var walk func(deps map[string]json.RawMessage)
		walk = func(deps map[string]json.RawMessage) {
			for name, raw := range deps {
				var d struct {
					Version      string                     `json:"version"`
					Dependencies map[string]json.RawMessage `json:"dependencies"`
				}
				if json.Unmarshal(raw, &d) != nil {
					continue
				}
				add(name, d.Version, `"`+name+`"`)
				walk(d.Dependencies)
			}
		}
		walk(lf.Dependencies)
	}
	sortPackages(out)
	return out
}

var reqLine = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*===?\s*([A-Za-z0-9.!+_\-]+)`)

// parseRequirements reads pinned requirements (name==version); ranges
// name no single version and are left out.
func parseRequirements(data []byte) []app.RepoPackage {
	var out []app.RepoPackage
	lines(data, func(n int, l string) {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, "#"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if m := reqLine.FindStringSubmatch(l); m != nil {
			out = append(out, app.RepoPackage{Ecosystem: "PyPI", Name: m[1], Version: m[2], Line: n})
		}
	})
	return out
}

// parsePipfileLock reads Pipenv's lock file (default and develop).
func parsePipfileLock(data []byte) []app.RepoPackage {
	var lf map[string]map[string]struct {
		Version string `json:"version"`
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return nil
	}
	lf = map[string]map[string]struct {
		Version string `json:"version"`
	}{}
	for _, sec := range []string{"default", "develop"} {
		var m map[string]struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(raw[sec], &m) == nil {
			lf[sec] = m
		}
	}
	var out []app.RepoPackage
	for _, sec := range []string{"default", "develop"} {
		for name, p := range lf[sec] {
			if v, ok := strings.CutPrefix(p.Version, "=="); ok {
				out = append(out, app.RepoPackage{Ecosystem: "PyPI", Name: name, Version: v, Line: lineOf(data, `"`+name+`"`)})
			}
		}
	}
	sortPackages(out)
	return out
}

// parseTOMLPackages reads the [[package]] tables of poetry.lock and
// Cargo.lock: their name and version keys.
func parseTOMLPackages(data []byte, ecosystem string) []app.RepoPackage {
	var out []app.RepoPackage
	in, name, version, at := false, "", "", 0
	flush := func() {
		if in && name != "" && version != "" {
			out = append(out, app.RepoPackage{Ecosystem: ecosystem, Name: name, Version: version, Line: at})
		}
		name, version = "", ""
	}
	lines(data, func(n int, l string) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			flush()
			in, at = l == "[[package]]", n
			return
		}
		if !in {
			return
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "name":
			name = v
		case "version":
			version = v
		}
	})
	flush()
	return out
}

// parseComposerLock reads Composer's lock file (packages and
// packages-dev).
func parseComposerLock(data []byte) []app.RepoPackage {
	var lf struct {
		Packages []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"packages"`
		Dev []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"packages-dev"`
	}
	if json.Unmarshal(data, &lf) != nil {
		return nil
	}
	var out []app.RepoPackage
	for _, p := range append(lf.Packages, lf.Dev...) {
		if p.Name == "" || p.Version == "" || strings.HasPrefix(p.Version, "dev-") {
			continue
		}
		out = append(out, app.RepoPackage{Ecosystem: "Packagist", Name: p.Name, Version: strings.TrimPrefix(p.Version, "v"),
			Line: lineOf(data, `"name": "`+p.Name+`"`)})
	}
	return out
}

var gemSpec = regexp.MustCompile(`^    ([A-Za-z0-9_.\-]+) \(([0-9][^)\s]*)\)$`)

// parseGemfileLock reads the gems the GEM section's specs pin (four
// spaces of indentation; their own dependencies are indented further).
func parseGemfileLock(data []byte) []app.RepoPackage {
	var out []app.RepoPackage
	section := ""
	lines(data, func(n int, l string) {
		if l != "" && l[0] != ' ' {
			section = strings.TrimSpace(l)
			return
		}
		if section != "GEM" {
			return
		}
		if m := gemSpec.FindStringSubmatch(l); m != nil {
			v := m[2]
			// A platform suffix (1.15.4-x86_64-linux) is not part of
			// the version.
			if i := strings.Index(v, "-"); i > 0 {
				v = v[:i]
			}
			out = append(out, app.RepoPackage{Ecosystem: "RubyGems", Name: m[1], Version: v, Line: n})
		}
	})
	return out
}

// parsePom reads the dependencies of a Maven project that name an explicit
// version; a version from a property or a parent's management is not
// resolved.
func parsePom(data []byte) []app.RepoPackage {
	d := xml.NewDecoder(bytes.NewReader(data))
	var out []app.RepoPackage
	var stack []string
	var group, artifact, version string
	line := 0
	for {
		tok, err := d.Token()
		if err == io.EOF || err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			if t.Name.Local == "dependency" {
				group, artifact, version = "", "", ""
				l, _ := d.InputPos()
				line = l
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if t.Name.Local == "dependency" && group != "" && artifact != "" && version != "" && !strings.Contains(version, "${") &&
				!strings.ContainsAny(version, "[](),") {
				out = append(out, app.RepoPackage{Ecosystem: "Maven", Name: group + ":" + artifact, Version: version, Line: line})
			}
		case xml.CharData:
			if len(stack) >= 2 && stack[len(stack)-2] == "dependency" {
				v := strings.TrimSpace(string(t))
				switch stack[len(stack)-1] {
				case "groupId":
					group = v
				case "artifactId":
					artifact = v
				case "version":
					version = v
				}
			}
		}
	}
	return out
}

func sortPackages(p []app.RepoPackage) {
	sort.Slice(p, func(i, j int) bool {
		if p[i].Line != p[j].Line {
			return p[i].Line < p[j].Line
		}
		return p[i].Name < p[j].Name
	})
}
