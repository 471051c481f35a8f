package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// maxJSONBody is the JSON request body limit (DECISIONS: 1 MiB).
const MaxJSONBody = 1 << 20

// jsonBufs recycles response buffers (a vendor page is about 20 KiB).
var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			jsonBufs.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"message":"encode response"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// decode reads a JSON object body into dst, naming the bad field on error.
// Unknown fields are ignored; trailing data is rejected.
func Decode(r *http.Request, dst any) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return BadRequest("Content-Type", nil, "Content-Type must be application/json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return BadRequest("Content-Type", ct, "Content-Type must be application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return mbe
		}
		return BadRequest("", nil, "could not read the request body")
	}
	return DecodeBytes(body, dst)
}

func DecodeBytes(body []byte, dst any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return BadRequest("body", nil, "a JSON request body is required")
	}
	if trimmed[0] != '{' {
		return BadRequest("body", nil, "the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return BadRequest("body", nil, "the request body has data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return BadRequest("body", nil, "the request body has data after the JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return BadRequest("body", nil, "malformed JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return BadRequest(field, nil, "%s must be of type %s, not %s", field, jsonType(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("body", nil, "malformed JSON: unexpected end of input")
	}
	return BadRequest("body", nil, "malformed JSON: %s", err.Error())
}

func jsonType(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	}
	return kind
}
