// The esbuild options every output that PocketBase's goja runtime loads shares
// (the hooks bundles' handlers, pb-fleet-enqueue.js): one bundle in memory,
// no platform, and goja's language level.
export const GOJA_ESBUILD_OPTIONS = Object.freeze({
  bundle: true,
  write: false,
  platform: "neutral",
  // goja implements ES5.1 plus most of ES2015+; lower everything newer
  // (optional catch binding, ??, ?.) rather than depend on its coverage.
  target: "es2017",
  treeShaking: true,
  legalComments: "none",
  charset: "utf8",
  logLevel: "silent",
});
