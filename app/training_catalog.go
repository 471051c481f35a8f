package app

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	assets "github.com/compliance-appliance/compliance/embed"
)

// TrainingControlRef names a built-in framework requirement a module's
// completions evidence: the catalog slug and the requirement's reference.
type TrainingControlRef struct {
	Framework string `json:"framework"`
	Ref       string `json:"ref"`
}

// TrainingSection is one part of a module's text, in Markdown.
type TrainingSection struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// TrainingQuestion is one single-choice quiz question. The answer key never
// leaves the server.
type TrainingQuestion struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
	Answer   int      `json:"-"`
}

// trainingQuestionFile is a question as stored, with its answer key.
type trainingQuestionFile struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
	Answer   int      `json:"answer"`
}

// trainingModuleFile is one built-in module file under embed/training.
type trainingModuleFile struct {
	ID              string                 `json:"id"`
	Title           string                 `json:"title"`
	Summary         string                 `json:"summary"`
	Version         int                    `json:"version"`
	DurationMinutes int                    `json:"durationMinutes"`
	PassMark        int                    `json:"passMark"`
	Controls        []TrainingControlRef   `json:"controls"`
	Sections        []TrainingSection      `json:"sections"`
	Quiz            []trainingQuestionFile `json:"quiz"`
}

var (
	trainingOnce    sync.Once
	trainingCatalog []TrainingModule
	trainingErr     error
)

// BuiltinTrainingModules returns the compiled-in training catalog, sorted by
// id, loading it on first use.
func BuiltinTrainingModules() ([]TrainingModule, error) {
	trainingOnce.Do(func() { trainingCatalog, trainingErr = LoadTrainingCatalog(assets.Training) })
	return trainingCatalog, trainingErr
}

// LoadTrainingCatalog parses training/*.json in fsys.
func LoadTrainingCatalog(fsys fs.FS) ([]TrainingModule, error) {
	names, err := fs.Glob(fsys, "training/*.json")
	if err != nil {
		return nil, fmt.Errorf("list training modules: %w", err)
	}
	out := make([]TrainingModule, 0, len(names))
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read training module %s: %w", name, err)
		}
		var f trainingModuleFile
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("decode training module %s: %w", name, err)
		}
		m := TrainingModule{ID: f.ID, Title: f.Title, Summary: f.Summary, Kind: TrainingKindText, Builtin: true,
			Version: f.Version, DurationMinutes: f.DurationMinutes, PassMark: f.PassMark, Controls: f.Controls,
			ControlIDs: []string{}, Sections: f.Sections, Quiz: make([]TrainingQuestion, len(f.Quiz))}
		for i, q := range f.Quiz {
			m.Quiz[i] = TrainingQuestion(q)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ResolveTrainingControl returns the id of the built-in requirement a
// reference names, and whether it exists and is assessable (only an
// assessable requirement gets a control in an organization).
func ResolveTrainingControl(ref TrainingControlRef) (string, bool) {
	c, err := BuiltinCatalog()
	if err != nil {
		return "", false
	}
	id := RequirementIDFor(ref.Framework, ref.Ref)
	r, b := c.requirement(id)
	if r == nil || b == nil || b.fw.Slug != ref.Framework {
		return "", false
	}
	return id, r.Assessable
}
