#!/usr/bin/env bash
# Fetches PySpur's published web UI (the Next.js static export inside the `pyspur` wheel on PyPI,
# Apache-2.0) into DEST: the pinned wheel through pip, its checksum verified, then only
# `pyspur/static/` extracted. Used by scripts/setup.sh (into the per-user tool cache) and by the
# Dockerfile. Exits non-zero with a message when it cannot; callers decide whether that is fatal.
set -euo pipefail

PYSPUR_VERSION=0.1.18
PYSPUR_WHEEL_SHA256=a85e952e46fc8243d5b1dfe85471d7f9ed05635628c51ca69c83066f65df60a2

dest=${1:?usage: fetch-web-ui.sh DEST_DIR}
[[ -f $dest/index.html ]] && exit 0

command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed (it fetches and unpacks the wheel)"; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "pip is not installed (e.g. 'apt-get install python3-pip')"; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# --require-hashes: pip itself refuses a wheel whose digest differs from the pinned one.
printf 'pyspur==%s --hash=sha256:%s\n' "$PYSPUR_VERSION" "$PYSPUR_WHEEL_SHA256" >"$tmp/requirements.txt"
if ! python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheel" >"$tmp/pip.log" 2>&1; then
  tail -n 5 "$tmp/pip.log"
  echo "pip could not download pyspur==$PYSPUR_VERSION"
  exit 1
fi
wheel="$tmp/wheel/pyspur-$PYSPUR_VERSION-py3-none-any.whl"
# Checked again here: pip's hash mode is the first guard, this one holds whatever pip does.
actual="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$wheel")"
[[ $actual == "$PYSPUR_WHEEL_SHA256" ]] || { echo "checksum mismatch for $wheel: $actual"; exit 1; }

# Extract next to DEST, then rename: an interrupted run leaves no half-filled UI.
mkdir -p "$(dirname "$dest")"
staging="$(mktemp -d "$(dirname "$dest")/.web-ui.XXXXXX")"
python3 - "$wheel" "$staging" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefix = "pyspur/static/"
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        rel = info.filename[len(prefix):]
        target = os.path.realpath(os.path.join(out, rel))
        if not target.startswith(os.path.realpath(out) + os.sep):
            raise SystemExit(f"unsafe path in wheel: {info.filename}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as dst:
            dst.write(src.read())
PY
[[ -f $staging/index.html ]] || { rm -rf "$staging"; echo "the wheel holds no pyspur/static/index.html"; exit 1; }
rm -rf "$dest"
mv "$staging" "$dest"
