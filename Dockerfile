# One image for the api (default command) and the worker (`node dist/src/processes/worker.js`).
# glibc-based on purpose: Temporal's native core bridge does not support Alpine/musl.

# PySpur's web UI (Apache-2.0): the static export inside the pinned `pyspur` wheel from PyPI,
# checksum verified by scripts/fetch-web-ui.sh. A stage of its own, so pip stays out of the image.
FROM node:20-bookworm-slim AS web-ui
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 python3-pip ca-certificates \
  && rm -rf /var/lib/apt/lists/*
COPY scripts/fetch-web-ui.sh /fetch-web-ui.sh
RUN bash /fetch-web-ui.sh /web-ui

FROM node:20-bookworm-slim

# python3: PythonFuncNode runs user code in a `python3` process, inside a bubblewrap sandbox
# (bubblewrap; util-linux for prlimit; slirp4netns and iproute2 only for SPUR_PYTHON_NETWORK=internet). tini:
# PID 1 that forwards SIGTERM to node and reaps the sandbox launchers.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 tini bubblewrap util-linux slirp4netns iproute2 \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first, so a source change reuses this layer. esbuild (which compiles the TypeScript
# below) and tsx (the build scripts) are runtime dependencies; the dev dependencies are only for
# tests and lint. The image's npm 10 accepts the lock file as it is.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY src ./src
COPY temporal ./temporal
COPY scripts ./scripts
# The console's source: bundled below into dist/console (SPUR_CONSOLE_DIR's default), served at /console/.
COPY console ./console
# Served at / by the api (SPUR_WEB_UI_DIR's default); SPUR_WEB_UI=false turns it off.
COPY --from=web-ui /web-ui ./.tools/web-ui

# The api and worker run compiled JavaScript (dist/src, dist/temporal): a process starts on half the
# CPU tsx needs. Workers load the prebuilt workflow bundle instead of bundling at every start.
RUN node --import tsx scripts/build.ts /app/dist \
  && node --import tsx scripts/build-bundle.ts /app/dist/workflow-bundle.js
ENV SPUR_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js \
    SPUR_HOST=0.0.0.0

# The default vector-store folder (SPUR_VECTOR_STORE_URI=/vectors in compose), writable by `node`;
# a fresh named volume mounted there takes this ownership.
RUN mkdir -p /vectors && chown node:node /vectors

USER node
EXPOSE 6080
ENTRYPOINT ["/usr/bin/tini", "--"]
# `node` itself, no wrapper process (such as the `tsx` CLI, which SIGKILLs an app that does not
# confirm a SIGTERM within 30 ms): the api and worker get SIGTERM and drain.
CMD ["node", "dist/src/processes/api.js"]
