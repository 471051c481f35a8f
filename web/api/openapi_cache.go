package api

import "sync"

// openAPIDocs holds the merged document per version. The fragments are
// embedded in the binary, so the merge of a version always gives the same
// bytes; servers started after the first (tests start hundreds of them,
// each merge parses every YAML fragment) reuse it. Nothing writes to the
// bytes after the merge: they are only served.
var openAPIDocs sync.Map // version -> []byte

func cachedOpenAPIDocument(version string) ([]byte, error) {
	if doc, ok := openAPIDocs.Load(version); ok {
		return doc.([]byte), nil
	}
	doc, err := openAPIDocument(version)
	if err != nil {
		return nil, err
	}
	actual, _ := openAPIDocs.LoadOrStore(version, doc)
	return actual.([]byte), nil
}
