// Package ldaptest runs a real OpenLDAP server (slapd from Debian's
// packages) on loopback for tests: a generated configuration, a test CA and
// an LDIF fixture of people. It is test support, imported only by tests.
package ldaptest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// The directory's names and the sync account.
const (
	Suffix       = "dc=example,dc=test"
	SyncDN       = "cn=compliance-sync,ou=service," + Suffix
	SyncPassword = "sync-secret-0"
	PeopleDN     = "ou=people," + Suffix
	// GroupsDN holds the group entries of FixtureLDIF.
	GroupsDN     = "ou=groups," + Suffix
	rootDN       = "cn=admin," + Suffix
	rootPassword = "admin-secret"
)

// Server is one running slapd.
type Server struct {
	LDAPURL, LDAPSURL string
	CAPEM             string
	Dir               string
}

// FindSlapd returns the slapd binary, or skips the test loudly (and fails
// it in CI, which installs the package).
func FindSlapd(tb testing.TB) string {
	tb.Helper()
	for _, p := range []string{"/usr/sbin/slapd", "/usr/local/libexec/slapd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("slapd"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("slapd is not installed: CI must install Debian's slapd package (see .ci/run)")
	}
	tb.Skip("SKIPPED: slapd (OpenLDAP) is not installed; install Debian's slapd package to run the LDAP tests against a real server")
	return ""
}

// Start writes a configuration and n users (FixtureLDIF), and starts the
// server, stopped when the test ends. sizeLimit is the server's size limit
// for the sync account (0: none).
func Start(tb testing.TB, n, sizeLimit int) *Server {
	tb.Helper()
	bin := FindSlapd(tb)
	dir := tb.TempDir()
	for _, d := range []string{"db", "run"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	caPEM := writeTLS(tb, dir)
	limits := ""
	if sizeLimit > 0 {
		limits = fmt.Sprintf("limits dn.exact=%q size.soft=%d size.hard=%d size.prtotal=unlimited\n", SyncDN, sizeLimit, sizeLimit)
	}
	conf := fmt.Sprintf(`include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload ppolicy
moduleload memberof
pidfile %[1]s/run/slapd.pid
argsfile %[1]s/run/slapd.args
TLSCACertificateFile %[1]s/ca.pem
TLSCertificateFile %[1]s/server.pem
TLSCertificateKeyFile %[1]s/server.key
database mdb
maxsize 1073741824
suffix %[2]q
rootdn "cn=admin,%[2]s"
rootpw admin-secret
directory %[1]s/db
index objectClass eq
%[3]s
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
`, dir, Suffix, limits)
	confPath := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	ldif := filepath.Join(dir, "users.ldif")
	if err := os.WriteFile(ldif, FixtureLDIF(n), 0o600); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(filepath.Dir(bin), "slapadd"), "-f", confPath, "-l", ldif, "-q").CombinedOutput(); err != nil {
		tb.Fatalf("slapadd: %v\n%s", err, out)
	}
	p1, p2 := FreePort(tb), FreePort(tb)
	s := &Server{LDAPURL: "ldap://127.0.0.1:" + p1, LDAPSURL: "ldaps://127.0.0.1:" + p2, CAPEM: caPEM, Dir: dir}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-f", confPath, "-h", s.LDAPURL+"/ "+s.LDAPSURL+"/", "-d", "0")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+p2, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			tb.Fatalf("slapd exited: %s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("slapd did not listen: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// FreePort returns a loopback port free now.
func FreePort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// writeTLS writes a test CA and a server certificate for 127.0.0.1 and
// localhost, and returns the CA's PEM.
func writeTLS(tb testing.TB, dir string) string {
	tb.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test Directory CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, srv, caCert, &key.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"ca.pem":     caPEM,
		"server.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"server.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return string(caPEM)
}

// FixtureLDIF is the directory: the sync account, n people (every tenth
// locked by the password policy, every 25th marked disabled by
// employeeType, every 7th in the auditors group by memberOf, user 3
// without mail), and, with at least 8 people, group entries of a server
// without the memberOf overlay (GroupsDN): engineers (groupOfNames, member
// DN: every 4th user), reviewers (groupOfUniqueNames, uniqueMember: users
// 5 and 6, the latter with a unique identifier suffix) and ops (posixGroup,
// memberUid: user00007 and user00008).
func FixtureLDIF(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n", Suffix)
	for _, ou := range []string{"people", "service", "groups"} {
		fmt.Fprintf(&b, "dn: ou=%s,%s\nobjectClass: organizationalUnit\nou: %s\n\n", ou, Suffix, ou)
	}
	fmt.Fprintf(&b, "dn: %s\nobjectClass: inetOrgPerson\ncn: compliance-sync\nsn: sync\nuserPassword: %s\n\n", SyncDN, SyncPassword)
	depts := []string{"Engineering", "Finance", "Sales", "Operations"}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "dn: uid=user%05d,%s\nobjectClass: inetOrgPerson\nuid: user%05d\ncn: User %d\nsn: %d\ngivenName: User\n", i, PeopleDN, i, i, i)
		fmt.Fprintf(&b, "displayName: User Number %d\ndepartmentNumber: %s\n", i, depts[i%len(depts)])
		if i != 3 {
			fmt.Fprintf(&b, "mail: User%05d@Example.test\n", i)
		}
		if i%10 == 0 {
			b.WriteString("pwdAccountLockedTime: 000001010000Z\n")
		}
		if i%25 == 0 {
			b.WriteString("employeeType: disabled\n")
		}
		if i%7 == 0 {
			fmt.Fprintf(&b, "memberOf: cn=auditors,ou=groups,%s\n", Suffix)
		}
		if i > 1 {
			fmt.Fprintf(&b, "manager: uid=user00001,%s\n", PeopleDN)
		}
		b.WriteString("\n")
	}
	if n >= 8 {
		fmt.Fprintf(&b, "dn: cn=engineers,%s\nobjectClass: groupOfNames\ncn: engineers\n", GroupsDN)
		for i := 4; i <= n; i += 4 {
			fmt.Fprintf(&b, "member: uid=user%05d,%s\n", i, PeopleDN)
		}
		fmt.Fprintf(&b, "\ndn: cn=reviewers,%[1]s\nobjectClass: groupOfUniqueNames\ncn: reviewers\nuniqueMember: uid=user00005,%[2]s\nuniqueMember: UID=User00006, %[2]s#'0101'B\n\n", GroupsDN, PeopleDN)
		fmt.Fprintf(&b, "dn: cn=ops,%s\nobjectClass: posixGroup\ncn: ops\ngidNumber: 5000\nmemberUid: user00007\nmemberUid: user00008\n\n", GroupsDN)
	}
	return []byte(b.String())
}

// Target is a connection to the server over LDAPS with the test CA.
func (s *Server) Target(vars map[string]string) app.ConnectionTarget {
	t := app.ConnectionTarget{
		Credentials: s.Credentials(),
		Variables:   map[string]string{"baseDn": PeopleDN},
	}
	for k, v := range vars {
		t.Variables[k] = v
	}
	return t
}

// Credentials are the sync account's connection credentials over LDAPS.
func (s *Server) Credentials() map[string]string {
	return map[string]string{"url": s.LDAPSURL, "bindDn": SyncDN, "bindPassword": SyncPassword, "caCertificate": s.CAPEM}
}

// Modify applies LDIF change records (changetype: modify, delete, add)
// as the directory's administrator, with ldapmodify.
func (s *Server) Modify(tb testing.TB, ldif string) {
	tb.Helper()
	bin := filepath.Join(filepath.Dir(FindSlapd(tb)), "..", "bin", "ldapmodify")
	if _, err := os.Stat(bin); err != nil {
		if p, err := exec.LookPath("ldapmodify"); err == nil {
			bin = p
		}
	}
	cmd := exec.Command(bin, "-x", "-H", s.LDAPURL, "-D", rootDN, "-w", rootPassword)
	cmd.Stdin = strings.NewReader(ldif)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("ldapmodify: %v\n%s", err, out)
	}
}

// Context is a context for one test, cancelled after a minute.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	return ctx
}
