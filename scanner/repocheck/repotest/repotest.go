// Package repotest builds Git repositories for tests and serves them over
// smart HTTP with the real `git http-backend` (through net/http/cgi), so
// the repository checks clone exactly as they would from a Git server.
// Only tests import it.
package repotest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// Server serves the repositories under Root.
type Server struct {
	*httptest.Server
	Root string
}

// NewServer starts a server for repositories made with Add. Without the
// git command it skips the test, or fails it in CI (CI set).
func NewServer(t testing.TB) *Server { return newServer(t, false, "") }

// NewTLSServer is NewServer over https, answering only requests whose
// basic-authentication password is token.
func NewTLSServer(t testing.TB, token string) *Server { return newServer(t, true, token) }

func newServer(t testing.TB, useTLS bool, token string) *Server {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed; .ci/run installs it")
		}
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	h := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + root}}
	var handler http.Handler = h
	if token != "" {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, pw, ok := r.BasicAuth(); !ok || pw != token {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewUnstartedServer(handler)
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	s := &Server{Server: srv, Root: root}
	t.Cleanup(s.Close)
	return s
}

// Add makes a repository called name with one commit of files (path to
// content) on branch main, and an earlier commit with history, and
// returns its URL.
func (s *Server) Add(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(s.Root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+s.Root, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "HISTORY.md"), []byte("first commit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "first")
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", "-A")
	run("commit", "-q", "--allow-empty", "-m", "files")
	return s.URL + "/" + name
}

// Planted secrets. They are assembled at run time so that this source
// file holds no string a secret scanner would flag.
var (
	AWSKey       = "AK" + "IA" + "Q3EGRZ7NXKP2TL5M"
	GitHubToken  = "gh" + "p_" + "x7Hq2LmN9pR4sT6vW8yZ1aB3cD5eF0gJ2kL4"
	GitLabToken  = "gl" + "pat-" + "Zq8rT2xW5yN7mK3pL9vB"
	SlackToken   = "xo" + "xb-" + "1234567890-0987654321-" + "aZ3kQ9mW2pL7xR5t"
	GenericValue = "f3" + "9aC7kQ2xZ8mW1pL5vR4tY6uN0bH3jD9s"
	PrivateKey   = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n-----END RSA PRIVATE KEY-----\n"
)

// WeakFiles is a repository with the planted secrets and manifests that
// pin versions the OSV records of VulnRecords affect.
func WeakFiles() map[string]string {
	return map[string]string{
		"deploy/aws.env":        "AWS_ACCESS_KEY_ID=" + AWSKey + "\nAWS_REGION=eu-west-1\n",
		"config/ci.yml":         "steps:\n  - run: make\n    env:\n      GH: " + GitHubToken + "\n      GL: " + GitLabToken + "\n",
		"notify.py":             "import requests\n\nSLACK = '" + SlackToken + "'\n",
		"settings.py":           "DEBUG = False\nDJANGO_SECRET_KEY = \"" + GenericValue + "\"\n",
		"keys/id_rsa":           PrivateKey,
		"go.mod":                "module example.com/shop\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/text v0.3.7\n\tgithub.com/google/uuid v1.6.0\n)\n",
		"web/package-lock.json": `{"name":"web","lockfileVersion":3,"packages":{"":{"name":"web"},"node_modules/lodash":{"version":"4.17.20"},"node_modules/left-pad":{"version":"1.3.0"}}}`,
		"requirements.txt":      "# pinned\nDjango==3.2.1\nrequests>=2.0\n",
		"Cargo.lock":            "[[package]]\nname = \"smallvec\"\nversion = \"1.6.0\"\n",
		"Gemfile.lock":          "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (2.2.3)\n      foo (>= 1)\n\nPLATFORMS\n  ruby\n",
		"pom.xml":               "<project><dependencies><dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.14.1</version></dependency><dependency><groupId>x</groupId><artifactId>y</artifactId><version>${y.version}</version></dependency></dependencies></project>",
		"composer.lock":         `{"packages":[{"name":"guzzlehttp/guzzle","version":"7.4.0"}],"packages-dev":[]}`,
		"Pipfile.lock":          `{"default":{"urllib3":{"version":"==1.26.4"}},"develop":{}}`,
		"poetry.lock":           "[[package]]\nname = \"jinja2\"\nversion = \"2.11.2\"\n\n[metadata]\nlock-version = \"2.0\"\n",
	}
}

// CleanFiles is a repository an ordinary, careful project would have:
// secrets read from the environment, placeholders, documentation's
// example key, hashes in lock files, and manifests pinning fixed versions.
// No issue may be reported on it.
func CleanFiles() map[string]string {
	return map[string]string{
		"README.md": "# Shop\n\nSet AWS_ACCESS_KEY_ID (for example AKIAIOSFODNN7EXAMPLE) and GITHUB_TOKEN in the environment.\n" +
			"The token endpoint is TOKEN_URL=https://oauth2.googleapis.com/token.\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() {\n\tpassword := os.Getenv(\"DB_PASSWORD\")\n\tapiToken := os.Getenv(\"API_TOKEN\")\n" +
			"\t_ = password\n\t_ = apiToken\n}\n",
		"config/app.yml": "database:\n  password: ${DB_PASSWORD}\n  password_min_length: 12\nsecret_key: changeme-in-production\n" +
			"session_token_ttl: 3600\nGITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n",
		".env.example": "SECRET_KEY=your_secret_key_here\nSTRIPE_API_KEY=<your key>\nPASSWORD=\n",
		"settings.py":  "import os\nSECRET_KEY = os.environ['SECRET_KEY']\nAUTH_PASSWORD_VALIDATORS = []\nCSRF_TOKEN_NAME = 'csrftoken_header_value'\n",
		"docs/keys.md": "Generate a key with `ssh-keygen`; never commit the file that starts with the PRIVATE KEY header.\n",
		"go.mod":       "module example.com/shop\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.8\n",
		"go.sum":       "golang.org/x/text v0.3.8 h1:nAL+RVCQ9uMn3vJZbV+MRnydTJFPf8qqY42YiA6MrqY=\ngolang.org/x/text v0.3.8/go.mod h1:E6s5w1FMmriuDzIBO73fBruAKo1PCIq6d2Q6DHfQ8WQ=\n",
		"package-lock.json": `{"name":"web","lockfileVersion":3,"packages":{"node_modules/lodash":{"version":"4.17.21",` +
			`"integrity":"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="}}}`,
		"requirements.txt": "Django==4.2.16\n",
		"static/logo.bin":  "\x00\x01\x02binary AKIA" + "ABCDEFGHIJKLMNOP",
	}
}

// VulnRecords are OSV records that affect the versions WeakFiles pins
// (one per ecosystem) and not the versions CleanFiles pins.
func VulnRecords() []string {
	rec := func(id, eco, name, introduced, fixed string) string {
		return `{"id":"` + id + `","modified":"2024-01-01T00:00:00Z","aliases":["CVE-` + id + `"],"summary":"flaw in ` + name +
			`","severity":[{"type":"CVSS_V3","score":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}],"affected":[{"package":{"ecosystem":"` +
			eco + `","name":"` + name + `"},"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"` + introduced + `"},{"fixed":"` + fixed +
			`"}]}]}],"references":[{"type":"WEB","url":"https://example.org/` + id + `"}]}`
	}
	return []string{
		rec("GO-2022-1059", "Go", "golang.org/x/text", "0", "0.3.8"),
		rec("GHSA-35jh-r3h4-6jhm", "npm", "lodash", "0", "4.17.21"),
		rec("PYSEC-2021-98", "PyPI", "django", "3.2", "3.2.2"),
		rec("RUSTSEC-2021-0003", "crates.io", "smallvec", "1.6.0", "1.6.1"),
		rec("GHSA-rack-0001", "RubyGems", "rack", "2.2.0", "2.2.6"),
		rec("GHSA-jfh8-c2jp-5v3q", "Maven", "org.apache.logging.log4j:log4j-core", "2.0", "2.15.0"),
		rec("GHSA-guzzle-0001", "Packagist", "guzzlehttp/guzzle", "7.0.0", "7.4.5"),
		rec("PYSEC-urllib3-0001", "PyPI", "urllib3", "1.26.0", "1.26.5"),
		rec("PYSEC-jinja2-0001", "PyPI", "jinja2", "0", "2.11.3"),
	}
}
