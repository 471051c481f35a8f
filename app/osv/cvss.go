package osv

import (
	"fmt"
	"math"
	"strings"
)

// BaseScore computes the CVSS 3.x base score of a vector string by the
// CVSS 3.1 specification's formulas (first.org/cvss/v3.1/specification-document
// section 7.1, Appendix A for the rounding). Temporal and environmental
// metrics after the base ones are ignored; a CVSS 4.0 or 2.0 vector is an
// error (no score, the vector is kept as it is).
func BaseScore(vector string) (float64, error) {
	parts := strings.Split(vector, "/")
	if len(parts) < 9 || (parts[0] != "CVSS:3.1" && parts[0] != "CVSS:3.0") {
		return 0, fmt.Errorf("%q is not a CVSS 3 vector", vector)
	}
	m := map[string]string{}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, ":")
		if !ok {
			return 0, fmt.Errorf("bad metric %q", p)
		}
		m[k] = v
	}
	pick := func(k string, vals map[string]float64) (float64, error) {
		v, ok := vals[m[k]]
		if !ok {
			return 0, fmt.Errorf("bad value for %s: %q", k, m[k])
		}
		return v, nil
	}
	changed := m["S"] == "C"
	if m["S"] != "C" && m["S"] != "U" {
		return 0, fmt.Errorf("bad value for S: %q", m["S"])
	}
	pr := map[string]float64{"N": 0.85, "L": 0.62, "H": 0.27}
	if changed {
		pr = map[string]float64{"N": 0.85, "L": 0.68, "H": 0.5}
	}
	cia := map[string]float64{"H": 0.56, "L": 0.22, "N": 0}
	var vals [7]float64
	var err error
	for i, k := range []struct {
		k string
		v map[string]float64
	}{{"AV", map[string]float64{"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2}}, {"AC", map[string]float64{"L": 0.77, "H": 0.44}}, {"PR", pr},
		{"UI", map[string]float64{"N": 0.85, "R": 0.62}}, {"C", cia}, {"I", cia}, {"A", cia}} {
		if vals[i], err = pick(k.k, k.v); err != nil {
			return 0, err
		}
	}
	iss := 1 - (1-vals[4])*(1-vals[5])*(1-vals[6])
	var impact float64
	if changed {
		impact = 7.52*(iss-0.029) - 3.25*math.Pow(iss-0.02, 15)
	} else {
		impact = 6.42 * iss
	}
	expl := 8.22 * vals[0] * vals[1] * vals[2] * vals[3]
	if impact <= 0 {
		return 0, nil
	}
	if changed {
		return roundUp(math.Min(1.08*(impact+expl), 10)), nil
	}
	return roundUp(math.Min(impact+expl, 10)), nil
}

// roundUp is the specification's Roundup: the smallest number with one
// decimal that is equal to or higher than x, free of floating-point noise.
func roundUp(x float64) float64 {
	i := int64(math.Round(x * 100000))
	if i%10000 == 0 {
		return float64(i) / 100000
	}
	return float64(i/10000+1) / 10
}
