#!/usr/bin/env bash
# Carries out the Dockerfile's steps without a Docker engine (`docker build` needs one; the
# development machines have only the docker CLI), then starts the result as `docker run` would.
#
# The middle of this file is the Dockerfile, instruction for instruction and word for word (each
# one prints itself as a "STEP" line, and test/ops/deploy.test.ts fails when those lines differ from
# the Dockerfile). The functions named after the instructions carry them out in a work directory:
#   - FROM starts a stage: a directory standing for the image's root file system. The base
#     image's own files are this machine's (its node must be the tag's major version, on glibc);
#   - COPY copies from the build context (the repository as .dockerignore filters it, made by
#     deploy/build-context.mjs) or, with --from, from an earlier stage's directory;
#   - RUN runs the command with `bash -c` in the stage's WORKDIR with only the stage's ENV (plus
#     PATH, HOME and proxy settings), absolute paths moved under the stage's directory, and the
#     base image's user names turned into its numeric ids (as root) or chown skipped (otherwise);
#   - USER, VOLUME, EXPOSE, STOPSIGNAL, HEALTHCHECK and ENTRYPOINT record what `docker run` uses.
# Then the runtime stage's ENTRYPOINT starts from its WORKDIR, as the image's user (its uid when
# this runs as root, else the current user), with a clean environment, on 127.0.0.1 with free
# ports and the VOLUME's directory as the data directory; the script waits (up to the
# HEALTHCHECK's start period) for /api/v1/status to answer Ok, runs the HEALTHCHECK command,
# runs the admin CLI as `docker exec` would, sends the STOPSIGNAL and expects exit code 0 within
# STOP_GRACE_S, the grace the README tells operators to give.
#
# Environment:
#   DOCKERFILE_STEPS_WORK          work directory, kept afterwards (default: a temporary one, removed)
#   DOCKERFILE_STEPS_NODE_MODULES  a node_modules put in place before `npm install`, as a warm build
#                                  cache would be; `npm install` then reconciles it with the lockfile
#   DOCKERFILE_STEPS_DRY_RUN=1     only print the STEP lines
# Linux only (it reads /proc to see whether the server still runs).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRY_RUN=${DOCKERFILE_STEPS_DRY_RUN:-0}
SEED_NODE_MODULES=${DOCKERFILE_STEPS_NODE_MODULES:-}
# The stop grace the README recommends (`docker run --stop-timeout 30`), above the server's
# 10 s --shutdown-timeout-ms.
STOP_GRACE_S=30
# The base image's users (node:20-bookworm-slim): name as the Dockerfile writes it, uid:gid.
declare -A IMAGE_IDS=([root]=0:0 [node]=1000:1000)

if [[ -n ${DOCKERFILE_STEPS_WORK:-} ]]; then
  WORK=$DOCKERFILE_STEPS_WORK
  KEEP_WORK=1
else
  WORK=$(mktemp -d)
  KEEP_WORK=0
fi
mkdir -p "$WORK"
# As root the server runs as the image's uid, which must be able to reach its files.
chmod 755 "$WORK"

SERVER_PID=""
cleanup() {
  if [[ -n $SERVER_PID ]] && alive "$SERVER_PID"; then kill -KILL "$SERVER_PID" 2>/dev/null || true; fi
  if [[ $KEEP_WORK == 0 ]]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# A child that has exited stays a zombie until waited for, and kill -0 still finds it.
alive() {
  [[ -r /proc/$1/stat ]] || return 1
  local stat
  stat=$(<"/proc/$1/stat") || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

step() {
  printf 'STEP %s\n' "$*"
}

dry() {
  [[ $DRY_RUN == 1 ]]
}

# --- build state ---------------------------------------------------------------------------

declare -A STAGE_ROOT=()
STAGE_DIR=""
WORKDIR_PATH=/
STAGE_ENV=()
IMAGE_USER=root
VOLUME_PATH=""
EXPOSED_PORT=""
STOP_SIGNAL=SIGTERM
HEALTHCHECK_ARGS=()
ENTRYPOINT_JSON=""

# An image path (absolute, or relative to WORKDIR) as a path under the stage's directory.
in_stage() {
  local dir=$1 path=$2
  if [[ $path != /* ]]; then path=${WORKDIR_PATH%/}/$path; fi
  printf '%s%s' "$dir" "$path"
}

ARG() {
  step "ARG $*"
  local name=${1%%=*}
  printf -v "$name" '%s' "${1#*=}"
}

FROM() {
  step "FROM $*"
  local image=$1 name=${3:-stage${#STAGE_ROOT[@]}}
  STAGE_DIR=$WORK/stages/$name
  STAGE_ROOT[$name]=$STAGE_DIR
  WORKDIR_PATH=/
  STAGE_ENV=()
  IMAGE_USER=root
  dry && return
  mkdir -p "$STAGE_DIR"
  local want have
  want=$(sed -E 's/^node:([0-9]+).*/\1/' <<<"$image")
  have=$(node -p 'process.versions.node.split(".")[0]')
  [[ $want == "$have" ]] || fail "$image needs Node $want; this machine runs Node $have"
  echo "  base image files: this machine's node $(node --version), $(ldd --version | head -1)"
}

WORKDIR() {
  step "WORKDIR $*"
  if [[ $1 == /* ]]; then WORKDIR_PATH=$1; else WORKDIR_PATH=${WORKDIR_PATH%/}/$1; fi
  dry && return
  mkdir -p "$STAGE_DIR$WORKDIR_PATH"
}

ENV() {
  step "ENV $*"
  STAGE_ENV+=("$@")
}

COPY() {
  step "COPY $*"
  local source_dir=$WORK/context
  while [[ $1 == --* ]]; do
    case $1 in
      --from=*) source_dir=${STAGE_ROOT[${1#--from=}]:?unknown stage ${1#--from=}} ;;
      *) fail "COPY option $1 is not carried out here" ;;
    esac
    shift
  done
  dry && return
  local args=("$@")
  local dest=${args[-1]}
  unset 'args[-1]'
  local target
  target=$(in_stage "$STAGE_DIR" "$dest")
  local source
  for source in "${args[@]}"; do
    local from=$source_dir/${source#/}
    [[ -e $from ]] || fail "COPY: $source is not in the ${source_dir##*/} context"
    if [[ -d $from ]]; then
      # Docker copies a directory's contents, not the directory.
      mkdir -p "$target"
      cp -a "$from/." "$target/"
    elif [[ $dest == */ || ${#args[@]} -gt 1 ]]; then
      mkdir -p "$target"
      cp -a "$from" "$target/"
    else
      mkdir -p "$(dirname "$target")"
      cp -a "$from" "$target"
    fi
  done
}

# The proxy, certificate and npm settings a build needs to reach the package registry.
passthrough_env() {
  local name
  for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY NODE_EXTRA_CA_CERTS \
    npm_config_registry npm_config_cache npm_config_userconfig; do
    if [[ -n ${!name:-} ]]; then printf '%s=%s\0' "$name" "${!name}"; fi
  done
}

RUN() {
  step "RUN $*"
  dry && return
  local command=$*
  if [[ $command == "npm install"* && -n $SEED_NODE_MODULES && ! -e $STAGE_DIR$WORKDIR_PATH/node_modules ]]; then
    echo "  seeding node_modules from $SEED_NODE_MODULES"
    cp -a "$(realpath "$SEED_NODE_MODULES")/." "$STAGE_DIR${WORKDIR_PATH%/}/node_modules/"
  fi
  local mapped
  mapped=$(sed -E "s#(^|[[:space:]=])/#\\1${STAGE_DIR}/#g" <<<"$command")
  local name prelude=""
  for name in "${!IMAGE_IDS[@]}"; do
    mapped=$(sed -E "s/(^|[[:space:]])${name}:${name}([[:space:]]|$)/\\1${IMAGE_IDS[$name]}\\2/g" <<<"$mapped")
  done
  if [[ $EUID != 0 ]]; then prelude='chown() { echo "  not root: chown $* skipped (the files are this user'"'"'s)"; }; '; fi
  [[ $IMAGE_USER == root ]] || fail "RUN as $IMAGE_USER is not carried out here"
  echo "  as: $mapped"
  local extra=()
  mapfile -d '' -t extra < <(passthrough_env)
  (cd "$STAGE_DIR$WORKDIR_PATH" && env -i PATH="$PATH" HOME="$HOME" npm_config_prefer_offline=true \
    "${extra[@]}" "${STAGE_ENV[@]}" bash -c "set -e; $prelude$mapped")
}

USER() {
  step "USER $*"
  [[ -n ${IMAGE_IDS[$1]:-} ]] || fail "unknown image user $1"
  IMAGE_USER=$1
}

VOLUME() {
  step "VOLUME $*"
  VOLUME_PATH=$1
}

EXPOSE() {
  step "EXPOSE $*"
  EXPOSED_PORT=$1
}

STOPSIGNAL() {
  step "STOPSIGNAL $*"
  STOP_SIGNAL=$1
}

HEALTHCHECK() {
  step "HEALTHCHECK $*"
  HEALTHCHECK_ARGS=("$@")
}

ENTRYPOINT() {
  step "ENTRYPOINT $*"
  ENTRYPOINT_JSON=$1
}

# --- the Dockerfile --------------------------------------------------------------------------

build_image() {
  mkdir -p "$WORK/context"
  dry || node "$REPO/deploy/build-context.mjs" "$REPO" "$WORK/context"

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY schemas ./schemas
COPY engine ./engine
COPY src ./src
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DEMO_ACCOUNTS=0 \
    LOG_PRETTY=0
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN 'mkdir -p /var/lib/exchange && chown node:node /var/lib/exchange'
USER node
VOLUME /var/lib/exchange
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD '["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/api/v1/status`, { signal: AbortSignal.timeout(4000) }).then((r) => r.json()).then((s) => process.exit(s.status === `Ok` ? 0 : 1), () => process.exit(1))"]'
ENTRYPOINT '["node", "dist/src/main.js", "--data-dir", "/var/lib/exchange"]'
}

# --- docker run ------------------------------------------------------------------------------

json_args() {
  node -e 'for (const arg of JSON.parse(process.argv[1])) process.stdout.write(`${arg}\0`)' "$1"
}

free_port() {
  node -e 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); })'
}

# Seconds in a HEALTHCHECK duration option ("--start-period=120s").
healthcheck_seconds() {
  local arg
  for arg in "${HEALTHCHECK_ARGS[@]}"; do
    if [[ $arg == "--$1="* ]]; then
      arg=${arg#*=}
      echo "${arg%s}"
      return
    fi
  done
  fail "HEALTHCHECK has no --$1"
}

# Waits for the server's /api/v1/status to answer Ok; fails if the server exits first.
wait_until_ok() {
  local port=$1 deadline_s=$2
  node - "$port" "$SERVER_PID" "$deadline_s" <<'EOF'
const [port, pid, deadlineS] = process.argv.slice(2).map(Number);
const { readFileSync } = require('node:fs');
const alive = () => {
  try { return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z'; } catch { return false; }
};
const deadline = Date.now() + deadlineS * 1000;
(async () => {
  while (Date.now() < deadline) {
    if (!alive()) { console.error('the server exited before answering'); process.exit(1); }
    try {
      const body = await (await fetch(`http://127.0.0.1:${port}/api/v1/status`, { signal: AbortSignal.timeout(2000) })).json();
      if (body.status === 'Ok') { console.log(`RESULT status ${JSON.stringify(body)}`); process.exit(0); }
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.error(`no Ok from /api/v1/status within ${deadlineS} s`);
  process.exit(1);
})();
EOF
}

run_container() {
  local runtime=$STAGE_DIR
  local ids=${IMAGE_IDS[$IMAGE_USER]}
  local as_user=()
  if [[ $EUID == 0 && $ids != 0:0 ]]; then
    as_user=(setpriv --reuid="${ids%:*}" --regid="${ids#*:}" --clear-groups)
  else
    ids="$(id -u):$(id -g)"
  fi
  local entry=() arg
  mapfile -d '' -t entry < <(json_args "$ENTRYPOINT_JSON")
  for arg in "${!entry[@]}"; do
    if [[ ${entry[$arg]} == /* ]]; then entry[arg]=$runtime${entry[$arg]}; fi
  done
  local port admin_port
  port=$(free_port)
  admin_port=$(free_port)
  # What `docker run -e HOST=127.0.0.1 -e PORT=… -e ADMIN_PORT=…` gives the process: the image's
  # ENV and the overrides, nothing of this machine's environment.
  local run_env=(PATH="$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin" HOME="$runtime/home/$IMAGE_USER"
    "${STAGE_ENV[@]}" HOST=127.0.0.1 PORT="$port" ADMIN_PORT="$admin_port")
  echo "RESULT user $ids"
  echo "RESULT volume $VOLUME_PATH -> $runtime$VOLUME_PATH"
  echo "RESULT exposed $EXPOSED_PORT (served on 127.0.0.1:$port)"
  (cd "$runtime$WORKDIR_PATH" && exec "${as_user[@]}" env -i "${run_env[@]}" "${entry[@]}") >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  if ! wait_until_ok "$port" "$(healthcheck_seconds start-period)"; then
    tail -n 40 "$WORK/server.log" >&2
    fail "the server did not come up"
  fi
  run_healthcheck "${run_env[@]}"
  run_admin_cli "${run_env[@]}"
  stop_server
}

# The HEALTHCHECK's CMD, run inside the "container" as docker would, must succeed.
run_healthcheck() {
  local check=() status=0
  [[ ${HEALTHCHECK_ARGS[-2]} == CMD ]] || fail "HEALTHCHECK needs CMD in exec form"
  mapfile -d '' -t check < <(json_args "${HEALTHCHECK_ARGS[-1]}")
  (cd "$STAGE_DIR$WORKDIR_PATH" && timeout "$(healthcheck_seconds timeout)" "${as_user[@]}" env -i "$@" "${check[@]}") || status=$?
  echo "RESULT healthcheck exit $status"
  [[ $status == 0 ]] || fail "the HEALTHCHECK command failed"
}

# `docker exec <container> node dist/src/admin/cli.js snapshot` as the README gives it: the
# container's user, WORKDIR and environment (ADMIN_PORT included), reaching 127.0.0.1 inside.
run_admin_cli() {
  local answer
  answer=$(cd "$STAGE_DIR$WORKDIR_PATH" && "${as_user[@]}" env -i "$@" node dist/src/admin/cli.js snapshot) ||
    fail "the admin CLI failed"
  echo "RESULT admin snapshot $(tr -d ' \n' <<<"$answer")"
  [[ $answer == *'"snapshotSeq"'* ]] || fail "the admin CLI answered $answer"
}

stop_server() {
  kill -s "${STOP_SIGNAL#SIG}" "$SERVER_PID"
  local deadline=$((SECONDS + STOP_GRACE_S))
  while alive "$SERVER_PID" && ((SECONDS < deadline)); do sleep 0.2; done
  if alive "$SERVER_PID"; then
    kill -KILL "$SERVER_PID"
    fail "the server did not stop within $STOP_GRACE_S s of $STOP_SIGNAL"
  fi
  local code=0
  wait "$SERVER_PID" || code=$?
  SERVER_PID=""
  echo "RESULT exit $code after $STOP_SIGNAL"
  if [[ $code != 0 ]]; then
    tail -n 40 "$WORK/server.log" >&2
    fail "the server exited with $code after $STOP_SIGNAL"
  fi
}

build_image
if ! dry; then
  run_container
  echo "OK: the image's steps built a runtime that served and stopped cleanly"
fi
