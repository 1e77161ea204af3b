# syntax=docker/dockerfile:1
# The Keel worker. Built by docker-compose.yml (`docker compose build keel`) or `docker build .`.
# `npm run build` compiles src/ to dist/ and then bundles the workflow code once into
# dist/workflow-bundle.js (its first line lists the modules it holds and their hashes), so the worker
# loads it at start instead of bundling for seconds; a bundle that no longer matches dist/ is ignored
# and the worker bundles anew (it says so). The runtime image keeps dist/ and the production node_modules.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# bubblewrap sandboxes run_command (its user namespaces need the container's security options, see
# README).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
  && rm -rf /var/lib/apt/lists/*
# package.json says "type": "module", which is how Node loads dist/ as ES modules.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The application stays root-owned and read-only to the worker, which owns only its state directory
# and the runs' workspaces (named volumes in docker-compose.yml start with this ownership) and the
# workspace mount point.
RUN mkdir -p /var/lib/keel /var/lib/keel-workspaces /workspace && \
    chown node:node /var/lib/keel /var/lib/keel-workspaces /workspace
USER node
ENV KEEL_WORKSPACE=/workspace KEEL_STATE_DIR=/var/lib/keel
# The worker, with the prebuilt workflow bundle from dist/workflow-bundle.js.
CMD ["node", "dist/worker.js"]
