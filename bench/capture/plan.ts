// From two captured runs of one scenario (two requests that differ only in the rotating id) to
// the replay the raw server executes: the same statements, texts and prepared-statement names,
// grouped as the service ran them. A value that followed the request's id becomes a slot for
// the id; a value that changed on its own (a fresh uuid, the time) is made afresh per request.
import type { CapturedStatement } from './proxy.js';

/** A bound value: fixed, the request's id, or made per request. */
export type ReplayValue = { fixed: string | null } | { slot: 'id' } | { fresh: 'uuid' | 'now' };

export interface ReplayStatement {
  protocol: 'simple' | 'extended';
  name: string;
  text: string;
  values: ReplayValue[];
}

/** Statements run in order on one client: one statement, or a whole transaction. */
export interface ReplayUnit {
  statements: ReplayStatement[];
}

export interface ReplayScenario {
  key: string;
  method: string;
  /** The path with `{id}` where the rotating id goes. */
  path: string;
  status: number;
  /** One object in the answer (by id, create, update) rather than a list. */
  single: boolean;
  /** Waves run one after the other; the units of a wave run concurrently (as the service did). */
  waves: ReplayUnit[][];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;
const BEGIN = /^\s*(begin|start transaction)\b/i;
const END = /^\s*(commit|rollback)\b/i;

interface TimedUnit {
  statements: CapturedStatement[];
  sentAt: number;
  doneAt: number;
}

/** Per connection: a transaction is one unit, any other statement is a unit of its own. */
function units(statements: CapturedStatement[]): TimedUnit[] {
  const result: TimedUnit[] = [];
  const open = new Map<number, TimedUnit>();
  for (const statement of statements) {
    const current = open.get(statement.connection);
    if (current) {
      current.statements.push(statement);
      current.doneAt = statement.doneAt;
      if (END.test(statement.text)) open.delete(statement.connection);
      continue;
    }
    const unit = { statements: [statement], sentAt: statement.sentAt, doneAt: statement.doneAt };
    result.push(unit);
    if (BEGIN.test(statement.text)) open.set(statement.connection, unit);
  }
  return result;
}

/** A unit sent before every unit of the current wave had been answered ran alongside them. */
function waves(timed: TimedUnit[]): TimedUnit[][] {
  const result: TimedUnit[][] = [];
  let wave: TimedUnit[] = [];
  for (const unit of [...timed].sort((a, b) => a.sentAt - b.sentAt)) {
    if (wave.length && unit.sentAt >= Math.min(...wave.map((u) => u.doneAt))) {
      result.push(wave);
      wave = [];
    }
    wave.push(unit);
  }
  if (wave.length) result.push(wave);
  return result;
}

function replayValue(a: string | null, b: string | null, idA: string | undefined, idB: string | undefined): ReplayValue {
  if (a === b) return { fixed: a };
  if (idA !== undefined && a === idA && b === idB) return { slot: 'id' };
  if (a !== null && UUID.test(a)) return { fresh: 'uuid' };
  if (a !== null && TIME.test(a)) return { fresh: 'now' };
  throw new Error(`a bound value changed between two requests and is neither the id nor a fresh uuid or time: ${a} / ${b}`);
}

export interface CapturedRequest {
  id?: string;
  statements: CapturedStatement[];
}

/**
 * Builds the replay of a scenario from two captures. Their statements must match one for one
 * (same texts in the same order): the service runs one SQL shape per scenario.
 */
export function buildReplay(
  scenario: Omit<ReplayScenario, 'waves'>,
  first: CapturedRequest,
  second: CapturedRequest,
): ReplayScenario {
  const a = first.statements;
  const b = second.statements;
  if (a.length === 0) throw new Error(`${scenario.key}: the service ran no SQL for the request`);
  const sameShape = a.length === b.length && a.every((s, i) => s.text === b[i].text && s.values.length === b[i].values.length);
  if (!sameShape) throw new Error(`${scenario.key}: two requests of the scenario ran different SQL\n${a.map((s) => s.text).join('\n')}\n---\n${b.map((s) => s.text).join('\n')}`);
  const index = new Map(a.map((statement, i) => [statement, i]));
  const replayed = (statement: CapturedStatement): ReplayStatement => {
    const other = b[index.get(statement)!];
    return {
      protocol: statement.protocol,
      name: statement.name,
      text: statement.text,
      values: statement.values.map((value, i) => replayValue(value, other.values[i], first.id, second.id)),
    };
  };
  return { ...scenario, waves: waves(units(a)).map((wave) => wave.map((unit) => ({ statements: unit.statements.map(replayed) }))) };
}

/** The replay as a reader checks it: each wave, its units, each statement with its values. */
export function describeReplay(replay: ReplayScenario): string {
  const lines: string[] = [];
  const show = (value: ReplayValue) => ('slot' in value ? '<id>' : 'fresh' in value ? `<${value.fresh}>` : JSON.stringify(value.fixed));
  replay.waves.forEach((wave, w) => {
    lines.push(`  wave ${w + 1}${wave.length > 1 ? ` (${wave.length} units in parallel)` : ''}`);
    for (const unit of wave) {
      unit.statements.forEach((statement, i) => {
        const tag = `${statement.protocol === 'simple' ? 'Q' : 'P/B/E'}${statement.name ? ` name=${statement.name}` : ''}`;
        lines.push(`    ${i === 0 ? '-' : ' '} [${tag}] ${statement.text.replace(/\s+/g, ' ')}`);
        if (statement.values.length) lines.push(`        values ${statement.values.map(show).join(', ')}`);
      });
    }
  });
  return lines.join('\n');
}
