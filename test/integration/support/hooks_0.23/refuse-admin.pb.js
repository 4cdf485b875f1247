// Test support only (docker-admin-bootstrap.test.ts), PocketBase 0.23+: makes
// the first superuser's creation fail at run time although the pair is valid.
onRecordCreate(() => {
  throw new Error("test: admin creation refused");
}, "_superusers");
