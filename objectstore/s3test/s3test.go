// Package s3test is an in-memory S3 server for tests, in the manner of
// net/http/httptest: it speaks the shapes of S3's REST API that the
// object store uses (PUT, GET with Range, HEAD and DELETE of an object,
// CopyObject with x-amz-copy-source, ListObjectsV2 with continuation
// tokens and max-keys, GetBucketLocation, XML error bodies with S3's codes
// and status codes) and verifies the AWS Signature Version 4 of every
// request: it recomputes the signature from the canonical request, the
// credential scope and the secret key, checks the payload's SHA-256 when
// it is signed and Content-MD5 when it is sent. It serves path-style
// requests (http://host/bucket/key). Multipart uploads and aws-chunked
// (streaming) bodies are answered 501 NotImplemented.
package s3test

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a fake S3 endpoint. Its zero value is not usable: call New.
type Server struct {
	*httptest.Server
	AccessKey, SecretKey, Region string

	mu      sync.Mutex
	buckets map[string]map[string]*object
	counts  map[string]int
	deny    bool
	now     func() time.Time
}

type object struct {
	data        []byte
	mod         time.Time
	meta        map[string]string // x-amz-meta-* lower-cased name without the prefix
	contentType string
}

func (o *object) etag() string {
	s := md5.Sum(o.data)
	return `"` + hex.EncodeToString(s[:]) + `"`
}

// New starts a server with the given (empty) buckets, the access key
// "AKIATESTACCESSKEY", a secret key and region "us-east-1".
func New(buckets ...string) *Server {
	s := newServer(buckets)
	s.Server = httptest.NewServer(s)
	return s
}

func newServer(buckets []string) *Server {
	s := &Server{AccessKey: "AKIATESTACCESSKEY", SecretKey: "test-secret-key/abcdefghijklmnopqrstuv", Region: "us-east-1",
		buckets: map[string]map[string]*object{}, counts: map[string]int{}, now: time.Now}
	for _, b := range buckets {
		s.buckets[b] = map[string]*object{}
	}
	return s
}

// NewTLS is New serving HTTPS with a test certificate; the server's
// Client().Transport trusts it.
func NewTLS(buckets ...string) *Server {
	s := newServer(buckets)
	s.Server = httptest.NewTLSServer(s)
	return s
}

// Endpoint is the server's host:port.
func (s *Server) Endpoint() string {
	return strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
}

// Deny makes every request after the signature check fail with
// AccessDenied (a bucket policy refusing the key).
func (s *Server) Deny(on bool) { s.mu.Lock(); s.deny = on; s.mu.Unlock() }

// SetClock sets the clock that stamps LastModified.
func (s *Server) SetClock(now func() time.Time) { s.mu.Lock(); s.now = now; s.mu.Unlock() }

// Count is how many requests of an operation (PutObject, CopyObject,
// GetObject, HeadObject, DeleteObject, ListObjectsV2, GetBucketLocation,
// HeadBucket) succeeded.
func (s *Server) Count(op string) int { s.mu.Lock(); defer s.mu.Unlock(); return s.counts[op] }

// Keys lists a bucket's keys in order.
func (s *Server) Keys(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.buckets[bucket] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Object returns an object's content.
func (s *Server) Object(bucket, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if !ok {
		return nil, false
	}
	return bytes.Clone(o.data), true
}

// Meta returns an object's user metadata (names lower-cased, without
// x-amz-meta-).
func (s *Server) Meta(bucket, key string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if !ok {
		return nil
	}
	m := map[string]string{}
	for k, v := range o.meta {
		m[k] = v
	}
	return m
}

// Seed stores an object directly, last modified at mod.
func (s *Server) Seed(bucket, key string, data []byte, mod time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buckets[bucket][key] = &object{data: bytes.Clone(data), mod: mod.UTC().Truncate(time.Second), meta: map[string]string{}, contentType: "application/octet-stream"}
}

// s3Error is S3's error body.
type s3Error struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	Resource   string   `xml:"Resource"`
	RequestID  string   `xml:"RequestId"`
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, code, msg, bucket, key string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", "TESTREQUEST")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return // HEAD answers carry no body, as S3's do
	}
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(s3Error{Code: code, Message: msg, BucketName: bucket, Key: key, Resource: r.URL.Path, RequestID: "TESTREQUEST"})
}

func (s *Server) xml(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/xml")
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(v)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "IncompleteBody", err.Error(), "", "")
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if code, msg, status := s.verify(r, body); code != "" {
		s.fail(w, r, status, code, msg, bucket, key)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deny {
		s.fail(w, r, http.StatusForbidden, "AccessDenied", "Access Denied", bucket, key)
		return
	}
	q := r.URL.Query()
	if q.Has("uploads") || q.Has("uploadId") {
		s.fail(w, r, http.StatusNotImplemented, "NotImplemented", "multipart uploads are not implemented by this test server", bucket, key)
		return
	}
	objs, ok := s.buckets[bucket]
	if bucket == "" || !ok {
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", bucket, key)
		return
	}
	if key == "" {
		s.bucketOp(w, r, bucket, objs)
		return
	}
	switch r.Method {
	case http.MethodPut:
		if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
			s.copyObject(w, r, bucket, key, src)
			return
		}
		if md := r.Header.Get("Content-Md5"); md != "" {
			sum := md5.Sum(body)
			if md != base64.StdEncoding.EncodeToString(sum[:]) {
				s.fail(w, r, http.StatusBadRequest, "BadDigest", "The Content-MD5 you specified did not match what we received.", bucket, key)
				return
			}
		}
		o := &object{data: body, mod: s.now().UTC().Truncate(time.Second), meta: userMeta(r.Header), contentType: r.Header.Get("Content-Type")}
		objs[key] = o
		s.counts["PutObject"]++
		w.Header().Set("ETag", o.etag())
		w.WriteHeader(http.StatusOK)
	case http.MethodGet, http.MethodHead:
		o, ok := objs[key]
		if !ok {
			s.fail(w, r, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", bucket, key)
			return
		}
		h := w.Header()
		h.Set("ETag", o.etag())
		h.Set("Last-Modified", o.mod.Format(http.TimeFormat))
		h.Set("Content-Type", o.contentType)
		h.Set("Accept-Ranges", "bytes")
		for k, v := range o.meta {
			h.Set("X-Amz-Meta-"+k, v)
		}
		data, status := o.data, http.StatusOK
		if rg := r.Header.Get("Range"); rg != "" && r.Method == http.MethodGet {
			start, end, ok := parseRange(rg, int64(len(o.data)))
			if !ok {
				h.Set("Content-Range", fmt.Sprintf("bytes */%d", len(o.data)))
				s.fail(w, r, http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable", bucket, key)
				return
			}
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, len(o.data)))
			data, status = o.data[start:end+1], http.StatusPartialContent
		}
		h.Set("Content-Length", strconv.Itoa(len(data)))
		if r.Method == http.MethodHead {
			s.counts["HeadObject"]++
			w.WriteHeader(status)
			return
		}
		s.counts["GetObject"]++
		w.WriteHeader(status)
		_, _ = w.Write(data)
	case http.MethodDelete:
		delete(objs, key) // S3 answers 204 for a missing key too
		s.counts["DeleteObject"]++
		w.WriteHeader(http.StatusNoContent)
	default:
		s.fail(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", bucket, key)
	}
}

func (s *Server) copyObject(w http.ResponseWriter, r *http.Request, bucket, key, src string) {
	src, err := url.PathUnescape(src)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "bad x-amz-copy-source", bucket, key)
		return
	}
	if i := strings.Index(src, "?versionId="); i >= 0 {
		src = src[:i]
	}
	sb, sk, _ := strings.Cut(strings.TrimPrefix(src, "/"), "/")
	sobjs, ok := s.buckets[sb]
	if !ok {
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", sb, "")
		return
	}
	so, ok := sobjs[sk]
	if !ok {
		s.fail(w, r, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", sb, sk)
		return
	}
	replace := strings.EqualFold(r.Header.Get("X-Amz-Metadata-Directive"), "REPLACE")
	if sb == bucket && sk == key && !replace {
		s.fail(w, r, http.StatusBadRequest, "InvalidRequest", "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.", bucket, key)
		return
	}
	o := &object{data: so.data, mod: s.now().UTC().Truncate(time.Second), meta: so.meta, contentType: so.contentType}
	if replace {
		o.meta = userMeta(r.Header)
		o.contentType = r.Header.Get("Content-Type")
	}
	s.buckets[bucket][key] = o
	s.counts["CopyObject"]++
	s.xml(w, struct {
		XMLName      xml.Name `xml:"CopyObjectResult"`
		LastModified string   `xml:"LastModified"`
		ETag         string   `xml:"ETag"`
	}{LastModified: o.mod.Format("2006-01-02T15:04:05.000Z"), ETag: o.etag()})
}

type listEntry struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int    `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
}

type listResult struct {
	XMLName               xml.Name    `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string      `xml:"Name"`
	Prefix                string      `xml:"Prefix"`
	KeyCount              int         `xml:"KeyCount"`
	MaxKeys               int         `xml:"MaxKeys"`
	IsTruncated           bool        `xml:"IsTruncated"`
	ContinuationToken     string      `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
	StartAfter            string      `xml:"StartAfter,omitempty"`
	Contents              []listEntry `xml:"Contents"`
}

func (s *Server) bucketOp(w http.ResponseWriter, r *http.Request, bucket string, objs map[string]*object) {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodHead:
		s.counts["HeadBucket"]++
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet && q.Has("location"):
		s.counts["GetBucketLocation"]++
		s.xml(w, struct {
			XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LocationConstraint"`
			Value   string   `xml:",chardata"`
		}{Value: s.Region})
	case r.Method == http.MethodGet && q.Get("list-type") == "2":
		if q.Get("delimiter") != "" {
			s.fail(w, r, http.StatusNotImplemented, "NotImplemented", "delimiters are not implemented by this test server", bucket, "")
			return
		}
		max := 1000
		if v := q.Get("max-keys"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "Provided max-keys not an integer or within integer range", bucket, "")
				return
			}
			max = min(n, 1000)
		}
		after := q.Get("start-after")
		if tok := q.Get("continuation-token"); tok != "" {
			raw, err := base64.RawURLEncoding.DecodeString(tok)
			if err != nil {
				s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "The continuation token provided is incorrect", bucket, "")
				return
			}
			after = string(raw)
		}
		prefix := q.Get("prefix")
		var keys []string
		for k := range objs {
			if strings.HasPrefix(k, prefix) && k > after {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		res := listResult{Name: bucket, Prefix: prefix, MaxKeys: max, ContinuationToken: q.Get("continuation-token"), StartAfter: q.Get("start-after")}
		if len(keys) > max {
			keys = keys[:max]
			res.IsTruncated = true
			res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(keys[len(keys)-1]))
		}
		for _, k := range keys {
			o := objs[k]
			res.Contents = append(res.Contents, listEntry{Key: k, LastModified: o.mod.Format("2006-01-02T15:04:05.000Z"),
				ETag: o.etag(), Size: len(o.data), StorageClass: "STANDARD"})
		}
		res.KeyCount = len(res.Contents)
		s.counts["ListObjectsV2"]++
		s.xml(w, res)
	default:
		s.fail(w, r, http.StatusNotImplemented, "NotImplemented", "this bucket operation is not implemented by this test server", bucket, "")
	}
}

func userMeta(h http.Header) map[string]string {
	m := map[string]string{}
	for k, v := range h {
		if name, ok := strings.CutPrefix(strings.ToLower(k), "x-amz-meta-"); ok && len(v) > 0 {
			m[name] = v[0]
		}
	}
	return m
}

// parseRange reads "bytes=a-b", "bytes=a-" or "bytes=-n".
func parseRange(h string, size int64) (start, end int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	a, b, _ := strings.Cut(spec, "-")
	var err error
	switch {
	case a == "":
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, false
		}
		start, end = max(size-n, 0), size-1
	default:
		if start, err = strconv.ParseInt(a, 10, 64); err != nil {
			return 0, 0, false
		}
		end = size - 1
		if b != "" {
			if end, err = strconv.ParseInt(b, 10, 64); err != nil {
				return 0, 0, false
			}
			end = min(end, size-1)
		}
	}
	if start < 0 || start >= size || end < start {
		return 0, 0, false
	}
	return start, end, true
}

// verify checks the request's AWS Signature Version 4 (Authorization
// header form) and its payload hash. It returns S3's error code, message
// and status, or "" when the request is authentic.
func (s *Server) verify(r *http.Request, body []byte) (code, msg string, status int) {
	auth := r.Header.Get("Authorization")
	algo, rest, _ := strings.Cut(auth, " ")
	if algo != "AWS4-HMAC-SHA256" {
		return "AccessDenied", "Only AWS Signature Version 4 (AWS4-HMAC-SHA256) in the Authorization header is accepted", http.StatusForbidden
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[3] != "s3" || cred[4] != "aws4_request" || fields["SignedHeaders"] == "" || len(fields["Signature"]) != 64 {
		return "AuthorizationHeaderMalformed", "The authorization header is malformed: " + auth, http.StatusBadRequest
	}
	if cred[0] != s.AccessKey {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.", http.StatusForbidden
	}
	region := s.Region
	if r.URL.Query().Has("location") {
		region = "us-east-1" // GetBucketLocation is signed for the default region
	}
	if cred[2] != region {
		return "AuthorizationHeaderMalformed", fmt.Sprintf("the region %q is wrong; expecting %q", cred[2], region), http.StatusBadRequest
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil {
		return "AccessDenied", "X-Amz-Date is missing or malformed", http.StatusForbidden
	}
	if d := time.Since(t); d > 15*time.Minute || d < -15*time.Minute {
		return "RequestTimeTooSkewed", "The difference between the request time and the current time is too large.", http.StatusForbidden
	}
	if cred[1] != t.Format("20060102") {
		return "AuthorizationHeaderMalformed", "the credential's date is not the request's date", http.StatusBadRequest
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !sort.StringsAreSorted(signed) || !contains(signed, "host") || !contains(signed, "x-amz-date") || !contains(signed, "x-amz-content-sha256") {
		return "AccessDenied", "SignedHeaders must be sorted and include host, x-amz-date and x-amz-content-sha256", http.StatusForbidden
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	switch {
	case payload == "UNSIGNED-PAYLOAD":
	case strings.HasPrefix(payload, "STREAMING-"):
		return "NotImplemented", "aws-chunked (streaming) payloads are not implemented by this test server", http.StatusNotImplemented
	case len(payload) == 64:
		sum := sha256.Sum256(body)
		if hex.EncodeToString(sum[:]) != payload {
			return "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.", http.StatusBadRequest
		}
	default:
		return "InvalidArgument", "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or the payload's hex SHA-256", http.StatusBadRequest
	}
	var canon strings.Builder
	canon.WriteString(r.Method + "\n")
	canon.WriteString(encodePath(r.URL.Path) + "\n")
	canon.WriteString(strings.ReplaceAll(r.URL.Query().Encode(), "+", "%20") + "\n")
	for _, h := range signed {
		var v string
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = strconv.FormatInt(r.ContentLength, 10)
		default:
			vals := append([]string(nil), r.Header.Values(h)...)
			for i := range vals {
				vals[i] = strings.Join(strings.Fields(vals[i]), " ")
			}
			v = strings.Join(vals, ",")
		}
		canon.WriteString(h + ":" + v + "\n")
	}
	canon.WriteString("\n" + fields["SignedHeaders"] + "\n" + payload)
	scope := strings.Join(cred[1:], "/")
	crHash := sha256.Sum256([]byte(canon.String()))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(crHash[:])
	key := []byte("AWS4" + s.SecretKey)
	for _, part := range cred[1:] {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.", http.StatusForbidden
	}
	return "", "", 0
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// encodePath is S3's canonical URI: every byte but unreserved characters
// and '/' percent-encoded.
func encodePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
