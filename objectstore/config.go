// Package objectstore keeps uploaded files in an S3-compatible object
// store (Amazon S3, MinIO, Ceph RGW, Garage, ...) instead of the data
// directory, so that several replicas share them. It implements
// app.FileStore and app.FileSweeper with the same guarantees as the
// directory store: content addressed (<prefix>/ab/<sha256>), an object is
// written once, unreferenced objects are removed a grace period after a
// sweep first finds them.
package objectstore

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Config is where the files live and how to reach the store.
type Config struct {
	Bucket string
	// Prefix is the key prefix, without leading or trailing slash ("" for
	// the bucket's root).
	Prefix string
	// Endpoint is host[:port] of the S3 API (default s3.amazonaws.com).
	Endpoint string
	// Region is the bucket's region ("" lets the client ask the store).
	Region string
	// Secure is TLS to the endpoint (on unless turned off explicitly).
	Secure bool
	// PathStyle addresses the bucket in the path (https://host/bucket/key)
	// rather than in the host name; "" lets the client choose (virtual
	// host for AWS, path style elsewhere).
	PathStyle string

	AccessKey, SecretKey, SessionToken string

	// TempDir holds an upload while it is hashed, before it is sent.
	TempDir string
	// Transport, when set, carries the requests (tests, custom CAs).
	Transport http.RoundTripper
}

// ParseURL reads a files_url of the form
//
//	s3://bucket/prefix?endpoint=host:port&region=eu-west-1&path_style=true&insecure=true
//
// endpoint may carry a scheme: http://host:port turns TLS off (as does
// insecure=true), https://host:port keeps it on. Credentials never go in
// the URL: they come from the environment (see Credentials in the docs).
func ParseURL(raw string) (Config, error) {
	var c Config
	u, err := url.Parse(raw)
	if err != nil {
		return c, fmt.Errorf("files_url: %v", redactErr(err))
	}
	if u.Scheme != "s3" {
		return c, fmt.Errorf("files_url: want s3://bucket/prefix?endpoint=host:port, got scheme %q (leave files_url empty to keep files in data_dir)", u.Scheme)
	}
	if u.User != nil {
		return c, errors.New("files_url: credentials do not go in the URL; set COMPLIANCE_FILES_ACCESS_KEY and COMPLIANCE_FILES_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	c.Bucket = u.Host
	if c.Bucket == "" {
		return c, errors.New("files_url: the bucket is missing (s3://bucket/prefix)")
	}
	if err := validBucket(c.Bucket); err != nil {
		return c, fmt.Errorf("files_url: bucket %q: %v", c.Bucket, err)
	}
	c.Prefix = strings.Trim(u.Path, "/")
	if strings.Contains(c.Prefix, "//") {
		return c, fmt.Errorf("files_url: prefix %q has an empty segment", c.Prefix)
	}
	c.Secure = true
	q := u.Query()
	for k := range q {
		switch k {
		case "endpoint", "region", "path_style", "insecure":
		default:
			return c, fmt.Errorf("files_url: unknown parameter %q (known: endpoint, region, path_style, insecure)", k)
		}
	}
	c.Endpoint = q.Get("endpoint")
	if c.Endpoint == "" {
		c.Endpoint = "s3.amazonaws.com"
	}
	if scheme, host, ok := strings.Cut(c.Endpoint, "://"); ok {
		switch scheme {
		case "http":
			c.Secure = false
		case "https":
		default:
			return c, fmt.Errorf("files_url: endpoint scheme %q: want http or https", scheme)
		}
		c.Endpoint = host
	}
	if c.Endpoint == "" || strings.ContainsAny(c.Endpoint, "/?#@") {
		return c, fmt.Errorf("files_url: endpoint %q: want host or host:port", q.Get("endpoint"))
	}
	c.Region = q.Get("region")
	if v := q.Get("insecure"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("files_url: insecure=%q: want true or false", v)
		}
		if b {
			c.Secure = false
		}
	}
	if v := q.Get("path_style"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("files_url: path_style=%q: want true or false", v)
		}
		c.PathStyle = strconv.FormatBool(b)
	}
	return c, nil
}

// String is the store's location without credentials, for logs and
// messages.
func (c Config) String() string {
	scheme := "https"
	if !c.Secure {
		scheme = "http"
	}
	s := "s3://" + c.Bucket
	if c.Prefix != "" {
		s += "/" + c.Prefix
	}
	return s + " at " + scheme + "://" + c.Endpoint
}

// validBucket checks the S3 bucket naming rules that matter for a URL.
func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return errors.New("a bucket name has 3 to 63 characters")
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return errors.New("a bucket name has lower-case letters, digits, '-', '.' and '_' only")
		}
	}
	return nil
}

// redactErr drops the URL from a url.Error, which could carry a password.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
