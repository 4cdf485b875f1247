// Test support only (docker-admin-bootstrap.test.ts), PocketBase 0.22: makes the
// first admin's creation fail at run time although the pair is valid.
onModelBeforeCreate(() => {
  throw new Error("test: admin creation refused");
}, "_admins");
