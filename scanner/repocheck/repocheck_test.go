package repocheck_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/integrations/outbound"
	"github.com/compliance-appliance/compliance/scanner/repocheck"
	"github.com/compliance-appliance/compliance/scanner/repocheck/repotest"
)

func allowAll(string, netip.Addr) error { return nil }

func check(t *testing.T, url string, req app.RepoCheckRequest) (*app.RepoCheckResult, error) {
	t.Helper()
	req.URL, req.WorkDir = url, t.TempDir()
	if req.Guard == nil {
		req.Guard = allowAll
	}
	res, err := repocheck.New(nil, nil).CheckRepo(context.Background(), req)
	if left, _ := os.ReadDir(req.WorkDir); len(left) != 0 {
		t.Errorf("the clone was not removed: %v", left)
	}
	return res, err
}

// TestRepoCheckWeakRepository: every planted secret is found once, with
// file and line, its value masked; every manifest's pinned versions are
// read with the ecosystem OSV spells.
func TestRepoCheckWeakRepository(t *testing.T) {
	srv := repotest.NewServer(t)
	url := srv.Add(t, "weak", repotest.WeakFiles())
	res, err := check(t, url, app.RepoCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commit) != 40 || res.Files != len(repotest.WeakFiles())+1 {
		t.Errorf("commit %q, %d files", res.Commit, res.Files)
	}
	want := map[string]string{
		"repository.secret.aws_access_key": "deploy/aws.env:1",
		"repository.secret.github_token":   "config/ci.yml:4",
		"repository.secret.gitlab_token":   "config/ci.yml:5",
		"repository.secret.slack_token":    "notify.py:3",
		"repository.secret.assignment":     "settings.py:2",
		"repository.secret.private_key":    "keys/id_rsa:1",
	}
	got := map[string]string{}
	for _, is := range res.Secrets {
		if _, dup := got[is.CheckID]; dup {
			t.Errorf("%s reported twice", is.CheckID)
		}
		got[is.CheckID] = strings.TrimPrefix(is.Location, url+" ")
		if is.CVSS < 6 || !strings.HasPrefix(is.Vector, "CVSS:3.1/") || is.Remediation == "" || is.Category != app.CheckRepoSecrets {
			t.Errorf("issue %+v", is)
		}
		for _, secret := range []string{repotest.AWSKey, repotest.GitHubToken, repotest.GitLabToken, repotest.SlackToken, repotest.GenericValue, "MIIEow"} {
			if strings.Contains(is.Evidence+is.Title+is.Location, secret) {
				t.Errorf("%s shows the secret unmasked: %s", is.CheckID, is.Evidence)
			}
		}
		if !strings.Contains(is.Evidence, "(masked)") {
			t.Errorf("evidence %q", is.Evidence)
		}
	}
	for id, loc := range want {
		if got[id] != loc {
			t.Errorf("%s at %q, want %q", id, got[id], loc)
		}
	}
	if len(res.Secrets) != len(want) {
		t.Errorf("%d secrets, want %d: %v", len(res.Secrets), len(want), got)
	}
	pkgs := map[string]string{}
	for _, p := range res.Packages {
		pkgs[p.Ecosystem+" "+p.Name+" "+p.Version] = p.File
		if p.Line == 0 && p.File != "composer.lock" {
			t.Errorf("%+v has no line", p)
		}
	}
	for _, k := range []string{"Go golang.org/x/text 0.3.7", "Go github.com/google/uuid 1.6.0", "npm lodash 4.17.20", "npm left-pad 1.3.0",
		"PyPI Django 3.2.1", "crates.io smallvec 1.6.0", "RubyGems rack 2.2.3", "Maven org.apache.logging.log4j:log4j-core 2.14.1",
		"Packagist guzzlehttp/guzzle 7.4.0", "PyPI urllib3 1.26.4", "PyPI jinja2 2.11.2"} {
		if _, ok := pkgs[k]; !ok {
			t.Errorf("package %s not read; got %v", k, pkgs)
		}
	}
	if len(res.Packages) != 11 {
		t.Errorf("%d packages, want 11 (ranges, properties and nested gem dependencies are not pins): %v", len(res.Packages), pkgs)
	}
}

// TestRepoCheckCleanRepositoryNoFalsePositives: nothing is reported on a
// careful project's repository.
func TestRepoCheckCleanRepositoryNoFalsePositives(t *testing.T) {
	srv := repotest.NewServer(t)
	res, err := check(t, srv.Add(t, "clean", repotest.CleanFiles()), app.RepoCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, is := range res.Secrets {
		t.Errorf("false positive: %s at %s: %s", is.CheckID, is.Location, is.Evidence)
	}
	if res.Skipped != 1 {
		t.Errorf("skipped %d files, want the binary one", res.Skipped)
	}
}

// TestRepoCheckCaps: a repository past the download or file cap is not
// read; a host the guard refuses is not contacted.
func TestRepoCheckCaps(t *testing.T) {
	srv := repotest.NewServer(t)
	files := repotest.WeakFiles()
	var big strings.Builder // 64 KiB that does not compress below 30 KiB
	h := sha256.Sum256([]byte("seed"))
	for big.Len() < 64<<10 {
		h = sha256.Sum256(h[:])
		big.WriteString(hex.EncodeToString(h[:]) + "\n")
	}
	files["big.txt"] = big.String()
	for i := range 30 {
		files["gen/"+string(rune('a'+i%26))+strings.Repeat("x", i)+".txt"] = strings.Repeat(string(rune('a'+i%26)), 100+i)
	}
	url := srv.Add(t, "big", files)
	if _, err := check(t, url, app.RepoCheckRequest{MaxBytes: 16 << 10}); !errors.Is(err, app.ErrRepoTooLarge) {
		t.Errorf("16 KiB cap: %v, want too large", err)
	}
	if _, err := check(t, url, app.RepoCheckRequest{MaxFiles: 20}); !errors.Is(err, app.ErrRepoTooLarge) {
		t.Errorf("20 files cap: %v, want too large", err)
	}
	if res, err := check(t, url, app.RepoCheckRequest{}); err != nil || res.Files != len(files)+1 {
		t.Errorf("no cap: %v", err)
	}
	refused := errors.New("not listed")
	_, err := check(t, url, app.RepoCheckRequest{Guard: func(string, netip.Addr) error { return refused }})
	if !errors.Is(err, refused) {
		t.Errorf("refused host: %v", err)
	}
}

// TestRepoCheckTokenOverOutboundClient: a private repository over https,
// cloned through the appliance's outbound client with a token; without it
// the clone is refused, and no error shows the token.
func TestRepoCheckTokenOverOutboundClient(t *testing.T) {
	const token = "tok-" + "s3cr3tV4lue"
	srv := repotest.NewTLSServer(t, token)
	url := srv.Add(t, "private", repotest.WeakFiles())
	c, err := outbound.New(outbound.Options{TLSConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ck := repocheck.New(c, nil)
	res, err := ck.CheckRepo(context.Background(), app.RepoCheckRequest{URL: url, Token: token, Guard: allowAll, WorkDir: t.TempDir()})
	if err != nil || len(res.Secrets) != 6 {
		t.Fatalf("with the token: %v", err)
	}
	_, err = ck.CheckRepo(context.Background(), app.RepoCheckRequest{URL: url, Token: "wrong-" + token, Guard: allowAll, WorkDir: t.TempDir()})
	if err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("with a wrong token: %v", err)
	}
}

// BenchmarkRepoCheck clones and checks the weak fixture repository (15
// files, six secrets, nine manifests) from git http-backend on loopback.
func BenchmarkRepoCheck(b *testing.B) {
	srv := repotest.NewServer(b)
	url := srv.Add(b, "weak", repotest.WeakFiles())
	ck := repocheck.New(nil, nil)
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		res, err := ck.CheckRepo(context.Background(), app.RepoCheckRequest{URL: url, Guard: allowAll, WorkDir: dir})
		if err != nil || len(res.Secrets) != 6 {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Bytes), "bytes-downloaded")
	}
}
