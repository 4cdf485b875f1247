# PocketBase with the pb-fleet hooks, FROM scratch (no registry is needed: the
# only content is a static binary and JavaScript). One Dockerfile for both
# hooks lines; the build arg PB_FLEET_DIR_SUFFIX picks the line's files:
#   ""       PocketBase 0.22.x:           pb_hooks/, pb_migrations/, docker/hooks/
#   "_0.23"  PocketBase 0.23.x to 0.40.x: pb_hooks_0.23/, pb_migrations_0.23/, docker/hooks_0.23/
# Prepare the binary first:  PB_VERSION=0.40.4 npm run get-pocketbase -- --docker-context
#   (copies a static PocketBase to .pb/docker/pocketbase and writes .pb/docker/compose.env)
# then:  docker-compose --env-file .pb/docker/compose.env up -d --build
#   or:  docker build --build-arg PB_FLEET_DIR_SUFFIX=_0.23 -t pb-fleet .
FROM scratch
ARG PB_FLEET_DIR_SUFFIX=""

COPY .pb/docker/pocketbase /usr/local/bin/pocketbase
COPY pb_migrations${PB_FLEET_DIR_SUFFIX}/ /pb/pb_migrations/
COPY pb_hooks${PB_FLEET_DIR_SUFFIX}/ /pb/pb_hooks/
# Creates the first admin (0.22) or superuser (0.23+) from PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD
# before serving (a bad pair stops PocketBase at start); inert when unset.
COPY docker/hooks${PB_FLEET_DIR_SUFFIX}/ /pb/pb_hooks/
# `pocketbase healthcheck` (used by docker-compose.yml), kept out of the served hooks dir; both lines.
COPY docker/healthcheck/ /pb/healthcheck/
# The fleet dashboard (http://<host>:8090/fleet/), the same files for both lines. PocketBase
# serves --publicDir, by default pb_public beside its binary: there, the page is served
# under this CMD and under docker-compose.yml's own command (which has no --publicDir) alike.
COPY pb_public/fleet/ /usr/local/bin/pb_public/fleet/

# Scratch has no /tmp; Go's os.TempDir() and SQLite's temp files want one.
WORKDIR /tmp
WORKDIR /pb

EXPOSE 8090
# --dev=false: PocketBase 0.36+ runs a binary it takes for `go run` (one under the Go
# cache directory) in dev mode, printing every SQL statement; never in this image.
ENTRYPOINT ["/usr/local/bin/pocketbase"]
CMD ["serve", "--http", "0.0.0.0:8090", "--dir", "/pb/pb_data", "--hooksDir", "/pb/pb_hooks", "--migrationsDir", "/pb/pb_migrations", "--hooksWatch=false", "--hooksPool=100", "--dev=false"]
