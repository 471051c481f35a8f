package aws

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/integrations/internal/checkrun"
)

// maxPages bounds every listing (a service that keeps answering a next
// token ends the listing with an error instead of looping).
const maxPages = 1000

// allRegions lists the regions enabled in the account.
func (r *run) allRegions(ctx context.Context) ([]string, error) {
	var v struct {
		Regions []struct {
			Name string `xml:"regionName"`
		} `xml:"regionInfo>item"`
	}
	if err := r.cl.query(ctx, "ec2", r.cfg.regions[0], ec2Version, "DescribeRegions", nil, &v); err != nil {
		return nil, err
	}
	var out []string
	for _, x := range v.Regions {
		if ValidRegion(x.Name) {
			out = append(out, x.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ec2 DescribeRegions listed no region")
	}
	sort.Strings(out)
	return out, nil
}

func (r *run) home() string { return r.regions[0] }

// IAM

func (r *run) accountSummary(ctx context.Context) {
	var v struct {
		Entries []struct {
			Key   string `xml:"key"`
			Value int    `xml:"value"`
		} `xml:"GetAccountSummaryResult>SummaryMap>entry"`
	}
	if err := r.cl.query(ctx, "iam", r.home(), iamVersion, "GetAccountSummary", nil, &v); err != nil {
		r.errorOn(CheckRootMFA, r.scope, err)
		r.errorOn(CheckRootAccessKeys, r.scope, err)
		return
	}
	m := map[string]int{}
	for _, e := range v.Entries {
		m[e.Key] = e.Value
	}
	root := checkrun.Resource{Type: "root_user", ID: "root:" + r.account, Name: "root user of " + r.account}
	if _, ok := m["AccountMFAEnabled"]; !ok {
		r.ErrorMsg(CheckRootMFA, root, "IAM GetAccountSummary did not include AccountMFAEnabled", nil)
	} else if m["AccountMFAEnabled"] == 1 {
		r.Pass(CheckRootMFA, root, "the root user has MFA enabled", map[string]any{"accountMfaEnabled": true})
	} else {
		r.Fail(CheckRootMFA, root, "the root user has no MFA device", map[string]any{"accountMfaEnabled": false})
	}
	if n := m["AccountAccessKeysPresent"]; n > 0 {
		r.Fail(CheckRootAccessKeys, root, "the root user has access keys", map[string]any{"accountAccessKeysPresent": n})
	} else {
		r.Pass(CheckRootAccessKeys, root, "the root user has no access keys", map[string]any{"accountAccessKeysPresent": 0})
	}
}

func (r *run) passwordPolicy(ctx context.Context) {
	var v struct {
		Policy struct {
			MinLength      int  `xml:"MinimumPasswordLength"`
			Reuse          int  `xml:"PasswordReusePrevention"`
			RequireSymbols bool `xml:"RequireSymbols"`
			RequireNumbers bool `xml:"RequireNumbers"`
			RequireUpper   bool `xml:"RequireUppercaseCharacters"`
			RequireLower   bool `xml:"RequireLowercaseCharacters"`
			MaxAge         int  `xml:"MaxPasswordAge"`
		} `xml:"GetAccountPasswordPolicyResult>PasswordPolicy"`
	}
	err := r.cl.query(ctx, "iam", r.home(), iamVersion, "GetAccountPasswordPolicy", nil, &v)
	if Code(err) == "NoSuchEntity" {
		r.Fail(CheckPasswordPolicy, r.scope, "the account has no password policy (IAM's defaults apply: 8 characters, reuse allowed)", map[string]any{"policy": nil})
		return
	}
	if err != nil {
		r.errorOn(CheckPasswordPolicy, r.scope, err)
		return
	}
	pol := v.Policy
	details := map[string]any{"minimumPasswordLength": pol.MinLength, "passwordReusePrevention": pol.Reuse,
		"requireSymbols": pol.RequireSymbols, "requireNumbers": pol.RequireNumbers, "requireUppercase": pol.RequireUpper,
		"requireLowercase": pol.RequireLower, "maxPasswordAge": pol.MaxAge}
	var weak []string
	if pol.MinLength < 14 {
		weak = append(weak, fmt.Sprintf("minimum length %d (needs 14)", pol.MinLength))
	}
	if pol.Reuse < 24 {
		weak = append(weak, fmt.Sprintf("reuse prevention %d (needs 24)", pol.Reuse))
	}
	if len(weak) > 0 {
		r.Fail(CheckPasswordPolicy, r.scope, "the password policy is weak: "+strings.Join(weak, ", "), details)
		return
	}
	r.Pass(CheckPasswordPolicy, r.scope, fmt.Sprintf("minimum length %d, reuse prevention %d", pol.MinLength, pol.Reuse), details)
}

type iamUser struct {
	Name string `xml:"UserName"`
	ID   string `xml:"UserId"`
	Arn  string `xml:"Arn"`
}

// listUsers pages through IAM ListUsers (IsTruncated/Marker).
func (r *run) listUsers(ctx context.Context) ([]iamUser, error) {
	var all []iamUser
	marker := ""
	for page := 0; ; page++ {
		if page >= maxPages {
			return all, fmt.Errorf("iam ListUsers still had more after %d pages", maxPages)
		}
		params := url.Values{"MaxItems": {"1000"}}
		if marker != "" {
			params.Set("Marker", marker)
		}
		var v struct {
			Users     []iamUser `xml:"ListUsersResult>Users>member"`
			Truncated bool      `xml:"ListUsersResult>IsTruncated"`
			Marker    string    `xml:"ListUsersResult>Marker"`
		}
		if err := r.cl.query(ctx, "iam", r.home(), iamVersion, "ListUsers", params, &v); err != nil {
			return all, err
		}
		all = append(all, v.Users...)
		if !v.Truncated {
			return all, nil
		}
		if v.Marker == "" || v.Marker == marker {
			return all, fmt.Errorf("iam ListUsers answered a truncated page without a new marker")
		}
		marker = v.Marker
	}
}

func (r *run) users(ctx context.Context) {
	users, err := r.listUsers(ctx)
	if err != nil {
		r.errorOn(CheckUserMFA, r.scope, err)
		r.errorOn(CheckAccessKeyAge, r.scope, err)
		return
	}
	r.Log("info", fmt.Sprintf("%d IAM users", len(users)))
	now := r.p.now()
	checkrun.Each(r.p.Concurrency, users, func(u iamUser) {
		if ctx.Err() != nil {
			return
		}
		res := checkrun.Resource{Type: "iam_user", ID: u.Arn, Name: u.Name}
		if res.ID == "" {
			res.ID = "user:" + u.Name
		}
		if r.Selected(CheckUserMFA) && !r.Ended(CheckUserMFA) {
			r.userMFA(ctx, u, res)
		}
		if r.Selected(CheckAccessKeyAge) && !r.Ended(CheckAccessKeyAge) {
			r.keyAge(ctx, u, res, now)
		}
	})
	if ctx.Err() != nil {
		r.End(CheckUserMFA, fmt.Errorf("run stopped before every IAM user was checked"))
		r.End(CheckAccessKeyAge, fmt.Errorf("run stopped before every IAM user was checked"))
	}
}

func (r *run) userMFA(ctx context.Context, u iamUser, res checkrun.Resource) {
	var lp struct {
		Created string `xml:"GetLoginProfileResult>LoginProfile>CreateDate"`
	}
	err := r.cl.query(ctx, "iam", r.home(), iamVersion, "GetLoginProfile", url.Values{"UserName": {u.Name}}, &lp)
	if Code(err) == "NoSuchEntity" {
		r.Pass(CheckUserMFA, res, u.Name+" has no console password", map[string]any{"consolePassword": false})
		return
	}
	if err != nil {
		r.errorOn(CheckUserMFA, res, err)
		return
	}
	var mfa struct {
		Devices []struct {
			Serial string `xml:"SerialNumber"`
		} `xml:"ListMFADevicesResult>MFADevices>member"`
	}
	if err := r.cl.query(ctx, "iam", r.home(), iamVersion, "ListMFADevices", url.Values{"UserName": {u.Name}}, &mfa); err != nil {
		r.errorOn(CheckUserMFA, res, err)
		return
	}
	if len(mfa.Devices) == 0 {
		r.Fail(CheckUserMFA, res, u.Name+" can sign in to the console without MFA", map[string]any{"consolePassword": true, "mfaDevices": 0})
		return
	}
	r.Pass(CheckUserMFA, res, fmt.Sprintf("%s has %d MFA device(s)", u.Name, len(mfa.Devices)), map[string]any{"consolePassword": true, "mfaDevices": len(mfa.Devices)})
}

func (r *run) keyAge(ctx context.Context, u iamUser, res checkrun.Resource, now time.Time) {
	var v struct {
		Keys []struct {
			ID      string `xml:"AccessKeyId"`
			Status  string `xml:"Status"`
			Created string `xml:"CreateDate"`
		} `xml:"ListAccessKeysResult>AccessKeyMetadata>member"`
	}
	if err := r.cl.query(ctx, "iam", r.home(), iamVersion, "ListAccessKeys", url.Values{"UserName": {u.Name}}, &v); err != nil {
		r.errorOn(CheckAccessKeyAge, res, err)
		return
	}
	var old []string
	active := 0
	for _, k := range v.Keys {
		if k.Status != "Active" {
			continue
		}
		active++
		t, err := time.Parse(time.RFC3339, k.Created)
		if err != nil {
			r.ErrorMsg(CheckAccessKeyAge, res, fmt.Sprintf("access key %s has an unreadable creation date %q", k.ID, k.Created), nil)
			return
		}
		if days := int(now.Sub(t).Hours() / 24); days > MaxKeyAgeDays {
			old = append(old, fmt.Sprintf("%s (%d days)", k.ID, days))
		}
	}
	details := map[string]any{"activeKeys": active, "oldKeys": old, "maxAgeDays": MaxKeyAgeDays}
	if len(old) > 0 {
		r.Fail(CheckAccessKeyAge, res, u.Name+" has access keys older than 90 days: "+strings.Join(old, ", "), details)
		return
	}
	r.Pass(CheckAccessKeyAge, res, fmt.Sprintf("%s has %d active access key(s), none older than 90 days", u.Name, active), details)
}

// CloudTrail

func (r *run) cloudTrail(ctx context.Context) {
	region := r.home()
	var v struct {
		Trails []struct {
			Name        string `json:"Name"`
			ARN         string `json:"TrailARN"`
			HomeRegion  string `json:"HomeRegion"`
			MultiRegion bool   `json:"IsMultiRegionTrail"`
			Validation  bool   `json:"LogFileValidationEnabled"`
		} `json:"trailList"`
	}
	const prefix = "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101."
	if err := r.cl.jsonTarget(ctx, "cloudtrail", region, prefix+"DescribeTrails", map[string]any{"includeShadowTrails": true}, &v); err != nil {
		r.errorOn(CheckCloudTrailMultiRegion, r.scope, err)
		r.errorOn(CheckCloudTrailValidation, r.scope, err)
		return
	}
	logging := []string{}
	seen := map[string]bool{}
	for _, t := range v.Trails {
		if seen[t.ARN] {
			continue
		}
		seen[t.ARN] = true
		res := checkrun.Resource{Type: "trail", ID: t.ARN, Name: t.Name}
		if t.Validation {
			r.Pass(CheckCloudTrailValidation, res, t.Name+" validates its log files", map[string]any{"logFileValidationEnabled": true})
		} else {
			r.Fail(CheckCloudTrailValidation, res, t.Name+" does not validate its log files", map[string]any{"logFileValidationEnabled": false})
		}
		if !t.MultiRegion || !r.Selected(CheckCloudTrailMultiRegion) {
			continue
		}
		home := t.HomeRegion
		if home == "" || !ValidRegion(home) {
			home = region
		}
		var st struct {
			IsLogging bool `json:"IsLogging"`
		}
		if err := r.cl.jsonTarget(ctx, "cloudtrail", home, prefix+"GetTrailStatus", map[string]any{"Name": t.ARN}, &st); err != nil {
			r.Log("warn", fmt.Sprintf("reading the status of trail %s: %v", t.Name, err))
			continue
		}
		if st.IsLogging {
			logging = append(logging, t.Name)
		}
	}
	if len(v.Trails) == 0 {
		r.Fail(CheckCloudTrailValidation, r.scope, "the account has no CloudTrail trail", nil)
	}
	details := map[string]any{"trails": len(seen), "multiRegionLogging": logging}
	if len(logging) > 0 {
		r.Pass(CheckCloudTrailMultiRegion, r.scope, "multi-region trail logging: "+strings.Join(logging, ", "), details)
	} else {
		r.Fail(CheckCloudTrailMultiRegion, r.scope, "no multi-region trail is logging", details)
	}
}

// S3

type publicAccessBlock struct {
	BlockPublicAcls       bool `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool `xml:"RestrictPublicBuckets"`
}

func (b publicAccessBlock) all() bool {
	return b.BlockPublicAcls && b.IgnorePublicAcls && b.BlockPublicPolicy && b.RestrictPublicBuckets
}

func (b publicAccessBlock) details() map[string]any {
	return map[string]any{"blockPublicAcls": b.BlockPublicAcls, "ignorePublicAcls": b.IgnorePublicAcls,
		"blockPublicPolicy": b.BlockPublicPolicy, "restrictPublicBuckets": b.RestrictPublicBuckets}
}

type bucket struct {
	Name   string `xml:"Name"`
	Region string `xml:"BucketRegion"`
}

func (r *run) listBuckets(ctx context.Context) ([]bucket, error) {
	var all []bucket
	token := ""
	for page := 0; page < maxPages; page++ {
		q := url.Values{"max-buckets": {"1000"}}
		if token != "" {
			q.Set("continuation-token", token)
		}
		b, _, err := r.cl.rest(ctx, "s3", r.home(), "", http.MethodGet, "/", q, nil, false)
		if err != nil {
			return all, err
		}
		var v struct {
			Buckets []bucket `xml:"Buckets>Bucket"`
			Token   string   `xml:"ContinuationToken"`
		}
		if err := xml.Unmarshal(b, &v); err != nil {
			return all, fmt.Errorf("s3 ListBuckets answered XML that could not be read: %w", err)
		}
		all = append(all, v.Buckets...)
		if v.Token == "" {
			return all, nil
		}
		if v.Token == token {
			return all, fmt.Errorf("s3 ListBuckets answered the same continuation token twice")
		}
		token = v.Token
	}
	return all, fmt.Errorf("s3 ListBuckets still had more after %d pages", maxPages)
}

// bucketGet reads a bucket sub-resource in the bucket's region, following
// S3's PermanentRedirect to the region it names.
func (r *run) bucketGet(ctx context.Context, b bucket, sub string) ([]byte, error) {
	region := b.Region
	if region == "" || !ValidRegion(region) {
		region = r.home()
	}
	path := "/" + url.PathEscape(b.Name)
	body, h, err := r.cl.rest(ctx, "s3", region, "", http.MethodGet, path, url.Values{sub: {""}}, nil, false)
	if err != nil && h != nil {
		if other := h.Get("X-Amz-Bucket-Region"); other != "" && other != region && ValidRegion(other) {
			body, _, err = r.cl.rest(ctx, "s3", other, "", http.MethodGet, path, url.Values{sub: {""}}, nil, false)
		}
	}
	return body, err
}

func (r *run) s3(ctx context.Context) {
	var account publicAccessBlock
	accountSet := false
	body, _, err := r.cl.rest(ctx, "s3-control", r.home(), r.account+".", http.MethodGet, "/v20180820/configuration/publicAccessBlock", nil,
		http.Header{"X-Amz-Account-Id": {r.account}}, false)
	switch {
	case Code(err) == "NoSuchPublicAccessBlockConfiguration":
		r.Fail(CheckS3AccountPublicBlock, r.scope, "the account has no S3 Block Public Access settings", map[string]any{"configured": false})
	case err != nil:
		r.errorOn(CheckS3AccountPublicBlock, r.scope, err)
	default:
		if err := xml.Unmarshal(body, &account); err != nil {
			r.ErrorMsg(CheckS3AccountPublicBlock, r.scope, "s3control GetPublicAccessBlock answered XML that could not be read", nil)
			break
		}
		accountSet = true
		if account.all() {
			r.Pass(CheckS3AccountPublicBlock, r.scope, "all four account-level Block Public Access settings are on", account.details())
		} else {
			r.Fail(CheckS3AccountPublicBlock, r.scope, "some account-level Block Public Access settings are off", account.details())
		}
	}
	if !r.Selected(CheckS3BucketPublicBlock, CheckS3BucketEncryption) {
		return
	}
	buckets, err := r.listBuckets(ctx)
	if err != nil {
		r.errorOn(CheckS3BucketPublicBlock, r.scope, err)
		r.errorOn(CheckS3BucketEncryption, r.scope, err)
		return
	}
	r.Log("info", fmt.Sprintf("%d S3 buckets", len(buckets)))
	checkrun.Each(r.p.Concurrency, buckets, func(b bucket) {
		if ctx.Err() != nil {
			return
		}
		res := checkrun.Resource{Type: "bucket", ID: "arn:aws:s3:::" + b.Name, Name: b.Name}
		if r.Selected(CheckS3BucketPublicBlock) && !r.Ended(CheckS3BucketPublicBlock) {
			r.bucketPublic(ctx, b, res, accountSet && account.all())
		}
		if r.Selected(CheckS3BucketEncryption) && !r.Ended(CheckS3BucketEncryption) {
			r.bucketEncryption(ctx, b, res)
		}
	})
}

func (r *run) bucketPublic(ctx context.Context, b bucket, res checkrun.Resource, accountBlocks bool) {
	body, err := r.bucketGet(ctx, b, "publicAccessBlock")
	var pab publicAccessBlock
	switch {
	case Code(err) == "NoSuchPublicAccessBlockConfiguration":
	case err != nil:
		r.errorOn(CheckS3BucketPublicBlock, res, err)
		return
	default:
		if err := xml.Unmarshal(body, &pab); err != nil {
			r.ErrorMsg(CheckS3BucketPublicBlock, res, "s3 GetPublicAccessBlock answered XML that could not be read", nil)
			return
		}
	}
	details := pab.details()
	details["accountLevelBlocks"] = accountBlocks
	switch {
	case pab.all():
		r.Pass(CheckS3BucketPublicBlock, res, b.Name+" blocks all public access", details)
	case accountBlocks:
		r.Pass(CheckS3BucketPublicBlock, res, b.Name+" is covered by the account-level Block Public Access settings", details)
	default:
		r.Fail(CheckS3BucketPublicBlock, res, b.Name+" does not block all public access", details)
	}
}

func (r *run) bucketEncryption(ctx context.Context, b bucket, res checkrun.Resource) {
	body, err := r.bucketGet(ctx, b, "encryption")
	if Code(err) == "ServerSideEncryptionConfigurationNotFoundError" {
		r.Fail(CheckS3BucketEncryption, res, b.Name+" has no default encryption", map[string]any{"sseAlgorithm": nil})
		return
	}
	if err != nil {
		r.errorOn(CheckS3BucketEncryption, res, err)
		return
	}
	var v struct {
		Algorithms []string `xml:"Rule>ApplyServerSideEncryptionByDefault>SSEAlgorithm"`
	}
	if err := xml.Unmarshal(body, &v); err != nil || len(v.Algorithms) == 0 {
		r.Fail(CheckS3BucketEncryption, res, b.Name+" has no default encryption rule", map[string]any{"sseAlgorithm": nil})
		return
	}
	r.Pass(CheckS3BucketEncryption, res, b.Name+" encrypts by default with "+v.Algorithms[0], map[string]any{"sseAlgorithm": v.Algorithms[0]})
}

// EC2

func (r *run) ebs(ctx context.Context) {
	for _, region := range r.regions {
		var v struct {
			Enabled bool `xml:"ebsEncryptionByDefault"`
		}
		res := regionResource(region)
		if err := r.cl.query(ctx, "ec2", region, ec2Version, "GetEbsEncryptionByDefault", nil, &v); err != nil {
			r.errorOn(CheckEBSDefaultEncryption, res, err)
			continue
		}
		if v.Enabled {
			r.Pass(CheckEBSDefaultEncryption, res, "new EBS volumes are encrypted by default in "+region, map[string]any{"ebsEncryptionByDefault": true})
		} else {
			r.Fail(CheckEBSDefaultEncryption, res, "new EBS volumes are not encrypted by default in "+region, map[string]any{"ebsEncryptionByDefault": false})
		}
	}
}

type ipPermission struct {
	Protocol string `xml:"ipProtocol"`
	FromPort *int   `xml:"fromPort"`
	ToPort   *int   `xml:"toPort"`
	V4       []struct {
		CIDR string `xml:"cidrIp"`
	} `xml:"ipRanges>item"`
	V6 []struct {
		CIDR string `xml:"cidrIpv6"`
	} `xml:"ipv6Ranges>item"`
}

type securityGroup struct {
	ID          string         `xml:"groupId"`
	Name        string         `xml:"groupName"`
	VPC         string         `xml:"vpcId"`
	Permissions []ipPermission `xml:"ipPermissions>item"`
}

// openAdminPorts lists the admin and database ports a group opens to the
// whole internet.
func openAdminPorts(g securityGroup) []string {
	var out []string
	seen := map[int]bool{}
	for _, p := range g.Permissions {
		world := false
		for _, x := range p.V4 {
			world = world || x.CIDR == "0.0.0.0/0"
		}
		for _, x := range p.V6 {
			world = world || x.CIDR == "::/0"
		}
		if !world || (p.Protocol != "tcp" && p.Protocol != "-1" && p.Protocol != "6") {
			continue
		}
		for port, name := range AdminPorts {
			covered := p.Protocol == "-1" || p.FromPort == nil || p.ToPort == nil ||
				(*p.FromPort <= port && port <= *p.ToPort) || (*p.FromPort == -1)
			if covered && !seen[port] {
				seen[port] = true
				out = append(out, fmt.Sprintf("%d (%s)", port, name))
			}
		}
	}
	sort.Strings(out)
	return out
}

func (r *run) securityGroups(ctx context.Context) {
	for _, region := range r.regions {
		token := ""
		for page := 0; ; page++ {
			if page >= maxPages {
				r.ErrorMsg(CheckSecurityGroupPorts, regionResource(region), "ec2 DescribeSecurityGroups still had more after the page limit", nil)
				break
			}
			params := url.Values{"MaxResults": {"1000"}}
			if token != "" {
				params.Set("NextToken", token)
			}
			var v struct {
				Groups []securityGroup `xml:"securityGroupInfo>item"`
				Next   string          `xml:"nextToken"`
			}
			if err := r.cl.query(ctx, "ec2", region, ec2Version, "DescribeSecurityGroups", params, &v); err != nil {
				r.errorOn(CheckSecurityGroupPorts, regionResource(region), err)
				break
			}
			for _, g := range v.Groups {
				res := checkrun.Resource{Type: "security_group", ID: region + "/" + g.ID, Name: g.Name + " (" + g.ID + ", " + region + ")"}
				details := map[string]any{"groupId": g.ID, "vpcId": g.VPC, "region": region}
				if open := openAdminPorts(g); len(open) > 0 {
					details["openPorts"] = open
					r.Fail(CheckSecurityGroupPorts, res, g.ID+" allows the whole internet to "+strings.Join(open, ", "), details)
				} else {
					r.Pass(CheckSecurityGroupPorts, res, g.ID+" opens no admin or database port to the internet", details)
				}
			}
			if v.Next == "" || v.Next == token {
				break
			}
			token = v.Next
		}
	}
}

// KMS

func (r *run) kms(ctx context.Context) {
	for _, region := range r.regions {
		if ctx.Err() != nil {
			return
		}
		marker := ""
		for page := 0; page < maxPages; page++ {
			in := map[string]any{"Limit": 1000}
			if marker != "" {
				in["Marker"] = marker
			}
			var v struct {
				Keys []struct {
					ID  string `json:"KeyId"`
					ARN string `json:"KeyArn"`
				} `json:"Keys"`
				Truncated  bool   `json:"Truncated"`
				NextMarker string `json:"NextMarker"`
			}
			if err := r.cl.jsonTarget(ctx, "kms", region, "TrentService.ListKeys", in, &v); err != nil {
				r.errorOn(CheckKMSRotation, regionResource(region), err)
				break
			}
			for _, k := range v.Keys {
				r.kmsKey(ctx, region, k.ID, k.ARN)
			}
			if !v.Truncated || v.NextMarker == "" || v.NextMarker == marker {
				break
			}
			marker = v.NextMarker
		}
	}
}

func (r *run) kmsKey(ctx context.Context, region, id, arn string) {
	if arn == "" {
		arn = region + "/" + id
	}
	res := checkrun.Resource{Type: "kms_key", ID: arn, Name: id + " (" + region + ")"}
	var d struct {
		Meta struct {
			Manager string `json:"KeyManager"`
			State   string `json:"KeyState"`
			Spec    string `json:"KeySpec"`
			Origin  string `json:"Origin"`
		} `json:"KeyMetadata"`
	}
	if err := r.cl.jsonTarget(ctx, "kms", region, "TrentService.DescribeKey", map[string]any{"KeyId": id}, &d); err != nil {
		r.errorOn(CheckKMSRotation, res, err)
		return
	}
	m := d.Meta
	if m.Manager != "CUSTOMER" || m.State != "Enabled" || (m.Spec != "" && m.Spec != "SYMMETRIC_DEFAULT") || (m.Origin != "" && m.Origin != "AWS_KMS") {
		return // AWS-managed, disabled, asymmetric or imported keys do not rotate automatically
	}
	var st struct {
		Enabled bool `json:"KeyRotationEnabled"`
	}
	if err := r.cl.jsonTarget(ctx, "kms", region, "TrentService.GetKeyRotationStatus", map[string]any{"KeyId": id}, &st); err != nil {
		r.errorOn(CheckKMSRotation, res, err)
		return
	}
	if st.Enabled {
		r.Pass(CheckKMSRotation, res, "key "+id+" rotates automatically", map[string]any{"keyRotationEnabled": true})
	} else {
		r.Fail(CheckKMSRotation, res, "key "+id+" does not rotate automatically", map[string]any{"keyRotationEnabled": false})
	}
}

// GuardDuty (REST-JSON)

func (r *run) guardDuty(ctx context.Context) {
	for _, region := range r.regions {
		res := regionResource(region)
		b, _, err := r.cl.rest(ctx, "guardduty", region, "", http.MethodGet, "/detector", url.Values{"maxResults": {"50"}}, nil, true)
		if err != nil {
			r.errorOn(CheckGuardDuty, res, err)
			continue
		}
		var v struct {
			IDs []string `json:"detectorIds"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			r.ErrorMsg(CheckGuardDuty, res, "guardduty ListDetectors answered JSON that could not be read", nil)
			continue
		}
		if len(v.IDs) == 0 {
			r.Fail(CheckGuardDuty, res, "GuardDuty has no detector in "+region, map[string]any{"detectors": 0})
			continue
		}
		b, _, err = r.cl.rest(ctx, "guardduty", region, "", http.MethodGet, "/detector/"+url.PathEscape(v.IDs[0]), nil, nil, true)
		if err != nil {
			r.errorOn(CheckGuardDuty, res, err)
			continue
		}
		var d struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(b, &d)
		details := map[string]any{"detectorId": v.IDs[0], "status": d.Status}
		if d.Status == "ENABLED" {
			r.Pass(CheckGuardDuty, res, "GuardDuty is enabled in "+region, details)
		} else {
			r.Fail(CheckGuardDuty, res, "GuardDuty's detector in "+region+" is "+strconv.Quote(strings.ToLower(d.Status)), details)
		}
	}
}
