package aws

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAWS is an AWS account on a loopback server speaking the services'
// wire protocols: the query protocol with XML answers and <ErrorResponse>
// errors (IAM, STS, EC2 with its <Response><Errors>), S3 and S3 Control
// REST-XML, KMS and CloudTrail JSON 1.1 (X-Amz-Target), GuardDuty
// REST-JSON. Every request must carry a SigV4 Authorization header; the
// service is read from its credential scope.
type fakeAWS struct {
	t   *testing.T
	srv *httptest.Server

	mu            sync.Mutex
	users         int  // IAM users; user i has a password when i%3==0, MFA when i%6==0, an old key when i%5==0
	throttleUsers int  // ListUsers answers Throttling this many times first
	noPolicy      bool // GetAccountPasswordPolicy: NoSuchEntity
	denyEC2       bool // EC2 answers UnauthorizedOperation
	badKey        string
	assumedKey    string
	groups        int // security groups per region; every 4th opens 22 to 0.0.0.0/0
	buckets       int // every 2nd bucket has no public access block, every 3rd no encryption
	keys          int // KMS customer keys; every 2nd rotates
	calls         atomic.Int64
	byAction      sync.Map // action -> *atomic.Int64
	lastExternal  string
}

var scopeRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$`)

const fakeAccount = "123456789012"

func newFakeAWS(t *testing.T) *fakeAWS {
	f := &fakeAWS{t: t, users: 10, groups: 8, buckets: 6, keys: 4, assumedKey: "ASIAASSUMED0000001"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func fixture(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fakeAWS) count(action string) int64 {
	v, _ := f.byAction.LoadOrStore(action, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (f *fakeAWS) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	m := scopeRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil || r.Header.Get("X-Amz-Date") == "" {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<ErrorResponse><Error><Type>Sender</Type><Code>MissingAuthenticationToken</Code><Message>Request is missing Authentication Token</Message></Error></ErrorResponse>`)
		return
	}
	key, service := m[1], m[3]
	if key == f.badKey {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, fixture(f.t, "error_invalid_client_token.xml"))
		return
	}
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		f.jsonService(w, r, target)
		return
	}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		action := form.Get("Action")
		v, _ := f.byAction.LoadOrStore(action, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		f.query(w, service, action, form)
		return
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/v20180820/configuration/publicAccessBlock"):
		if r.Header.Get("X-Amz-Account-Id") != fakeAccount {
			http.Error(w, "account id header", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, fixture(f.t, "s3_no_public_access_block.xml"), "")
	case strings.HasPrefix(r.URL.Path, "/detector"):
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/detector" {
			fmt.Fprint(w, `{"detectorIds":["12abc34d567e8fa901bc2d34eexample"]}`)
			return
		}
		fmt.Fprint(w, `{"createdAt":"2024-01-01T00:00:00.000Z","findingPublishingFrequency":"SIX_HOURS","serviceRole":"arn:aws:iam::123456789012:role/aws-service-role/guardduty.amazonaws.com/AWSServiceRoleForAmazonGuardDuty","status":"DISABLED","updatedAt":"2024-01-01T00:00:00.000Z"}`)
	case r.URL.Path == "/":
		f.listBuckets(w, r)
	default:
		f.bucket(w, r)
	}
}

func (f *fakeAWS) listBuckets(w http.ResponseWriter, r *http.Request) {
	per := 4
	start, _ := strconv.Atoi(r.URL.Query().Get("continuation-token"))
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>abc</ID></Owner><Buckets>`)
	end := min(start+per, f.buckets)
	for i := start; i < end; i++ {
		fmt.Fprintf(&b, `<Bucket><Name>bucket-%03d</Name><CreationDate>2024-01-01T00:00:00.000Z</CreationDate><BucketRegion>eu-west-1</BucketRegion></Bucket>`, i)
	}
	b.WriteString(`</Buckets>`)
	if end < f.buckets {
		fmt.Fprintf(&b, `<ContinuationToken>%d</ContinuationToken>`, end)
	}
	b.WriteString(`</ListAllMyBucketsResult>`)
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprint(w, b.String())
}

func (f *fakeAWS) bucket(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	var i int
	if _, err := fmt.Sscanf(name, "bucket-%d", &i); err != nil {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>`)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	q := r.URL.Query()
	switch {
	case q.Has("publicAccessBlock"):
		if i%2 == 1 {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, fixture(f.t, "s3_no_public_access_block.xml"), name)
			return
		}
		fmt.Fprint(w, `<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>true</IgnorePublicAcls><BlockPublicPolicy>true</BlockPublicPolicy><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>`)
	case q.Has("encryption"):
		if i%3 == 2 {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, fixture(f.t, "s3_no_encryption.xml"), name)
			return
		}
		fmt.Fprint(w, `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm><KMSMasterKeyID>arn:aws:kms:eu-west-1:123456789012:key/x</KMSMasterKeyID></ApplyServerSideEncryptionByDefault><BucketKeyEnabled>true</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>`)
	default:
		http.Error(w, "unknown sub-resource", http.StatusBadRequest)
	}
}

func (f *fakeAWS) xml(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func wrap(action, ns, result string) string {
	return fmt.Sprintf(`<%sResponse xmlns="%s"><%sResult>%s</%sResult><ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></%sResponse>`,
		action, ns, action, result, action, action)
}

func (f *fakeAWS) query(w http.ResponseWriter, service, action string, form url.Values) {
	const iamNS, stsNS, ec2NS = "https://iam.amazonaws.com/doc/2010-05-08/", "https://sts.amazonaws.com/doc/2011-06-15/", "http://ec2.amazonaws.com/doc/2016-11-15/"
	userIndex := func() int {
		var i int
		fmt.Sscanf(form.Get("UserName"), "user-%d", &i)
		return i
	}
	switch service + "/" + action {
	case "sts/GetCallerIdentity":
		f.xml(w, 200, wrap(action, stsNS, `<Arn>arn:aws:iam::123456789012:user/audit</Arn><UserId>AIDAEXAMPLE</UserId><Account>123456789012</Account>`))
	case "sts/AssumeRole":
		f.mu.Lock()
		f.lastExternal = form.Get("ExternalId")
		f.mu.Unlock()
		f.xml(w, 200, wrap(action, stsNS, `<Credentials><AccessKeyId>`+f.assumedKey+`</AccessKeyId><SecretAccessKey>assumedsecret</SecretAccessKey><SessionToken>token</SessionToken><Expiration>2030-01-01T00:00:00Z</Expiration></Credentials><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/Audit/compliance-appliance</Arn><AssumedRoleId>AROA:x</AssumedRoleId></AssumedRoleUser>`))
	case "iam/GetAccountSummary":
		f.xml(w, 200, fixture(f.t, "get_account_summary.xml"))
	case "iam/GetAccountPasswordPolicy":
		if f.noPolicy {
			f.xml(w, 404, fmt.Sprintf(fixture(f.t, "error_no_such_entity.xml"), "The Password Policy with domain name 123456789012 cannot be found."))
			return
		}
		f.xml(w, 200, fixture(f.t, "get_account_password_policy.xml"))
	case "iam/ListUsers":
		f.mu.Lock()
		throttle := f.throttleUsers > 0
		if throttle {
			f.throttleUsers--
		}
		f.mu.Unlock()
		if throttle {
			f.xml(w, 400, fixture(f.t, "error_throttling.xml"))
			return
		}
		per := 100
		start := 0
		if m := form.Get("Marker"); m != "" {
			start, _ = strconv.Atoi(strings.TrimPrefix(m, "mk-"))
		}
		end := min(start+per, f.users)
		var b strings.Builder
		b.WriteString("<Users>")
		for i := start; i < end; i++ {
			fmt.Fprintf(&b, `<member><Path>/</Path><UserName>user-%d</UserName><UserId>AIDA%016d</UserId><Arn>arn:aws:iam::123456789012:user/user-%d</Arn><CreateDate>2020-01-01T00:00:00Z</CreateDate></member>`, i, i, i)
		}
		b.WriteString("</Users>")
		if end < f.users {
			fmt.Fprintf(&b, "<IsTruncated>true</IsTruncated><Marker>mk-%d</Marker>", end)
		} else {
			b.WriteString("<IsTruncated>false</IsTruncated>")
		}
		f.xml(w, 200, wrap(action, iamNS, b.String()))
	case "iam/GetLoginProfile":
		if userIndex()%3 != 0 {
			f.xml(w, 404, fmt.Sprintf(fixture(f.t, "error_no_such_entity.xml"), "Login Profile for User "+form.Get("UserName")+" cannot be found."))
			return
		}
		f.xml(w, 200, wrap(action, iamNS, `<LoginProfile><UserName>`+form.Get("UserName")+`</UserName><CreateDate>2021-01-01T00:00:00Z</CreateDate><PasswordResetRequired>false</PasswordResetRequired></LoginProfile>`))
	case "iam/ListMFADevices":
		dev := ""
		if userIndex()%6 == 0 {
			dev = `<member><UserName>` + form.Get("UserName") + `</UserName><SerialNumber>arn:aws:iam::123456789012:mfa/x</SerialNumber><EnableDate>2021-01-01T00:00:00Z</EnableDate></member>`
		}
		f.xml(w, 200, wrap(action, iamNS, `<MFADevices>`+dev+`</MFADevices><IsTruncated>false</IsTruncated>`))
	case "iam/ListAccessKeys":
		created := time.Now().Add(-10 * 24 * time.Hour)
		if userIndex()%5 == 0 {
			created = time.Now().Add(-200 * 24 * time.Hour)
		}
		f.xml(w, 200, wrap(action, iamNS, fmt.Sprintf(`<AccessKeyMetadata><member><UserName>%s</UserName><AccessKeyId>AKIA%016d</AccessKeyId><Status>Active</Status><CreateDate>%s</CreateDate></member><member><UserName>%s</UserName><AccessKeyId>AKIAINACTIVE0000000</AccessKeyId><Status>Inactive</Status><CreateDate>2015-01-01T00:00:00Z</CreateDate></member></AccessKeyMetadata><IsTruncated>false</IsTruncated>`,
			form.Get("UserName"), userIndex(), created.UTC().Format(time.RFC3339), form.Get("UserName"))))
	case "ec2/DescribeRegions":
		f.xml(w, 200, `<DescribeRegionsResponse xmlns="`+ec2NS+`"><requestId>r</requestId><regionInfo><item><regionName>eu-west-1</regionName><regionEndpoint>ec2.eu-west-1.amazonaws.com</regionEndpoint><optInStatus>opt-in-not-required</optInStatus></item><item><regionName>us-east-1</regionName><regionEndpoint>ec2.us-east-1.amazonaws.com</regionEndpoint><optInStatus>opt-in-not-required</optInStatus></item></regionInfo></DescribeRegionsResponse>`)
	case "ec2/GetEbsEncryptionByDefault":
		if f.denyEC2 {
			f.xml(w, 403, fixture(f.t, "ec2_error_unauthorized.xml"))
			return
		}
		f.xml(w, 200, `<GetEbsEncryptionByDefaultResponse xmlns="`+ec2NS+`"><requestId>r</requestId><ebsEncryptionByDefault>false</ebsEncryptionByDefault><sseType>sse-ebs</sseType></GetEbsEncryptionByDefaultResponse>`)
	case "ec2/DescribeSecurityGroups":
		if f.denyEC2 {
			f.xml(w, 403, fixture(f.t, "ec2_error_unauthorized.xml"))
			return
		}
		start, _ := strconv.Atoi(form.Get("NextToken"))
		end := min(start+5, f.groups)
		var b strings.Builder
		for i := start; i < end; i++ {
			cidr, port := "10.0.0.0/8", 22
			if i%4 == 0 {
				cidr = "0.0.0.0/0"
			}
			if i%4 == 1 {
				cidr, port = "0.0.0.0/0", 443
			}
			fmt.Fprintf(&b, `<item><ownerId>123456789012</ownerId><groupId>sg-%08d</groupId><groupName>group-%d</groupName><groupDescription>d</groupDescription><vpcId>vpc-1</vpcId><ipPermissions><item><ipProtocol>tcp</ipProtocol><fromPort>%d</fromPort><toPort>%d</toPort><groups/><ipRanges><item><cidrIp>%s</cidrIp></item></ipRanges><ipv6Ranges/><prefixListIds/></item></ipPermissions><ipPermissionsEgress/></item>`, i, i, port, port, cidr)
		}
		next := ""
		if end < f.groups {
			next = fmt.Sprintf("<nextToken>%d</nextToken>", end)
		}
		f.xml(w, 200, `<DescribeSecurityGroupsResponse xmlns="`+ec2NS+`"><requestId>r</requestId><securityGroupInfo>`+b.String()+`</securityGroupInfo>`+next+`</DescribeSecurityGroupsResponse>`)
	default:
		f.xml(w, 400, `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>Could not find operation `+action+` for service `+service+`</Message></Error></ErrorResponse>`)
	}
}

func (f *fakeAWS) jsonService(w http.ResponseWriter, r *http.Request, target string) {
	if r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		http.Error(w, "content type", http.StatusBadRequest)
		return
	}
	var in map[string]any
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	op := target[strings.LastIndexByte(target, '.')+1:]
	switch target {
	case "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.DescribeTrails":
		fmt.Fprint(w, fixture(f.t, "describe_trails.json"))
	case "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.GetTrailStatus":
		fmt.Fprint(w, `{"IsLogging":true,"LatestDeliveryTime":1.7e9}`)
	case "TrentService.ListKeys":
		start := 0
		if m, ok := in["Marker"].(string); ok {
			start, _ = strconv.Atoi(m)
		}
		end := min(start+3, f.keys+1)
		var keys []map[string]string
		for i := start; i < end; i++ {
			keys = append(keys, map[string]string{"KeyId": fmt.Sprintf("key-%d", i), "KeyArn": fmt.Sprintf("arn:aws:kms:eu-west-1:123456789012:key/key-%d", i)})
		}
		out := map[string]any{"Keys": keys, "Truncated": end < f.keys+1}
		if end < f.keys+1 {
			out["NextMarker"] = strconv.Itoa(end)
		}
		_ = json.NewEncoder(w).Encode(out)
	case "TrentService.DescribeKey":
		id, _ := in["KeyId"].(string)
		manager := "CUSTOMER"
		if id == fmt.Sprintf("key-%d", f.keys) {
			manager = "AWS" // one AWS-managed key, skipped
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyMetadata": map[string]any{"KeyId": id, "KeyManager": manager, "KeyState": "Enabled", "KeySpec": "SYMMETRIC_DEFAULT", "Origin": "AWS_KMS"}})
	case "TrentService.GetKeyRotationStatus":
		id, _ := in["KeyId"].(string)
		var i int
		fmt.Sscanf(id, "key-%d", &i)
		_ = json.NewEncoder(w).Encode(map[string]any{"KeyRotationEnabled": i%2 == 0})
	default:
		w.Header().Set("X-Amzn-Errortype", "UnknownOperationException")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"com.amazon.coral.service#UnknownOperationException","message":"%s"}`, op)
	}
}
