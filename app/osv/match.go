package osv

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Package is a product version recognised in a banner or header, named as
// OSV names it.
type Package struct {
	// Product is what the banner called it ("OpenSSH", "nginx").
	Product   string `json:"product"`
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// UpstreamOnly: the banner gave the upstream version without the
	// distribution's revision; only the upstream parts are compared.
	UpstreamOnly bool `json:"upstreamOnly"`
}

// Affects reports whether version of the package is affected by a: it is
// one of the listed versions, or inside one of the SEMVER or ECOSYSTEM
// ranges (GIT ranges name commits and are not evaluated).
func (a Affected) Affects(p Package) bool {
	cmp := func(x, y string) int { return Compare(a.Ecosystem, x, y) }
	if p.UpstreamOnly && (BaseEcosystem(a.Ecosystem) == "Debian" || BaseEcosystem(a.Ecosystem) == "Ubuntu") {
		cmp = CompareDpkgUpstream
	}
	if !p.UpstreamOnly && slices.Contains(a.Versions, p.Version) {
		return true
	}
	for _, r := range a.Ranges {
		var c func(x, y string) int
		switch r.Type {
		case "SEMVER":
			c = CompareSemver
		case "ECOSYSTEM":
			c = cmp
		default:
			continue
		}
		if inRange(r.Events, p.Version, c) {
			return true
		}
	}
	return false
}

// inRange evaluates a range's events in version order, as the OSV schema
// describes: introduced at or below the version makes it affected, fixed at
// or below it or last_affected below it makes it not affected.
func inRange(events []Event, v string, cmp func(x, y string) int) bool {
	evs := slices.Clone(events)
	key := func(e Event) string {
		switch {
		case e.Introduced != "":
			return e.Introduced
		case e.Fixed != "":
			return e.Fixed
		case e.LastAffected != "":
			return e.LastAffected
		}
		return e.Limit
	}
	sort.SliceStable(evs, func(i, j int) bool {
		ki, kj := key(evs[i]), key(evs[j])
		if ki == "0" || kj == "0" {
			return ki == "0" && kj != "0"
		}
		return cmp(ki, kj) < 0
	})
	affected := false
	for _, e := range evs {
		switch {
		case e.Introduced != "":
			if e.Introduced == "0" || cmp(v, e.Introduced) >= 0 {
				affected = true
			}
		case e.Fixed != "":
			if cmp(v, e.Fixed) >= 0 {
				affected = false
			}
		case e.LastAffected != "":
			if cmp(v, e.LastAffected) > 0 {
				affected = false
			}
		}
	}
	return affected
}

var (
	sshBanner   = regexp.MustCompile(`^SSH-[\d.]+-OpenSSH_([0-9][0-9A-Za-z.]*)(?:\s+(Debian|Ubuntu)-(\S+))?`)
	productTok  = regexp.MustCompile(`([A-Za-z][A-Za-z0-9_.-]*)[/ ]v?([0-9][0-9A-Za-z.+~:-]*)`)
	jettyTok    = regexp.MustCompile(`Jetty\(([0-9][0-9A-Za-z.-]*)\)`)
	phpDistro   = regexp.MustCompile(`^([0-9]+)\.([0-9]+)\.[0-9]+-\S*(ubuntu|deb)\S*$`)
	distroInTxt = regexp.MustCompile(`\((Debian|Ubuntu)[^)]*\)`)
)

// pypiServers are Python web servers that name themselves with their PyPI
// version in the Server header.
var pypiServers = map[string]string{"gunicorn": "gunicorn", "werkzeug": "werkzeug", "tornadoserver": "tornado", "waitress": "waitress",
	"uvicorn": "uvicorn", "hypercorn": "hypercorn", "cherrypy": "cherrypy", "twistedweb": "twisted", "aiohttp": "aiohttp", "daphne": "daphne"}

// distroPackages are products whose distribution package OSV covers under
// the Debian and Ubuntu ecosystems (the source package's name).
var distroPackages = map[string]string{"nginx": "nginx", "apache": "apache2", "openssl": "openssl", "lighttpd": "lighttpd",
	"squid": "squid", "varnish": "varnish", "haproxy": "haproxy", "exim": "exim4", "postfix": "postfix", "proftpd": "proftpd-dfsg",
	"vsftpd": "vsftpd", "dovecot": "dovecot", "openssh": "openssh"}

// Identify names the OSV packages a banner or header value reveals, for the
// products OSV covers: OpenSSH and web servers that say which Debian or
// Ubuntu build they are, PHP built by Debian or Ubuntu, Python web servers
// (PyPI) and Jetty (Maven). The second result lists the products seen with
// a version that OSV does not cover (an upstream nginx or OpenSSH with no
// distribution named: OSV has no upstream ecosystem for them).
func Identify(text string) (pkgs []Package, uncovered []string) {
	text = strings.TrimSpace(text)
	if m := sshBanner.FindStringSubmatch(text); m != nil {
		if m[2] == "" {
			return nil, []string{"OpenSSH " + m[1]}
		}
		// Debian and Ubuntu's openssh carries epoch 1.
		return []Package{{Product: "OpenSSH", Ecosystem: m[2], Name: "openssh", Version: "1:" + m[1] + "-" + m[3]}}, nil
	}
	distro := ""
	if m := distroInTxt.FindStringSubmatch(text); m != nil {
		distro = m[1]
	}
	if m := jettyTok.FindStringSubmatch(text); m != nil {
		pkgs = append(pkgs, Package{Product: "Jetty", Ecosystem: "Maven", Name: "org.eclipse.jetty:jetty-server", Version: m[1]})
	}
	for _, m := range productTok.FindAllStringSubmatch(text, -1) {
		prod, ver := m[1], strings.TrimRight(m[2], ".-")
		low := strings.ToLower(prod)
		switch {
		case low == "php" && phpDistro.MatchString(ver):
			pm := phpDistro.FindStringSubmatch(ver)
			eco := "Debian"
			if pm[3] == "ubuntu" {
				eco = "Ubuntu"
			}
			pkgs = append(pkgs, Package{Product: "PHP", Ecosystem: eco, Name: "php" + pm[1] + "." + pm[2], Version: ver})
		case pypiServers[low] != "":
			pkgs = append(pkgs, Package{Product: prod, Ecosystem: "PyPI", Name: pypiServers[low], Version: ver})
		case distroPackages[low] != "" && distro != "":
			pkgs = append(pkgs, Package{Product: prod, Ecosystem: distro, Name: distroPackages[low], Version: ver, UpstreamOnly: !strings.Contains(ver, "-")})
		case distroPackages[low] != "" || low == "php" || low == "microsoft-iis" || low == "iis" || low == "tomcat":
			uncovered = append(uncovered, prod+" "+ver)
		}
	}
	return pkgs, uncovered
}
