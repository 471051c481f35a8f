package repocheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrTooLarge is a repository past the size or file cap.
var ErrTooLarge = errors.New("the repository is larger than the cap")

// guardTransport puts every request (redirects included) to the guard,
// with the host name and each address it resolves to, and counts the
// bytes received: past the cap the body read fails with ErrTooLarge.
type guardTransport struct {
	next     http.RoundTripper
	guard    func(host string, ip netip.Addr) error
	lookup   func(ctx context.Context, host string) ([]netip.Addr, error)
	maxBytes int64
	received atomic.Int64
	requests atomic.Int64
}

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Hostname()
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := t.guard("", ip.Unmap()); err != nil {
			return nil, fmt.Errorf("%s is outside the targets allowlist: %w", ip, err)
		}
	} else {
		addrs, err := t.lookup(req.Context(), host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
		for _, a := range addrs {
			if err := t.guard(host, a.Unmap()); err != nil {
				return nil, fmt.Errorf("%s (%s) is outside the targets allowlist: %w", host, a, err)
			}
		}
	}
	t.requests.Add(1)
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res.Body = &countingBody{ReadCloser: res.Body, t: t}
	return res, nil
}

type countingBody struct {
	io.ReadCloser
	t *guardTransport
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.t.received.Add(int64(n)) > b.t.maxBytes {
		return n, fmt.Errorf("%w of %d MiB", ErrTooLarge, b.t.maxBytes>>20)
	}
	return n, err
}

func defaultLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// clone fetches the commit HEAD names, and only it (a shallow, single
// branch fetch of depth 1), into a repository stored under dir, and
// returns that commit. Nothing is checked out: the files are read from the
// object store.
func clone(ctx context.Context, client *http.Client, rawURL, token, dir string) (*object.Commit, *filesystem.Storage, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, nil, fmt.Errorf("repository URL: %w", err)
	}
	var auth transport.AuthMethod
	if token != "" {
		// GitHub, GitLab, Gitea and Bitbucket accept a token as the
		// password of HTTP basic authentication.
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: token}
	}
	sess, err := githttp.NewClient(client).NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, nil, err
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, nil, err
	}
	if ar.Head == nil {
		return nil, nil, errors.New("the repository has no HEAD")
	}
	head := *ar.Head
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	req.Wants = []plumbing.Hash{head}
	if ar.Capabilities.Supports(capability.Shallow) {
		req.Depth = packp.DepthCommits(1)
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return nil, nil, err
		}
	}
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Close()
	if len(resp.ShallowUpdate.Shallows) > 0 {
		if err := st.SetShallow(resp.ShallowUpdate.Shallows); err != nil {
			return nil, nil, err
		}
	}
	var r io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		r = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		r = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	if err := packfile.UpdateObjectStorage(st, r); err != nil {
		return nil, nil, err
	}
	c, err := object.GetCommit(st, head)
	if err != nil {
		return nil, nil, fmt.Errorf("read HEAD %s: %w", head, err)
	}
	return c, st, nil
}
