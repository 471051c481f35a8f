package app

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// ID prefixes of every resource type (DECISIONS: HTTP conventions).
const (
	PrefixOrganization = "org"
	PrefixPerson       = "usr"
	PrefixAPIKey       = "key"
	PrefixVendor       = "vnd"
	PrefixDevice       = "dev"
	PrefixEvent        = "evt"
	PrefixAudit        = "aud"
	PrefixRisk         = "rsk"
	PrefixFinding      = "fnd"
	PrefixFindingTpl   = "ftp"
	PrefixControl      = "ctl"
	PrefixFramework    = "frk"
	PrefixRequirement  = "req"
	PrefixEvidence     = "evd"
	PrefixPolicy       = "pol"
	PrefixTask         = "tsk"
	PrefixComment      = "cmt"
	PrefixAttachment   = "att"
	PrefixWebhook      = "whk"
	PrefixDelivery     = "dlv"
	PrefixESG          = "esg"
	PrefixIncident     = "inc"
	// PrefixIncidentReport starts the id of one report (regime and kind) of
	// an incident; PrefixIncidentVersion a saved or sent version of it.
	PrefixIncidentReport   = "irp"
	PrefixIncidentVersion  = "irv"
	PrefixIncidentTimeline = "itl"
	PrefixMail             = "eml"
	PrefixNotification     = "ntf"
	// PrefixPentestRun starts a security penetration test's id,
	// PrefixPentestTarget an allowlist entry's, PrefixPentestIssue an
	// issue's (stable across runs of one target).
	PrefixPentestRun    = "pen"
	PrefixPentestTarget = "ptg"
	PrefixPentestIssue  = "pti"
	// PrefixAssistantSession and PrefixAssistantMessage identify the
	// assistant's conversations and their messages.
	PrefixAssistantSession = "asn"
	PrefixAssistantMessage = "amg"
	// PrefixAssistantAction identifies a write the assistant proposed.
	PrefixAssistantAction = "aac"
	// Integrations: a connection, a check run, an exception to a check.
	PrefixConnection     = "icn"
	PrefixCheckRun       = "icr"
	PrefixCheckException = "icx"
	// PrefixSyncRun starts a directory sync run's id.
	PrefixSyncRun = "syr"
	// Device agent: a reported check result, an agent's device token and
	// an enrolment token.
	PrefixDeviceCheck    = "dck"
	PrefixDeviceToken    = "dat"
	PrefixEnrolmentToken = "den"
	// Task automations: an automation, one of its script versions, a run.
	PrefixTaskAutomation    = "tau"
	PrefixAutomationVersion = "tav"
	PrefixAutomationRun     = "tar"
	// Browser automations (reference prefixes): the organization's browser
	// context, an auth profile, an automation, its run, a draft, a session.
	PrefixBrowserContext    = "bbc"
	PrefixBrowserProfile    = "bap"
	PrefixBrowserAutomation = "bau"
	PrefixBrowserRun        = "bar"
	PrefixBrowserDraft      = "bad"
	PrefixBrowserSession    = "bss"
	// PrefixVendorAssessment identifies a vendor risk assessment.
	PrefixVendorAssessment = "vra"
	// PrefixAgentAuthCode is an approved device agent sign-in.
	PrefixAgentAuthCode = "dac"
	// PrefixOAuthError is a recorded integration OAuth error.
	PrefixOAuthError = "ioe"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var (
	idMu   sync.Mutex
	lastMS uint64
	lastR  [10]byte
)

// NewID returns prefix + "_" + a 26-character ULID: 48 bits of millisecond
// time then 80 random bits, monotonic within a millisecond, so ids sort by
// creation time.
func NewID(prefix string) string {
	ms := uint64(time.Now().UnixMilli())
	var r [10]byte
	idMu.Lock()
	if ms == lastMS {
		r = lastR
		// increment the 80-bit random part
		for i := 9; i >= 0; i-- {
			r[i]++
			if r[i] != 0 {
				break
			}
		}
	} else {
		if _, err := rand.Read(r[:]); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
	}
	lastMS, lastR = ms, r
	idMu.Unlock()

	var b [16]byte
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	copy(b[6:], r[:])
	var sb strings.Builder
	sb.Grow(len(prefix) + 27)
	sb.WriteString(prefix)
	sb.WriteByte('_')
	sb.WriteString(encodeULID(b))
	return sb.String()
}

func encodeULID(b [16]byte) string {
	// 128 bits -> 26 base32 characters (first char holds 3 bits).
	var out [26]byte
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// HasPrefix reports whether id looks like an id of the given type.
func HasPrefix(id, prefix string) bool {
	return len(id) == len(prefix)+27 && strings.HasPrefix(id, prefix+"_")
}

// RandomToken returns n random bytes encoded in lowercase base32 without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	const alpha = "abcdefghijklmnopqrstuvwxyz234567"
	var sb strings.Builder
	var acc uint32
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			sb.WriteByte(alpha[(acc>>(bits-5))&31])
			bits -= 5
		}
	}
	if bits > 0 {
		sb.WriteByte(alpha[(acc<<(5-bits))&31])
	}
	return sb.String()
}
