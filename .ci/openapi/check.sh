#!/usr/bin/env bash
# make openapi-check: lints the OpenAPI document the binary serves and
# generates clients from it.
#
#  1. builds the binary, creates an organization and an admin API key in a
#     temporary data directory, and serves it on a free loopback port;
#  2. fetches /v1/openapi.json into .ci/openapi/out/openapi.json;
#  3. lints it with Redocly (recommended rules, redocly.yaml) and Spectral
#     (spectral:oas, .spectral.yaml): any error or warning fails;
#  4. generates a Go client with oapi-codegen into goclient/client and runs
#     the smoke program goclient/main.go against the server;
#  5. generates TypeScript types with openapi-typescript into ts/api.d.ts
#     and type-checks ts/smoke.ts with tsc --noEmit.
#
# Needs Go, Node 20 and the packages of package-lock.json (npm ci here).
# The generated client and types are removed afterwards; the document stays
# in out/ (git-ignored) for a look.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GO=${GO:-go}
# The Go client generator, pinned; go run fetches it through the module proxy.
OAPI_CODEGEN=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
bin=$here/node_modules/.bin
for tool in redocly spectral openapi-typescript tsc; do
  if [ ! -x "$bin/$tool" ]; then
    echo "openapi-check: $tool is missing; run (cd .ci/openapi && npm ci)" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp" "$here/goclient/client" "$here/ts/api.d.ts"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
json() { node -e "$@"; }

t=$(now)
(cd "$root" && CGO_ENABLED=0 "$GO" build -o "$tmp/compliance" .)
echo "openapi-check: built the binary in $(since "$t")"

# The organization and key exist before the server starts (CLI on the same
# data directory).
data=$tmp/data
"$tmp/compliance" org create --name "OpenAPI check" --data-dir "$data" --json >"$tmp/org.json" 2>>"$tmp/cli.log"
org=$(json 'console.log(require(process.argv[1]).id)' "$tmp/org.json")
key=$("$tmp/compliance" apikey create --org "$org" --role admin --name openapi-check --data-dir "$data" 2>>"$tmp/cli.log")

port=$(node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
base=http://127.0.0.1:$port
COMPLIANCE_ADDR=127.0.0.1:$port "$tmp/compliance" serve --data-dir "$data" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 150); do
  if curl -sf "$base/v1/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "openapi-check: the server stopped:" >&2
    cat "$tmp/server.log" >&2
    exit 1
  fi
  sleep 0.1
done
mkdir -p "$here/out"
curl -sf "$base/v1/openapi.json" -o "$tmp/openapi.json"
# Indented, so that the linters' line numbers point somewhere.
json 'const fs = require("fs"); fs.writeFileSync(process.argv[2], JSON.stringify(require(process.argv[1]), null, 2) + "\n")' \
  "$tmp/openapi.json" "$here/out/openapi.json"
ops=$(json 'const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
  let n = 0;
  const walk = paths => { for (const item of Object.values(paths)) for (const m of methods) {
    const op = item[m]; if (!op) continue; if (op.operationId) n++;
    for (const cb of Object.values(op.callbacks || {})) walk(cb); } };
  walk(require(process.argv[1]).paths);
  console.log(n)' "$here/out/openapi.json")
echo "openapi-check: served the document ($ops operationIds, callbacks included) on $base"

cd "$here"
fail=0

# Redocly exits non-zero on errors only, so the totals decide.
t=$(now)
"$bin/redocly" lint out/openapi.json --config redocly.yaml --format=json --max-problems=1000 \
  >"$tmp/redocly.json" 2>"$tmp/redocly.log" || true
read -r rerr rwarn rign < <(json 'const t = require(process.argv[1]).totals; console.log(t.errors, t.warnings, t.ignored)' "$tmp/redocly.json")
echo "openapi-check: redocly (recommended): $rerr errors, $rwarn warnings, $rign ignored by .redocly.lint-ignore.yaml ($(since "$t"))"
if [ "$rerr" != 0 ] || [ "$rwarn" != 0 ]; then
  "$bin/redocly" lint out/openapi.json --config redocly.yaml --format=stylish --max-problems=1000 2>/dev/null || true
  fail=1
fi

t=$(now)
"$bin/spectral" lint out/openapi.json --ruleset .spectral.yaml --format=json --quiet --output="$tmp/spectral.json" \
  >/dev/null 2>"$tmp/spectral.log" || true
if [ ! -s "$tmp/spectral.json" ]; then
  echo "openapi-check: spectral produced no report:" >&2
  cat "$tmp/spectral.log" >&2
  exit 1
fi
read -r serr swarn sother < <(json 'const p = require(process.argv[1]);
  const n = s => p.filter(x => x.severity === s).length;
  console.log(n(0), n(1), n(2) + n(3))' "$tmp/spectral.json")
echo "openapi-check: spectral (spectral:oas): $serr errors, $swarn warnings, $sother infos and hints ($(since "$t"))"
if [ "$serr" != 0 ] || [ "$swarn" != 0 ]; then
  "$bin/spectral" lint out/openapi.json --ruleset .spectral.yaml --format=stylish 2>/dev/null || true
  fail=1
fi

# Go client: generated beside the committed smoke program, which it must
# compile with, then run against the server.
t=$(now)
mkdir -p goclient/client
(cd goclient && "$GO" run "$OAPI_CODEGEN" -config oapi-codegen.yaml ../out/openapi.json)
echo "openapi-check: oapi-codegen generated the Go client in $(since "$t")"
t=$(now)
(cd goclient && "$GO" build -o "$tmp/goclient" .)
echo "openapi-check: go build of the client and smoke program took $(since "$t")"
t=$(now)
"$tmp/goclient" -url "$base" -key "$key"
echo "openapi-check: the Go smoke program ran in $(since "$t")"

# TypeScript types. Defaults do not make request fields required.
t=$(now)
"$bin/openapi-typescript" out/openapi.json --default-non-nullable=false -o ts/api.d.ts >"$tmp/ots.log" 2>&1 ||
  { cat "$tmp/ots.log" >&2; exit 1; }
echo "openapi-check: openapi-typescript generated ts/api.d.ts in $(since "$t")"
t=$(now)
"$bin/tsc" -p ts/tsconfig.json --noEmit
echo "openapi-check: tsc --noEmit of ts/smoke.ts took $(since "$t")"

if [ "$fail" != 0 ]; then
  echo "openapi-check: FAILED: the linters reported problems (above)" >&2
  exit 1
fi
echo "openapi-check: ok"
