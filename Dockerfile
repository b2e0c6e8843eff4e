# The platform's container image: the bundled server (hub, decisions service, task inbox) on Node 22.
# docs/deploy.md says how to run it; compose.yaml runs it with Postgres and Redis.
#
# Build: the same steps as `npm install` in a clone (dependencies, then `prepare`: the server bundle, the
# embedded database image and the web apps under node_modules/.cache). Runtime: the production dependencies
# only, the sources (`npm start` checks the bundle against them) and what the build made, run as `node`.
# Every path below is relative to WORKDIR (test/e2e/container-image.test.ts replays these steps without a
# container engine, and reads them from here).

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lockfile lists the Effect compiler's binary for this platform only.
RUN --mount=type=cache,target=/root/.npm npm install --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run prepare && mkdir -p data

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    HUB_PORT=4000 \
    DECISIONS_PORT=4001 \
    TASKS_PORT=4002 \
    DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm install --omit=dev --ignore-scripts --no-audit --no-fund
COPY . .
COPY --from=build /app/node_modules/.cache ./node_modules/.cache
COPY --from=build --chown=node:node /app/data ./data
USER node
VOLUME ["/app/data"]
EXPOSE 4000 4001 4002
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
STOPSIGNAL SIGTERM
CMD ["node", "scripts/start.mjs"]
