// Package repocheck reads a Git repository for the repository checks of a
// penetration test: a shallow, single-branch clone over HTTP(S) through the
// appliance's outbound client, with a size, file and time cap, then the
// files at HEAD are searched for committed secrets (compiled-in rules, the
// values masked in everything it returns) and the dependency manifests are
// read for pinned versions, which app matches against the imported OSV
// records. It only reads: nothing is pushed, nothing is checked out.
package repocheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/app/osv"
)

// maxFileBytes is the largest file read for secrets and manifests.
const maxFileBytes = 1 << 20

// Checker implements app.RepoChecker.
type Checker struct {
	client *http.Client
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

var _ app.RepoChecker = (*Checker)(nil)

// New returns a checker cloning through client (the outbound client:
// network policy, proxy, timeouts). lookup resolves host names for the
// guard; nil uses the system resolver.
func New(client *http.Client, lookup func(ctx context.Context, host string) ([]netip.Addr, error)) *Checker {
	if client == nil {
		client = http.DefaultClient
	}
	if lookup == nil {
		lookup = defaultLookup
	}
	return &Checker{client: client, lookup: lookup}
}

// CheckRepo clones the repository into a temporary directory under
// req.WorkDir (removed before it returns) and reads the files at HEAD.
func (c *Checker) CheckRepo(ctx context.Context, req app.RepoCheckRequest) (*app.RepoCheckResult, error) {
	if req.Guard == nil {
		return nil, errors.New("a repository check needs a guard")
	}
	if req.MaxBytes <= 0 {
		req.MaxBytes = 200 << 20
	}
	if req.MaxFiles <= 0 {
		req.MaxFiles = 50000
	}
	if err := os.MkdirAll(req.WorkDir, 0o700); err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	dir, err := os.MkdirTemp(req.WorkDir, "clone-")
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	defer os.RemoveAll(dir)
	next := c.client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	gt := &guardTransport{next: next, guard: req.Guard, lookup: c.lookup, maxBytes: req.MaxBytes}
	client := &http.Client{Transport: gt, Timeout: c.client.Timeout, CheckRedirect: c.client.CheckRedirect, Jar: c.client.Jar}
	commit, _, err := clone(ctx, client, req.URL, req.Token, dir)
	res := &app.RepoCheckResult{Bytes: gt.received.Load(), RequestsSent: gt.requests.Load(), Secrets: []app.ScanIssue{},
		Packages: []app.RepoPackage{}, Manifests: []string{}}
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return res, fmt.Errorf("%w: more than %d MiB downloaded", app.ErrRepoTooLarge, req.MaxBytes>>20)
		}
		return res, fmt.Errorf("clone: %w", err)
	}
	res.Commit = commit.Hash.String()
	tree, err := commit.Tree()
	if err != nil {
		return res, fmt.Errorf("read HEAD's tree: %w", err)
	}
	// Count first: a repository past the file cap is not read at all.
	var files []*object.File
	err = tree.Files().ForEach(func(f *object.File) error {
		if f.Mode == filemode.Submodule || f.Mode == filemode.Symlink {
			return nil
		}
		files = append(files, f)
		if len(files) > req.MaxFiles {
			return fmt.Errorf("%w: more than %d files at HEAD", app.ErrRepoTooLarge, req.MaxFiles)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Files = len(files)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if f.Size > maxFileBytes {
			res.Skipped++
			continue
		}
		data, err := readBlob(f)
		if err != nil {
			return res, fmt.Errorf("read %s: %w", f.Name, err)
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			res.Skipped++
			continue
		}
		res.Secrets = append(res.Secrets, secretIssues(req.URL, f.Name, data)...)
		if parse, ok := manifestParsers[path.Base(f.Name)]; ok {
			res.Manifests = append(res.Manifests, f.Name)
			for _, p := range parse(data) {
				p.File = f.Name
				res.Packages = append(res.Packages, p)
			}
		}
	}
	res.Bytes, res.RequestsSent = gt.received.Load(), gt.requests.Load()
	return res, nil
}

func readBlob(f *object.File) ([]byte, error) {
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, maxFileBytes+1))
}

// secretIssues are the secrets in one file, one issue per rule and line.
func secretIssues(repoURL, name string, data []byte) []app.ScanIssue {
	var out []app.ScanIssue
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), maxFileBytes+1)
	for n := 1; sc.Scan(); n++ {
		seen := map[string]bool{}
		for _, m := range findSecrets(sc.Text()) {
			if seen[m.rule.ID] {
				continue
			}
			seen[m.rule.ID] = true
			score, _ := osv.BaseScore(m.rule.Vector)
			where := name + ":" + strconv.Itoa(n)
			out = append(out, app.ScanIssue{CheckID: m.rule.ID, Category: app.CheckRepoSecrets, Title: m.rule.Title + " (" + where + ")",
				CVSS: score, Vector: m.rule.Vector, Location: repoURL + " " + where,
				Evidence:    fmt.Sprintf("%s, line %d, at HEAD: %s (masked)", name, n, m.masked),
				Remediation: secretRemediation, References: append([]string(nil), secretRefs...)})
		}
	}
	return out
}
