// Test support only, never installed: lets a test write and read what the
// record API would normalise or refuse (hand-edited lease text, a broken
// schema), the way an operator editing SQLite directly would. Admin only.
// `{ sql, params }` runs a statement; `{ sql, params, read: true }` answers the
// first row's `value` column as text; `{ sql, params, column }` answers that
// column of every row (a statement's RETURNING too) as `values`; `{ sql, params,
// columns }` answers those text columns of every row as `rows` of objects.
routerAdd("POST", "/api/test/sql", (c) => {
  const data = $apis.requestInfo(c).data;
  const query = $app.dao().db().newQuery(data.sql).bind(data.params || {});
  if (data.columns) {
    const shape = {};
    for (const name of data.columns) shape[name] = "";
    const rows = arrayOf(new DynamicModel(shape));
    query.all(rows);
    return c.json(200, { rows: rows.map((row) => Object.fromEntries(data.columns.map((name) => [name, row[name]]))) });
  }
  if (data.column) {
    const rows = arrayOf(new DynamicModel({ [data.column]: "" }));
    query.all(rows);
    return c.json(200, { values: rows.map((row) => row[data.column]) });
  }
  if (!data.read) {
    query.execute();
    return c.json(200, { ok: true });
  }
  const row = new DynamicModel({ value: "" });
  query.one(row);
  return c.json(200, { value: row.value });
}, $apis.requireAdminAuth());
