import type { WatchRow } from "../db/recovery/recovery-store";
import type { GithubClient } from "../github/github-client";
import { type DeliverySource, listDeliveries } from "../github/hook-deliveries";
import { findHook, type HookScope } from "../github/hooks";
import { type ListedDelivery, listed, nextWalkState, reached, topBoundary, type WalkPolicy, type WalkResult } from "./delivery-walk";
import type { PassTrouble } from "./pass-timing";
import type { RecoverySettings } from "./settings";
import type { HookWatch } from "./watch-list";
import { type CallBudget, watchProblem } from "./watch-status";

/**
 * One pass's look at one hook: find it (a repository's or organization's hook is the one with
 * this coordinator's webhook URL), then walk its deliveries as far as delivery-walk.ts
 * says. Returns what it listed and the watch's next row; a failed call ends the walk and says why
 * in the row, leaving how far it had looked as it was.
 */

export interface HookWalkInput {
  watch: HookWatch;
  row: WatchRow | null;
  /** The entity whose hook it is (repository and organization watches). */
  scope: HookScope | null;
  gh: GithubClient;
  budget: CallBudget;
  settings: RecoverySettings;
  walk: WalkPolicy;
  webhookUrl: string;
  now: number;
}

export interface HookWalkOutput {
  row: WatchRow;
  /** Deliveries listed within the walks' bounds (failed or not: candidates() picks). */
  listed: ListedDelivery[];
  source: DeliverySource | null;
  /** Passing trouble at GitHub that cut the walk short (the next pass comes sooner). */
  trouble?: PassTrouble | null;
}

export function emptyRow(
  watch: { key: string; kind: WatchRow["kind"]; endpointName: string; entityId: string | null; appId: number | null },
  now: number,
): WatchRow {
  return {
    key: watch.key,
    kind: watch.kind,
    endpointName: watch.endpointName,
    entityId: watch.entityId,
    appId: watch.appId,
    hookId: null,
    hookCheckedAt: null,
    seenThrough: null,
    walkCursor: null,
    walkUntil: null,
    status: "ok",
    detail: null,
    statusSince: now,
    backstopState: null,
  };
}

/** The row with a new status; `statusSince` moves only when the status changes. */
export const withStatus = (row: WatchRow, status: string, detail: string | null, now: number): WatchRow => ({
  ...row,
  status,
  detail,
  statusSince: row.status === status ? row.statusSince : now,
});

export async function walkHook(input: HookWalkInput): Promise<HookWalkOutput> {
  const { watch, gh, budget, now, settings } = input;
  let row = input.row ?? emptyRow(watch, now);
  let source: DeliverySource | null = null;
  try {
    if (watch.kind === "app") {
      source = { kind: "app" };
    } else {
      const scope = input.scope!;
      const lookAgain = row.hookId === null && (row.hookCheckedAt === null || now - row.hookCheckedAt >= settings.hookRecheckMs);
      if (lookAgain) {
        budget.take(watch.credentialsId);
        const hook = await findHook(gh, scope, input.webhookUrl);
        row = { ...row, hookId: hook?.id ?? null, hookCheckedAt: now };
        if (!hook) return { row: withStatus(row, "no_hook", `no webhook with URL ${input.webhookUrl}`, now), listed: [], source: null };
      }
      if (row.hookId === null) return { row, listed: [], source: null };
      source = { kind: "hook", scope, hookId: row.hookId };
    }

    const seen: ListedDelivery[] = [];
    let pages = 0;
    const walkFrom = async (
      cursor: string | null,
      until: number,
    ): Promise<{ complete: boolean; cursor: string | null; newest: number | null }> => {
      let newest: number | null = null;
      let next = cursor;
      for (;;) {
        if (pages >= settings.pagesPerWatch) return { complete: false, cursor: next, newest };
        budget.take(watch.credentialsId);
        pages++;
        const page = await listDeliveries(gh, source!, { perPage: settings.perPage, cursor: next });
        const items = page.items.map(listed).filter((d): d is ListedDelivery => d !== null);
        for (const d of items) {
          newest = Math.max(newest ?? d.deliveredAt, d.deliveredAt);
          if (d.deliveredAt > until) seen.push(d);
        }
        if (reached(items, until, page.next !== null)) return { complete: true, cursor: null, newest };
        next = page.next;
      }
    };

    const state = { seenThrough: row.seenThrough, walkCursor: row.walkCursor, walkUntil: row.walkUntil };
    const boundary = topBoundary(state, now, input.walk);
    const top = await walkFrom(null, boundary);
    const result: WalkResult = { top, gap: null };
    if (state.walkCursor !== null) {
      const gap = await walkFrom(state.walkCursor, Math.max(state.walkUntil ?? 0, now - input.walk.maxAgeMs));
      result.gap = { complete: gap.complete, cursor: gap.cursor };
    }
    row = { ...row, ...nextWalkState(state, boundary, result, now, input.walk) };
    return { row: withStatus(row, "ok", null, now), listed: seen, source };
  } catch (err) {
    const problem = watchProblem(err);
    // A hook GitHub no longer shows may have been deleted and made again: look for it next pass.
    if (problem.status === "not_found" && watch.kind !== "app") row = { ...row, hookId: null, hookCheckedAt: null };
    return { row: withStatus(row, problem.status, problem.detail, now), listed: [], source: null, trouble: problem.trouble };
  }
}
