#!/usr/bin/env bash
# OpenAI's Node client against a real `medusa serve` on stories260K (client_test.mjs says what it
# checks). npm ci installs the pinned client into WORK (the build folder), again only when the
# lock file changes; the server's own exit code must be 0 after SIGTERM.
#   usage: tests/serve_client/run.sh MEDUSA_BIN WORK MODELS_DIR     (exit 77: node or npm missing)
set -euo pipefail
medusa="$1" work="$2" models="$3"
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "node and npm are not installed (scripts/install_deps.sh installs them)"
    exit 77
fi
mkdir -p "$work"
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json" || [ ! -d "$work/node_modules/openai" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$work/"
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
fi
cp "$here/client_test.mjs" "$work/"
export MEDUSA_CACHE="$work/cache"  # empty: nothing of the user's cache leaks in
rm -rf "$MEDUSA_CACHE" && mkdir -p "$MEDUSA_CACHE"

flags=(-m "$models/stories260K.bin" --tokenizer "$models/tok512.model" --temp 0 --ngram 4)
err="$work/serve.err"
"$medusa" serve "${flags[@]}" --chat-template chatml --api-key test-key --port 0 2>"$err" &
pid=$!
trap 'kill -KILL $pid 2>/dev/null || true' EXIT
port=""
for _ in $(seq 600); do
    port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$err")"
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
[ -n "$port" ] || { echo "medusa serve did not start:"; cat "$err"; exit 1; }

# generate's text after the prompt, only its final newline dropped.
expected="$("$medusa" generate "${flags[@]}" -p "Once upon a time" -n 24 2>/dev/null; echo x)"
expected="${expected%$'\n'x}"
node "$work/client_test.mjs" "http://127.0.0.1:$port/v1" test-key "${expected#Once upon a time}"

kill -TERM $pid
status=0
wait $pid || status=$?
trap - EXIT
[ $status -eq 0 ] || { echo "medusa serve exited $status after SIGTERM:"; cat "$err"; exit 1; }
echo "medusa serve stopped cleanly"
