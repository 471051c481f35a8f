package api

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"

	assets "github.com/compliance-appliance/compliance/embed"
	"go.yaml.in/yaml/v3"
)

// openAPIDocument merges embed/openapi/base.yaml with every other fragment
// (each holding paths and component schemas of one resource group) into one
// JSON document.
func openAPIDocument(version string) ([]byte, error) {
	doc, err := loadYAML("openapi/base.yaml")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(assets.OpenAPI, "openapi/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	paths := ensureMap(doc, "paths")
	components := ensureMap(doc, "components")
	for _, name := range names {
		if name == "openapi/base.yaml" {
			continue
		}
		frag, err := loadYAML(name)
		if err != nil {
			return nil, err
		}
		if err := mergeInto(paths, ensureMap(frag, "paths"), name+": paths"); err != nil {
			return nil, err
		}
		for section, v := range ensureMap(frag, "components") {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: components.%s must be a mapping", name, section)
			}
			if err := mergeInto(ensureMap(components, section), m, name+": components."+section); err != nil {
				return nil, err
			}
		}
		if tags, ok := frag["tags"].([]any); ok {
			existing, _ := doc["tags"].([]any)
			doc["tags"] = append(existing, tags...)
		}
	}
	if info, ok := doc["info"].(map[string]any); ok && version != "" {
		info["version"] = version
	}
	return json.Marshal(doc)
}

func loadYAML(name string) (map[string]any, error) {
	raw, err := fs.ReadFile(assets.OpenAPI, name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func ensureMap(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[key] = v
	return v
}

func mergeInto(dst, src map[string]any, where string) error {
	for k, v := range src {
		if existing, ok := dst[k]; ok {
			// A path may be split across fragments by method.
			em, ok1 := existing.(map[string]any)
			vm, ok2 := v.(map[string]any)
			if !ok1 || !ok2 {
				return fmt.Errorf("%s: %s is defined twice", where, k)
			}
			for mk, mv := range vm {
				if _, dup := em[mk]; dup {
					return fmt.Errorf("%s: %s.%s is defined twice", where, k, mk)
				}
				em[mk] = mv
			}
			continue
		}
		dst[k] = v
	}
	return nil
}
