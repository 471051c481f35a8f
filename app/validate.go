package app

import (
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// validEmail accepts a bare address (no display name).
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s, "@")
}

// validURL accepts absolute http and https URLs with a host.
func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// maxLen checks a string's length in characters.
func maxLen(v *ValidationError, field, s string, n int) {
	if utf8.RuneCountInString(s) > n {
		v.Add(field, CodeTooLong, nil, field+" must be at most "+itoa(n)+" characters")
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// oneOf checks s against an enum; empty is allowed (callers check required).
func oneOf(v *ValidationError, field, s string, allowed []string) {
	if s == "" {
		return
	}
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	v.Add(field, CodeInvalidEnum, s, field+" must be one of "+strings.Join(allowed, ", "))
}

// ParseDate parses YYYY-MM-DD or an RFC 3339 time into UTC.
func ParseDate(s string) (time.Time, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// ParseTime parses an RFC 3339 time (a bare date is taken as midnight UTC).
func ParseTime(s string) (time.Time, bool) { return ParseDate(s) }

// euEEA are the EU member states plus Iceland, Liechtenstein and Norway.
var euEEA = set("AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO")

// iso3166 holds the ISO 3166-1 alpha-2 codes.
var iso3166 = set(`AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS
BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI
FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR
IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM
MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT
PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM
TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`)

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}

// ValidCountry reports whether code is an ISO 3166-1 alpha-2 code (upper case).
func ValidCountry(code string) bool { return iso3166[code] }

// InEEA reports whether an ISO country code is in the EU/EEA.
func InEEA(code string) bool { return euEEA[code] }
