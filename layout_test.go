package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// module is this module's path; the import rules speak of paths below it.
const module = "github.com/compliance-appliance/compliance"

// surfaces are the HTTP surfaces below web/: each depends on web/httpx and
// app, never on another surface.
var surfaces = []string{"web/api", "web/ui", "web/oauth", "web/mcp"}

// adapters are the packages that call out of the appliance. Each
// implements an interface app declares and never imports web or storage.
var adapters = []string{"webhook", "metrics", "integrations", "mail", "scanner", "llm", "agent", "automation", "sso", "browser", "objectstore"}

// storageUsers may import storage: the binary's wiring, the measurement
// tools outside it, and backup, which snapshots, restores and checks the
// whole data directory (wiring-level tooling, like main). Tests may too;
// go list's Imports leaves test imports out.
var storageUsers = []string{"", "cmd", "bench", "backup"}

// under reports whether rel is dir or a package below it.
func under(rel, dir string) bool {
	if dir == "" {
		return rel == ""
	}
	return rel == dir || strings.HasPrefix(rel, dir+"/")
}

func underAny(rel string, dirs []string) bool {
	for _, d := range dirs {
		if under(rel, d) {
			return true
		}
	}
	return false
}

// importViolation says why package rel (a path below the module, "" for
// the root) may not import imp (a full import path), or "".
func importViolation(rel, imp string) string {
	own, ok := strings.CutPrefix(imp, module)
	if ok {
		if own != "" && !strings.HasPrefix(own, "/") {
			ok = false // another module sharing the prefix
		}
		own = strings.TrimPrefix(own, "/")
	}
	switch {
	case under(rel, "app") && (imp == "net/http" || imp == "database/sql"):
		return "app holds domain rules: no HTTP, no SQL"
	case under(rel, "app") && ok && (under(own, "web") || under(own, "storage") || underAny(own, adapters)):
		return "app declares interfaces; it never imports their implementations"
	case ok && under(own, "storage") && !under(rel, "storage") && !underAny(rel, storageUsers):
		return "only main wires storage in; everything else reaches data through app"
	case under(rel, "web/httpx") && ok && under(own, "web") && !under(own, "web/httpx"):
		return "web/httpx is shared by the surfaces and imports none of them"
	case underAny(rel, surfaces) && ok && underAny(own, surfaces) && !underAny(own, []string{surfaceOf(rel)}):
		return "a surface never imports another surface; share through web/httpx"
	case underAny(rel, adapters) && ok && (under(own, "web") || under(own, "storage")):
		return "an outbound adapter implements an app interface and imports no web or storage package"
	case under(rel, "storage") && ok && (under(own, "web") || underAny(own, adapters)):
		return "storage implements app's store interfaces and imports no HTTP or adapter package"
	}
	return ""
}

// surfaceOf is the surface rel belongs to.
func surfaceOf(rel string) string {
	for _, s := range surfaces {
		if under(rel, s) {
			return s
		}
	}
	return ""
}

func TestImportRuleCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rel, imp string
		bad      bool
	}{
		{"app", "net/http", true},
		{"app/integrations", "database/sql", true},
		{"app", module + "/storage", true},
		{"app", module + "/webhook", true},
		{"app", module + "/embed", false},
		{"web/api", module + "/web/ui", true},
		{"web/ui", module + "/web/api", true},
		{"web/mcp", module + "/web/oauth", true},
		{"web/api", module + "/web/httpx", false},
		{"web/api", module + "/storage", true},
		{"web/httpx", module + "/web/api", true},
		{"web", module + "/web/api", false},
		{"webhook", module + "/web/httpx", true},
		{"webhook", module + "/storage", true},
		{"webhook", module + "/app", false},
		{"storage", module + "/web", true},
		{"", module + "/storage", false},
		{"cmd/loadtest", module + "/storage", false},
		{"bench", module + "/storage", false},
		{"backup", module + "/storage", false},
		{"web/ui", "net/http", false},
		{"web/api", module + "-other/storage", false},
	}
	for _, c := range cases {
		if got := importViolation(c.rel, c.imp) != ""; got != c.bad {
			t.Errorf("%q importing %q: violation %v, want %v", c.rel, c.imp, got, c.bad)
		}
	}
}

// TestImportRules holds every package of the module to the layout
// (docs/architecture.md): who may import whom.
func TestImportRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, imp := range p.Imports {
			if why := importViolation(rel, imp); why != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, why)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list found %d packages", n)
	}
}
