package app

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors the web layer maps to HTTP statuses.
var (
	// ErrNotFound means the resource does not exist or belongs to another organization.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a unique constraint or an idempotency key was violated.
	ErrConflict = errors.New("conflict")
	// ErrForbidden means the caller's role lacks the permission.
	ErrForbidden = errors.New("forbidden")
	// ErrUnauthenticated means no valid credential was presented.
	ErrUnauthenticated = errors.New("unauthorized")
)

// Field error codes used in ValidationError.Fields.
const (
	CodeRequired         = "required"
	CodeTooLong          = "too_long"
	CodeInvalid          = "invalid"
	CodeInvalidEnum      = "invalid_enum"
	CodeUnknownReference = "unknown_reference"
)

// ValidationError lists every failing field of an input at once.
type ValidationError struct {
	Fields map[string]string // field -> code (required, invalid, ...)
	Values map[string]any    // field -> offending value, when known
	Msgs   map[string]string // field -> human message, optional
}

// NewValidationError returns an empty ValidationError ready for Add.
func NewValidationError() *ValidationError {
	return &ValidationError{Fields: map[string]string{}, Values: map[string]any{}, Msgs: map[string]string{}}
}

// Add records a failing field; the first failure of a field wins.
func (e *ValidationError) Add(field, code string, value any, msg string) {
	if _, ok := e.Fields[field]; ok {
		return
	}
	e.Fields[field] = code
	if value != nil {
		e.Values[field] = value
	}
	if msg != "" {
		e.Msgs[field] = msg
	}
}

// Empty reports whether no field failed.
func (e *ValidationError) Empty() bool { return len(e.Fields) == 0 }

// Err returns e when a field failed, nil otherwise.
func (e *ValidationError) Err() error {
	if e.Empty() {
		return nil
	}
	return e
}

// FieldNames returns the failing fields in sorted order.
func (e *ValidationError) FieldNames() []string {
	names := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		names = append(names, f)
	}
	sort.Strings(names)
	return names
}

// Error describes every failing field.
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Fields))
	for _, f := range e.FieldNames() {
		if m := e.Msgs[f]; m != "" {
			parts = append(parts, m)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s", f, strings.ReplaceAll(e.Fields[f], "_", " ")))
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Invalid returns a ValidationError for a single field.
func Invalid(field, code string, value any, msg string) *ValidationError {
	v := NewValidationError()
	v.Add(field, code, value, msg)
	return v
}

// LimitError is a plan limit being exceeded; it is a forbidden error.
type LimitError struct {
	Limit   string // frameworks, members, integrations, questionnaires
	Allowed int
	Plan    string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the %s plan allows %d %s", e.Plan, e.Allowed, e.Limit)
}

// Is makes errors.Is(err, ErrForbidden) true for plan limits.
func (e *LimitError) Is(target error) bool { return target == ErrForbidden }

// PublicError carries a message that is safe to show to the client
// alongside a sentinel error (ErrConflict, ErrForbidden, ErrNotFound).
type PublicError struct {
	Kind error
	Msg  string
}

func (e *PublicError) Error() string { return e.Msg }

// Unwrap exposes the sentinel.
func (e *PublicError) Unwrap() error { return e.Kind }

// Errorf builds a PublicError of the given kind.
func Errorf(kind error, format string, args ...any) error {
	return &PublicError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
