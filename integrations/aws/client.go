package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/compliance-appliance/compliance/integrations/outbound"
)

// maxBody caps every AWS response read.
const maxBody = 8 << 20

// API versions of the query-protocol services.
const (
	iamVersion = "2010-05-08"
	stsVersion = "2011-06-15"
	ec2Version = "2016-11-15"
)

// APIError is an error answer of an AWS service.
type APIError struct {
	Status  int
	Code    string
	Message string
	Service string
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s answered %d %s", e.Service, e.Status, e.Code)
	}
	return fmt.Sprintf("%s answered %d %s: %s", e.Service, e.Status, e.Code, e.Message)
}

// Code is the AWS error code of err ("" when it is not an AWS answer).
func Code(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// throttled reports an error code AWS uses for request rate limits.
func throttled(code string) bool {
	switch code {
	case "Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
		"TooManyRequestsException", "RequestThrottled", "SlowDown", "RequestThrottledException":
		return true
	}
	return false
}

// accessDenied reports an error code meaning the credentials may not call
// the operation.
func accessDenied(code string) bool {
	switch code {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "AuthorizationError", "UnauthorizedAccess":
		return true
	}
	return false
}

// refused reports an error code meaning the credentials themselves are
// not accepted.
func refused(code string) bool {
	switch code {
	case "InvalidClientTokenId", "SignatureDoesNotMatch", "AuthFailure", "ExpiredToken", "InvalidAccessKeyId",
		"UnrecognizedClientException", "IncompleteSignature", "InvalidToken", "ExpiredTokenException":
		return true
	}
	return false
}

// client signs and sends requests to AWS with one set of credentials.
type client struct {
	http     *http.Client
	creds    awssdk.Credentials
	endpoint *url.URL // override for every service; nil: AWS's public endpoints
	signer   *v4.Signer
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error
	retries  int
}

// partitionSuffix is the DNS suffix of a region's partition.
func partitionSuffix(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// globalRegion is where a region's partition keeps its global services
// (IAM).
func globalRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "us-gov-west-1"
	case strings.HasPrefix(region, "cn-"):
		return "cn-north-1"
	}
	return "us-east-1"
}

// hostFor is the public endpoint host of service in region.
func hostFor(service, region string) string {
	sfx := partitionSuffix(region)
	switch service {
	case "iam":
		switch {
		case strings.HasPrefix(region, "us-gov-"):
			return "iam.us-gov.amazonaws.com"
		case strings.HasPrefix(region, "cn-"):
			return "iam.cn-north-1.amazonaws.com.cn"
		}
		return "iam.amazonaws.com"
	case "s3":
		return "s3." + region + "." + sfx
	}
	return service + "." + region + "." + sfx
}

// base is the URL requests to service in region go to.
func (c *client) base(service, region, hostPrefix string) *url.URL {
	if c.endpoint != nil {
		u := *c.endpoint
		return &u
	}
	return &url.URL{Scheme: "https", Host: hostPrefix + hostFor(service, region)}
}

// do signs and sends one request, retrying throttling answers, and returns
// the body of a 2xx answer or an *APIError.
func (c *client) do(ctx context.Context, service, region string, build func() (*http.Request, error), parseErr func(status int, h http.Header, body []byte) *APIError) ([]byte, http.Header, error) {
	signingRegion := region
	if service == "iam" {
		signingRegion = globalRegion(region)
	}
	for attempt := 0; ; attempt++ {
		req, err := build()
		if err != nil {
			return nil, nil, err
		}
		var payload []byte
		if req.Body != nil {
			payload, err = io.ReadAll(req.Body)
			if err != nil {
				return nil, nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(payload))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
		}
		sum := sha256.Sum256(payload)
		hash := hex.EncodeToString(sum[:])
		sigName := service
		if service == "s3" || service == "s3-control" {
			sigName = "s3"
			req.Header.Set("X-Amz-Content-Sha256", hash)
		}
		req.Header.Set("User-Agent", "compliance-appliance")
		if err := c.signer.SignHTTP(ctx, c.creds, req, hash, sigName, signingRegion, c.now()); err != nil {
			return nil, nil, fmt.Errorf("signing the %s request: %w", service, err)
		}
		resp, err := c.http.Do(req.WithContext(ctx))
		if err != nil {
			return nil, nil, fmt.Errorf("%s in %s could not be reached: %w", service, region, err)
		}
		body, err := outbound.ReadBody(resp, maxBody)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the %s answer: %w", service, err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return body, resp.Header, nil
		}
		ae := parseErr(resp.StatusCode, resp.Header, body)
		ae.Service, ae.Status = service, resp.StatusCode
		if ae.Code == "" {
			ae.Code = http.StatusText(resp.StatusCode)
		}
		ae.Message = clip(ae.Message, 300)
		if (throttled(ae.Code) || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) && attempt < c.retries {
			wait := time.Duration(200<<attempt) * time.Millisecond
			if err := c.sleep(ctx, wait); err != nil {
				return nil, nil, err
			}
			continue
		}
		return nil, resp.Header, ae
	}
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// xmlError reads the query protocol's <ErrorResponse>, EC2's
// <Response><Errors> and S3's <Error>.
func xmlError(status int, _ http.Header, body []byte) *APIError {
	var v struct {
		XMLName xml.Name
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
		Error   struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
		Errors struct {
			Error struct {
				Code    string `xml:"Code"`
				Message string `xml:"Message"`
			} `xml:"Error"`
		} `xml:"Errors"`
	}
	if err := xml.Unmarshal(body, &v); err != nil {
		return &APIError{Message: clip(string(body), 200)}
	}
	switch {
	case v.Error.Code != "":
		return &APIError{Code: v.Error.Code, Message: v.Error.Message}
	case v.Errors.Error.Code != "":
		return &APIError{Code: v.Errors.Error.Code, Message: v.Errors.Error.Message}
	}
	return &APIError{Code: v.Code, Message: v.Message}
}

// jsonError reads the JSON protocols' {"__type", "message"} and the
// X-Amzn-Errortype header.
func jsonError(_ int, h http.Header, body []byte) *APIError {
	var v struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(body, &v)
	code := v.Type
	if code == "" {
		code = v.Code
	}
	if code == "" {
		code = h.Get("X-Amzn-Errortype")
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	msg := v.Message
	if msg == "" {
		msg = v.MessageU
	}
	return &APIError{Code: code, Message: msg}
}

// query calls an action of a query-protocol service (IAM, STS, EC2) and
// decodes the XML answer into out.
func (c *client) query(ctx context.Context, service, region, version, action string, params url.Values, out any) error {
	form := url.Values{"Action": {action}, "Version": {version}}
	for k, v := range params {
		form[k] = v
	}
	body := form.Encode()
	u := c.base(service, region, "")
	b, _, err := c.do(ctx, service, region, func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		return req, nil
	}, xmlError)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s answered XML that could not be read: %w", service, action, err)
	}
	return nil
}

// jsonTarget calls an operation of a JSON 1.1 service (KMS, CloudTrail).
func (c *client) jsonTarget(ctx context.Context, service, region, target string, in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	u := c.base(service, region, "")
	b, _, err := c.do(ctx, service, region, func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", target)
		return req, nil
	}, jsonError)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s answered JSON that could not be read: %w", service, target, err)
	}
	return nil
}

// rest calls a REST operation (S3's XML, S3 Control's XML, GuardDuty's
// JSON). path is escaped by the caller; header adds request headers.
func (c *client) rest(ctx context.Context, service, region, hostPrefix, method, path string, q url.Values, header http.Header, isJSON bool) ([]byte, http.Header, error) {
	u := c.base(service, region, hostPrefix)
	u.RawPath = strings.TrimRight(u.Path, "/") + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = q.Encode()
	parse := xmlError
	if isJSON {
		parse = jsonError
	}
	return c.do(ctx, service, region, func() (*http.Request, error) {
		req, err := http.NewRequest(method, u.String(), nil)
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		return req, nil
	}, parse)
}

// Shapes of the settings.

var (
	regionRE  = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`)
	roleARNRE = regexp.MustCompile(`^arn:aws(-cn|-us-gov|-iso|-iso-b)?:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}$`)
	keyIDRE   = regexp.MustCompile(`^[A-Z0-9]{16,128}$`)
	extIDRE   = regexp.MustCompile(`^[\w+=,.@:/-]{2,1000}$`)
)

// ValidRegion reports whether s has the shape of an AWS region name
// ("eu-west-1", "us-gov-west-1").
func ValidRegion(s string) bool { return regionRE.MatchString(s) }

// ValidRoleARN reports whether s is an IAM role ARN.
func ValidRoleARN(s string) bool { return roleARNRE.MatchString(s) }
