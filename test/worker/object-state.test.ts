import { describe, expect, it } from "vitest";
import { ObjectState } from "../../src/scaleset/object/object-state";
import { inScaleSetObject, unique } from "./helpers";

/** The object's own SQLite, counting the queries run on it and the rows they read. */
function countingSql(sql: SqlStorage) {
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const counter = {
    get queries() {
      return cursors.length;
    },
    get rowsRead() {
      return cursors.reduce((n, c) => n + c.rowsRead, 0);
    },
  };
  const counted = new Proxy(sql, {
    get(target, prop) {
      if (prop === "exec")
        return (query: string, ...bindings: unknown[]) => {
          const cursor = target.exec(query, ...bindings);
          cursors.push(cursor);
          return cursor;
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { sql: counted, counter };
}

describe("the scale set object's own state", () => {
  it("reads each meta value from SQLite once, and keeps what it writes without reading it back", async () => {
    await inScaleSetObject(unique("ss"), (_obj, state) => {
      const { sql, counter } = countingSql(state.storage.sql);
      const s = new ObjectState(sql);
      s.clear();
      s.bind("scale-set-1");
      const before = counter.queries;
      // Every request binds, so every request used to read scale_set_id.
      for (let i = 0; i < 5; i++) s.bind("scale-set-1");
      expect(s.scaleSetId).toBe("scale-set-1");
      s.lastOrphanCheck = 42;
      expect(s.lastOrphanCheck).toBe(42);
      expect(counter.queries - before).toBe(1); // the write; no reads
      expect(() => s.bind("scale-set-2")).toThrow(/belongs to scale set scale-set-1/);
    });
  });

  it("stores what it keeps: another ObjectState on the same SQLite reads the same values", async () => {
    await inScaleSetObject(unique("ss"), (_obj, state) => {
      const a = new ObjectState(state.storage.sql);
      a.clear();
      a.bind("scale-set-1");
      a.unconfirmedMachines = { "runner-a": 3 };
      a.listener = null;
      const b = new ObjectState(state.storage.sql);
      expect(b.scaleSetId).toBe("scale-set-1");
      expect(b.unconfirmedMachines).toEqual({ "runner-a": 3 });
      expect(b.listener).toBeNull();
      a.clear();
      expect(a.scaleSetId).toBeNull();
      expect(new ObjectState(state.storage.sql).scaleSetId).toBeNull();
    });
  });

  it("hands out copies: changing a value read changes nothing stored", async () => {
    await inScaleSetObject(unique("ss"), (_obj, state) => {
      const s = new ObjectState(state.storage.sql);
      s.clear();
      s.unconfirmedMachines = { "runner-a": 1 };
      const got = s.unconfirmedMachines;
      got["runner-b"] = 2;
      expect(s.unconfirmedMachines).toEqual({ "runner-a": 1 });
    });
  });

  it("reads one instance's operation state by its key, not the whole table", async () => {
    await inScaleSetObject(unique("ss"), (_obj, state) => {
      const { sql, counter } = countingSql(state.storage.sql);
      const s = new ObjectState(sql);
      s.clear();
      for (let i = 0; i < 50; i++)
        s.setOps({ instance: `r-${i}`, deleteAttempts: i, retryAt: null, opId: null, opKind: null, pollAt: null });
      s.updateOps("r-7", { opKind: "create", opId: "op-7" });
      expect(s.ops("r-7")).toEqual({ instance: "r-7", deleteAttempts: 7, retryAt: null, opId: "op-7", opKind: "create", pollAt: null });
      expect(s.ops("r-404")).toBeNull();
      expect(s.allOps().size).toBe(50);
      // A burst updates every new instance's ops: reading the whole table each time was quadratic.
      const [queries, rows] = [counter.queries, counter.rowsRead];
      expect(s.ops("r-3")?.deleteAttempts).toBe(3);
      expect([counter.queries - queries, counter.rowsRead - rows]).toEqual([1, 1]);
    });
  });
});
