package osv

import (
	"archive/zip"
	"os"
	"path/filepath"
	"testing"
)

func TestOSVCompareDpkg(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0", 0},
		{"0001.0", "1.0", 0},
		{"1.0", "1.0-0", 0},
		{"1.0", "1.0-1", -1},
		{"1.2.3", "1.2.10", -1},
		{"1.0~rc1", "1.0", -1},
		{"1.0~~", "1.0~", -1},
		{"1.0~", "1.0~a", -1},
		{"1.0a", "1.0", 1},
		{"1.0a", "1.0+", -1},
		{"1:1.0", "2.0", 1},
		{"0:2.0", "2.0", 0},
		{"1.0-1", "1.0-1+deb12u1", -1},
		{"7.6p1-4", "7.6p1-4ubuntu0.3", -1},
		{"1:9.2p1-2+deb12u2", "1:9.2p1-2+deb12u3", -1},
		{"1:8.9p1-3ubuntu0.10", "1:8.9p1-3ubuntu0.6", 1},
		{"2.4.57-2", "2.4.57-1~deb12u1", 1},
		{"1.18.0-6ubuntu14.4", "1.18.0-6ubuntu14.5", -1},
		{"1.2-3-4", "1.2-3-5", -1}, // the revision is after the last hyphen
	} {
		if got := CompareDpkg(c.a, c.b); got != c.want {
			t.Errorf("CompareDpkg(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareDpkg(c.b, c.a); got != -c.want {
			t.Errorf("CompareDpkg(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
	if CompareDpkgUpstream("2.4.57", "2.4.57-2") != 0 || CompareDpkgUpstream("2.4.56", "2.4.57-2") != -1 {
		t.Error("upstream-only comparison must ignore the revision")
	}
}

func TestOSVCompareSemver(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0.0", "v1.0.0", 0},
		{"1.0.0", "1.0.0+build.5", 0},
		{"1.2", "1.2.0", 0},
		{"1.9.0", "1.10.0", -1},
		{"1.0.0-alpha", "1.0.0", -1},
		{"1.0.0-alpha", "1.0.0-alpha.1", -1},
		{"1.0.0-alpha.1", "1.0.0-alpha.beta", -1},
		{"1.0.0-beta.2", "1.0.0-beta.11", -1},
		{"1.0.0-rc.1", "1.0.0", -1},
		{"2.0.0", "10.0.0", -1},
		{"0.0.0-20230101000000-abcdef", "0.1.0", -1},
	} {
		if got := CompareSemver(c.a, c.b); got != c.want {
			t.Errorf("CompareSemver(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareSemver(c.b, c.a); got != -c.want {
			t.Errorf("CompareSemver(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestOSVCompareGeneric(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0.0", 0},
		{"2.4.5.Final", "2.4.5", 0},
		{"1.0rc1", "1.0", -1},
		{"1.0a1", "1.0b1", -1},
		{"1.0b2", "1.0rc1", -1},
		{"1.0.dev1", "1.0a1", -1},
		{"1.0", "1.0.post1", -1},
		{"1.0.1", "1.0rc1", 1},
		{"20.0.4", "21.2.0", -1},
		{"9.4.43.v20210629", "9.4.44.v20210927", -1},
		{"1.2.3-r4", "1.2.3-r10", -1},
		{"1.2.3", "1.2.3-r0", 0},
		{"5.3-SNAPSHOT", "5.3", -1},
	} {
		if got := CompareGeneric(c.a, c.b); got != c.want {
			t.Errorf("CompareGeneric(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareGeneric(c.b, c.a); got != -c.want {
			t.Errorf("CompareGeneric(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestOSVAffects(t *testing.T) {
	deb := Affected{Ecosystem: "Debian:12", Name: "openssh", Ranges: []Range{{Type: "ECOSYSTEM",
		Events: []Event{{Introduced: "0"}, {Fixed: "1:9.2p1-2+deb12u3"}}}}}
	pypi := Affected{Ecosystem: "PyPI", Name: "gunicorn", Ranges: []Range{{Type: "ECOSYSTEM",
		Events: []Event{{Fixed: "22.0.0"}, {Introduced: "19.0"}}}}, Versions: []string{"18.0"}}
	npm := Affected{Ecosystem: "npm", Name: "x", Ranges: []Range{{Type: "SEMVER",
		Events: []Event{{Introduced: "1.0.0"}, {LastAffected: "1.4.2"}, {Introduced: "2.0.0"}, {Fixed: "2.1.0"}}}}}
	for _, c := range []struct {
		a    Affected
		p    Package
		want bool
	}{
		{deb, Package{Version: "1:9.2p1-2+deb12u2"}, true},
		{deb, Package{Version: "1:9.2p1-2+deb12u3"}, false},
		{deb, Package{Version: "1:9.6p1-3"}, false},
		{pypi, Package{Version: "20.0.4"}, true},
		{pypi, Package{Version: "22.0.0"}, false},
		{pypi, Package{Version: "18.0"}, true},  // listed
		{pypi, Package{Version: "18.1"}, false}, // below introduced, not listed
		{npm, Package{Version: "1.4.2"}, true},  // last_affected is affected
		{npm, Package{Version: "1.5.0"}, false}, // between ranges
		{npm, Package{Version: "2.0.5"}, true},
		{npm, Package{Version: "0.9.0"}, false},
		{Affected{Ecosystem: "Debian:12", Ranges: []Range{{Type: "ECOSYSTEM", Events: []Event{{Introduced: "0"}, {Fixed: "2.4.57-2"}}}}},
			Package{Version: "2.4.57", UpstreamOnly: true}, false},
		{Affected{Ecosystem: "Debian:12", Ranges: []Range{{Type: "ECOSYSTEM", Events: []Event{{Introduced: "0"}, {Fixed: "2.4.58-1"}}}}},
			Package{Version: "2.4.57", UpstreamOnly: true}, true},
		{Affected{Ecosystem: "Go", Ranges: []Range{{Type: "GIT", Events: []Event{{Introduced: "0"}}}}}, Package{Version: "1.0.0"}, false},
	} {
		if got := c.a.Affects(c.p); got != c.want {
			t.Errorf("%s %s affected = %v, want %v", c.a.Ecosystem, c.p.Version, got, c.want)
		}
	}
}

func TestOSVIdentify(t *testing.T) {
	for _, c := range []struct {
		text      string
		want      []Package
		uncovered int
	}{
		{"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u2", []Package{{Product: "OpenSSH", Ecosystem: "Debian", Name: "openssh", Version: "1:9.2p1-2+deb12u2"}}, 0},
		{"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6", []Package{{Product: "OpenSSH", Ecosystem: "Ubuntu", Name: "openssh", Version: "1:8.9p1-3ubuntu0.6"}}, 0},
		{"SSH-2.0-OpenSSH_9.6", nil, 1},
		{"nginx/1.18.0 (Ubuntu)", []Package{{Product: "nginx", Ecosystem: "Ubuntu", Name: "nginx", Version: "1.18.0", UpstreamOnly: true}}, 0},
		{"Apache/2.4.57 (Debian) OpenSSL/3.0.11", []Package{{Product: "Apache", Ecosystem: "Debian", Name: "apache2", Version: "2.4.57", UpstreamOnly: true},
			{Product: "OpenSSL", Ecosystem: "Debian", Name: "openssl", Version: "3.0.11", UpstreamOnly: true}}, 0},
		{"nginx/1.25.3", nil, 1},
		{"gunicorn/20.0.4", []Package{{Product: "gunicorn", Ecosystem: "PyPI", Name: "gunicorn", Version: "20.0.4"}}, 0},
		{"Werkzeug/2.0.1 Python/3.9.7", []Package{{Product: "Werkzeug", Ecosystem: "PyPI", Name: "werkzeug", Version: "2.0.1"}}, 0},
		{"PHP/7.4.3-4ubuntu2.18", []Package{{Product: "PHP", Ecosystem: "Ubuntu", Name: "php7.4", Version: "7.4.3-4ubuntu2.18"}}, 0},
		{"Jetty(9.4.43.v20210629)", []Package{{Product: "Jetty", Ecosystem: "Maven", Name: "org.eclipse.jetty:jetty-server", Version: "9.4.43.v20210629"}}, 0},
		{"220 ProFTPD Server ready", nil, 0},
	} {
		got, unc := Identify(c.text)
		if len(got) != len(c.want) || len(unc) != c.uncovered {
			t.Errorf("Identify(%q) = %+v, %v; want %+v and %d uncovered", c.text, got, unc, c.want, c.uncovered)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Identify(%q)[%d] = %+v, want %+v", c.text, i, got[i], c.want[i])
			}
		}
	}
}

const sampleRecord = `{"schema_version":"1.6.0","id":"GHSA-aaaa-bbbb-cccc","modified":"2024-03-01T10:00:00Z","published":"2023-01-01T00:00:00Z",
"aliases":["CVE-2023-0001"],"summary":"Request smuggling","severity":[{"type":"CVSS_V3","score":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:N"}],
"affected":[{"package":{"ecosystem":"PyPI","name":"gunicorn"},"ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"22.0.0"}]}]},
{"package":{"ecosystem":"","name":""}}],"references":[{"type":"ADVISORY","url":"https://example.org/a"}]}`

func TestOSVParseAndWalk(t *testing.T) {
	v, err := Parse([]byte(sampleRecord))
	if err != nil {
		t.Fatal(err)
	}
	if v.ID != "GHSA-aaaa-bbbb-cccc" || v.CVSS != 9.1 || len(v.Affected) != 1 || v.Aliases[0] != "CVE-2023-0001" || v.References[0] != "https://example.org/a" {
		t.Fatalf("parsed %+v", v)
	}
	for _, bad := range []string{`{}`, `{"id":"X"}`, `not json`, `{"id":"X","modified":"yesterday"}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "one.json"), []byte(sampleRecord), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "all.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{"A.json": `{"id":"A","modified":"2024-01-01T00:00:00Z"}`, "broken.json": `{`, "README": "x"} {
		w, _ := zw.Create(name)
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var ids []string
	var bads int
	if err := Walk(dir, func(v *Vuln) error { ids = append(ids, v.ID); return nil }, func(string, error) { bads++ }); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || bads != 1 {
		t.Errorf("walk read %v with %d bad, want 2 records and 1 bad", ids, bads)
	}
}
