# PocketBase 0.22 with the pb-fleet hooks, FROM scratch (no registry is needed:
# the only content is a static binary and JavaScript).
# Prepare the binary first:  npm run get-pocketbase -- --docker-context
#   (copies a static PocketBase 0.22.x to .pb/docker/pocketbase)
# then:                      docker build -t pb-fleet .   (or docker-compose up -d --build)
FROM scratch

COPY .pb/docker/pocketbase /usr/local/bin/pocketbase
COPY pb_migrations/ /pb/pb_migrations/
COPY pb_hooks/ /pb/pb_hooks/
# Creates the first admin from PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD before serving (a bad pair stops
# PocketBase at start); inert when unset.
COPY docker/hooks/ /pb/pb_hooks/
# `pocketbase healthcheck` (used by docker-compose.yml), kept out of the served hooks dir.
COPY docker/healthcheck/ /pb/healthcheck/

# Scratch has no /tmp; Go's os.TempDir() and SQLite's temp files want one.
WORKDIR /tmp
WORKDIR /pb

EXPOSE 8090
ENTRYPOINT ["/usr/local/bin/pocketbase"]
CMD ["serve", "--http", "0.0.0.0:8090", "--dir", "/pb/pb_data", "--hooksDir", "/pb/pb_hooks", "--migrationsDir", "/pb/pb_migrations", "--hooksWatch=false", "--hooksPool=100"]
