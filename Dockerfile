# memory-ledger as a container: `serve` on 0.0.0.0:8787 as a non-root user, all state in the /data volume.
# BASE is any image with node (22 or 24) and npm on PATH and Debian's useradd; scripts/image-base.sh makes
# one from Debian packages and the npm registry when no container registry is reachable.
ARG BASE=docker.io/library/node:24-bookworm-slim

# Build: install exactly the lock, compile to dist/, then drop the devDependencies (TypeScript, tsx,
# vitest) so the runtime stage carries only what runs.
FROM ${BASE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false
COPY package.json package-lock.json ./
# A registry reached through a TLS-inspecting proxy needs its CA: pass it as the optional build secret
# npm_ca (`--secret id=npm_ca,src=/path/to/ca.pem`); it is read during this step and kept in no layer.
RUN --mount=type=secret,id=npm_ca \
  if [ -s /run/secrets/npm_ca ]; then export npm_config_cafile=/run/secrets/npm_ca; fi \
  && npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/
COPY bin/memory-ledger.mjs bin/
COPY server server
COPY tools tools
COPY storage storage
COPY bridge bridge
COPY extract extract
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: the build output, its production node_modules and package.json (for the version), nothing else.
# bin/memory-ledger.mjs runs dist/ because no TypeScript source is beside it.
FROM ${BASE}
RUN useradd --system --user-group --no-create-home --home-dir /data --shell /usr/sbin/nologin ledger \
  && mkdir -p /data && chown ledger:ledger /data
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/bin/memory-ledger.mjs bin/
COPY --from=build /src/dist dist
COPY --from=build /src/node_modules node_modules
COPY LICENSE ./
# glibc: two allocator arenas, and blocks of 128 KB and more always mapped on their own and returned when
# freed (the threshold otherwise rises to 32 MB and LanceDB's buffers stay in the arenas): docs/load.md.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8787 SVC_DATA_DIR=/data MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
USER ledger
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/v1/version').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/bin/memory-ledger.mjs"]
CMD ["serve"]
