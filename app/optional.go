package app

import (
	"bytes"
	"encoding/json"
)

// Opt is a PATCH field: absent (Set false), explicit null (Set and Null),
// or a value.
type Opt[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records that the field was present.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		var zero T
		o.Value = zero
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// Some returns a set, non-null Opt.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, Value: v} }

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
