package aws

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

type sink struct {
	mu       sync.Mutex
	outcomes []app.CheckOutcome
	logs     []string
}

func (s *sink) Outcome(o app.CheckOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, o)
}

func (s *sink) Log(level, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs = append(s.logs, level+": "+msg)
}

// tally counts outcomes by check and status.
func (s *sink) tally() map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, o := range s.outcomes {
		if out[o.CheckID] == nil {
			out[o.CheckID] = map[string]int{}
		}
		out[o.CheckID][o.Status]++
	}
	return out
}

func (s *sink) find(check, resource string) *app.CheckOutcome {
	for i := range s.outcomes {
		if s.outcomes[i].CheckID == check && s.outcomes[i].ResourceID == resource {
			return &s.outcomes[i]
		}
	}
	return nil
}

func target(f *fakeAWS) app.ConnectionTarget {
	return app.ConnectionTarget{ConnectionID: "icn_test",
		Credentials: map[string]string{"accessKeyId": "AKIAEXAMPLE0000001", "secretAccessKey": "s3cr3t-value-never-logged", "endpointUrl": f.srv.URL},
		Variables:   map[string]string{"regions": "eu-west-1"}}
}

func newProvider() *Provider {
	p := New(http.DefaultClient)
	p.Sleep = func(context.Context, time.Duration) error { return nil }
	return p
}

func want(t *testing.T, got map[string]map[string]int, check string, pass, fail, errs int) {
	t.Helper()
	g := got[check]
	if g[app.CheckPass] != pass || g[app.CheckFail] != fail || g[app.CheckError] != errs {
		t.Errorf("%s: pass %d fail %d error %d, want %d/%d/%d", check, g[app.CheckPass], g[app.CheckFail], g[app.CheckError], pass, fail, errs)
	}
}

func TestRunAllChecksAgainstFake(t *testing.T) {
	f := newFakeAWS(t)
	f.users = 250 // three ListUsers pages
	f.throttleUsers = 1
	s := &sink{}
	if err := newProvider().Run(context.Background(), target(f), nil, s); err != nil {
		t.Fatal(err)
	}
	got := s.tally()
	want(t, got, CheckRootMFA, 0, 1, 0)
	want(t, got, CheckRootAccessKeys, 0, 1, 0)
	// users 0,3,...,249 have a password (84); those divisible by 6 have MFA (42).
	want(t, got, CheckUserMFA, 250-42, 42, 0)
	want(t, got, CheckAccessKeyAge, 200, 50, 0)
	want(t, got, CheckPasswordPolicy, 0, 1, 0)
	want(t, got, CheckCloudTrailMultiRegion, 1, 0, 0)
	want(t, got, CheckCloudTrailValidation, 1, 1, 0)
	want(t, got, CheckS3AccountPublicBlock, 0, 1, 0)
	want(t, got, CheckS3BucketPublicBlock, 3, 3, 0)
	want(t, got, CheckS3BucketEncryption, 4, 2, 0)
	want(t, got, CheckEBSDefaultEncryption, 0, 1, 0)
	want(t, got, CheckSecurityGroupPorts, 6, 2, 0)
	want(t, got, CheckKMSRotation, 2, 2, 0)
	want(t, got, CheckGuardDuty, 0, 1, 0)
	if n := f.count("ListUsers"); n != 4 {
		t.Errorf("ListUsers calls %d, want 4 (one throttled, three pages)", n)
	}
	o := s.find(CheckPasswordPolicy, fakeAccount)
	if o == nil || !strings.Contains(o.Message, "minimum length 12") {
		t.Errorf("password policy outcome %+v", o)
	}
	o = s.find(CheckSecurityGroupPorts, "eu-west-1/sg-00000000")
	if o == nil || o.Status != app.CheckFail || !strings.Contains(o.Message, "22 (SSH)") {
		t.Errorf("security group outcome %+v", o)
	}
	for _, o := range s.outcomes {
		if strings.Contains(o.Message, "s3cr3t") {
			t.Fatalf("secret in outcome %+v", o)
		}
	}
}

func TestPasswordPolicyMissingAndDeniedService(t *testing.T) {
	f := newFakeAWS(t)
	f.noPolicy, f.denyEC2 = true, true
	s := &sink{}
	if err := newProvider().Run(context.Background(), target(f), []string{CheckPasswordPolicy, CheckEBSDefaultEncryption, CheckSecurityGroupPorts}, s); err != nil {
		t.Fatal(err)
	}
	got := s.tally()
	want(t, got, CheckPasswordPolicy, 0, 1, 0)
	want(t, got, CheckEBSDefaultEncryption, 0, 0, 1)
	want(t, got, CheckSecurityGroupPorts, 0, 0, 1)
	if len(got) != 3 {
		t.Errorf("checks run %v", got)
	}
	o := s.find(CheckEBSDefaultEncryption, fakeAccount)
	if o == nil || !strings.Contains(o.Message, "UnauthorizedOperation") || !strings.Contains(o.Message, "SecurityAudit") {
		t.Errorf("denied outcome %+v", o)
	}
}

func TestTestConnection(t *testing.T) {
	f := newFakeAWS(t)
	p := newProvider()
	res := p.Test(context.Background(), target(f))
	if !res.Success || res.Account != "arn:aws:iam::123456789012:user/audit" {
		t.Fatalf("test %+v", res)
	}
	f.badKey = "AKIAEXAMPLE0000001"
	res = p.Test(context.Background(), target(f))
	if res.Success || !strings.Contains(res.Message, "InvalidClientTokenId") || !strings.Contains(res.Message, "security token included in the request is invalid") {
		t.Fatalf("refused test %+v", res)
	}
	if err := p.Run(context.Background(), target(f), nil, &sink{}); err == nil || !strings.Contains(err.Error(), "InvalidClientTokenId") {
		t.Fatalf("refused run: %v", err)
	}
	tg := target(f)
	tg.Credentials["endpointUrl"] = "http://127.0.0.1:1"
	if res := p.Test(context.Background(), tg); res.Success || !strings.Contains(res.Message, "could not be reached") {
		t.Fatalf("unreachable %+v", res)
	}
}

func TestAssumeRole(t *testing.T) {
	f := newFakeAWS(t)
	tg := target(f)
	tg.Credentials["roleArn"] = "arn:aws:iam::123456789012:role/ComplianceAudit"
	tg.Credentials["externalId"] = "ext-42"
	// The long-term key may only assume the role: anything else it signs is refused.
	res := newProvider().Test(context.Background(), tg)
	if !res.Success {
		t.Fatalf("assume role test %+v", res)
	}
	if f.lastExternal != "ext-42" {
		t.Errorf("external id %q", f.lastExternal)
	}
	f.badKey = f.assumedKey
	if res := newProvider().Test(context.Background(), tg); res.Success || !strings.Contains(res.Message, "InvalidClientTokenId") {
		t.Fatalf("calls after AssumeRole must use the role's keys: %+v", res)
	}
}

func TestAllRegionsScanMode(t *testing.T) {
	f := newFakeAWS(t)
	tg := target(f)
	tg.Variables["scanMode"] = ScanAllRegions
	s := &sink{}
	if err := newProvider().Run(context.Background(), tg, []string{CheckGuardDuty}, s); err != nil {
		t.Fatal(err)
	}
	want(t, s.tally(), CheckGuardDuty, 0, 2, 0)
}

func TestValidate(t *testing.T) {
	base := func() app.ConnectionTarget {
		return app.ConnectionTarget{Credentials: map[string]string{"accessKeyId": "AKIAEXAMPLE0000001", "secretAccessKey": "x"}, Variables: map[string]string{}}
	}
	cases := []struct {
		field string
		mod   func(c *app.ConnectionTarget)
	}{
		{"variables.regions", func(c *app.ConnectionTarget) { c.Variables["regions"] = "eu-west-1, Frankfurt" }},
		{"credentials.roleArn", func(c *app.ConnectionTarget) { c.Credentials["roleArn"] = "arn:aws:iam::12:user/x" }},
		{"credentials.accessKeyId", func(c *app.ConnectionTarget) { c.Credentials["accessKeyId"] = "not a key" }},
		{"credentials.endpointUrl", func(c *app.ConnectionTarget) { c.Credentials["endpointUrl"] = "ftp://x" }},
		{"variables.scanMode", func(c *app.ConnectionTarget) { c.Variables["scanMode"] = "everything" }},
	}
	for _, tc := range cases {
		c := base()
		tc.mod(&c)
		var fe *FieldError
		if err := Validate(c); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	c := base()
	c.Variables["regions"] = "us-gov-west-1 cn-north-1 eu-central-2"
	c.Credentials["roleArn"] = "arn:aws-us-gov:iam::123456789012:role/path/Audit"
	if err := Validate(c); err != nil {
		t.Fatal(err)
	}
	if hostFor("iam", "us-gov-west-1") != "iam.us-gov.amazonaws.com" || hostFor("kms", "cn-north-1") != "kms.cn-north-1.amazonaws.com.cn" {
		t.Error("partition endpoints")
	}
}

// TestEvidencesResolve: every check's requirement references name a
// requirement of the built-in catalog, and every check is a cloud
// security check with a service.
func TestEvidencesResolve(t *testing.T) {
	cat, err := app.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]bool{}
	for _, s := range definition.Services {
		services[s.ID] = true
	}
	for _, c := range definition.Checks {
		ve := app.NewValidationError()
		cat.ValidateRequirementRefs(ve, c.ID, c.Evidences)
		if !ve.Empty() || len(c.Evidences) == 0 {
			t.Errorf("%s: %v", c.ID, ve.Fields)
		}
		if !strings.HasPrefix(c.ID, "aws.") || !c.CloudSecurity || !services[c.Service] || c.Remediation == "" {
			t.Errorf("check %+v", c)
		}
	}
}

// BenchmarkAWSRun1000 runs every check of one connection against the fake
// with 1,000 IAM users (plus 100 buckets, 200 security groups, 100 keys).
func BenchmarkAWSRun1000(b *testing.B) {
	t := &testing.T{}
	f := newFakeAWS(t)
	defer f.srv.Close()
	f.users, f.buckets, f.groups, f.keys = 1000, 100, 200, 100
	p := newProvider()
	tg := target(f)
	b.ReportAllocs()
	var fails int
	for i := 0; i < b.N; i++ {
		s := &sink{}
		if err := p.Run(context.Background(), tg, nil, s); err != nil {
			b.Fatal(err)
		}
		fails = 0
		for _, o := range s.outcomes {
			if o.Status == app.CheckFail {
				fails++
			}
		}
	}
	b.ReportMetric(float64(fails), "failing-resources")
	b.ReportMetric(float64(f.calls.Load())/float64(b.N), "requests/run")
}
