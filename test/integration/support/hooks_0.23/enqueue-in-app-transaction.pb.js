// Test support only, never installed (PocketBase 0.23+; the 0.22 one is
// ../hooks/enqueue-in-app-transaction.pb.js): an app's own hooks that enqueue
// through pb-fleet-enqueue.js inside their transaction, for
// test/integration/enqueue-in-app-transaction.test.ts. The test creates the
// collections test_orders and test_hooked_orders (each with a unique title).

// An app route: saves a test_orders record and enqueues `jobs` in one
// transaction; `failAfterEnqueue` makes the app fail after the enqueue.
// 200 { orderId, jobs }; 400 { error } with the enqueue's own message (caught
// before it leaves the transaction, then rethrown to roll back); 409 { error }
// when the app failed.
routerAdd("POST", "/api/test/orders", (e) => {
  const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
  const body = e.requestInfo().body;
  let answer = null;
  let refusal = null;
  try {
    $app.runInTransaction((txApp) => {
      const order = new Record(txApp.findCollectionByNameOrId("test_orders"));
      order.set("title", body.title);
      txApp.save(order);
      try {
        answer = { orderId: order.id, jobs: fleet.enqueue(txApp, body.jobs) };
      } catch (err) {
        refusal = err.message;
        throw err;
      }
      if (body.failAfterEnqueue) throw new Error("the app failed after the enqueue");
    });
  } catch (err) {
    return refusal !== null ? e.json(400, { error: refusal }) : e.json(409, { error: String(err) });
  }
  return e.json(200, answer);
}, $apis.requireSuperuserAuth());

// Saves a test_hooked_orders record through a txApp: the record hook below
// enqueues with that save's e.app, then e.next() inserts (and fails on a
// duplicate title, after the enqueue). 200 { orderId }; 409 { error }.
routerAdd("POST", "/api/test/hooked-orders", (e) => {
  const body = e.requestInfo().body;
  let orderId = "";
  try {
    $app.runInTransaction((txApp) => {
      const order = new Record(txApp.findCollectionByNameOrId("test_hooked_orders"));
      order.set("title", body.title);
      order.set("job_probe_key", body.jobProbeKey);
      txApp.save(order);
      orderId = order.id;
    });
  } catch (err) {
    return e.json(409, { error: String(err) });
  }
  return e.json(200, { orderId });
}, $apis.requireSuperuserAuth());

// Around the insert of a test_hooked_orders record, in the app of its save.
onRecordCreate((e) => {
  const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
  fleet.enqueue(e.app, [{ probeKey: e.record.getString("job_probe_key"), payload: { title: e.record.getString("title") } }]);
  e.next();
}, "test_hooked_orders");

// The record API's create of a test_hooked_orders record, made transactional:
// the save (and so onRecordCreate above) runs with this txApp.
onRecordCreateRequest((e) => {
  e.app.runInTransaction((txApp) => {
    e.app = txApp;
    e.next();
  });
}, "test_hooked_orders");

// enqueue given a handle outside any transaction: refused. 400 { error } or 200 { jobs }.
routerAdd("POST", "/api/test/enqueue-outside-transaction", (e) => {
  const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
  const body = e.requestInfo().body;
  try {
    return e.json(200, { jobs: fleet.enqueue($app, body.jobs) });
  } catch (err) {
    return e.json(400, { error: err.message });
  }
}, $apis.requireSuperuserAuth());
