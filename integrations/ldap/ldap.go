// Package ldap lists an organization's people from an LDAP directory:
// OpenLDAP or another LDAPv3 server, and Active Directory. It binds with a
// service account over LDAPS or StartTLS, searches the users under a base
// DN page by page with the paged-results control (RFC 2696), and maps each
// entry to an app.DirectoryUser. It implements app.DirectoryProvider.
package ldap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/compliance-appliance/compliance/app"
)

// Directory types: they change the default user filter and how a disabled
// account is recognised.
const (
	TypeOpenLDAP        = "openldap"
	TypeActiveDirectory = "active_directory"
)

// Defaults and bounds.
const (
	defaultPageSize = 500
	maxPageSize     = 1000
	opTimeout       = 30 * time.Second
	// adAccountDisable is the ACCOUNTDISABLE bit of AD's userAccountControl.
	adAccountDisable = 0x2
)

var defaultFilters = map[string]string{
	TypeOpenLDAP:        "(objectClass=inetOrgPerson)",
	TypeActiveDirectory: "(&(objectCategory=person)(objectClass=user))",
}

// Provider is the LDAP directory provider.
type Provider struct {
	dialer *net.Dialer
}

var _ app.DirectoryProvider = (*Provider)(nil)

// New returns the provider. dialer carries the appliance's outbound network
// policy (its Control refuses denied addresses) and connect timeout.
func New(dialer *net.Dialer) *Provider {
	if dialer == nil {
		dialer = &net.Dialer{Timeout: 10 * time.Second}
	}
	return &Provider{dialer: dialer}
}

// Definition is the catalog entry.
func (p *Provider) Definition() app.ProviderDefinition {
	return app.ProviderDefinition{
		Slug:     "ldap",
		Name:     "LDAP / Active Directory",
		Category: "directory",
		Description: "People from an on-premises directory (OpenLDAP, Active Directory or another LDAPv3 server): " +
			"joiners, leavers and returners synchronised to the people register.",
		AuthStrategy: app.ProviderAuthBasic,
		Credentials: []app.CredentialField{
			{Key: "url", Label: "Server URL", Type: "text", Required: true, Placeholder: "ldaps://dc1.corp.example:636",
				Help: "ldaps://host[:port], or ldap://host[:port] with StartTLS."},
			{Key: "bindDn", Label: "Bind DN", Type: "text", Required: true, Placeholder: "cn=compliance-sync,ou=service,dc=corp,dc=example",
				Help: "A read-only service account."},
			{Key: "bindPassword", Label: "Bind password", Type: "password", Secret: true, Required: true},
			{Key: "caCertificate", Label: "CA certificate (PEM)", Type: "textarea",
				Help: "The certificate authority that signed the server's certificate, when it is not in the system's trust store."},
		},
		Variables: []app.ProviderVariable{
			{Key: "baseDn", Label: "Base DN", Type: "text", Required: true, Help: "Where users are searched, e.g. ou=people,dc=corp,dc=example."},
			{Key: "directoryType", Label: "Directory type", Type: "select", Default: TypeOpenLDAP, Options: []string{TypeOpenLDAP, TypeActiveDirectory}},
			{Key: "userFilter", Label: "User filter", Type: "text",
				Help: "LDAP filter selecting people. Default: " + defaultFilters[TypeOpenLDAP] + " (OpenLDAP) or " + defaultFilters[TypeActiveDirectory] + " (Active Directory)."},
			{Key: "startTls", Label: "Use StartTLS on ldap://", Type: "boolean", Default: "false"},
			{Key: "allowPlaintext", Label: "Allow binding without TLS", Type: "boolean", Default: "false",
				Help: "Sends the bind password in clear text over ldap:// without StartTLS. Only for a directory on the same host."},
			{Key: "disabledAttribute", Label: "Disabled-account attribute", Type: "text",
				Help: "An attribute marking disabled accounts, in addition to AD's userAccountControl and OpenLDAP's pwdAccountLockedTime."},
			{Key: "disabledValue", Label: "Disabled-account value", Type: "text",
				Help: "The value of the disabled-account attribute meaning disabled; empty: the attribute's presence."},
			{Key: "pageSize", Label: "Page size", Type: "number", Default: strconv.Itoa(defaultPageSize),
				Help: "Entries per page of the paged search (1-" + strconv.Itoa(maxPageSize) + ")."},
			{Key: "groupBaseDn", Label: "Group base DN", Type: "text",
				Help: "Where groups are searched, for servers without the memberOf overlay (e.g. ou=groups,dc=corp,dc=example). Empty: memberOf only."},
			{Key: "groupFilter", Label: "Group filter", Type: "text",
				Help: "LDAP filter selecting groups. Default: " + defaultGroupFilters[TypeOpenLDAP] + " (OpenLDAP) or " + defaultGroupFilters[TypeActiveDirectory] + " (Active Directory)."},
			{Key: "memberAttribute", Label: "Member attribute", Type: "select", Options: memberAttributes,
				Help: "The group attribute listing its members: member or uniqueMember (DNs), memberUid (login names). Empty: all three."},
		},
		Capabilities: []string{app.CapabilityEmployeeSync},
		Checks:       []app.CheckDefinition{},
	}
}

// settings are a connection's parsed credentials and variables.
type settings struct {
	url            *url.URL
	bindDN, bindPW string
	roots          *x509.CertPool
	baseDN         string
	dirType        string
	filter         string
	startTLS       bool
	plaintext      bool
	disabledAttr   string
	disabledValue  string
	pageSize       uint32
	// Group search (groups.go): empty groupBase means memberOf only.
	groupBase   string
	groupFilter string
	memberAttrs []string
}

// fieldError names the credential or variable that is wrong.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func parse(c app.ConnectionTarget) (*settings, error) {
	s := &settings{}
	raw := strings.TrimSpace(c.Credentials["url"])
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, &fieldError{"url", "is required"}
	case err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Hostname() == "" || (u.Path != "" && u.Path != "/"):
		return nil, &fieldError{"url", "must be ldaps://host[:port] or ldap://host[:port]"}
	}
	s.url = u
	s.bindDN, s.bindPW = strings.TrimSpace(c.Credentials["bindDn"]), c.Credentials["bindPassword"]
	if s.bindDN == "" {
		return nil, &fieldError{"bindDn", "is required"}
	}
	if s.bindPW == "" {
		return nil, &fieldError{"bindPassword", "is required (anonymous binds are not used)"}
	}
	if pem := strings.TrimSpace(c.Credentials["caCertificate"]); pem != "" {
		s.roots = x509.NewCertPool()
		if !s.roots.AppendCertsFromPEM([]byte(pem)) {
			return nil, &fieldError{"caCertificate", "holds no PEM certificate"}
		}
	}
	v := c.Variables
	if s.baseDN = strings.TrimSpace(v["baseDn"]); s.baseDN == "" {
		return nil, &fieldError{"baseDn", "is required"}
	}
	if _, err := goldap.ParseDN(s.baseDN); err != nil {
		return nil, &fieldError{"baseDn", "is not a valid DN"}
	}
	s.dirType = strings.TrimSpace(v["directoryType"])
	if s.dirType == "" {
		s.dirType = TypeOpenLDAP
	}
	if _, ok := defaultFilters[s.dirType]; !ok {
		return nil, &fieldError{"directoryType", "must be " + TypeOpenLDAP + " or " + TypeActiveDirectory}
	}
	s.filter = strings.TrimSpace(v["userFilter"])
	if s.filter == "" {
		s.filter = defaultFilters[s.dirType]
	}
	if _, err := goldap.CompileFilter(s.filter); err != nil {
		return nil, &fieldError{"userFilter", "is not a valid LDAP filter"}
	}
	s.startTLS, s.plaintext = v["startTls"] == "true", v["allowPlaintext"] == "true"
	if s.startTLS && u.Scheme == "ldaps" {
		return nil, &fieldError{"startTls", "does not apply to ldaps://, which is TLS from the start"}
	}
	if u.Scheme == "ldap" && !s.startTLS && !s.plaintext {
		return nil, &fieldError{"url", "ldap:// without StartTLS would send the bind password in clear text: use ldaps://, turn on startTls, or allow plaintext explicitly"}
	}
	s.disabledAttr, s.disabledValue = strings.TrimSpace(v["disabledAttribute"]), strings.TrimSpace(v["disabledValue"])
	s.pageSize = defaultPageSize
	if ps := strings.TrimSpace(v["pageSize"]); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > maxPageSize {
			return nil, &fieldError{"pageSize", "must be a number from 1 to " + strconv.Itoa(maxPageSize)}
		}
		s.pageSize = uint32(n)
	}
	if err := s.parseGroups(v); err != nil {
		return nil, err
	}
	return s, nil
}

// connect dials, secures and binds. The connection closes when ctx ends.
func (p *Provider) connect(ctx context.Context, s *settings) (*goldap.Conn, error) {
	tc := &tls.Config{ServerName: s.url.Hostname(), RootCAs: s.roots, MinVersion: tls.VersionTLS12}
	addr := s.url.Host
	if s.url.Port() == "" {
		port := "389"
		if s.url.Scheme == "ldaps" {
			port = "636"
		}
		addr = net.JoinHostPort(s.url.Hostname(), port)
	}
	d := *p.dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the directory at %s: %w", addr, err)
	}
	if s.url.Scheme == "ldaps" {
		tlsConn := tls.Client(raw, tc)
		hctx, cancel := context.WithTimeout(ctx, opTimeout)
		err := tlsConn.HandshakeContext(hctx)
		cancel()
		if err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS with the directory failed: %w", err)
		}
		raw = tlsConn
	}
	conn := goldap.NewConn(raw, s.url.Scheme == "ldaps")
	conn.Start()
	conn.SetTimeout(opTimeout)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	closeAll := func() { stop(); conn.Close() }
	if s.startTLS {
		if err := conn.StartTLS(tc); err != nil {
			closeAll()
			return nil, fmt.Errorf("StartTLS with the directory failed: %w", err)
		}
	}
	if err := conn.Bind(s.bindDN, s.bindPW); err != nil {
		closeAll()
		if goldap.IsErrorWithCode(err, goldap.LDAPResultInvalidCredentials) {
			return nil, errors.New("the directory refused the bind DN or password (invalid credentials)")
		}
		return nil, fmt.Errorf("bind failed: %s", ldapMessage(err))
	}
	return conn, nil
}

// Test binds and reads the base DN.
func (p *Provider) Test(ctx context.Context, c app.ConnectionTarget) app.TestResult {
	s, err := parse(c)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	conn, err := p.connect(ctx, s)
	if err != nil {
		return app.TestResult{Message: err.Error()}
	}
	defer conn.Close()
	req := goldap.NewSearchRequest(s.baseDN, goldap.ScopeBaseObject, goldap.NeverDerefAliases, 1, int(opTimeout/time.Second), false,
		"(objectClass=*)", []string{"1.1"}, nil)
	if _, err := conn.Search(req); err != nil {
		if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
			return app.TestResult{Message: "bound as " + s.bindDN + ", but the base DN " + s.baseDN + " does not exist"}
		}
		return app.TestResult{Message: "bound, but reading the base DN failed: " + ldapMessage(err)}
	}
	return app.TestResult{Success: true, Message: "Bound and found the base DN " + s.baseDN + ".", Account: s.bindDN}
}

// Run runs checks; a directory has none of its own (its data feeds sync).
func (p *Provider) Run(ctx context.Context, c app.ConnectionTarget, ids []string, out app.CheckSink) error {
	if len(ids) > 0 {
		return fmt.Errorf("the ldap provider has no check %q", ids[0])
	}
	return nil
}

// Users streams the directory's users page by page.
func (p *Provider) Users(ctx context.Context, c app.ConnectionTarget, yield func(app.DirectoryUser) error) error {
	s, err := parse(c)
	if err != nil {
		return err
	}
	conn, err := p.connect(ctx, s)
	if err != nil {
		return err
	}
	defer conn.Close()
	attrs := []string{"uid", "sAMAccountName", "userPrincipalName", "mail", "displayName", "cn", "givenName", "sn",
		"department", "departmentNumber", "ou", "manager", "memberOf", "userAccountControl", "pwdAccountLockedTime",
		"entryUUID", "objectGUID"}
	if s.disabledAttr != "" {
		attrs = append(attrs, s.disabledAttr)
	}
	var groups *memberships
	if s.groupBase != "" {
		if groups, err = s.readGroups(ctx, conn); err != nil {
			return err
		}
	}
	paging := goldap.NewControlPaging(s.pageSize)
	for page := 0; ; page++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		req := goldap.NewSearchRequest(s.baseDN, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, int(opTimeout/time.Second), false,
			s.filter, attrs, []goldap.Control{paging})
		res, err := conn.Search(req)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return fmt.Errorf("searching the directory (page %d) failed: %s", page+1, ldapMessage(err))
		}
		for _, e := range res.Entries {
			u := s.user(e)
			if groups != nil {
				u.Groups = groups.of(e, u.Groups)
			}
			if err := yield(u); err != nil {
				return err
			}
		}
		ctl, ok := goldap.FindControl(res.Controls, goldap.ControlTypePaging).(*goldap.ControlPaging)
		if !ok || len(ctl.Cookie) == 0 {
			if page == 0 && !ok && len(res.Entries) >= int(s.pageSize) {
				return errors.New("the directory ignored the paged-results control: it may have returned only part of the users")
			}
			return nil
		}
		paging.SetCookie(ctl.Cookie)
	}
}

// user maps one entry.
func (s *settings) user(e *goldap.Entry) app.DirectoryUser {
	first := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(e.GetAttributeValue(n)); v != "" {
				return v
			}
		}
		return ""
	}
	u := app.DirectoryUser{
		Login:      first("sAMAccountName", "uid", "userPrincipalName"),
		Email:      first("mail"),
		Name:       first("displayName", "cn"),
		Department: first("department", "departmentNumber", "ou"),
		Manager:    first("manager"),
		Groups:     e.GetAttributeValues("memberOf"),
		Active:     true,
	}
	if u.Name == "" {
		u.Name = strings.TrimSpace(first("givenName") + " " + first("sn"))
	}
	switch {
	case len(e.GetRawAttributeValue("objectGUID")) == 16:
		u.ExternalID = adGUID(e.GetRawAttributeValue("objectGUID"))
	case first("entryUUID") != "":
		u.ExternalID = first("entryUUID")
	default:
		u.ExternalID = e.DN
	}
	if uac := first("userAccountControl"); uac != "" {
		if n, err := strconv.ParseInt(uac, 10, 64); err == nil && n&adAccountDisable != 0 {
			u.Active = false
		}
	}
	if first("pwdAccountLockedTime") != "" {
		u.Active = false
	}
	if s.disabledAttr != "" {
		vals := e.GetAttributeValues(s.disabledAttr)
		if s.disabledValue == "" && len(vals) > 0 {
			u.Active = false
		}
		for _, v := range vals {
			if s.disabledValue != "" && strings.EqualFold(strings.TrimSpace(v), s.disabledValue) {
				u.Active = false
			}
		}
	}
	return u
}

// adGUID formats AD's objectGUID (little-endian first three groups) the
// way Windows prints it.
func adGUID(b []byte) string {
	le := []byte{b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6]}
	h := hex.EncodeToString(append(le, b[8:]...))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ldapMessage is an LDAP error without the request's details.
func ldapMessage(err error) string {
	var le *goldap.Error
	if errors.As(err, &le) {
		msg := goldap.LDAPResultCodeMap[le.ResultCode]
		if le.Err != nil && le.Err.Error() != "" {
			msg += ": " + le.Err.Error()
		}
		return msg
	}
	return err.Error()
}
