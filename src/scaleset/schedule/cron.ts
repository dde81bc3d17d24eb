// Five-field cron expressions (minute hour day-of-month month day-of-week), as Vixie cron reads
// them: `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, comma lists, and the names JAN–DEC
// and SUN–SAT (any case). Day of week 0 and 7 are both Sunday. When both day fields are
// restricted (neither starts with `*`), a day matches if either does, as in every cron since
// Vixie's; a step like `*/2` still counts as unrestricted, because it starts with `*`.
//
// Anything else (seconds, years, `?`, `L`, `W`, `#`, `@daily`, wrap-around ranges) is refused with
// a message that names the field and says why, so a schedule never means something other than
// what its author read. Pure: text in, sets of allowed values out.

export interface CronSpec {
  /** The expression as given, trimmed. */
  source: string;
  /** Allowed values of each field, ascending: what the wall-clock walk iterates. */
  minutes: readonly number[];
  hours: readonly number[];
  /** Membership by value: daysOfMonth[1..31], months[1..12], daysOfWeek[0..6] (Sunday 0). */
  daysOfMonth: readonly boolean[];
  months: readonly boolean[];
  daysOfWeek: readonly boolean[];
  /** Whether the day-of-month / day-of-week field starts with `*` (the rule above). */
  domStar: boolean;
  dowStar: boolean;
}

export type CronField = "minute" | "hour" | "day of month" | "month" | "day of week";

export type CronParse = { ok: true; spec: CronSpec } | { ok: false; field: CronField | null; error: string };

interface FieldRule {
  field: CronField;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTH_NAMES = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const RULES: readonly FieldRule[] = [
  { field: "minute", min: 0, max: 59 },
  { field: "hour", min: 0, max: 23 },
  { field: "day of month", min: 1, max: 31 },
  // Names map to their position: JAN is 1 (the offset is applied in `value`).
  { field: "month", min: 1, max: 12, names: MONTH_NAMES },
  // 7 is Sunday too; folded into 0 below.
  { field: "day of week", min: 0, max: 7, names: DAY_NAMES },
];

class FieldError extends Error {}

/** One number or name of a field, checked against its range. */
function value(text: string, rule: FieldRule): number {
  if (/[?#]/.test(text) || /^(L|LW|\d+[LW])$/i.test(text)) throw new FieldError(`'${text}': L, W, ? and # are not supported`);
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n < rule.min || n > rule.max) throw new FieldError(`${n} is out of range ${rule.min}-${rule.max}`);
    return n;
  }
  const i = rule.names?.indexOf(text.toUpperCase()) ?? -1;
  if (i >= 0) return rule.field === "month" ? i + 1 : i;
  if (/^[A-Za-z]+$/.test(text)) {
    throw new FieldError(
      rule.names ? `unknown name '${text}' (use ${rule.names[0]}–${rule.names.at(-1)} or numbers)` : `'${text}' is not a number`,
    );
  }
  throw new FieldError(`'${text}' is not a number`);
}

function parseField(text: string, rule: FieldRule): boolean[] {
  const allowed = new Array<boolean>(rule.max + 1).fill(false);
  for (const item of text.split(",")) {
    if (item === "") throw new FieldError("an empty item in a list (two commas, or one at an end)");
    const [range, stepText, extra] = item.split("/");
    if (extra !== undefined) throw new FieldError(`'${item}' has more than one '/'`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) throw new FieldError(`step '${stepText}' must be a whole number above 0`);
      step = Number(stepText);
    }
    let from: number;
    let to: number;
    if (range === "*") [from, to] = [rule.min, rule.max];
    else if (range!.includes("-")) {
      const [a, b, more] = range!.split("-");
      if (more !== undefined || a === "" || b === "") throw new FieldError(`'${range}' is not a range a-b`);
      [from, to] = [value(a!, rule), value(b!, rule)];
      if (from > to) throw new FieldError(`range ${range} runs backwards (write it as a list: ${a}-${rule.max},${rule.min}-${b})`);
    } else {
      from = value(range!, rule);
      // `5/15` means "from 5 every 15" in some crons and is an error in others: say what to write.
      if (stepText !== undefined) throw new FieldError(`'${item}': a step needs a range or '*' (write ${range}-${rule.max}/${step})`);
      to = from;
    }
    for (let v = from; v <= to; v += step) allowed[v] = true;
  }
  return allowed;
}

const listOf = (allowed: boolean[]) => allowed.flatMap((ok, v) => (ok ? [v] : []));

/** Parses a five-field cron expression; refusals name the field and say why. */
export function parseCron(expression: string): CronParse {
  const source = expression.trim();
  if (source.startsWith("@")) {
    return { ok: false, field: null, error: `'${source}': macros are not supported; write the five fields (e.g. '0 0 * * *' for @daily)` };
  }
  const parts = source.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) {
    return {
      ok: false,
      field: null,
      error: `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}${parts.length === 6 ? " (seconds and years are not supported)" : ""}`,
    };
  }
  const sets: boolean[][] = [];
  for (const [i, rule] of RULES.entries()) {
    try {
      sets.push(parseField(parts[i]!, rule));
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      return { ok: false, field: rule.field, error: `${rule.field} '${parts[i]}': ${err.message}` };
    }
  }
  const [minutes, hours, daysOfMonth, months, dow] = sets as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  const daysOfWeek = dow.slice(0, 7);
  if (dow[7]) daysOfWeek[0] = true;
  return {
    ok: true,
    spec: {
      source,
      minutes: listOf(minutes),
      hours: listOf(hours),
      daysOfMonth,
      months,
      daysOfWeek,
      domStar: parts[2]!.startsWith("*"),
      dowStar: parts[4]!.startsWith("*"),
    },
  };
}

/** Whether a calendar day matches the spec's day-of-month, month and day-of-week fields. */
export function dayMatches(spec: CronSpec, month: number, dayOfMonth: number, dayOfWeek: number): boolean {
  if (!spec.months[month]) return false;
  const dom = spec.daysOfMonth[dayOfMonth] === true;
  const dow = spec.daysOfWeek[dayOfWeek] === true;
  // Both restricted: either one. Otherwise the starred one allows every day, so both must hold.
  return !spec.domStar && !spec.dowStar ? dom || dow : dom && dow;
}
