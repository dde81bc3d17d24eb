import type { ShapeQueueTime } from "./charts/shape-queue-times";
import { duration } from "./format";

/**
 * A shaped scale set's queue time by shape: one row per machine shape its jobs ran on in the
 * last 24 hours. A shape that waits much longer than the others is usually one whose flavor is
 * scarce (spot, a large size, a GPU), which the scale set-wide chart averages away.
 */
export function ShapeQueueTable({ rows }: { rows: ShapeQueueTime[] }) {
  return (
    <table id="shape-queue">
      <thead>
        <tr>
          <th>Shape</th>
          <th class="num">Jobs</th>
          <th class="num">Queued → started p50</th>
          <th class="num">p90</th>
          <th>Flavors</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colspan={5} class="mut">
              No job started on a shaped machine in the last 24 hours.
            </td>
          </tr>
        )}
        {rows.map((r) => (
          <tr data-shape={r.shape}>
            <td>{r.shape}</td>
            <td class="num">{String(r.jobs)}</td>
            <td class="num">{duration(r.p50 * 1000)}</td>
            <td class="num">{duration(r.p90 * 1000)}</td>
            <td class="small">{r.flavors.join(", ")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
