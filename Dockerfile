# syntax=docker/dockerfile:1

# Build: the production dependencies, with the toolchain better-sqlite3 compiles with when no
# prebuilt binary fits. The runtime image carries neither the toolchain nor the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Runtime: the sources run through tsx (no build step), as an unprivileged user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    EINVOICE_DATABASE_URL=sqlite:/app/data/einvoice.db
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
# The only place the process writes: the sandbox's database, keys and demo credentials.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 8080
# Healthy when the API answers and its database does (GET /readyz needs no credentials).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/einvoice.js"]
CMD ["serve"]
