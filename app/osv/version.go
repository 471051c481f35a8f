package osv

import (
	"slices"
	"strconv"
	"strings"
)

// Compare returns -1, 0 or 1 as version a is lower than, equal to or higher
// than b in the given ecosystem's ordering: dpkg's for Debian and Ubuntu,
// Semantic Versioning 2.0 for SEMVER ranges and the ecosystems that use it
// (Go, npm, crates.io, Hex, Pub, NuGet, Packagist), and a generic
// numeric/qualifier ordering for the others (PyPI, Maven, Alpine, RubyGems):
// numbers compare as numbers, a pre-release word (alpha, beta, rc, dev,
// snapshot, ...) sorts before the release. The generic ordering agrees with
// PEP 440, Maven and apk for ordinary versions; it does not know PEP 440
// epochs and local versions or every Maven qualifier.
func Compare(ecosystem, a, b string) int {
	switch BaseEcosystem(ecosystem) {
	case "Debian", "Ubuntu":
		return CompareDpkg(a, b)
	case "Go", "npm", "crates.io", "Hex", "Pub", "NuGet", "Packagist", "SEMVER":
		return CompareSemver(a, b)
	}
	return CompareGeneric(a, b)
}

// CompareDpkg orders two Debian versions as dpkg does
// ([epoch:]upstream[-revision], deb-version(7)).
func CompareDpkg(a, b string) int {
	ea, ua, ra := splitDpkg(a)
	eb, ub, rb := splitDpkg(b)
	if ea != eb {
		return sign(ea - eb)
	}
	if c := verrevcmp(ua, ub); c != 0 {
		return sign(c)
	}
	return sign(verrevcmp(ra, rb))
}

// CompareDpkgUpstream compares only the upstream parts of two Debian
// versions: for a version seen without its Debian revision (a banner says
// "Apache/2.4.57 (Debian)"), it is affected only when its upstream version
// is below the fixed one's.
func CompareDpkgUpstream(a, b string) int {
	_, ua, _ := splitDpkg(a)
	_, ub, _ := splitDpkg(b)
	return sign(verrevcmp(ua, ub))
}

func splitDpkg(v string) (epoch int, upstream, revision string) {
	v = strings.TrimSpace(v)
	if e, rest, ok := strings.Cut(v, ":"); ok {
		if n, err := strconv.Atoi(e); err == nil {
			epoch, v = n, rest
		}
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// dpkgOrder is dpkg's character weight: digits and the end 0, letters
// their code, '~' below everything (even the end), other characters after
// letters.
func dpkgOrder(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	c := s[i]
	switch {
	case isDigit(c):
		return 0
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return int(c)
	case c == '~':
		return -1
	}
	return int(c) + 256
}

// verrevcmp is dpkg's lib/dpkg/version.c verrevcmp.
func verrevcmp(a, b string) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		firstDiff := 0
		for (i < len(a) && !isDigit(a[i])) || (j < len(b) && !isDigit(b[j])) {
			ac, bc := dpkgOrder(a, i), dpkgOrder(b, j)
			if ac != bc {
				return ac - bc
			}
			i++
			j++
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		for i < len(a) && j < len(b) && isDigit(a[i]) && isDigit(b[j]) {
			if firstDiff == 0 {
				firstDiff = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if i < len(a) && isDigit(a[i]) {
			return 1
		}
		if j < len(b) && isDigit(b[j]) {
			return -1
		}
		if firstDiff != 0 {
			return firstDiff
		}
	}
	return 0
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// CompareSemver orders two versions by Semantic Versioning 2.0 precedence.
// A leading "v" is ignored, missing minor and patch numbers are 0, and
// build metadata does not count.
func CompareSemver(a, b string) int {
	ma, pa := splitSemver(a)
	mb, pb := splitSemver(b)
	for k := range 3 {
		if c := compareNumeric(ma[k], mb[k]); c != 0 {
			return c
		}
	}
	switch {
	case pa == "" && pb == "":
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	}
	ia, ib := strings.Split(pa, "."), strings.Split(pb, ".")
	for k := 0; k < len(ia) && k < len(ib); k++ {
		na, nb := allDigits(ia[k]), allDigits(ib[k])
		var c int
		switch {
		case na && nb:
			c = compareNumeric(ia[k], ib[k])
		case na:
			c = -1
		case nb:
			c = 1
		default:
			c = strings.Compare(ia[k], ib[k])
		}
		if c != 0 {
			return c
		}
	}
	return sign(len(ia) - len(ib))
}

func splitSemver(v string) ([3]string, string) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	v, _, _ = strings.Cut(v, "+")
	core, pre, _ := strings.Cut(v, "-")
	var m [3]string
	for k, p := range strings.SplitN(core, ".", 3) {
		m[k] = p
	}
	return m, pre
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// compareNumeric compares two digit strings of any length; an empty or
// non-numeric string is 0.
func compareNumeric(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if !allDigits(a) {
		a = ""
	}
	if !allDigits(b) {
		b = ""
	}
	if len(a) != len(b) {
		return sign(len(a) - len(b))
	}
	return strings.Compare(a, b)
}

// preReleaseWords sort before a release in the generic ordering, in this
// order.
var preReleaseWords = []string{"dev", "snapshot", "alpha", "a", "beta", "b", "pre", "preview", "c", "rc", "cr", "m", "milestone"}

// postReleaseWords sort after the release they follow ("1.0.post1",
// "1.0-sp1", "2.4.5.Final" equals "2.4.5").
var releaseWords = []string{"final", "ga", "release", "r"}

// CompareGeneric orders versions token by token: runs of digits compare as
// numbers, runs of letters as words (a pre-release word below the release,
// "final"/"ga"/"release" equal to it, any other word above it); ".", "-",
// "_" and "+" separate tokens.
func CompareGeneric(a, b string) int {
	ta, tb := tokens(a), tokens(b)
	for k := 0; k < len(ta) || k < len(tb); k++ {
		var x, y string
		if k < len(ta) {
			x = ta[k]
		}
		if k < len(tb) {
			y = tb[k]
		}
		if c := compareToken(x, y); c != 0 {
			return c
		}
	}
	return 0
}

func tokens(v string) []string {
	v = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(v), "v"))
	var out []string
	start := -1
	kind := 0 // 1 digits, 2 letters
	flush := func(i int) {
		if start >= 0 {
			out = append(out, v[start:i])
		}
		start, kind = -1, 0
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		k := 0
		switch {
		case isDigit(c):
			k = 1
		case c >= 'a' && c <= 'z':
			k = 2
		}
		if k == 0 {
			flush(i)
			continue
		}
		if k != kind {
			flush(i)
			start, kind = i, k
		}
	}
	flush(len(v))
	// Trailing zeros and release words do not make a version higher:
	// 1.0 == 1.0.0 == 1.0.0.Final.
	for len(out) > 0 {
		l := out[len(out)-1]
		if strings.Trim(l, "0") == "" || slices.Contains(releaseWords, l) {
			out = out[:len(out)-1]
			continue
		}
		break
	}
	return out
}

// tokenRank places a token: pre-release words below the release (the
// empty token), numbers and other words above it.
func tokenRank(t string) int {
	switch {
	case t == "" || slices.Contains(releaseWords, t):
		return 0
	case allDigits(t):
		return 2
	}
	if i := slices.Index(preReleaseWords, t); i >= 0 {
		return -len(preReleaseWords) + i
	}
	return 1
}

func compareToken(x, y string) int {
	// A missing number is 0: "1.0rc1" vs "1" compares 0 with nothing.
	if x == "" && allDigits(y) {
		x = "0"
	}
	if y == "" && allDigits(x) {
		y = "0"
	}
	rx, ry := tokenRank(x), tokenRank(y)
	if rx != ry {
		return sign(rx - ry)
	}
	switch rx {
	case 2:
		return compareNumeric(x, y)
	case 1:
		return strings.Compare(x, y)
	}
	return 0
}
