// Test support only, never installed (PocketBase 0.22; the 0.23+ one is
// ../hooks_0.23/enqueue-in-app-transaction.pb.js): an app's own hooks that
// enqueue through pb-fleet-enqueue.js inside their transaction, for
// test/integration/enqueue-in-app-transaction.test.ts. The test creates the
// collections test_orders and test_hooked_orders (each with a unique title).

// An app route: saves a test_orders record and enqueues `jobs` in one
// transaction; `failAfterEnqueue` makes the app fail after the enqueue.
// 200 { orderId, jobs }; 400 { error } with the enqueue's own message (caught
// before it leaves the transaction, then rethrown to roll back); 409 { error }
// when the app failed.
routerAdd("POST", "/api/test/orders", (c) => {
  const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
  const body = $apis.requestInfo(c).data;
  let answer = null;
  let refusal = null;
  try {
    $app.dao().runInTransaction((txDao) => {
      const order = new Record(txDao.findCollectionByNameOrId("test_orders"));
      order.set("title", body.title);
      txDao.saveRecord(order);
      try {
        answer = { orderId: order.id, jobs: fleet.enqueue(txDao, body.jobs) };
      } catch (err) {
        refusal = err.message;
        throw err;
      }
      if (body.failAfterEnqueue) throw new Error("the app failed after the enqueue");
    });
  } catch (err) {
    return refusal !== null ? c.json(400, { error: refusal }) : c.json(409, { error: String(err) });
  }
  return c.json(200, answer);
}, $apis.requireAdminAuth());

// Saves a test_hooked_orders record through a txDao: the model hook below
// enqueues with that save's e.dao, then the insert runs (and fails on a
// duplicate title, after the enqueue). 200 { orderId }; 409 { error }.
routerAdd("POST", "/api/test/hooked-orders", (c) => {
  const body = $apis.requestInfo(c).data;
  let orderId = "";
  try {
    $app.dao().runInTransaction((txDao) => {
      const order = new Record(txDao.findCollectionByNameOrId("test_hooked_orders"));
      order.set("title", body.title);
      order.set("job_probe_key", body.jobProbeKey);
      txDao.saveRecord(order);
      orderId = order.id;
    });
  } catch (err) {
    return c.json(409, { error: String(err) });
  }
  return c.json(200, { orderId });
}, $apis.requireAdminAuth());

// Before the insert of a test_hooked_orders record, in the dao of its save.
onModelBeforeCreate((e) => {
  const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
  fleet.enqueue(e.dao, [{ probeKey: e.model.getString("job_probe_key"), payload: { title: e.model.getString("title") } }]);
}, "test_hooked_orders");

// enqueue given a handle outside any transaction: refused. 400 { error } or 200 { jobs }.
routerAdd("POST", "/api/test/enqueue-outside-transaction", (c) => {
  const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
  const body = $apis.requestInfo(c).data;
  try {
    return c.json(200, { jobs: fleet.enqueue($app.dao(), body.jobs) });
  } catch (err) {
    return c.json(400, { error: err.message });
  }
}, $apis.requireAdminAuth());
