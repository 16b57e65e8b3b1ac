# syntax=docker/dockerfile:1
# open-exchange for operators who run it in a container (README, "Deploying").
#
# Linux x86-64 only (build with --platform linux/amd64 elsewhere): the lockfile's uWebSockets.js
# binary is built for linux-x64 and Node 20. It and the lmdb and sodium-native prebuilds need
# glibc, hence Debian bookworm (glibc 2.36) and not Alpine (musl).
#
# deploy/dockerfile-steps.sh carries out these steps without a Docker engine and starts the
# result; test/deploy.test.ts runs it and fails when its steps and these differ.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# `npm ci` refuses this lockfile (it lists @uwsjs/core's packages for other platforms, which the
# registry lacks); `npm install` installs what the lockfile pins and leaves it unchanged. No
# install script is needed: every native module ships prebuilt binaries, and skipping the scripts
# keeps a missing prebuild from turning into a compile the slim image cannot do.
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY schemas ./schemas
COPY engine ./engine
COPY src ./src
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
# DEMO_ACCOUNTS=0: a production exchange starts without the funded demo accounts (-e
# DEMO_ACCOUNTS=1 to try it out). LOG_PRETTY=0: JSON log lines even under `docker run -t`.
ENV NODE_ENV=production \
    DEMO_ACCOUNTS=0 \
    LOG_PRETTY=0
WORKDIR /app
# package.json tells Node that dist/ holds ES modules ("type": "module"); without it Node 20
# would have to guess from the syntax of each file.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The data directory belongs to the unprivileged `node` user (uid 1000) of the base image; a new
# named volume mounted there starts with that ownership.
RUN mkdir -p /var/lib/exchange && chown node:node /var/lib/exchange
USER node
VOLUME /var/lib/exchange
# The public HTTP/WebSocket port. The admin endpoint (ADMIN_PORT, 8081) binds 127.0.0.1 inside the
# container and is reached with `docker exec`, never published.
EXPOSE 8080
# SIGTERM stops the exchange in order (exit 0) within --shutdown-timeout-ms (10 s): give it a
# longer grace, `docker run --stop-timeout 30` or `stop_grace_period: 30s`.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/api/v1/status`, { signal: AbortSignal.timeout(4000) }).then((r) => r.json()).then((s) => process.exit(s.status === `Ok` ? 0 : 1), () => process.exit(1))"]
# The exchange runs directly, not under src/supervisor.ts: the container runtime restarts it
# (README, "Deploying": exit codes). The data directory is fixed here, with the VOLUME, so that
# arguments given to `docker run` add to it instead of replacing it.
ENTRYPOINT ["node", "dist/src/main.js", "--data-dir", "/var/lib/exchange"]
