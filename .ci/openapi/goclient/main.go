// Command goclient is the smoke test of the Go client that oapi-codegen
// generates from the served OpenAPI document (.ci/openapi/check.sh writes
// the client package beside this file). Against a running appliance and
// an admin API key it creates a vendor, finds it in the list, reads it
// back, and decodes a validation error and an authentication error into
// the generated error type. Any mismatch exits non-zero.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"openapismoke/client"
)

func main() {
	base := flag.String("url", "", "base URL of the running appliance, e.g. http://127.0.0.1:3333")
	key := flag.String("key", "", "API key of an admin")
	flag.Parse()
	if *base == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "usage: goclient -url URL -key KEY")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, *base, *key); err != nil {
		fmt.Fprintln(os.Stderr, "go client smoke test:", err)
		os.Exit(1)
	}
	fmt.Println("go client smoke test: ok")
}

func run(ctx context.Context, base, key string) error {
	withKey := client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-API-Key", key)
		return nil
	})
	c, err := client.NewClientWithResponses(base, withKey)
	if err != nil {
		return err
	}

	// Create a vendor with a name no other run uses.
	name := fmt.Sprintf("OpenAPI smoke vendor %d", time.Now().UnixNano())
	country := "DE"
	criticality := client.CreateVendorJSONBodyCriticalityImportant
	created, err := c.CreateVendorWithResponse(ctx, &client.CreateVendorParams{},
		client.CreateVendorJSONRequestBody{Name: name, Country: &country, Criticality: &criticality})
	if err != nil {
		return fmt.Errorf("create vendor: %w", err)
	}
	if created.StatusCode() != http.StatusCreated || created.JSON201 == nil {
		return fmt.Errorf("create vendor: status %d, body %s", created.StatusCode(), created.Body)
	}
	v := created.JSON201
	if v.Id == nil || !strings.HasPrefix(*v.Id, "vnd_") {
		return fmt.Errorf("create vendor: id %v, want vnd_...", v.Id)
	}
	if v.Name == nil || *v.Name != name {
		return fmt.Errorf("create vendor: name %v, want %q", v.Name, name)
	}
	if v.Criticality == nil || string(*v.Criticality) != string(criticality) {
		return fmt.Errorf("create vendor: criticality %v, want %s", v.Criticality, criticality)
	}
	id := *v.Id

	// List vendors and find it.
	list, err := c.ListVendorsWithResponse(ctx, &client.ListVendorsParams{Q: &name})
	if err != nil {
		return fmt.Errorf("list vendors: %w", err)
	}
	if list.StatusCode() != http.StatusOK || list.JSON200 == nil {
		return fmt.Errorf("list vendors: status %d, body %s", list.StatusCode(), list.Body)
	}
	found := false
	for _, lv := range list.JSON200.Data {
		found = found || (lv.Id != nil && *lv.Id == id)
	}
	if !found {
		return fmt.Errorf("list vendors: %s is not in %s", id, list.Body)
	}
	if list.JSON200.Count != list.JSON200.Meta.Total {
		return fmt.Errorf("list vendors: count %d, meta.total %d", list.JSON200.Count, list.JSON200.Meta.Total)
	}

	// Read it back.
	got, err := c.GetVendorWithResponse(ctx, id)
	if err != nil {
		return fmt.Errorf("get vendor: %w", err)
	}
	if got.StatusCode() != http.StatusOK || got.JSON200 == nil || got.JSON200.Name == nil || *got.JSON200.Name != name {
		return fmt.Errorf("get vendor: status %d, body %s", got.StatusCode(), got.Body)
	}

	// An invalid country is a 400 validation_error naming the field.
	bad := "XX"
	invalid, err := c.CreateVendorWithResponse(ctx, &client.CreateVendorParams{},
		client.CreateVendorJSONRequestBody{Name: "Invalid vendor", Country: &bad})
	if err != nil {
		return fmt.Errorf("create invalid vendor: %w", err)
	}
	if invalid.StatusCode() != http.StatusBadRequest || invalid.JSON400 == nil {
		return fmt.Errorf("create invalid vendor: status %d, body %s", invalid.StatusCode(), invalid.Body)
	}
	e := invalid.JSON400
	if e.Error.Code != client.ErrorErrorCodeValidationError {
		return fmt.Errorf("create invalid vendor: error code %q, want validation_error", e.Error.Code)
	}
	if e.Error.Details.Field == nil || *e.Error.Details.Field != "country" {
		return fmt.Errorf("create invalid vendor: details.field %v, want country", e.Error.Details.Field)
	}
	if e.RequestId == "" || e.Message == "" {
		return errors.New("create invalid vendor: the error has no requestId or message")
	}

	// Without a credential: 401 unauthorized in the same error type.
	anon, err := client.NewClientWithResponses(base)
	if err != nil {
		return err
	}
	org, err := anon.GetOrganizationWithResponse(ctx, &client.GetOrganizationParams{})
	if err != nil {
		return fmt.Errorf("get organization without a key: %w", err)
	}
	if org.StatusCode() != http.StatusUnauthorized || org.JSON401 == nil || org.JSON401.Error.Code != client.ErrorErrorCodeUnauthorized {
		return fmt.Errorf("get organization without a key: status %d, body %s", org.StatusCode(), org.Body)
	}
	return nil
}
