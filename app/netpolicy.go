package app

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// DefaultDeniedNetworks are refused as webhook targets unless a network in
// the allow list covers the address: link-local ranges (where cloud
// metadata services answer), the cloud providers' other metadata addresses,
// "this network", multicast and broadcast. Loopback and private networks
// stay allowed: on-premises receivers live there (DECISIONS: Webhooks).
var DefaultDeniedNetworks = []string{
	"0.0.0.0/8",           // "this network"; 0.0.0.0 reaches the local host
	"169.254.0.0/16",      // IPv4 link-local, 169.254.169.254 metadata (AWS, GCP, Azure, OCI)
	"100.100.100.200/32",  // Alibaba Cloud metadata
	"192.0.0.192/32",      // Oracle Cloud classic metadata
	"224.0.0.0/4",         // multicast
	"255.255.255.255/32",  // broadcast
	"::/128",              // unspecified
	"fe80::/10",           // IPv6 link-local
	"fd00:ec2::254/128",   // AWS IPv6 metadata
	"ff00::/8",            // IPv6 multicast
	"64:ff9b::a9fe:0/112", // NAT64 form of 169.254.0.0/16
}

// NetworkPolicy decides which IP addresses outbound webhook requests may
// connect to. An address inside an allowed network is accepted; otherwise an
// address inside a denied network is refused; anything else is accepted. To
// allow only listed networks, deny 0.0.0.0/0 and ::/0 and allow the rest.
type NetworkPolicy struct {
	allow []netip.Prefix
	deny  []netip.Prefix
}

// NewNetworkPolicy builds a policy from CIDR lists (a bare address is taken
// as a single host). The default denied networks always apply in addition
// to deny; list one of them in allow to reach it.
func NewNetworkPolicy(allow, deny []string) (*NetworkPolicy, error) {
	p := &NetworkPolicy{}
	var err error
	if p.allow, err = parsePrefixes(allow); err != nil {
		return nil, fmt.Errorf("allowed networks: %w", err)
	}
	if p.deny, err = parsePrefixes(append(append([]string{}, DefaultDeniedNetworks...), deny...)); err != nil {
		return nil, fmt.Errorf("denied networks: %w", err)
	}
	return p, nil
}

// DefaultNetworkPolicy refuses DefaultDeniedNetworks and accepts the rest.
func DefaultNetworkPolicy() *NetworkPolicy {
	p, err := NewNetworkPolicy(nil, nil)
	if err != nil {
		panic(err)
	}
	return p
}

func parsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or CIDR network", s)
			}
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		pf, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR network", s)
		}
		if pf.Addr().Is4In6() {
			pf = netip.PrefixFrom(pf.Addr().Unmap(), pf.Bits()-96)
		}
		out = append(out, pf.Masked())
	}
	return out, nil
}

// Allowed reports whether a connection to ip is permitted.
func (p *NetworkPolicy) Allowed(ip netip.Addr) bool {
	if p == nil {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, n := range p.allow {
		if n.Contains(ip) {
			return true
		}
	}
	for _, n := range p.deny {
		if n.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckHost refuses a host that is an IP literal in a denied network.
// Names are checked when they are resolved, at connection time.
func (p *NetworkPolicy) CheckHost(host string) error {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	if !p.Allowed(ip) {
		return fmt.Errorf("%s is in a network webhooks may not reach", ip)
	}
	return nil
}

// DeniedAddressError is a connection the policy refused. Setting names the
// configuration key that would allow it.
type DeniedAddressError struct {
	Addr    netip.Addr
	Setting string
}

func (e *DeniedAddressError) Error() string {
	msg := fmt.Sprintf("refused to connect to %s: the address is in a network outbound connections may not reach", e.Addr)
	if e.Setting != "" {
		msg += " (see " + e.Setting + ")"
	}
	return msg
}

// DialControl is a net.Dialer Control function enforcing the policy on the
// address actually dialled, after name resolution: a name that resolves to
// a denied address is refused however it was spelled. A refusal is a
// *DeniedAddressError naming setting, the key that would allow it.
func (p *NetworkPolicy) DialControl(setting string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("unexpected dial address %q", address)
		}
		if !p.Allowed(ip) {
			return &DeniedAddressError{Addr: ip.Unmap(), Setting: setting}
		}
		return nil
	}
}
