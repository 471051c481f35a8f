package automation

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkjson"
	"go.starlark.net/starlarkstruct"
)

// criteriaSteps bounds one criteria evaluation: an expression over the
// result has no loops, but a comprehension over a large list could run long.
const criteriaSteps = 1_000_000

func criteriaEnv(result starlark.Value) starlark.StringDict {
	return starlark.StringDict{"result": result}
}

// Evaluate runs an evaluation criteria expression (a Starlark expression
// with `result` bound to the script's result) and reports whether it
// held, with a reason a person can read. An expression that fails or does
// not give a boolean is an error.
func (r *Runner) Evaluate(expr string, result map[string]any) (bool, string, error) {
	expr = strings.TrimSpace(expr)
	if result == nil {
		result = map[string]any{}
	}
	v, err := fromGo(result)
	if err != nil {
		return false, "", fmt.Errorf("the result cannot be read: %w", err)
	}
	th := &starlark.Thread{Name: "criteria"}
	th.SetMaxExecutionSteps(criteriaSteps)
	got, err := starlark.EvalOptions(fileOptions, th, "criteria", expr, criteriaEnv(v))
	if err != nil {
		return false, "", scriptError(err)
	}
	b, ok := got.(starlark.Bool)
	if !ok {
		return false, "", fmt.Errorf("the criteria gave a %s, not True or False", got.Type())
	}
	if b {
		return true, fmt.Sprintf("criteria `%s` held", expr), nil
	}
	return false, fmt.Sprintf("criteria `%s` did not hold", expr), nil
}

func newStruct(d starlark.StringDict) *starlarkstruct.Struct {
	return starlarkstruct.FromStringDict(starlarkstruct.Default, d)
}

func jsonDecode() *starlark.Builtin {
	return starlarkjson.Module.Members["decode"].(*starlark.Builtin)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
