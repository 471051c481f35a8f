package s3test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// do signs req with minio-go's own SigV4 signer and sends it.
func do(t *testing.T, s *Server, req *http.Request, secret string, body []byte) (*http.Response, s3Error) {
	t.Helper()
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	signed := signer.SignV4(*req, s.AccessKey, secret, "", s.Region)
	signed.Body = io.NopCloser(bytes.NewReader(body))
	signed.ContentLength = int64(len(body))
	return send(t, signed)
}

func send(t *testing.T, req *http.Request) (*http.Response, s3Error) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e s3Error
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		if err := xml.Unmarshal(raw, &e); err != nil && req.Method != http.MethodHead {
			t.Fatalf("error body is not S3's XML: %q", raw)
		}
	}
	return resp, e
}

func newReq(t *testing.T, method, url string, body []byte) *http.Request {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSignatureIsVerified(t *testing.T) {
	s := New("b1")
	defer s.Close()
	body := []byte("payload")

	// Signed by minio-go's signer: accepted.
	resp, e := do(t, s, newReq(t, http.MethodPut, s.URL+"/b1/k/one", body), s.SecretKey, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signed PUT: %d %+v", resp.StatusCode, e)
	}
	if got, _ := s.Object("b1", "k/one"); !bytes.Equal(got, body) {
		t.Fatalf("stored %q", got)
	}

	// The wrong secret.
	resp, e = do(t, s, newReq(t, http.MethodGet, s.URL+"/b1/k/one", nil), "wrong", nil)
	if resp.StatusCode != http.StatusForbidden || e.Code != "SignatureDoesNotMatch" {
		t.Fatalf("wrong secret: %d %+v", resp.StatusCode, e)
	}

	// A header changed after signing.
	req := newReq(t, http.MethodGet, s.URL+"/b1/k/one", nil)
	req.Header.Set("Range", "bytes=0-1")
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	signed := signer.SignV4(*req, s.AccessKey, s.SecretKey, "", s.Region)
	signed.Header.Set("Range", "bytes=0-5")
	if resp, e := send(t, signed); resp.StatusCode != http.StatusForbidden || e.Code != "SignatureDoesNotMatch" {
		t.Fatalf("tampered header: %d %+v", resp.StatusCode, e)
	}

	// A body that is not the signed one.
	req = newReq(t, http.MethodPut, s.URL+"/b1/k/two", nil)
	sum := sha256.Sum256([]byte("signed body"))
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	signed = signer.SignV4(*req, s.AccessKey, s.SecretKey, "", s.Region)
	signed.Body, signed.ContentLength = io.NopCloser(strings.NewReader("other body!")), 11
	if resp, e := send(t, signed); resp.StatusCode != http.StatusBadRequest || e.Code != "XAmzContentSHA256Mismatch" {
		t.Fatalf("other body: %d %+v", resp.StatusCode, e)
	}

	// No signature at all, an unknown key, the wrong region.
	if resp, e := send(t, newReq(t, http.MethodGet, s.URL+"/b1/k/one", nil)); resp.StatusCode != http.StatusForbidden || e.Code != "AccessDenied" {
		t.Fatalf("anonymous: %d %+v", resp.StatusCode, e)
	}
	req = newReq(t, http.MethodGet, s.URL+"/b1/k/one", nil)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if resp, e := send(t, signer.SignV4(*req, "AKIAOTHER", s.SecretKey, "", s.Region)); resp.StatusCode != http.StatusForbidden || e.Code != "InvalidAccessKeyId" {
		t.Fatalf("unknown key: %d %+v", resp.StatusCode, e)
	}
	req = newReq(t, http.MethodGet, s.URL+"/b1/k/one", nil)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if resp, e := send(t, signer.SignV4(*req, s.AccessKey, s.SecretKey, "", "eu-west-3")); resp.StatusCode != http.StatusBadRequest || e.Code != "AuthorizationHeaderMalformed" {
		t.Fatalf("wrong region: %d %+v", resp.StatusCode, e)
	}
}

func TestObjectOperations(t *testing.T) {
	s := New("b1")
	defer s.Close()
	body := []byte("0123456789")

	req := newReq(t, http.MethodPut, s.URL+"/b1/obj", body)
	md := md5.Sum([]byte("something else"))
	req.Header.Set("Content-Md5", base64.StdEncoding.EncodeToString(md[:]))
	if resp, e := do(t, s, req, s.SecretKey, body); resp.StatusCode != http.StatusBadRequest || e.Code != "BadDigest" {
		t.Fatalf("bad Content-MD5: %d %+v", resp.StatusCode, e)
	}
	req = newReq(t, http.MethodPut, s.URL+"/b1/obj", body)
	md = md5.Sum(body)
	req.Header.Set("Content-Md5", base64.StdEncoding.EncodeToString(md[:]))
	req.Header.Set("X-Amz-Meta-Owner", "team")
	if resp, e := do(t, s, req, s.SecretKey, body); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %+v", resp.StatusCode, e)
	}

	req = newReq(t, http.MethodGet, s.URL+"/b1/obj", nil)
	req.Header.Set("Range", "bytes=2-4")
	sum := sha256.Sum256(nil)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	signed := signer.SignV4(*req, s.AccessKey, s.SecretKey, "", s.Region)
	resp, err := http.DefaultClient.Do(signed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(got) != "234" || resp.Header.Get("Content-Range") != "bytes 2-4/10" {
		t.Fatalf("range GET: %d %q %s", resp.StatusCode, got, resp.Header.Get("Content-Range"))
	}

	req = newReq(t, http.MethodHead, s.URL+"/b1/missing", nil)
	if resp, _ := do(t, s, req, s.SecretKey, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("HEAD missing: %d", resp.StatusCode)
	}
	if resp, e := do(t, s, newReq(t, http.MethodGet, s.URL+"/b1/missing", nil), s.SecretKey, nil); resp.StatusCode != http.StatusNotFound || e.Code != "NoSuchKey" {
		t.Fatalf("GET missing: %d %+v", resp.StatusCode, e)
	}
	if resp, e := do(t, s, newReq(t, http.MethodGet, s.URL+"/nobucket/x", nil), s.SecretKey, nil); resp.StatusCode != http.StatusNotFound || e.Code != "NoSuchBucket" {
		t.Fatalf("GET in a missing bucket: %d %+v", resp.StatusCode, e)
	}

	// Copy onto itself needs REPLACE.
	req = newReq(t, http.MethodPut, s.URL+"/b1/obj", nil)
	req.Header.Set("X-Amz-Copy-Source", "/b1/obj")
	if resp, e := do(t, s, req, s.SecretKey, nil); resp.StatusCode != http.StatusBadRequest || e.Code != "InvalidRequest" {
		t.Fatalf("copy to itself without REPLACE: %d %+v", resp.StatusCode, e)
	}
	req = newReq(t, http.MethodPut, s.URL+"/b1/copy", nil)
	req.Header.Set("X-Amz-Copy-Source", "/b1/obj")
	if resp, e := do(t, s, req, s.SecretKey, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("copy: %d %+v", resp.StatusCode, e)
	}
	if got, _ := s.Object("b1", "copy"); string(got) != string(body) || s.Meta("b1", "copy")["owner"] != "team" {
		t.Fatalf("copy holds %q %v", got, s.Meta("b1", "copy"))
	}

	s.Deny(true)
	if resp, e := do(t, s, newReq(t, http.MethodGet, s.URL+"/b1/obj", nil), s.SecretKey, nil); resp.StatusCode != http.StatusForbidden || e.Code != "AccessDenied" {
		t.Fatalf("denied: %d %+v", resp.StatusCode, e)
	}
	s.Deny(false)

	if resp, _ := do(t, s, newReq(t, http.MethodDelete, s.URL+"/b1/obj", nil), s.SecretKey, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if _, ok := s.Object("b1", "obj"); ok {
		t.Fatal("deleted object still there")
	}
}

func TestListContinuation(t *testing.T) {
	s := New("b1")
	defer s.Close()
	for _, k := range []string{"p/a", "p/b", "p/c", "p/d", "p/e", "q/a"} {
		s.Seed("b1", k, []byte(k), s.now())
	}
	var keys []string
	token := ""
	pages := 0
	for {
		u := s.URL + "/b1?list-type=2&prefix=p%2F&max-keys=2"
		if token != "" {
			u += "&continuation-token=" + token
		}
		req := newReq(t, http.MethodGet, u, nil)
		sum := sha256.Sum256(nil)
		req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
		resp, err := http.DefaultClient.Do(signer.SignV4(*req, s.AccessKey, s.SecretKey, "", s.Region))
		if err != nil {
			t.Fatal(err)
		}
		var res listResult
		if err := xml.NewDecoder(resp.Body).Decode(&res); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		pages++
		for _, c := range res.Contents {
			keys = append(keys, c.Key)
		}
		if !res.IsTruncated {
			break
		}
		token = res.NextContinuationToken
	}
	if pages != 3 || strings.Join(keys, ",") != "p/a,p/b,p/c,p/d,p/e" {
		t.Fatalf("%d pages: %v", pages, keys)
	}
}
